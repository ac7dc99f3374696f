package perf

import (
	"testing"

	"coupond/bench/load"
)

func TestReplicaVerdict(t *testing.T) {
	run := func(p99, perSec, xacts float64) ReplicaRun {
		return ReplicaRun{Stats: load.Stats{Ops: 1000, P99: p99}, AnsweredPerSec: perSec, DBXactsPerOp: xacts}
	}
	for _, c := range []struct {
		name    string
		off, on ReplicaRun
		want    int
	}{
		{"fewer transactions, same speed", run(100, 500, 1), run(102, 495, 0.2), 1},
		{"faster, same work", run(100, 500, 1), run(80, 500, 1), 1},
		{"slower, same work", run(10, 300, 1), run(14, 300, 1.05), -1},
		{"even", run(10, 300, 1), run(10.5, 300, 0.98), 0},
		{"saves work but slower", run(10, 300, 1), run(20, 300, 0.5), 0},
	} {
		if _, got := (ReplicaScenario{Off: c.off, On: c.on}).verdict(); got != c.want {
			t.Errorf("%s: verdict %d, want %d", c.name, got, c.want)
		}
	}
	bad := ReplicaScenario{Off: run(1, 1, 1), On: run(1, 1, 0.1)}
	bad.On.Violations = []string{"x"}
	if _, got := bad.verdict(); got != -1 {
		t.Errorf("violations must never pay")
	}
}
