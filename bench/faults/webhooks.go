package faults

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"coupond/bench/harness"
)

// webhookWait bounds how long a webhook fault waits for every event to be
// delivered after the fault: the retry schedule's second wait is 5 minutes
// (plus up to 20% jitter), and an attempt cut short by a crash is sent
// again when its 40 s lease has run out.
const webhookWait = 8 * time.Minute

// WebhookOutcome is what the subscribed endpoint got of a fault's events.
type WebhookOutcome struct {
	// Events is how many events the database holds (every committed change's).
	Events int `json:"events"`
	// Delivered is how many of them the receiver accepted (verified, 2xx).
	Delivered int `json:"delivered"`
	// Lost is how many were not accepted within webhookWait.
	Lost int `json:"lost"`
	// Repeats counts accepted requests beyond the first of an event: a
	// repeat always carries the event's own webhook-id.
	Repeats int `json:"repeats_same_id"`
	// BadSignatures counts requests that failed verification.
	BadSignatures int `json:"bad_signatures"`
	// LagS is from the end of the fault to the last event accepted.
	LagS float64 `json:"lag_after_recovery_s"`
}

// subscribe starts a receiver and subscribes it to every event type of the
// world's merchant.
func (w *world) subscribe(ctx context.Context) error {
	rcv, err := harness.StartReceiver()
	if err != nil {
		return err
	}
	if _, err := harness.Subscribe(ctx, w.fx.Admin, rcv); err != nil {
		rcv.Down()
		return err
	}
	w.rcv = rcv
	return nil
}

// webhookCheck waits up to wait for every event written since the endpoint
// was subscribed to be accepted by the receiver, and reports what it got.
func (w *world) webhookCheck(ctx context.Context, recovered time.Time, wait time.Duration) (*WebhookOutcome, error) {
	deadline := time.Now().Add(wait)
	for {
		// The events written since the endpoint exists: the campaign's
		// coupon.issued, written before it was subscribed, was never its.
		rows, err := w.fx.Pool.Query(ctx, `SELECT e.uid FROM outbox_events e
WHERE e.created_at >= (SELECT MIN(p.created_at) FROM webhook_endpoints p)`)
		if err != nil {
			return nil, err
		}
		var uids []string
		for rows.Next() {
			var u string
			if err := rows.Scan(&u); err != nil {
				rows.Close()
				return nil, err
			}
			uids = append(uids, u)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		o := &WebhookOutcome{Events: len(uids)}
		accepted := w.rcv.Accepted()
		for _, u := range uids {
			if n := accepted[u]; n > 0 {
				o.Delivered++
				o.Repeats += n - 1
			}
		}
		o.BadSignatures, o.LagS = w.rcv.BadSignatures(), w.rcv.Last().Sub(recovered).Seconds()
		o.Lost = o.Events - o.Delivered
		if o.Lost == 0 || time.Now().After(deadline) {
			w.cfg.logf("  webhooks: %d events, %d delivered, %d lost, %d same-id repeats, %d bad signatures, last delivery %.1f s after recovery",
				o.Events, o.Delivered, o.Lost, o.Repeats, o.BadSignatures, o.LagS)
			return o, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// runWebhooks runs the webhook faults under redemption load with one
// endpoint subscribed to every event type: the receiver down for 60 s,
// answering 500 for 30 s, slower than the 10 s timeout for 30 s, and coupond
// SIGKILLed while attempts are in flight. (PostgreSQL restarts are checked in
// runRestarts.) Each checks every invariant as usual and then that every
// committed change's event reached the receiver.
func runWebhooks(ctx context.Context, cfg Config, rate float64, ncodes int) ([]FaultResult, error) {
	w, err := newWorld(ctx, cfg, "coupond_faults_webhooks", false, true, ncodes)
	if err != nil {
		return nil, err
	}
	defer w.close()
	if err := w.subscribe(ctx); err != nil {
		return nil, err
	}
	faults := []struct {
		name, how string
		secs      time.Duration
		inject    func(ctx context.Context, w *world) (time.Time, string, error)
	}{
		{"webhook receiver down", "the receiver's listener closed (connections refused) for 60 s, then back", 65 * time.Second,
			func(ctx context.Context, w *world) (time.Time, string, error) {
				w.rcv.Down()
				time.Sleep(60 * time.Second)
				return time.Now(), "", w.rcv.Up()
			}},
		{"webhook receiver answers 500", "every delivery answered 500 for 30 s", 35 * time.Second,
			func(ctx context.Context, w *world) (time.Time, string, error) {
				w.rcv.SetStatus(http.StatusInternalServerError)
				time.Sleep(30 * time.Second)
				w.rcv.SetStatus(0)
				return time.Now(), "", nil
			}},
		{"webhook receiver slower than the timeout", "every delivery answered after 12 s (timeout 10 s) for 30 s", 35 * time.Second,
			func(ctx context.Context, w *world) (time.Time, string, error) {
				w.rcv.SetDelay(12 * time.Second)
				time.Sleep(30 * time.Second)
				w.rcv.SetDelay(0)
				return time.Now(), "", nil
			}},
		{"coupond SIGKILLed mid-delivery", "receiver answering after 2 s so attempts are in flight; coupond SIGKILLed and restarted", 12 * time.Second,
			func(ctx context.Context, w *world) (time.Time, string, error) {
				w.rcv.SetDelay(2 * time.Second)
				time.Sleep(3 * time.Second)
				w.fx.Server.Kill()
				err := w.fx.Server.Start(ctx)
				w.rcv.SetDelay(0)
				return time.Now(), "", err
			}},
	}
	var out []FaultResult
	for _, f := range faults {
		fr, err := w.run(ctx, f.name, f.how, rate, f.secs, f.inject)
		if err != nil {
			return out, fmt.Errorf("%s: %w", f.name, err)
		}
		if fr.Webhooks, err = w.webhookCheck(ctx, w.recovered, webhookWait); err != nil {
			return out, fmt.Errorf("%s: %w", f.name, err)
		}
		out = append(out, fr)
	}
	return out, nil
}
