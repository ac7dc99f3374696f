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

func TestCodesEnsureRefillsBeforeARun(t *testing.T) {
	issued := 0
	c := &codes{list: []string{"a", "b"}}
	c.refill = func(n int) ([]string, error) {
		issued += n
		return make([]string, n), nil
	}
	if err := c.ensure(2); err != nil || issued != 0 {
		t.Fatalf("ensure(2) with 2 left: err %v, issued %d; want no refill", err, issued)
	}
	if err := c.ensure(3); err != nil || issued != minRefill || c.left() != 2+minRefill {
		t.Fatalf("ensure(3) with 2 left: err %v, issued %d, left %d; want a refill of %d", err, issued, c.left(), minRefill)
	}
	left := c.left()
	if err := c.ensure(left + 2_500_000); err != nil || issued != minRefill+2_500_000 {
		t.Fatalf("ensure(2.5M more): err %v, issued %d; want one refill of what is missing", err, issued-minRefill)
	}
	none := &codes{list: []string{"a"}}
	if err := none.ensure(10); err != nil || none.take() != "a" || none.take() != "0000000000000" {
		t.Fatal("a pool without refill hands out what it has, then the out-of-codes code")
	}
}
