package services

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// TestExportPacerRestsOnlyBesideTheTills asks an export's pacer for three
// batch sizes: with the tills quiet it gives full batches and never rests;
// with them busy it gives small ones and rests before every query but the
// first.
func TestExportPacerRestsOnlyBesideTheTills(t *testing.T) {
	tests := []struct {
		name      string
		busy      bool
		wantSize  int
		wantRests int
	}{
		{name: "quiet", wantSize: ExportBatch},
		{name: "busy", busy: true, wantSize: exportBusyBatch, wantRests: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tl := &tills{}
			if tt.busy {
				tl.served()
			}
			rests := 0
			p := &exportPacer{ctx: context.Background(), tills: tl,
				rest: func(_ context.Context, d time.Duration) bool { rests++; return d >= 0 }}
			for range 3 {
				if got := p.next(); got != tt.wantSize {
					t.Fatalf("batch of %d rows, want %d", got, tt.wantSize)
				}
			}
			if rests != tt.wantRests {
				t.Fatalf("rested %d times, want %d", rests, tt.wantRests)
			}
		})
	}
	// Beside the tills each rest is exportRestFactor times the batch before.
	tl := &tills{}
	tl.served()
	var rested time.Duration
	p := &exportPacer{ctx: context.Background(), tills: tl,
		rest: func(_ context.Context, d time.Duration) bool { rested = d; return true }}
	p.next()
	took := 40 * time.Millisecond
	p.since = time.Now().Add(-took)
	p.next()
	if rested < exportRestFactor*took || rested > exportRestFactor*(took+time.Second) {
		t.Fatalf("rested %s after a batch of %s, want %d times as long", rested, took, exportRestFactor)
	}
	var none *tills
	if none.busy() {
		t.Fatal("no tills reported busy")
	}
}

// TestYieldingRowsOffersTheCoreWhileBusy counts the offers of the core an
// export's row callback makes: one after every exportYieldRows-th row while
// the tills are busy, none while they are quiet; either way every row
// reaches the callback once, in order, and an error stops the rows.
func TestYieldingRowsOffersTheCoreWhileBusy(t *testing.T) {
	tests := []struct {
		name string
		busy bool
		// want is the rows after which the core is offered, counted from 0.
		want []int
	}{
		{name: "quiet"},
		{name: "busy", busy: true, want: []int{exportYieldRows - 1, 2*exportYieldRows - 1, 3*exportYieldRows - 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tl := &tills{}
			if tt.busy {
				tl.served()
			}
			var offers, got []int
			row := 0
			fn := yieldingRows(tl, func() { offers = append(offers, row) }, func(i int) error {
				got = append(got, i)
				return nil
			})
			want := make([]int, 3*exportYieldRows+exportYieldRows/2)
			for i := range want {
				want[i], row = i, i
				if err := fn(i); err != nil {
					t.Fatal(err)
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("rows %v, want %v", got, want)
			}
			if !slices.Equal(offers, tt.want) {
				t.Fatalf("offered the core after rows %v, want %v", offers, tt.want)
			}
		})
	}
	stop := errors.New("client gone")
	n := 0
	fn := yieldingRows(&tills{}, runtime.Gosched, func(int) error { n++; return stop })
	if err := fn(1); !errors.Is(err, stop) || n != 1 {
		t.Fatalf("error %v after %d rows, want %v after 1", err, n, stop)
	}
}

// TestYieldingRowsLetsTheTillsIn runs an export's row callback, as
// exportPace builds it, on one core beside a goroutine that is ready to run:
// while the tills are busy that goroutine gets the core within the first
// offers. An offer is runtime.Gosched, which puts the yielding goroutine on
// the global run queue, and Go's scheduler looks at that queue first on
// every 61st schedule, so one offer may hand the core straight back; two
// offers in a row cannot both do that, hence three offers of slack.
func TestYieldingRowsLetsTheTillsIn(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	tl := &tills{}
	tl.served()
	var ready atomic.Bool
	ranAt := -1
	_, fn := exportPace(context.Background(), tl, func(i int) error {
		if ranAt < 0 && ready.Load() {
			ranAt = i
		}
		return nil
	})
	go ready.Store(true)
	for i := range 10 * exportYieldRows {
		if err := fn(i); err != nil {
			t.Fatal(err)
		}
	}
	if ranAt < 0 || ranAt >= 3*exportYieldRows {
		t.Fatalf("the waiting goroutine ran at row %d, want before row %d", ranAt, 3*exportYieldRows)
	}
}

// TestReconciliationRestsLongerBesideTheTills: the job's run rests as long
// as a batch took while no redemption was answered here lately, three times
// as long while they are; the audit's whole-check mode never rests.
func TestReconciliationRestsLongerBesideTheTills(t *testing.T) {
	tests := []struct {
		name string
		mode runMode
		busy bool
		want int
	}{
		{"job, tills quiet", yieldingRun, false, 1},
		{"job, tills busy", yieldingRun, true, 3},
		{"audit, tills busy", runMode{workers: checkWorkers}, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Reconciler{tills: &tills{}}
			if tt.busy {
				r.tills.served()
			}
			if got := r.pause(tt.mode); got != tt.want {
				t.Fatalf("pause %d, want %d", got, tt.want)
			}
		})
	}
}
