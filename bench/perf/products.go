package perf

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"sync/atomic"
	"time"

	"coupond/bench/harness"
	"coupond/bench/load"
)

// RulesKneeTarget is the issue's bound: the knee on campaigns with weekday
// and time rules is at least this share of the knee without, in the same run.
const RulesKneeTarget = 0.95

// StoreLimitP99MS is the p99 the per-store daily limit's rate is measured at.
const StoreLimitP99MS = 50

// storeLimitStepOps is the fewest redemptions a step of the per-store daily
// limit measures.
const storeLimitStepOps = 500

// ProductRows are the rows of the coupon products (issue 15): the sustained
// knee on a campaign with weekday and time-of-day rules against a plain one,
// measured the same way in the same run, and the highest rate one store
// sustains on a campaign with a per-store daily limit.
type ProductRows struct {
	// StepSeconds is each constant run's length.
	StepSeconds float64 `json:"step_seconds"`
	// KneePlain and KneeRules are the sustained knees (p99 <= 100 ms, no
	// errors, nothing rejected): the plain campaign's and that of a campaign
	// with all seven weekdays and a daily window covering the day but one
	// minute, half a day away from the run. Both step down from the same
	// start by 5%, so their ratio is read to one step.
	KneeStart  float64    `json:"knee_start_per_sec"`
	KneePlain  float64    `json:"knee_plain_per_sec"`
	KneeRules  float64    `json:"knee_rules_per_sec"`
	PlainSteps []KneeStep `json:"knee_plain_steps"`
	RulesSteps []KneeStep `json:"knee_rules_steps"`
	// PlainHeld and RulesHeld say whether each side held at its knee: at a
	// rate where one side's run held and the other's did not, each side ran
	// twice more (Confirm steps) and held if two of its three runs did.
	// Nil in records made before the confirmation, where the last step
	// decides.
	PlainHeld *bool  `json:"knee_plain_held,omitempty"`
	RulesHeld *bool  `json:"knee_rules_held,omitempty"`
	Window    string `json:"rules_window"`
	// StoreLimitRate is the highest rate, of steps going up, at which all
	// redemptions at one store of a campaign with a perStoreDailyLimit
	// (never reached) kept p99 <= StoreLimitP99MS with no errors; 0 when the
	// first step did not hold. StoreLimitReason says why the steps stopped.
	StoreLimit       int64      `json:"store_daily_limit"`
	StoreLimitRate   float64    `json:"store_limit_rate_per_sec"`
	StoreLimitSteps  []KneeStep `json:"store_limit_steps"`
	StoreLimitReason string     `json:"store_limit_reason"`
}

// productCampaign creates a campaign with extra input fields, issues n codes
// and returns them.
func productCampaign(ctx context.Context, fx *harness.Fixture, name string, n int, extra map[string]any) ([]string, error) {
	now := time.Now().UTC()
	in := map[string]any{"name": name, "type": "CASH", "value": 1000, "minSpend": 0,
		"validFrom": now.Add(-24 * time.Hour).Format(time.RFC3339), "validTo": now.Add(365 * 24 * time.Hour).Format(time.RFC3339),
		"totalQuantity": n, "refundWindowMinutes": 1440}
	for k, v := range extra {
		in[k] = v
	}
	var out struct {
		CreateCampaign struct{ ID string } `json:"createCampaign"`
	}
	if err := fx.Admin.Do(ctx, `mutation($in: CreateCampaignInput!) { createCampaign(input: $in) { id } }`,
		map[string]any{"in": in}, &out); err != nil {
		return nil, fmt.Errorf("create campaign %s: %w", name, err)
	}
	if _, err := harness.Issue(ctx, fx.Admin, out.CreateCampaign.ID, n); err != nil {
		return nil, err
	}
	return harness.Codes(ctx, fx.Pool, out.CreateCampaign.ID)
}

// wholeDayWindow is a daily window in the merchant's time zone that covers
// every minute but one, that one half a day from now: a window with from ==
// to is refused, and the rules must cost their check without rejecting.
func wholeDayWindow(ctx context.Context, fx *harness.Fixture) (map[string]any, error) {
	var tz string
	if err := fx.Pool.QueryRow(ctx, `SELECT timezone FROM merchants WHERE code = $1`, fx.Merchant.Code).Scan(&tz); err != nil {
		return nil, fmt.Errorf("merchant time zone: %w", err)
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, err
	}
	from := time.Now().In(loc).Add(12 * time.Hour)
	to := from.Add(-time.Minute)
	return map[string]any{"from": from.Format("15:04"), "to": to.Format("15:04")}, nil
}

