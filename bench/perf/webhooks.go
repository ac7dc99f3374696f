package perf

import (
	"context"
	"math"
	"strconv"
	"sync/atomic"
	"time"

	"coupond/bench/harness"
	"coupond/bench/load"
)

// WebhookKneeTarget is the bound: the knee with one subscribed
// endpoint is at least this share of the knee without, in the same run.
const WebhookKneeTarget = 0.9

// WebhookKnees are the sustained knees without and with one subscribed
// endpoint, found by stepping down from Start in pairs.
type WebhookKnees struct {
	Start       float64    `json:"start_per_sec"`
	StepSeconds float64    `json:"step_seconds"`
	KneePlain   float64    `json:"knee_plain_per_sec"`
	KneeHook    float64    `json:"knee_webhook_per_sec"`
	PlainSteps  []KneeStep `json:"knee_plain_steps"`
	HookSteps   []KneeStep `json:"knee_webhook_steps"`
}

// held reports whether both knees were found (the last step of each held).
func (w *WebhookKnees) held() bool {
	return len(w.PlainSteps) > 0 && w.PlainSteps[len(w.PlainSteps)-1].Held &&
		len(w.HookSteps) > 0 && w.HookSteps[len(w.HookSteps)-1].Held
}

// webhookScenarios measures redemption with one webhook endpoint subscribed
// to every event type, at the benchmark's receiver on loopback: the same
// ramp as without (its knee beside the run's ramp knee); the sustained knees
// without and with the endpoint, stepping down from res.Knee by 5% with a
// constant run of each at every rate, without first, so neither gets a
// quieter machine (the ratio of the two is the target); then a constant
// rate at half the knee without the endpoint, with the delivery lag of its
// events (from the event's createdAt to the receiver accepting it). The
// endpoint is deleted at the end.
func webhookScenarios(ctx context.Context, cfg Config, fx *harness.Fixture, res *Result, audit func(*Scenario) error,
	nLoad int, rampTo float64, rampOver, stepSecs time.Duration) error {
	rcv, err := harness.StartReceiver()
	if err != nil {
		return err
	}
	defer rcv.Down()
	id, err := harness.Subscribe(ctx, fx.Admin, rcv)
	if err != nil {
		return err
	}
	defer func() {
		if id != "" {
			_ = harness.Unsubscribe(context.WithoutCancel(ctx), fx.Admin, id)
		}
	}()
	cfg.logf("webhooks: campaign of %d codes", nLoad)
	_, _, list, err := fx.Campaign(ctx, "webhooks", nLoad)
	if err != nil {
		return err
	}
	// The steps go on down to half the knee: on a fast machine they take
	// more codes than the campaign has, so each run first tops the pool up
	// with a campaign of its own when it holds less than the run takes.
	pool := refillingPool(ctx, cfg, fx, "webhooks", list, campaignCodes(ctx, fx))
	topUp := func(rate float64, d time.Duration) error { return pool.ensure(opsFor(rate, warmUpFor+d)) }
	var rid atomic.Int64
	next := func(prefix string) func(int) load.Op {
		return func(int) load.Op {
			return load.Redeem("redeem", pool.take(), fx.StoreID, prefix+strconv.FormatInt(rid.Add(1), 10))
		}
	}
	drained := func() error { return drainDeliveries(ctx, fx, 5*time.Minute) }
	if err := drained(); err != nil {
		return err
	}
	if err := settle(ctx, fx); err != nil {
		return err
	}
	url := fx.Server.URL() + "/graphql"

	cfg.logf("throughput ramp with one subscribed webhook endpoint 50 -> %.0f/s over %s", rampTo, rampOver)
	sm := harness.StartSampler(fx.Server, 200*time.Millisecond)
	ramp := rampUntilBroken(ctx, "ramp-webhook", url, fx.Clerk, rampTo, rampOver, next("wramp-"))
	s := Scenario{Name: "throughput ramp, one subscribed webhook endpoint", Stats: load.Summarise(ramp, nil), During: sm.Stop()}
	_, res.KneeWebhook, res.KneeWebhookReason = knee(ramp, load.Ramp{From: 50, To: rampTo, Over: rampOver})
	s.Extra = map[string]any{"knee_per_sec": res.KneeWebhook, "knee_reason": res.KneeWebhookReason,
		"knee_without_per_sec": res.Knee}
	if err := audit(&s); err != nil {
		return err
	}
	cfg.logf("ramp knee with one subscribed endpoint %.0f/s (%s), without %.0f/s", res.KneeWebhook, res.KneeWebhookReason, res.RampKnee)
	if err := drained(); err != nil {
		return err
	}
	if err := settle(ctx, fx); err != nil {
		return err
	}

	wk := &WebhookKnees{Start: math.Round(res.Knee), StepSeconds: stepSecs.Seconds()}
	res.Webhook = wk
	constant := func(name string, rate float64) (Scenario, KneeStep, error) {
		if err := topUp(rate, stepSecs); err != nil {
			return Scenario{}, KneeStep{}, err
		}
		// Each step follows an audit and a drain that leave the server
		// idle: run at the rate unmeasured first, as the run's own knee
		// steps do, so both sides measure the steady rate.
		warmUpAt(ctx, url, fx.Clerk, rate, next("wwarm-"))
		cfg.logf("%s: %.0f/s for %s", name, rate, stepSecs)
		sm := harness.StartSampler(fx.Server, 200*time.Millisecond)
		recs := load.Run(ctx, load.Attack{Name: name, URL: url, Token: fx.Clerk, Pacer: load.Constant{PerSec: rate},
			Duration: stepSecs, MaxOps: int(rate*stepSecs.Seconds()) + 1, Timeout: 10 * time.Second, Next: next("wstep-")})
		s := Scenario{Name: name, Stats: load.Summarise(recs, nil), During: sm.Stop(), Extra: map[string]any{"rate": rate},
			Windows: windows(recs)}
		ks := KneeStep{Rate: rate, P99: s.Stats.P99, ErrorRate: s.Stats.ErrorRate,
			Held: s.Stats.P99 <= 100 && s.Stats.ErrorRate == 0 && s.Stats.Unknown == 0 && s.Stats.Fail == 0}
		s.Extra["held"] = ks.Held
		return s, ks, nil
	}
	plainHeld, hookHeld := false, false
	// The knee without the endpoint gets six steps. Once it has held, the
	// side with the endpoint keeps stepping until it holds too, down to
	// half of it, so a miss is measured with the knee it has, not cut
	// short by the count of steps.
	for try, rate := 0, wk.Start; !(plainHeld && hookHeld); try, rate = try+1, math.Round(rate*0.95) {
		if !plainHeld && try >= 6 {
			break
		}
		if plainHeld && rate < wk.KneePlain/2 {
			break
		}
		if !plainHeld {
			if id != "" {
				if err := harness.Unsubscribe(ctx, fx.Admin, id); err != nil {
					return err
				}
				id = ""
			}
			s, ks, err := constant("webhook knee, no endpoint", rate)
			if err != nil {
				return err
			}
			wk.PlainSteps = append(wk.PlainSteps, ks)
			wk.KneePlain, plainHeld = rate, ks.Held
			if err := audit(&s); err != nil {
				return err
			}
		}
		if !hookHeld {
			if id == "" {
				if id, err = harness.Subscribe(ctx, fx.Admin, rcv); err != nil {
					return err
				}
			}
			s, ks, err := constant("webhook knee, one subscribed endpoint", rate)
			if err != nil {
				return err
			}
			wk.HookSteps = append(wk.HookSteps, ks)
			wk.KneeHook, hookHeld = rate, ks.Held
			if err := audit(&s); err != nil {
				return err
			}
			if err := drained(); err != nil {
				return err
			}
		}
		if err := settle(ctx, fx); err != nil {
			return err
		}
	}
	switch {
	case !hookHeld && plainHeld:
		cfg.logf("sustained knee with one subscribed endpoint: no step held down to %.0f/s (%.2f× the %.0f/s without)",
			wk.KneeHook, wk.KneeHook/nz(wk.KneePlain), wk.KneePlain)
	case !hookHeld:
		cfg.logf("sustained knees: no step held down to %.0f/s with one subscribed endpoint, nor down to %.0f/s without",
			wk.KneeHook, wk.KneePlain)
	case !plainHeld:
		cfg.logf("sustained knee with one subscribed endpoint %.0f/s; without: no step held down to %.0f/s", wk.KneeHook, wk.KneePlain)
	default:
		cfg.logf("sustained knee with one subscribed endpoint %.0f/s, without %.0f/s (%.2f×)", wk.KneeHook, wk.KneePlain,
			wk.KneeHook/nz(wk.KneePlain))
	}
	if id == "" {
		if id, err = harness.Subscribe(ctx, fx.Admin, rcv); err != nil {
			return err
		}
	}

	// Half the knee: the sustained knee without the endpoint found above,
	// or the run's own when the steps found none.
	rate := res.Knee / 2
	if wk.held() {
		rate = wk.KneePlain / 2
	}
	if err := topUp(rate, stepSecs); err != nil {
		return err
	}
	// As before every other constant run: the row follows a drain and an
	// audit that leave the server idle.
	warmUpAt(ctx, url, fx.Clerk, rate, next("whwarm-"))
	if err := drained(); err != nil {
		return err
	}
	cfg.logf("constant at half the knee with one subscribed webhook endpoint: %.0f/s for %s", rate, stepSecs)
	rcv.ResetLags()
	sm = harness.StartSampler(fx.Server, 200*time.Millisecond)
	recs := load.Run(ctx, load.Attack{Name: "half-webhook", URL: url, Token: fx.Clerk, Pacer: load.Constant{PerSec: rate},
		Duration: stepSecs, MaxOps: int(rate*stepSecs.Seconds()) + 1, Next: next("whalf-")})
	s = Scenario{Name: "constant at half the knee, one subscribed webhook endpoint", Stats: load.Summarise(recs, nil), During: sm.Stop(),
		Windows: windows(recs)}
	if err := drained(); err != nil {
		return err
	}
	p50, _ := rcv.LagQuantile(0.5)
	p99, n := rcv.LagQuantile(0.99)
	res.WebhookLagP50MS, res.WebhookLagP99MS, res.WebhookEvents = round(ms(p50)), round(ms(p99)), n
	s.Extra = map[string]any{"rate": rate, "events": n, "lag_p50_ms": res.WebhookLagP50MS, "lag_p99_ms": res.WebhookLagP99MS,
		"bad_signatures": rcv.BadSignatures()}
	cfg.logf("  webhook delivery lag p50 %.1f ms, p99 %.1f ms over %d events", res.WebhookLagP50MS, res.WebhookLagP99MS, n)
	return audit(&s)
}

