package services

import (
	"testing"
	"time"
)

// While the tills wait for the database, every round of claims waits
// yieldGap after the last, whatever started it; otherwise a poll's search
// claims at once and a woken round after claimGap.
func TestDelivererGivesWayToWaitingTills(t *testing.T) {
	waiting := false
	d := NewDeliverer(nil, time.Now, nil, DelivererOptions{Yield: func() bool { return waiting }})
	tests := []struct {
		name    string
		waiting bool
		search  bool
		want    time.Duration
	}{
		{"poll, tills quiet", false, true, 0},
		{"woken, tills quiet", false, false, claimGap},
		{"poll, tills waiting", true, true, yieldGap},
		{"woken, tills waiting", true, false, yieldGap},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			waiting = tt.waiting
			if got := d.gap(tt.search); got != tt.want {
				t.Errorf("gap = %v, want %v", got, tt.want)
			}
		})
	}
	plain := NewDeliverer(nil, time.Now, nil, DelivererOptions{})
	if got := plain.gap(false); got != claimGap {
		t.Errorf("without Yield: gap = %v, want %v", got, claimGap)
	}
}
