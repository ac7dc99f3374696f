package perf

import (
	"testing"
	"time"

	"coupond/bench/load"
)

func TestBySecond(t *testing.T) {
	at := func(d time.Duration) *load.Record { return &load.Record{Intended: d, Outcome: load.OK} }
	rs := []*load.Record{at(100 * time.Millisecond), at(900 * time.Millisecond), at(2500 * time.Millisecond)}
	got := bySecond(rs)
	if len(got) != 3 || len(got[0]) != 2 || len(got[1]) != 0 || len(got[2]) != 1 {
		t.Fatalf("buckets %v, want 2, 0 and 1 records", got)
	}
	ws := windows(rs)
	if len(ws) != 3 || ws[0].OK != 2 || ws[1].OK != 0 || ws[2].OK != 1 || ws[2].Second != 2 {
		t.Fatalf("windows %+v", ws)
	}
}