// webhooksOnly runs the webhook rows alone (ONLY=webhooks): a fixture, a
// ramp on a plain campaign, then webhookScenarios, whose knees step down
// from that ramp's knee, or from cfg.Knee (KNEE=N) without the ramp.
func webhooksOnly(ctx context.Context, cfg Config, res *Result) error {
	fx, err := cfg.Env.NewFixture(ctx, "coupond_bench_webhooks", harness.ServerConfig{GoMaxProcs: serverProcs(), Name: "bench-webhooks", Jobs: true,
		HoldTimeout: 2 * time.Minute, CompensateEvery: 30 * time.Second, AllowPrivateWebhooks: true})
	if err != nil {
		return err
	}
	defer fx.Close()
	rampTo, rampOver, step, n := 3000.0, 20*time.Second, 15*time.Second, 400_000
	if cfg.Quick {
		rampTo, rampOver, step, n = 2000, 10*time.Second, 3*time.Second, 60_000
	}
	if cfg.Knee > 0 {
		// KNEE=N: the knees step from N, as in the full run that found
		// it, and the ramp with the endpoint goes a little past it.
		res.Knee = cfg.Knee
		rampTo = math.Max(rampTo, math.Round(cfg.Knee*1.07))
	} else {
		rampKnee, err := onlyRamp(ctx, cfg, fx, res, "webhooks", rampTo, rampOver)
		if err != nil {
			return err
		}
		res.Knee = math.Max(rampKnee, 50)
	}
	return webhookScenarios(ctx, cfg, fx, res, onlyAudit(ctx, cfg, fx, res), n, rampTo, rampOver, step)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