// productScenarios measures the products' rows on fx, starting the knees at
// start (the main run's sustained knee, or a short ramp's under ONLY), with
// constant runs of step.
func productScenarios(ctx context.Context, cfg Config, fx *harness.Fixture, res *Result, audit func(*Scenario) error,
	start float64, step time.Duration) error {
	rows := &ProductRows{StepSeconds: step.Seconds(), KneeStart: math.Round(start)}
	res.Products = rows
	url := fx.Server.URL() + "/graphql"
	// Each side starts with codes for six runs at the start rate, each after
	// its warm-up, and refills with a campaign like its first before a run
	// that needs more: the loop can make six steps, each with two
	// confirmations when the sides split, and on a fast machine eighteen
	// runs' worth is more than one campaign may issue.
	n := min(opsFor(start, step+warmUpFor)*6, maxCampaign)
	window, err := wholeDayWindow(ctx, fx)
	if err != nil {
		return err
	}
	rows.Window = fmt.Sprintf("%s-%s", window["from"], window["to"])
	cfg.logf("products: plain and rules campaigns of %d codes each (window %s)", n, rows.Window)
	sidePool := func(name string, extra map[string]any) (*codes, error) {
		issue := func(name string, n int) ([]string, error) { return productCampaign(ctx, fx, name, n, extra) }
		list, err := issue(name, n)
		if err != nil {
			return nil, err
		}
		return refillingPool(ctx, cfg, fx, name, list, issue), nil
	}
	plainPool, err := sidePool("products-plain", nil)
	if err != nil {
		return err
	}
	rulesPool, err := sidePool("products-rules", map[string]any{
		"weekdays":    []string{"MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY", "SUNDAY"},
		"dailyWindow": window})
	if err != nil {
		return err
	}
	if err := settle(ctx, fx); err != nil {
		return err
	}
	var rid atomic.Int64
	// constant measures d at rate after warmUpFor unmeasured at that rate,
	// as the run's own knee steps do: each step follows an audit and a
	// checkpoint that leave the server idle.
	constant := func(name string, pool *codes, rate float64, d time.Duration) (Scenario, KneeStep) {
		if err := pool.ensure(opsFor(rate, warmUpFor+d)); err != nil {
			cfg.logf("  %v", err) // the run's redemptions then fail, and its row says so
		}
		warmUpAt(ctx, url, fx.Clerk, rate, func(int) load.Op {
			return load.Redeem("redeem", pool.take(), fx.StoreID, "pwarm-"+strconv.FormatInt(rid.Add(1), 10))
		})
		cfg.logf("%s: %.0f/s for %s", name, rate, d)
		sm := harness.StartSampler(fx.Server, 200*time.Millisecond)
		recs := load.Run(ctx, load.Attack{Name: name, URL: url, Token: fx.Clerk, Pacer: load.Constant{PerSec: rate},
			Duration: d, MaxOps: int(rate*d.Seconds()) + 1, Timeout: 10 * time.Second,
			Next: func(int) load.Op {
				return load.Redeem("redeem", pool.take(), fx.StoreID, "prod-"+strconv.FormatInt(rid.Add(1), 10))
			}})
		s := Scenario{Name: name, Stats: load.Summarise(recs, nil), During: sm.Stop(), Extra: map[string]any{"rate": rate},
			Windows: windows(recs)}
		return s, KneeStep{Rate: rate, P99: s.Stats.P99, ErrorRate: s.Stats.ErrorRate}
	}
	// Both knees step down from the same start by 5%, alternating plain and
	// rules at each rate so neither gets a quieter machine; a campaign that
	// held stops stepping. One 15 s run a side is a noisy judge: where one
	// side held and the other did not, each runs twice more at that rate
	// (the order alternating), and each side's answer there is the majority
	// of its three runs.
	type side struct {
		label string
		pool  *codes
		held  *bool
		knee  *float64
		steps *[]KneeStep
	}
	plainHeld, rulesHeld := false, false
	rows.PlainHeld, rows.RulesHeld = &plainHeld, &rulesHeld
	sides := []side{
		{"plain", plainPool, &plainHeld, &rows.KneePlain, &rows.PlainSteps},
		{"weekday and time rules", rulesPool, &rulesHeld, &rows.KneeRules, &rows.RulesSteps},
	}
	// run measures c at rate and reports whether the run held.
	run := func(c side, rate float64, confirm bool) (bool, error) {
		s, ks := constant(fmt.Sprintf("products knee, %s campaign", c.label), c.pool, rate, step)
		// Nothing may be rejected: the rules campaign's window and days
		// cover the run, so a rejection is a wrong rule, not load.
		ks.Held = s.Stats.P99 <= 100 && s.Stats.ErrorRate == 0 && s.Stats.Unknown == 0 && s.Stats.Fail == 0
		ks.Confirm = confirm
		*c.steps = append(*c.steps, ks)
		*c.knee = rate
		s.Extra["held"], s.Extra["confirm"] = ks.Held, confirm
		return ks.Held, audit(&s)
	}
	for try, rate := 0, math.Round(start); try < 6 && !(plainHeld && rulesHeld); try, rate = try+1, math.Round(rate*0.95) {
		var ran []side
		holds := map[string]int{}
		for _, c := range sides {
			if *c.held {
				continue
			}
			ok, err := run(c, rate, false)
			if err != nil {
				return err
			}
			ran = append(ran, c)
			if ok {
				holds[c.label]++
			}
		}
		if len(ran) == 2 && len(holds) == 1 {
			cfg.logf("products: the sides split at %.0f/s; each runs twice more", rate)
			for k := 0; k < 2; k++ {
				for i := range ran {
					c := ran[(i+1+k)%2] // rules, plain, then plain, rules
					ok, err := run(c, rate, true)
					if err != nil {
						return err
					}
					if ok {
						holds[c.label]++
					}
				}
			}
			for _, c := range ran {
				*c.held = holds[c.label] >= 2
			}
		} else {
			for _, c := range ran {
				*c.held = holds[c.label] == 1
			}
		}
		if err := settle(ctx, fx); err != nil {
			return err
		}
	}
	cfg.logf("products: knee plain %.0f/s, with weekday and time rules %.0f/s (%.2f×)", rows.KneePlain, rows.KneeRules,
		rows.KneeRules/nz(rows.KneePlain))

	// Per-store daily limit: one store takes every redemption, so each one
	// updates the same counter row. Rates step up until p99 passes
	// StoreLimitP99MS or an error shows. A step lasts short, or long
	// enough for storeLimitStepOps redemptions at the low rates, so its
	// p99 is not the third-slowest of 150.
	short := max(step/3, 3*time.Second)
	rates := []float64{50, 100, 150, 225, 340, 500, 750, 1100, 1600, 2400}
	stepFor := func(rate float64) time.Duration {
		return max(short, time.Duration(float64(storeLimitStepOps)/rate*float64(time.Second)))
	}
	total := 0
	for _, r := range rates {
		total += int(r*(stepFor(r)+warmUpFor).Seconds()) + 1
	}
	rows.StoreLimit = int64(total) * 10
	cfg.logf("products: per-store daily limit campaign of %d codes (limit %d a store a day)", total, rows.StoreLimit)
	storeCodes, err := productCampaign(ctx, fx, "products-store-limit", total, map[string]any{"perStoreDailyLimit": rows.StoreLimit})
	if err != nil {
		return err
	}
	if err := settle(ctx, fx); err != nil {
		return err
	}
	storePool := &codes{list: storeCodes}
	rows.StoreLimitReason = "the last step held"
	for _, rate := range rates {
		s, ks := constant("products: per-store daily limit, one store", storePool, rate, stepFor(rate))
		ks.Held = s.Stats.P99 <= StoreLimitP99MS && s.Stats.ErrorRate == 0 && s.Stats.Unknown == 0 && s.Stats.Fail == 0
		rows.StoreLimitSteps = append(rows.StoreLimitSteps, ks)
		s.Extra["held"] = ks.Held
		if err := audit(&s); err != nil {
			return err
		}
		if !ks.Held {
			rows.StoreLimitReason = fmt.Sprintf("%.0f/s: p99 %.1f ms, error rate %.3f, %d unknown, %d failed",
				rate, s.Stats.P99, s.Stats.ErrorRate, s.Stats.Unknown, s.Stats.Fail)
			break
		}
		rows.StoreLimitRate = rate
	}
	cfg.logf("products: per-store daily limit holds p99 <= %d ms up to %.0f/s at one store (%s)", StoreLimitP99MS,
		rows.StoreLimitRate, rows.StoreLimitReason)
	return nil
}

