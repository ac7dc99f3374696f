package perf

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"coupond/bench/harness"
	"coupond/bench/load"
)

// webhookScenarios measures redemption with one webhook endpoint subscribed
// to every event type, at the benchmark's receiver on loopback: the same
// ramp as without (its knee against res.Knee, in the same run), then a
// constant rate at half of res.Knee with the delivery lag of its events
// (from the event's createdAt to the receiver accepting it). The endpoint is
// deleted at the end.
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
	defer func() { _ = harness.Unsubscribe(context.WithoutCancel(ctx), fx.Admin, id) }()
	cfg.logf("webhooks: campaign of %d codes", nLoad)
	_, _, list, err := fx.Campaign(ctx, "webhooks", nLoad)
	if err != nil {
		return err
	}
	pool := &codes{list: list}
	var rid atomic.Int64
	next := func(prefix string) func(int) load.Op {
		return func(int) load.Op {
			return load.Redeem("redeem", pool.take(), fx.StoreID, prefix+strconv.FormatInt(rid.Add(1), 10))
		}
	}
	drained := func() error {
		deadline := time.Now().Add(5 * time.Minute)
		for {
			n, err := fx.PendingDeliveries(ctx)
			if err != nil {
				return err
			}
			if n == 0 {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%d webhook deliveries still pending after 5 minutes", n)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
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
	cfg.logf("knee with one subscribed endpoint %.0f/s (%s), without %.0f/s", res.KneeWebhook, res.KneeWebhookReason, res.Knee)
	if err := drained(); err != nil {
		return err
	}

	rate := res.Knee / 2
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

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
