package perf

import (
	"testing"
	"time"

	"coupond/bench/load"
)

// rampRecords makes ten answers per second of a ramp, each second's answers
// taking lat(second).
func rampRecords(secs int, lat func(sec int) time.Duration) []*load.Record {
	var rs []*load.Record
	for s := range secs {
		for i := range 10 {
			at := time.Duration(s)*time.Second + time.Duration(i)*100*time.Millisecond
			rs = append(rs, &load.Record{Intended: at, Sent: at, Done: at + lat(s), Outcome: load.OK, Result: "SUCCEEDED"})
		}
	}
	return rs
}

// The knee is the last good window before two bad ones in a row, including
// when the ramp ends in a bad window.
func TestKneeOfARamp(t *testing.T) {
	ramp := load.Ramp{From: 100, To: 1000, Over: 10 * time.Second}
	tests := []struct {
		name string
		bad  func(sec int) bool
		want float64
	}{
		{"never bad", func(int) bool { return false }, ramp.Rate(9*time.Second + time.Second/2)},
		{"two bad from the fourth second", func(s int) bool { return s >= 3 }, ramp.Rate(2*time.Second + time.Second/2)},
		{"one bad window alone is noise", func(s int) bool { return s == 3 }, ramp.Rate(9*time.Second + time.Second/2)},
		{"only the last window bad", func(s int) bool { return s == 9 }, ramp.Rate(8*time.Second + time.Second/2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := rampRecords(10, func(s int) time.Duration {
				if tt.bad(s) {
					return 500 * time.Millisecond
				}
				return 5 * time.Millisecond
			})
			_, got, reason := knee(rs, ramp)
			if got != round(tt.want) {
				t.Fatalf("knee %.2f/s (%s), want %.2f/s", got, reason, round(tt.want))
			}
		})
	}
}