// productsOnly runs the products' rows alone (ONLY=products): a fixture, a
// short ramp on a plain campaign for the knees' start, then the rows.
func productsOnly(ctx context.Context, cfg Config, res *Result) error {
	env := cfg.Env
	fx, err := env.NewFixture(ctx, "coupond_bench_products", harness.ServerConfig{GoMaxProcs: serverProcs(), Name: "bench-products", Jobs: true,
		HoldTimeout: 2 * time.Minute, CompensateEvery: 30 * time.Second})
	if err != nil {
		return err
	}
	defer fx.Close()
	audit := onlyAudit(ctx, cfg, fx, res)
	rampTo, rampOver, step := 3000.0, 20*time.Second, 10*time.Second
	if cfg.Quick {
		rampTo, rampOver, step = 2000, 10*time.Second, 3*time.Second
	}
	rampKnee, err := onlyRamp(ctx, cfg, fx, res, "products", rampTo, rampOver)
	if err != nil {
		return err
	}
	return productScenarios(ctx, cfg, fx, res, audit, math.Max(rampKnee, 50), step)
}

// onlyAudit is an ONLY run's audit after each scenario: it records the
// scenario with the audit's violations and the server's sample after it.
func onlyAudit(ctx context.Context, cfg Config, fx *harness.Fixture, res *Result) func(*Scenario) error {
	return func(s *Scenario) error {
		a, err := cfg.Env.Audit(ctx, fx.DBURL, 2*time.Minute, 30*time.Second)
		s.Audit = a
		s.After = fx.Server.Sample()
		res.MaxRSSMB = math.Max(res.MaxRSSMB, math.Max(s.After.RSSMB, s.During.RSSMB))
		res.Scenarios = append(res.Scenarios, *s)
		cfg.logf("  %s: %d ops, ok %d, fail %d, unknown %d, p50 %.1f p99 %.1f ms; audit violations %d", s.Name, s.Stats.Ops,
			s.Stats.OK, s.Stats.Fail, s.Stats.Unknown, s.Stats.P50, s.Stats.P99, len(a.Violations))
		return err
	}
}

