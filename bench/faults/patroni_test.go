package faults

import (
	"strings"
	"testing"
)

func TestPatroniRowsReportAndCount(t *testing.T) {
	tests := []struct {
		name           string
		give           FaultResult
		wantViolations int
		wantText       string
	}{
		{"synchronous, clean", FaultResult{Name: "Patroni failover, synchronous",
			Patroni: &PatroniOutcome{Sync: true, From: "node1", To: "node2", FailoverMS: 2600, KillToSuccessMS: 2700}},
			0, "| Patroni failover, synchronous | synchronous | 0 | 0 | 0 | 0 | 0 | 0 | clean | 2600 ms (node1 → node2) | 2700 ms |"},
		{"a doubled redemption is a violation", FaultResult{Name: "Patroni switchover, synchronous",
			Patroni: &PatroniOutcome{Sync: true, Doubled: 1}},
			1, "| 0 | 1 | clean |"},
		{"asynchronous loss is reported, not counted", FaultResult{Name: "Patroni failover, asynchronous",
			Patroni: &PatroniOutcome{Sync: false, Lost: 2}},
			0, "the kill lost 2 acknowledged redemptions:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Result{Faults: []FaultResult{tt.give}}
			if got := r.Violations(); got != tt.wantViolations {
				t.Errorf("violations %d, want %d", got, tt.wantViolations)
			}
			if md := r.Markdown("test"); !strings.Contains(md, tt.wantText) {
				t.Errorf("report lacks %q:\n%s", tt.wantText, md)
			}
		})
	}
}
