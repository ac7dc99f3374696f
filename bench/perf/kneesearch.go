package perf

import "math"

// kneeStepKind is the phase of kneeSearch a step belongs to.
type kneeStepKind int

const (
	// stepDown: from the ramp's knee down by 10% until a step holds (the
	// first step is one).
	stepDown kneeStepKind = iota
	// stepUp: up by 10% from a ramp's knee that held at once, until a step
	// does not hold.
	stepUp
	// stepMid: halfway between the highest rate that held and the lowest
	// above it that did not.
	stepMid
)

// kneeSearch finds a sustained knee from the ramp's knee start (at least
// 50/s), the same way for every row that reports one. It steps down by 10%
// until a step holds (six steps at most); when the first step holds, it
// steps up by 10% until one does not (nine steps at most): the ramp judges
// one-second windows and can break down on a passing stall below what the
// server sustains. The steps are
// 10% apart, so the knee found may be up to a tenth below the highest rate
// that holds: when a rate held and the step above it did not, one more step
// halfway between them tells which half the knee is in, and the knee is
// known within 5%. step runs step i (0 first) at rate and reports whether
// it held. The knee is the highest rate that held, or the last step's when
// none did.
func kneeSearch(start float64, step func(i int, rate float64, kind kneeStepKind) (bool, error)) (float64, error) {
	var steps []KneeStep
	var knee float64
	up := false
	rate := math.Max(start, 50)
	for try := 0; ; try++ {
		kind := stepDown
		if up {
			kind = stepUp
		}
		held, err := step(len(steps), rate, kind)
		if err != nil {
			return knee, err
		}
		steps = append(steps, KneeStep{Rate: rate, Held: held})
		if held || !up {
			knee = rate
		}
		if held && try == 0 {
			up = true
		}
		if (!up && (held || try >= 5)) || (up && (!held || try >= 8)) {
			break
		}
		if up {
			rate = math.Round(rate * 1.1)
		} else {
			rate = math.Round(rate * 0.9)
		}
	}
	if lo, hi := kneeBracket(steps); lo > 0 && hi > lo*1.06 {
		rate := math.Round((lo + hi) / 2)
		held, err := step(len(steps), rate, stepMid)
		if err != nil {
			return knee, err
		}
		if held {
			knee = rate
		}
	}
	return knee, nil
}
