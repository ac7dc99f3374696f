package harness

import "testing"

func TestHostShare(t *testing.T) {
	a := parseHostCPU("cpu  100 0 50 800 50 0 0 0 0 0")
	b := parseHostCPU("cpu  400 0 150 1100 100 0 50 200 30 0")
	// 1000 ticks passed: 350 idle or waiting for I/O, 200 stolen; guest
	// time (30) is part of user time and not counted twice.
	got := b.Since(a)
	if got.IdlePct != 35 || got.StealPct != 20 {
		t.Fatalf("got %+v, want idle 35%% steal 20%%", got)
	}
	if (HostCPU{}).Since(a) != (HostShare{}) {
		t.Fatal("a reading that went backwards must give zero")
	}
	if parseHostCPU("intr 1 2 3") != (HostCPU{}) {
		t.Fatal("a line other than cpu must give zero")
	}
}
