package perf

import (
	"slices"
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

// The knee's steps against a server that holds every rate up to capacity:
// down by 10% until one holds, up by 10% from a start that held, at most
// six steps down and nine up, then one halfway when a held rate and the
// failed one above it are more than 6% apart.
func TestKneeSearch(t *testing.T) {
	tests := []struct {
		name            string
		start, capacity float64
		wantRates       []float64
		wantKinds       []kneeStepKind
		wantKnee        float64
	}{
		{"down, then halfway held", 1000, 860, []float64{1000, 900, 810, 855},
			[]kneeStepKind{stepDown, stepDown, stepDown, stepMid}, 855},
		{"down, then halfway failed", 1000, 850, []float64{1000, 900, 810, 855},
			[]kneeStepKind{stepDown, stepDown, stepDown, stepMid}, 810},
		{"up from a start that held", 1000, 1200, []float64{1000, 1100, 1210, 1155},
			[]kneeStepKind{stepDown, stepUp, stepUp, stepMid}, 1155},
		{"nothing holds: the sixth step down", 1000, 100, []float64{1000, 900, 810, 729, 656, 590},
			[]kneeStepKind{stepDown, stepDown, stepDown, stepDown, stepDown, stepDown}, 590},
		{"everything holds: nine steps up", 1000, 1e9, []float64{1000, 1100, 1210, 1331, 1464, 1610, 1771, 1948, 2143},
			[]kneeStepKind{stepDown, stepUp, stepUp, stepUp, stepUp, stepUp, stepUp, stepUp, stepUp}, 2143},
		{"halfway at the rate held", 100, 95, []float64{100, 90, 95},
			[]kneeStepKind{stepDown, stepDown, stepMid}, 95},
		{"a start below 50/s", 10, 1000, []float64{50, 55, 61, 67, 74, 81, 89, 98, 108}, nil, 108},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rates []float64
			var kinds []kneeStepKind
			knee, err := kneeSearch(tt.start, func(i int, rate float64, kind kneeStepKind) (bool, error) {
				if i != len(rates) {
					t.Fatalf("step %d numbered %d", len(rates), i)
				}
				rates, kinds = append(rates, rate), append(kinds, kind)
				return rate <= tt.capacity, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(rates, tt.wantRates) || (tt.wantKinds != nil && !slices.Equal(kinds, tt.wantKinds)) || knee != tt.wantKnee {
				t.Fatalf("rates %v kinds %v knee %v, want %v %v %v", rates, kinds, knee, tt.wantRates, tt.wantKinds, tt.wantKnee)
			}
		})
	}
}
