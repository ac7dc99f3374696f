package services

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"coupond/models"
)

// tills tells background work of this process whether redemptions are being
// served, so that work paces itself beside them and runs at full speed when
// they are quiet, and whether they are pressed: answered much more slowly
// than they can be, so that work that can wait (webhook delivery) waits. It
// reads the real clock, not the service's: it measures how the process
// shares its cores, not business time.
type tills struct {
	last atomic.Int64
	// clock is the real clock, or a test's.
	clock func() time.Time

	mu sync.Mutex
	// win is the pressure window being filled (real time / tillsWindow),
	// with n answers in it and their service times' sum.
	win int64
	n   int64
	sum time.Duration
	// done is the last filled window with enough answers to judge, and
	// its mean service time.
	done     int64
	doneMean time.Duration
	// floors holds the least window mean of each floorBucket of the last
	// len(floors) buckets (0: none yet), by bucket number modulo its length;
	// the floor is the least of them: how fast the tills answer when nothing
	// presses them, over the last minute.
	floors   [6]time.Duration
	floorsAt [6]int64
}

// tillsQuiet is how long after the last redemption the tills count as quiet.
const tillsQuiet = 250 * time.Millisecond

// The tills are pressed when the mean service time of the last window of
// tillsWindow, holding at least pressMinAnswers answers, is more than
// pressRatio times the floor and more than pressMin, or more than
// pressCeiling whatever the floor (a floor learnt while they were already
// overloaded is no floor). A window judges for two windows' time at most.
const (
	tillsWindow     = 100 * time.Millisecond
	floorBucket     = 10 * time.Second
	pressMinAnswers = 10
	pressRatio      = 3
	pressMin        = 3 * time.Millisecond
	pressCeiling    = 20 * time.Millisecond
)

// served notes a redemption request that began at start answered now.
func (t *tills) served(start time.Time) {
	if t == nil {
		return
	}
	now := t.now()
	t.last.Store(now.UnixNano())
	t.mu.Lock()
	if w := now.UnixNano() / int64(tillsWindow); w != t.win {
		t.roll(w)
	}
	t.n++
	t.sum += now.Sub(start)
	t.mu.Unlock()
}

func (t *tills) now() time.Time {
	if t.clock != nil {
		return t.clock()
	}
	return time.Now()
}

// roll closes the window being filled and starts window w; t.mu is held.
func (t *tills) roll(w int64) {
	if t.n >= pressMinAnswers {
		mean := t.sum / time.Duration(t.n)
		t.done, t.doneMean = t.win, mean
		b := t.win * int64(tillsWindow) / int64(floorBucket)
		i := int(b % int64(len(t.floors)))
		if t.floorsAt[i] != b || mean < t.floors[i] {
			t.floors[i], t.floorsAt[i] = mean, b
		}
	}
	t.win, t.n, t.sum = w, 0, 0
}

// pressed reports whether the tills' last judged window, if recent, was
// answered pressRatio times more slowly than the floor of the last minute
// (and more slowly than pressMin), or more slowly than pressCeiling.
func (t *tills) pressed() bool {
	if t == nil {
		return false
	}
	now := t.now().UnixNano()
	w := now / int64(tillsWindow)
	t.mu.Lock()
	defer t.mu.Unlock()
	if w != t.win {
		t.roll(w)
	}
	if t.done < w-2 || t.doneMean <= pressMin {
		return false
	}
	if t.doneMean > pressCeiling {
		return true
	}
	b := now / int64(floorBucket)
	floor := time.Duration(0)
	for i, f := range t.floors {
		if f > 0 && t.floorsAt[i] > b-int64(len(t.floors)) && (floor == 0 || f < floor) {
			floor = f
		}
	}
	return floor > 0 && t.doneMean > pressRatio*floor
}

// busy reports whether a redemption was answered within tillsQuiet.
func (t *tills) busy() bool {
	return t != nil && time.Since(time.Unix(0, t.last.Load())) < tillsQuiet
}

// exportPacer sizes an export's queries: ExportBatch rows while the tills
// are quiet; beside them exportBusyBatch rows, and before each query a rest
// as long as the batch before took to read, encode and write to the client,
// so an export takes at most about half a core and leaves the tills the
// rest.
type exportPacer struct {
	ctx   context.Context
	tills *tills
	rest  func(context.Context, time.Duration) bool
	// since is when the batch before began, zero when it ran at full speed.
	since time.Time
}

// exportPace is how an export under ctx shares the process with the tills:
// the size of each of its queries (exportBatches) and fn wrapped to offer the
// core to waiting requests between rows (yieldingRows).
func exportPace[T any](ctx context.Context, t *tills, fn func(T) error) (models.BatchSize, func(T) error) {
	return exportBatches(ctx, t), yieldingRows(t, runtime.Gosched, fn)
}

// exportBatches is the batch size of an export's queries under ctx, whose
// end also ends a rest (the next query then fails with ctx's error).
func exportBatches(ctx context.Context, t *tills) models.BatchSize {
	p := &exportPacer{ctx: ctx, tills: t, rest: rest}
	return p.next
}

func (p *exportPacer) next() int {
	if !p.tills.busy() {
		p.since = time.Time{}
		return ExportBatch
	}
	if !p.since.IsZero() {
		p.rest(p.ctx, time.Since(p.since))
	}
	p.since = time.Now()
	return exportBusyBatch
}

// exportYieldRows is how many rows an export hands on between offers of its
// core to the tills' requests while they are busy. Go lets a goroutine run
// for about 10 ms before it preempts it, and a batch of rows takes longer to
// encode than that: with GOMAXPROCS=1 (docs/operations.md, a machine shared
// with PostgreSQL) a redemption arriving meanwhile would wait for all of it.
const exportYieldRows = 50

// yieldingRows returns fn that, every exportYieldRows rows while the tills
// are busy, first calls yield (runtime.Gosched outside tests) to let other
// goroutines run: the requests waiting for a core then go ahead of the rest
// of the batch.
func yieldingRows[T any](t *tills, yield func(), fn func(T) error) func(T) error {
	n := 0
	return func(row T) error {
		if n++; n%exportYieldRows == 0 && t.busy() {
			yield()
		}
		return fn(row)
	}
}
