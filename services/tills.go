package services

import (
	"context"
	"runtime"
	"sync/atomic"
	"time"

	"coupond/models"
)

// tills tells background work of this process whether redemptions are being
// served, so that work paces itself beside them and runs at full speed when
// they are quiet. It reads the real clock, not the service's: it measures
// how the process shares its cores, not business time.
type tills struct {
	last atomic.Int64
	// queued is when a redemption request last had to wait for the
	// database (waited).
	queued atomic.Int64
}

// tillsQuiet is how long after the last redemption the tills count as quiet.
const tillsQuiet = 250 * time.Millisecond

// tillsQueuedFor is how long after a redemption request last waited for the
// database the tills count as queued (Redemptions.Waiting).
const tillsQueuedFor = 250 * time.Millisecond

// waited notes that a redemption request had to wait for the database now
// for longer than the next batch: more requests were queued than the next
// batch of the pipeline (or of SQLite's group commit) takes, or every slot
// of the gate was taken. Waiting for a batch under way is how batching
// works; waiting behind a full one means the tills fall behind.
func (t *tills) waited() {
	if t != nil {
		t.queued.Store(time.Now().UnixNano())
	}
}

// queuedWithin reports whether a redemption request waited for the
// database within d.
func (t *tills) queuedWithin(d time.Duration) bool {
	return t != nil && time.Since(time.Unix(0, t.queued.Load())) < d
}

// served notes a redemption request answered now.
func (t *tills) served() {
	if t != nil {
		t.last.Store(time.Now().UnixNano())
	}
}

// busy reports whether a redemption was answered within tillsQuiet.
func (t *tills) busy() bool {
	return t != nil && time.Since(time.Unix(0, t.last.Load())) < tillsQuiet
}

// exportPacer sizes an export's queries: ExportBatch rows while the tills
// are quiet; beside them exportBusyBatch rows, and before each query a rest
// exportRestFactor times as long as the batch before took to read, encode
// and write to the client, so an export takes at most about a sixth of a
// core and leaves the tills the rest.
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

// exportRestFactor is how many times as long as its last batch took an
// export rests beside the tills. With a rest as long as the batch (1), the
// redemption p99 during an export of about 1,350,000 ledger rows at half
// the knee was 24.5-48.0 ms against 11.7-19.6 ms quiet in three runs; with
// 3 it was 21.6-23.0 ms against 13.2-16.8 ms, and the export took 66-72 s
// instead of 32-41 s (docs/TUNING.md, "The export rests longer beside the
// tills"). On a slower machine 3 still added 6-11 ms to a p99 of 17-30 ms
// (1.32-1.73x, 2.37x in a full run). With 5 an export beside the tills
// takes a sixth of a core instead of a quarter: the same row read 1.04x,
// and 1.27x in a full run, the export taking about 1.6 times as long
// ("An export that takes a sixth of a core", 2026-12-07).
const exportRestFactor = 5

func (p *exportPacer) next() int {
	if !p.tills.busy() {
		p.since = time.Time{}
		return ExportBatch
	}
	if !p.since.IsZero() {
		p.rest(p.ctx, exportRestFactor*time.Since(p.since))
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