// onlyRamp is an ONLY run's throughput ramp on a plain campaign of its own,
// from 50/s to rampTo over rampOver, stopping once it is long past the knee;
// it records and returns the ramp's knee, where the run's steps start.
func onlyRamp(ctx context.Context, cfg Config, fx *harness.Fixture, res *Result, name string, rampTo float64,
	rampOver time.Duration) (float64, error) {
	n := int(rampTo*rampOver.Seconds()) + 1000 + 150
	cfg.logf("%s: ramp campaign of %d codes", name, n)
	_, _, list, err := fx.Campaign(ctx, name+"-ramp", n)
	if err != nil {
		return 0, err
	}
	if err := settle(ctx, fx); err != nil {
		return 0, err
	}
	pool := &codes{list: list}
	url := fx.Server.URL() + "/graphql"
	var rid atomic.Int64
	load.Run(ctx, load.Attack{Name: "warm-up", URL: url, Token: fx.Clerk, Pacer: load.Constant{PerSec: 50},
		Duration: 3 * time.Second, MaxOps: 150, Next: func(int) load.Op {
			return load.Redeem("redeem", pool.take(), fx.StoreID, "pwarm-"+strconv.FormatInt(rid.Add(1), 10))
		}})
	cfg.logf("%s: ramp 50 -> %.0f/s over %s for the knees' start", name, rampTo, rampOver)
	rctx, cancel := context.WithCancel(ctx)
	var slow atomic.Int64
	ramp := load.Run(rctx, load.Attack{Name: name + "-ramp", URL: url, Token: fx.Clerk, Pacer: load.Ramp{From: 50, To: rampTo, Over: rampOver},
		Duration: rampOver, MaxOps: int(rampTo * rampOver.Seconds()), Timeout: 10 * time.Second,
		Next: func(int) load.Op {
			return load.Redeem("redeem", pool.take(), fx.StoreID, "pramp-"+strconv.FormatInt(rid.Add(1), 10))
		},
		OnDone: func(r *load.Record) {
			if r.Latency() > time.Second && slow.Add(1) > 200 {
				cancel()
			}
		}})
	cancel()
	_, rampKnee, reason := knee(ramp, load.Ramp{From: 50, To: rampTo, Over: rampOver})
	res.RampKnee, res.KneeReason = rampKnee, reason
	cfg.logf("%s: ramp knee %.0f/s (%s)", name, rampKnee, reason)
	return rampKnee, settle(ctx, fx)
}
