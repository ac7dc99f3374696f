package services_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/internal/testdb"
	"coupond/internal/webhookreceiver"
	"coupond/models"
	"coupond/services"
)

// peakCounter wraps a handler and keeps the most requests it served at once.
type peakCounter struct {
	next      http.Handler
	mu        sync.Mutex
	now, peak int
}

// current is how many requests are being served now.
func (p *peakCounter) current() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.now
}

func (p *peakCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.now++
	p.peak = max(p.peak, p.now)
	p.mu.Unlock()
	defer func() { p.mu.Lock(); p.now--; p.mu.Unlock() }()
	p.next.ServeHTTP(w, r)
}

// TestWebhookBurstManyDispatchers: a burst of 2,000 events over 200 coupons
// (400 over 50 under the race detector),
// written by concurrent transactions while three dispatchers (as on three
// replicas) run, reaches each of two endpoints exactly once per event, in
// order per coupon, with no endpoint ever getting more requests at once
// than the dispatchers' bounds together.
func TestWebhookBurstManyDispatchers(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		const (
			writers     = 4
			dispatchers = 3
			concurrency = 4
		)
		coupons, perCoupon := 200, 10
		if services.RaceEnabled {
			// Ten times slower under the detector: a smaller burst finds the
			// same races; scripts/test.sh runs the full one without it.
			coupons, perCoupon = 50, 8
		}
		h := newHookSetup(t, db, models.EventRedemptionSucceeded)
		first := &peakCounter{next: h.rcv}
		second := webhookreceiver.New()
		second.SetClock(h.now)
		peak2 := &peakCounter{next: second}
		srv := httptest.NewServer(peak2)
		t.Cleanup(srv.Close)
		ep2, err := h.svc.Webhooks.CreateEndpoint(context.Background(), h.admin,
			services.WebhookEndpointInput{URL: srv.URL + "/hook", Events: []string{models.EventRedemptionSucceeded}})
		must(t, err)
		second.SetSecrets(ep2.Secret)
		// The first endpoint's server was started by newHookSetup around
		// h.rcv; count its concurrency by swapping in a wrapped server.
		srv1 := httptest.NewServer(first)
		t.Cleanup(srv1.Close)
		u := srv1.URL + "/hook"
		_, err = h.svc.Webhooks.UpdateEndpoint(context.Background(), h.admin, services.UpdateWebhookEndpointInput{ID: h.endpoint.Endpoint.ID, URL: &u})
		must(t, err)

		ctx, cancel := context.WithCancel(context.Background())
		var running sync.WaitGroup
		for range dispatchers {
			d := services.NewDeliverer(h.db, h.now, nil, services.DelivererOptions{Concurrency: concurrency,
				Schedule: []time.Duration{10 * time.Millisecond}, AllowPrivate: true, Timeout: 5 * time.Second,
				Poll: 20 * time.Millisecond})
			running.Add(1)
			go func() { defer running.Done(); d.Run(ctx) }()
		}

		// Each writer owns some coupons and writes their events in turn, a few
		// per transaction, so that transactions of different writers commit
		// in any order while each coupon's events are written in sequence.
		var writing sync.WaitGroup
		start := make(chan struct{})
		for wr := range writers {
			writing.Add(1)
			go func() {
				defer writing.Done()
				<-start
				for seq := range perCoupon {
					for c := wr; c < coupons; c += writers * 5 {
						err := h.db.Transaction(func(tx *gorm.DB) error {
							for k := c; k < min(c+writers*5, coupons); k += writers {
								data := fmt.Sprintf(`{"coupon":%d,"seq":%d}`, k+1, seq)
								if err := models.InsertEvent(tx, &models.OutboxEvent{MerchantID: h.admin.MerchantID,
									UID: models.NewEventUID(), Type: models.EventRedemptionSucceeded, CouponID: int64(k + 1),
									Data: data, CreatedAt: h.now()}); err != nil {
									return err
								}
							}
							return nil
						})
						if err != nil {
							t.Error(err)
							return
						}
					}
				}
			}()
		}
		t0 := time.Now()
		close(start)
		writing.Wait()
		t.Logf("written in %s, pending %d", time.Since(t0), h.pending())
		total := coupons * perCoupon
		if n := h.count(&models.OutboxEvent{}, "merchant_id = ?", h.admin.MerchantID); n != int64(total) {
			t.Fatalf("%d events written", n)
		}
		deadline := time.Now().Add(3 * time.Minute)
		for h.pending() != 0 {
			if time.Now().After(deadline) {
				t.Fatalf("%d deliveries still pending", h.pending())
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Logf("delivered in %s", time.Since(t0))
		cancel()
		running.Wait()

		for i, rcv := range []*webhookreceiver.Receiver{h.rcv, second} {
			got := rcv.Deliveries()
			if len(got) != total {
				t.Fatalf("endpoint %d: %d requests for %d events", i+1, len(got), total)
			}
			seen := map[string]bool{}
			last := map[int]int{}
			for _, x := range got {
				if x.Status != http.StatusNoContent || len(x.Verified) == 0 {
					t.Fatalf("endpoint %d: event %s answered %d", i+1, x.ID, x.Status)
				}
				if seen[x.ID] {
					t.Fatalf("endpoint %d: event %s sent twice", i+1, x.ID)
				}
				seen[x.ID] = true
				var env struct {
					Data struct{ Coupon, Seq int }
				}
				must(t, json.Unmarshal(x.Body, &env))
				prev, ok := last[env.Data.Coupon]
				if ok && env.Data.Seq != prev+1 || !ok && env.Data.Seq != 0 {
					t.Fatalf("endpoint %d: coupon %d got event %d after %d", i+1, env.Data.Coupon, env.Data.Seq, prev)
				}
				last[env.Data.Coupon] = env.Data.Seq
			}
		}
		for i, p := range []*peakCounter{first, peak2} {
			p.mu.Lock()
			got := p.peak
			p.mu.Unlock()
			if got > dispatchers*concurrency {
				t.Fatalf("endpoint %d had %d requests at once, more than %d dispatchers × %d", i+1, got, dispatchers, concurrency)
			}
		}
		if n := h.count(&models.WebhookDelivery{}, "status = ? AND attempts = 1", models.DeliveryDelivered); n != int64(2*total) {
			t.Fatalf("%d of %d deliveries delivered at their first attempt", n, 2*total)
		}
	})
}
