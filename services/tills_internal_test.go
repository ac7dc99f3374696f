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
	var none *tills
	if none.busy() {
		t.Fatal("no tills reported busy")
	}
}

// TestYieldingRowsLetsTheTillsIn runs an export's row callback on one core
// beside a goroutine that is ready to run: while the tills are busy that
// goroutine runs before the exportYieldRows-th row at the latest; either way
// every row reaches the callback once, in order, and an error stops the rows.
func TestYieldingRowsLetsTheTillsIn(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for _, busy := range []bool{false, true} {
		tl := &tills{}
		if busy {
			tl.served()
		}
		var ready atomic.Bool
		ranAt := -1
		var got []int
		fn := yieldingRows(tl, func(i int) error {
			if ranAt < 0 && ready.Load() {
				ranAt = i
			}
			got = append(got, i)
			return nil
		})
		go ready.Store(true)
		want := make([]int, 2*exportYieldRows)
		for i := range want {
			want[i] = i
			if err := fn(i); err != nil {
				t.Fatal(err)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("busy %v: rows %v, want %v", busy, got, want)
		}
		if busy && (ranAt < 0 || ranAt >= exportYieldRows) {
			t.Fatalf("the waiting goroutine ran at row %d, want before row %d", ranAt, exportYieldRows)
		}
	}
	stop := errors.New("client gone")
	n := 0
	fn := yieldingRows(&tills{}, func(int) error { n++; return stop })
	if err := fn(1); !errors.Is(err, stop) || n != 1 {
		t.Fatalf("error %v after %d rows, want %v after 1", err, n, stop)
	}
}
