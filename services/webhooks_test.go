package services_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/errcode"
	"coupond/internal/testdb"
	"coupond/internal/webhookreceiver"
	"coupond/models"
	"coupond/services"
)

// fakeResolver answers host lookups from a table.
type fakeResolver map[string]string

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	a, ok := f[host]
	if !ok {
		return nil, fmt.Errorf("no such host %s", host)
	}
	return []netip.Addr{netip.MustParseAddr(a)}, nil
}

var resolver = fakeResolver{"pos.example": "203.0.113.10", "localhost": "127.0.0.1", "intranet.example": "10.1.2.3",
	"metadata.example": "169.254.169.254"}

func withResolver(o *services.Options) { o.Resolver = resolver }

func allowPrivate(o *services.Options) { o.AllowPrivateWebhooks = true }

// hookClock is the world's clock moving on with real time, so retries come
// due while tests can still jump days ahead.
func hookClock(w *world) func() time.Time {
	start := time.Now()
	return func() time.Time { return w.clock.Now().Add(time.Since(start)) }
}

// hookSetup is a world whose merchant has one endpoint at a reference
// receiver, and a deliverer retrying after 10 ms.
type hookSetup struct {
	*world
	rcv      *webhookreceiver.Receiver
	endpoint *services.CreatedEndpoint
	now      func() time.Time
}

func newHookSetup(t *testing.T, db *gorm.DB, events ...string) *hookSetup {
	w := newWorldWith(t, db, true, allowPrivate)
	h := &hookSetup{world: w, now: hookClock(w)}
	h.rcv = webhookreceiver.New()
	h.rcv.SetClock(h.now)
	srv := httptest.NewServer(h.rcv)
	t.Cleanup(srv.Close)
	if len(events) == 0 {
		events = models.EventTypes
	}
	var err error
	h.endpoint, err = w.svc.Webhooks.CreateEndpoint(context.Background(), w.admin,
		services.WebhookEndpointInput{URL: srv.URL + "/hook", Events: events})
	must(t, err)
	h.rcv.SetSecrets(h.endpoint.Secret)
	return h
}

func (h *hookSetup) deliverer(concurrency int) *services.Deliverer {
	return h.delivererWith(services.DelivererOptions{Concurrency: concurrency,
		Schedule: []time.Duration{10 * time.Millisecond}, Timeout: 2 * time.Second})
}

// delivererWith is a deliverer with options o that may reach the test's
// receiver on loopback.
func (h *hookSetup) delivererWith(o services.DelivererOptions) *services.Deliverer {
	o.AllowPrivate = true
	return services.NewDeliverer(h.db, h.now, nil, o)
}

// issueEvents issues n batches of one coupon: n coupon.issued events.
func (h *hookSetup) issueEvents(n int) {
	for range n {
		h.issue(h.campaign, 1)
	}
}

// waitFor polls cond until it holds, or fails the test after 30 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// deliverUntil runs the deliverers until done holds or 60 s pass.
func deliverUntil(t *testing.T, done func() bool, ds ...*services.Deliverer) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatal("deliveries did not finish in 60 s")
		}
		var wg sync.WaitGroup
		for _, d := range ds {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := d.RunOnce(context.Background()); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		time.Sleep(5 * time.Millisecond)
	}
	for _, d := range ds {
		d.Wait()
	}
}

// redeemConcurrently redeems every code at once, each with its own request
// id, from one goroutine per code on PostgreSQL; on SQLite, whose writers take
// turns and whose busy handler is not first come first served, from 50
// goroutines (as the other concurrency tests there), so that none waits past
// its busy timeout on a loaded machine. during, if set, runs until they end.
func (w *world) redeemConcurrently(codes []string, during func(done <-chan struct{})) {
	t := w.t
	workers := len(codes)
	if models.DialectOfDB(w.db) == models.SQLite {
		workers = min(workers, 50)
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for k := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := k; i < len(codes); i += workers {
				_, err := w.svc.Redemptions.Redeem(context.Background(), w.clerkA, services.RedeemInput{Code: codes[i],
					StoreID: w.storeA.ID, RequestID: fmt.Sprintf("r-%d", i), OrderAmount: 5000})
				if err != nil {
					t.Error(err)
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	close(start)
	if during != nil {
		during(done)
	}
	<-done
}

func (h *hookSetup) pending() int64 {
	return h.count(&models.WebhookDelivery{}, "status = ?", models.DeliveryPending)
}

// wantEachOnce checks that the receiver got n events, each in one request.
func (h *hookSetup) wantEachOnce(n int) {
	h.t.Helper()
	got := map[string]int{}
	for _, x := range h.rcv.Deliveries() {
		got[x.ID]++
	}
	if len(got) != n || len(h.rcv.Deliveries()) != n {
		h.t.Fatalf("%d events in %d requests; want %d in %d", len(got), len(h.rcv.Deliveries()), n, n)
	}
}

// counted puts a peakCounter in front of the receiver and points the
// endpoint at it, so a test can see how many attempts are in flight.
func (h *hookSetup) counted() *peakCounter {
	h.t.Helper()
	pc := &peakCounter{next: h.rcv}
	srv := httptest.NewServer(pc)
	h.t.Cleanup(srv.Close)
	u := srv.URL + "/hook"
	_, err := h.svc.Webhooks.UpdateEndpoint(context.Background(), h.admin, services.UpdateWebhookEndpointInput{ID: h.endpoint.Endpoint.ID, URL: &u})
	must(h.t, err)
	return pc
}

func TestWebhookEndpointRules(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		w := newWorldWith(t, db, true, withResolver)
		long := "https://pos.example/" + strings.Repeat("a", 2048)
		tests := []struct {
			name  string
			actor services.Actor
			give  services.WebhookEndpointInput
			want  string
		}{
			{"loopback", w.admin, services.WebhookEndpointInput{URL: "http://127.0.0.1:8080/h", Events: []string{"redemption.succeeded"}}, errcode.BadUserInput},
			{"localhost name", w.admin, services.WebhookEndpointInput{URL: "https://localhost/h", Events: []string{"redemption.succeeded"}}, errcode.BadUserInput},
			{"private", w.admin, services.WebhookEndpointInput{URL: "http://intranet.example/h", Events: []string{"redemption.succeeded"}}, errcode.BadUserInput},
			{"private literal", w.admin, services.WebhookEndpointInput{URL: "https://192.168.1.5/h", Events: []string{"redemption.succeeded"}}, errcode.BadUserInput},
			{"metadata", w.admin, services.WebhookEndpointInput{URL: "http://169.254.169.254/latest", Events: []string{"redemption.succeeded"}}, errcode.BadUserInput},
			{"metadata name", w.admin, services.WebhookEndpointInput{URL: "http://metadata.example/", Events: []string{"redemption.succeeded"}}, errcode.BadUserInput},
			{"ipv6 loopback", w.admin, services.WebhookEndpointInput{URL: "https://[::1]/h", Events: []string{"redemption.succeeded"}}, errcode.BadUserInput},
			{"unresolvable", w.admin, services.WebhookEndpointInput{URL: "https://nowhere.example/h", Events: []string{"redemption.succeeded"}}, errcode.BadUserInput},
			{"scheme", w.admin, services.WebhookEndpointInput{URL: "ftp://pos.example/h", Events: []string{"redemption.succeeded"}}, errcode.BadUserInput},
			{"relative", w.admin, services.WebhookEndpointInput{URL: "/h", Events: []string{"redemption.succeeded"}}, errcode.BadUserInput},
			{"credentials", w.admin, services.WebhookEndpointInput{URL: "https://u:p@pos.example/h", Events: []string{"redemption.succeeded"}}, errcode.BadUserInput},
			{"too long", w.admin, services.WebhookEndpointInput{URL: long, Events: []string{"redemption.succeeded"}}, errcode.BadUserInput},
			{"unknown event", w.admin, services.WebhookEndpointInput{URL: "https://pos.example/h", Events: []string{"coupon.eaten"}}, errcode.BadUserInput},
			{"no events", w.admin, services.WebhookEndpointInput{URL: "https://pos.example/h"}, errcode.BadUserInput},
			{"clerk", w.clerkA, services.WebhookEndpointInput{URL: "https://pos.example/h", Events: []string{"redemption.succeeded"}}, errcode.Forbidden},
			{"finance", w.finance, services.WebhookEndpointInput{URL: "https://pos.example/h", Events: []string{"redemption.succeeded"}}, errcode.Forbidden},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := w.svc.Webhooks.CreateEndpoint(ctx, tt.actor, tt.give)
				wantCode(t, err, tt.want)
			})
		}
		if n := w.count(&models.WebhookEndpoint{}, "1 = 1"); n != 0 {
			t.Fatalf("%d endpoints written by refused calls", n)
		}

		first, err := w.svc.Webhooks.CreateEndpoint(ctx, w.admin, services.WebhookEndpointInput{URL: "https://pos.example/h",
			Events: []string{"redemption.succeeded", "redemption.refunded"}, RequestID: "wh-1"})
		must(t, err)
		if !strings.HasPrefix(first.Secret, "whsec_") || !first.Endpoint.Enabled {
			t.Fatalf("created %+v", first)
		}
		again, err := w.svc.Webhooks.CreateEndpoint(ctx, w.admin, services.WebhookEndpointInput{URL: "https://pos.example/h",
			Events: []string{"redemption.succeeded", "redemption.refunded"}, RequestID: "wh-1"})
		must(t, err)
		if again.Endpoint.ID != first.Endpoint.ID || again.Secret != first.Secret {
			t.Fatalf("replay %+v, first %+v", again, first)
		}
		_, err = w.svc.Webhooks.CreateEndpoint(ctx, w.admin, services.WebhookEndpointInput{URL: "https://pos.example/other",
			Events: []string{"redemption.succeeded"}, RequestID: "wh-1"})
		wantCode(t, err, errcode.IdempotencyKeyReused)
		for i := 1; i < services.MaxWebhookEndpoints; i++ {
			_, err := w.svc.Webhooks.CreateEndpoint(ctx, w.admin, services.WebhookEndpointInput{URL: fmt.Sprintf("https://pos.example/%d", i),
				Events: []string{"coupon.issued"}})
			must(t, err)
		}
		_, err = w.svc.Webhooks.CreateEndpoint(ctx, w.admin, services.WebhookEndpointInput{URL: "https://pos.example/17",
			Events: []string{"coupon.issued"}})
		wantCode(t, err, errcode.BadUserInput)
		if n := w.count(&models.WebhookEndpoint{}, "1 = 1"); n != services.MaxWebhookEndpoints {
			t.Fatalf("%d endpoints", n)
		}
		for _, a := range []services.Actor{w.clerkA, w.finance} {
			_, err := w.svc.Webhooks.Endpoints(ctx, a)
			wantCode(t, err, errcode.Forbidden)
			_, err = w.svc.Webhooks.RotateSecret(ctx, a, first.Endpoint.ID)
			wantCode(t, err, errcode.Forbidden)
			_, err = w.svc.Webhooks.DeleteEndpoint(ctx, a, first.Endpoint.ID)
			wantCode(t, err, errcode.Forbidden)
		}

		// Another merchant neither sees nor changes the endpoint, nor gets its events.
		other, err := w.svc.Merchants.Create(ctx, "other", "Other", "Asia/Shanghai")
		must(t, err)
		oa := services.SystemActor(other.ID)
		eps, err := w.svc.Webhooks.Endpoints(ctx, oa)
		must(t, err)
		if len(eps) != 0 {
			t.Fatalf("other merchant sees %d endpoints", len(eps))
		}
		off := false
		_, err = w.svc.Webhooks.UpdateEndpoint(ctx, oa, services.UpdateWebhookEndpointInput{ID: first.Endpoint.ID, Enabled: &off})
		wantCode(t, err, errcode.NotFound)
		_, err = w.svc.Webhooks.DeleteEndpoint(ctx, oa, first.Endpoint.ID)
		wantCode(t, err, errcode.NotFound)
		ostore, err := w.svc.Stores.Create(ctx, oa, services.CreateStoreInput{Code: "X1", Name: "x"})
		must(t, err)
		ocamp, err := w.svc.Campaigns.Create(ctx, oa, services.CreateCampaignInput{Name: "o", Type: models.CampaignCash, Value: 100,
			TotalQuantity: 10, ValidFrom: w.clock.Now().Add(-time.Hour), ValidTo: w.clock.Now().Add(time.Hour)})
		must(t, err)
		res, err := w.svc.Campaigns.IssueCoupons(ctx, oa, services.IssueInput{CampaignID: ocamp.ID, Count: 1})
		must(t, err)
		_, err = w.svc.Redemptions.Redeem(ctx, oa, services.RedeemInput{Code: res.Codes[0], StoreID: ostore.ID, RequestID: "o-1", OrderAmount: 500})
		must(t, err)
		if n := w.count(&models.WebhookDelivery{}, "1 = 1"); n != 0 {
			t.Fatalf("%d deliveries of the other merchant's events", n)
		}
		// Disabling stops the endpoint's fan-out; an URL update is checked again.
		_, err = w.svc.Webhooks.UpdateEndpoint(ctx, w.admin, services.UpdateWebhookEndpointInput{ID: first.Endpoint.ID,
			URL: ptr("http://127.0.0.1/x")})
		wantCode(t, err, errcode.BadUserInput)
		upd, err := w.svc.Webhooks.UpdateEndpoint(ctx, w.admin, services.UpdateWebhookEndpointInput{ID: first.Endpoint.ID, Enabled: &off})
		must(t, err)
		if upd.Enabled {
			t.Fatal("still enabled")
		}
		_, err = w.redeem(w.issue(w.campaign, 1)[0], "r-x", 5000)
		must(t, err)
		if n := w.count(&models.WebhookDelivery{}, "endpoint_id = ?", first.Endpoint.ID); n != 0 {
			t.Fatalf("%d deliveries to a disabled endpoint", n)
		}
	})
}

// TestWebhookRedemptionsDeliveredOnce: 200 concurrent redemptions, a receiver
// that fails the first two attempts of every event: 200 events, each
// accepted exactly once, every request verified.
func TestWebhookRedemptionsDeliveredOnce(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		h := newHookSetup(t, db, models.EventRedemptionSucceeded)
		h.rcv.FailFirst(2)
		const n = 200
		codes := h.issue(h.campaign, n)
		h.redeemConcurrently(codes, nil)
		d := h.deliverer(8)
		deliverUntil(t, func() bool { return h.pending() == 0 }, d)
		accepted := map[string]int{}
		for _, x := range h.rcv.Deliveries() {
			if len(x.Verified) == 0 {
				t.Fatalf("unverified delivery %s", x.ID)
			}
			if x.Status < 300 {
				accepted[x.ID]++
			}
		}
		if len(accepted) != n || len(h.rcv.Deliveries()) != 3*n {
			t.Fatalf("%d events accepted, %d requests", len(accepted), len(h.rcv.Deliveries()))
		}
		for id, k := range accepted {
			if k != 1 || !strings.HasPrefix(id, "evt_") {
				t.Fatalf("event %s accepted %d times", id, k)
			}
		}
		if got := h.count(&models.WebhookDelivery{}, "status = ? AND attempts = 3", models.DeliveryDelivered); got != n {
			t.Fatalf("%d deliveries delivered at the third attempt", got)
		}
	})
}

// TestWebhookOrderPerCoupon: the refund's event goes out only after the
// redemption's was accepted, although both fail twice first.
func TestWebhookOrderPerCoupon(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		h := newHookSetup(t, db, models.EventRedemptionSucceeded, models.EventRedemptionRefunded)
		h.rcv.FailFirst(2)
		codes := h.issue(h.campaign, 20)
		for i, c := range codes {
			f, err := h.redeem(c, fmt.Sprintf("r-%d", i), 5000)
			must(t, err)
			_, err = h.svc.Redemptions.Refund(context.Background(), h.admin, services.RefundInput{RedeemNo: f.RedeemNo,
				RequestID: fmt.Sprintf("rf-%d", i), Reason: "back"})
			must(t, err)
		}
		deliverUntil(t, func() bool { return h.pending() == 0 }, h.deliverer(8))
		redeemed := map[string]bool{} // redeemNo whose succeeded event was accepted
		for _, x := range h.rcv.Deliveries() {
			no := between(string(x.Body), `"redeemNo":"`, `"`)
			switch x.Type {
			case models.EventRedemptionSucceeded:
				if x.Status < 300 {
					redeemed[no] = true
				}
			case models.EventRedemptionRefunded:
				if !redeemed[no] {
					t.Fatalf("refund of %s sent before its redemption was delivered", no)
				}
			}
		}
		if len(redeemed) != 20 {
			t.Fatalf("%d redemptions delivered", len(redeemed))
		}
	})
}

func between(s, from, to string) string {
	_, after, _ := strings.Cut(s, from)
	v, _, _ := strings.Cut(after, to)
	return v
}

// TestWebhookSecretRotation: for 24 h after a rotation both secrets sign,
// so receivers holding either verify; then only the new one.
func TestWebhookSecretRotation(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		h := newHookSetup(t, db, models.EventCouponIssued)
		old := h.endpoint.Secret
		rotated, err := h.svc.Webhooks.RotateSecret(context.Background(), h.admin, h.endpoint.Endpoint.ID)
		must(t, err)
		if rotated.Secret == old || !strings.HasPrefix(rotated.Secret, "whsec_") {
			t.Fatalf("rotated secret %q", rotated.Secret)
		}
		h.rcv.SetSecrets(old, rotated.Secret)
		h.issue(h.campaign, 1)
		d := h.deliverer(1)
		deliverUntil(t, func() bool { return h.pending() == 0 }, d)
		got := h.rcv.Deliveries()
		if len(got) != 1 || fmt.Sprint(got[0].Verified) != "[0 1]" {
			t.Fatalf("during the overlap: %+v", got)
		}
		h.clock.Advance(services.SecretOverlap + time.Minute)
		h.issue(h.campaign, 1)
		deliverUntil(t, func() bool { return h.pending() == 0 }, d)
		got = h.rcv.Deliveries()
		if len(got) != 2 || fmt.Sprint(got[1].Verified) != "[1]" {
			t.Fatalf("after the overlap: %+v", got[1])
		}
	})
}

// TestWebhookTwoServers: two deliverers (two replicas) on one database send
// every event once.
func TestWebhookTwoServers(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		h := newHookSetup(t, db, models.EventRedemptionSucceeded)
		codes := h.issue(h.campaign, 100)
		for i, c := range codes {
			_, err := h.redeem(c, fmt.Sprintf("r-%d", i), 5000)
			must(t, err)
		}
		deliverUntil(t, func() bool { return h.pending() == 0 }, h.deliverer(4), h.deliverer(4))
		h.wantEachOnce(100)
	})
}

// TestWebhookGiveUp: 410 disables the endpoint at once; failing every
// attempt for 3 days disables it and opens a WEBHOOK_FAILING finding.
func TestWebhookGiveUp(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		h := newHookSetup(t, db, models.EventCouponIssued)
		d := h.deliverer(1)
		h.rcv.AnswerWith(http.StatusGone)
		h.issue(h.campaign, 1)
		deliverUntil(t, func() bool { return h.pending() == 0 }, d)
		ep, err := h.svc.Webhooks.Endpoint(ctx, h.admin, h.endpoint.Endpoint.ID)
		must(t, err)
		if ep.Enabled || ep.DisabledReason == nil {
			t.Fatalf("after 410: %+v", ep)
		}

		on := true
		_, err = h.svc.Webhooks.UpdateEndpoint(ctx, h.admin, services.UpdateWebhookEndpointInput{ID: ep.ID, Enabled: &on})
		must(t, err)
		h.rcv.AnswerWith(http.StatusInternalServerError)
		h.issue(h.campaign, 1)
		deliverUntil(t, func() bool {
			return h.count(&models.WebhookDelivery{}, "attempts >= 1 AND status = ?", models.DeliveryPending) == 1
		}, d)
		h.clock.Advance(services.WebhookRetryFor + time.Hour)
		deliverUntil(t, func() bool { return h.pending() == 0 }, d)
		ep, err = h.svc.Webhooks.Endpoint(ctx, h.admin, ep.ID)
		must(t, err)
		if ep.Enabled {
			t.Fatal("still enabled after 3 days of failures")
		}
		if n := h.count(&models.Finding{}, "kind = ?", models.FindingWebhookFailing); n != 1 {
			t.Fatalf("%d WEBHOOK_FAILING findings", n)
		}
		if n := h.count(&models.OutboxEvent{}, "type = ?", models.EventFindingOpened); n != 1 {
			t.Fatalf("%d finding.opened events", n)
		}
	})
}

// TestWebhookRefusesPrivateAtDial: without --allow-private-webhooks the
// worker does not connect to a loopback address, whatever the stored URL.
func TestWebhookRefusesPrivateAtDial(t *testing.T) {
	db := testdb.SQLite(t)
	h := newHookSetup(t, db, models.EventCouponIssued)
	h.issue(h.campaign, 1)
	d := services.NewDeliverer(h.db, h.now, nil, services.DelivererOptions{Schedule: []time.Duration{time.Hour}})
	deliverUntil(t, func() bool {
		return h.count(&models.WebhookDelivery{}, "attempts = 1 AND lease_until IS NULL") == 1
	}, d)
	if n := len(h.rcv.Deliveries()); n != 0 {
		t.Fatalf("%d requests reached a loopback receiver", n)
	}
	var x models.WebhookDelivery
	must(t, db.Take(&x).Error)
	if x.LastError == nil || !strings.Contains(*x.LastError, "non-public") {
		t.Fatalf("last error %v", x.LastError)
	}
}

// TestWebhookReplay: events written while an endpoint was disabled are not
// queued for it; re-enabled, it gets new events and what was pending, and
// replayWebhookEvents queues the ones it missed and the ones given up, only
// of its own merchant, once.
func TestWebhookReplay(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		h := newHookSetup(t, db, models.EventRedemptionSucceeded)
		epID := h.endpoint.Endpoint.ID
		since := h.clock.Now().Add(-time.Minute)
		codes := h.issue(h.campaign, 6)
		redeem := func(i int) {
			t.Helper()
			_, err := h.svc.Redemptions.Redeem(ctx, h.clerkA, services.RedeemInput{Code: codes[i], StoreID: h.storeA.ID,
				RequestID: fmt.Sprintf("replay-%d", i), OrderAmount: 5000})
			must(t, err)
		}
		deliver := func() {
			t.Helper()
			deliverUntil(t, func() bool { return h.pending() == 0 }, h.deliverer(4))
		}
		accepted := func() map[string]int {
			out := map[string]int{}
			for _, x := range h.rcv.Accepted() {
				out[x.ID]++
			}
			return out
		}
		setEnabled := func(on bool) {
			t.Helper()
			_, err := h.svc.Webhooks.UpdateEndpoint(ctx, h.admin, services.UpdateWebhookEndpointInput{ID: epID, Enabled: &on})
			must(t, err)
		}

		redeem(0)
		redeem(1)
		deliver()
		setEnabled(false)
		redeem(2)
		redeem(3)
		setEnabled(true)
		redeem(4)
		deliver()
		if got := accepted(); len(got) != 3 {
			t.Fatalf("accepted %v, want the 3 events written while enabled", got)
		}
		// The delivery of the first event was given up (as after 3 days).
		var first models.OutboxEvent
		must(t, db.Where("merchant_id = ? AND type = ?", h.merchant.ID, models.EventRedemptionSucceeded).Order("id").Take(&first).Error)
		must(t, db.Exec("UPDATE webhook_deliveries SET status = 'FAILED' WHERE merchant_id = ? AND event_id = ?", h.merchant.ID, first.ID).Error)

		// Another merchant with events and, created after them, its own
		// endpoint 1 (ids are per merchant), at a receiver of its own.
		other, err := h.svc.Merchants.Create(ctx, "other", "Other", "Asia/Shanghai")
		must(t, err)
		oa := services.SystemActor(other.ID)
		for i := range 4 {
			must(t, models.InsertEvent(db, &models.OutboxEvent{MerchantID: other.ID, UID: models.NewEventUID(),
				Type: models.EventRedemptionSucceeded, Data: fmt.Sprintf(`{"n":%d}`, i), CreatedAt: h.clock.Now()}))
		}
		orcv := webhookreceiver.New()
		orcv.SetClock(h.now)
		osrv := httptest.NewServer(orcv)
		t.Cleanup(osrv.Close)
		oep, err := h.svc.Webhooks.CreateEndpoint(ctx, oa, services.WebhookEndpointInput{URL: osrv.URL + "/hook",
			Events: []string{models.EventRedemptionSucceeded}})
		must(t, err)
		orcv.SetSecrets(oep.Secret)
		if oep.Endpoint.ID != epID {
			t.Fatalf("other merchant's endpoint %d, want the same id %d", oep.Endpoint.ID, epID)
		}

		tests := []struct {
			name  string
			actor services.Actor
			give  services.ReplayInput
			want  string
		}{
			{"clerk", h.clerkA, services.ReplayInput{EndpointID: epID, Since: since}, errcode.Forbidden},
			{"finance", h.finance, services.ReplayInput{EndpointID: epID, Since: since}, errcode.Forbidden},
			{"too old", h.admin, services.ReplayInput{EndpointID: epID, Since: h.clock.Now().Add(-31 * 24 * time.Hour)}, errcode.BadUserInput},
			{"future", h.admin, services.ReplayInput{EndpointID: epID, Since: h.clock.Now().Add(time.Hour)}, errcode.BadUserInput},
			{"no since", h.admin, services.ReplayInput{EndpointID: epID}, errcode.BadUserInput},
			{"until before since", h.admin, services.ReplayInput{EndpointID: epID, Since: since, Until: since.Add(-time.Second)}, errcode.BadUserInput},
			{"another merchant's endpoint", oa, services.ReplayInput{EndpointID: epID + 1, Since: since}, errcode.NotFound},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := h.svc.Webhooks.Replay(ctx, tt.actor, tt.give)
				wantCode(t, err, tt.want)
			})
		}

		before := h.count(&models.WebhookDelivery{}, "merchant_id = ?", h.merchant.ID)
		got, err := h.svc.Webhooks.Replay(ctx, h.admin, services.ReplayInput{EndpointID: epID, Since: since})
		must(t, err)
		// The two written while disabled, and the given-up one.
		if got.Queued != 3 || got.Endpoint.ID != epID {
			t.Fatalf("replay queued %d for endpoint %d, want 3", got.Queued, got.Endpoint.ID)
		}
		if n := h.count(&models.WebhookDelivery{}, "merchant_id = ?", h.merchant.ID); n != before+2 {
			t.Fatalf("%d deliveries after the replay, want %d", n, before+2)
		}
		again, err := h.svc.Webhooks.Replay(ctx, h.admin, services.ReplayInput{EndpointID: epID, Since: since})
		must(t, err)
		if again.Queued != 0 {
			t.Fatalf("a second replay queued %d", again.Queued)
		}
		deliver()
		acc := accepted()
		if len(acc) != 5 || acc[first.UID] != 2 {
			t.Fatalf("accepted %v, want the 5 events, the given-up one twice", acc)
		}
		if n := len(orcv.Deliveries()); n != 0 {
			t.Fatalf("the other merchant's receiver got %d requests", n)
		}
		if n := h.count(&models.WebhookDelivery{}, "merchant_id = ?", other.ID); n != 0 {
			t.Fatalf("the other merchant has %d deliveries before its own replay", n)
		}

		// The other merchant's replay with the same endpoint id queues its
		// own four events to its own endpoint, and nothing of the first's.
		ogot, err := h.svc.Webhooks.Replay(ctx, oa, services.ReplayInput{EndpointID: epID, Since: since})
		must(t, err)
		if ogot.Queued != 4 || h.count(&models.WebhookDelivery{}, "merchant_id = ?", h.merchant.ID) != before+2 {
			t.Fatalf("other merchant's replay queued %d", ogot.Queued)
		}
		deliver()
		if n, m := len(orcv.Accepted()), len(accepted()); n != 4 || m != 5 {
			t.Fatalf("other receiver accepted %d, first %d", n, m)
		}
		for _, x := range orcv.Accepted() {
			var env struct{ MerchantID string }
			must(t, json.Unmarshal(x.Body, &env))
			if env.MerchantID != fmt.Sprint(other.ID) {
				t.Fatalf("other merchant's receiver got merchant %s's event", env.MerchantID)
			}
		}
	})
}

// TestWebhookShutdownHandsBackClaims: a worker holds more claims than it
// has slots (it claims ahead); at shutdown it sends none of those still
// waiting for a slot, hands them back uncounted and without a lease, so
// another worker takes them at once, and lets the attempts in flight
// finish.
func TestWebhookShutdownHandsBackClaims(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		h := newHookSetup(t, db, models.EventCouponIssued)
		h.issueEvents(5)
		pc := h.counted()
		h.rcv.Delay(500 * time.Millisecond)
		// Two slots, so one claim takes all five (claims run ahead of
		// the slots) and three wait for a slot.
		d := h.delivererWith(services.DelivererOptions{Concurrency: 2, Schedule: []time.Duration{time.Hour},
			Timeout: 5 * time.Second, Poll: 10 * time.Millisecond})
		ctx, cancel := context.WithCancel(context.Background())
		stopped := make(chan struct{})
		go func() { defer close(stopped); d.Run(ctx) }()
		waitFor(t, "the worker did not claim all five deliveries and send two", func() bool {
			return h.count(&models.WebhookDelivery{}, "attempts = 1 AND lease_until IS NOT NULL") == 5 && pc.current() == 2
		})
		cancel()
		<-stopped
		if n := len(h.rcv.Deliveries()); n != 2 {
			t.Fatalf("%d requests sent; want the two in flight at shutdown", n)
		}
		if n := h.count(&models.WebhookDelivery{}, "status = ? AND attempts = 1", models.DeliveryDelivered); n != 2 {
			t.Fatalf("%d deliveries recorded as delivered; want 2", n)
		}
		if n := h.count(&models.WebhookDelivery{}, "status = ? AND attempts = 0 AND lease_until IS NULL", models.DeliveryPending); n != 3 {
			t.Fatalf("%d deliveries handed back; want 3", n)
		}
		h.rcv.Delay(0)
		deliverUntil(t, func() bool { return h.pending() == 0 }, h.deliverer(4))
		h.wantEachOnce(5)
	})
}

// TestWebhookFailureRunEndsOnSuccess: a failed attempt opens the
// endpoint's failure run and the next success ends it, whether the worker
// saw the failure itself or it was written by another (a replica) and read
// back.
func TestWebhookFailureRunEndsOnSuccess(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		h := newHookSetup(t, db, models.EventCouponIssued)
		failingSince := func() *time.Time {
			t.Helper()
			ep, err := h.svc.Webhooks.Endpoint(ctx, h.admin, h.endpoint.Endpoint.ID)
			must(t, err)
			return ep.FailingSince
		}
		h.rcv.FailFirst(1)
		h.issue(h.campaign, 1)
		d := h.delivererWith(services.DelivererOptions{Concurrency: 4, Schedule: []time.Duration{time.Hour},
			Timeout: 2 * time.Second})
		deliverUntil(t, func() bool {
			return h.count(&models.WebhookDelivery{}, "attempts = 1 AND last_status_code = 500 AND lease_until IS NULL") == 1
		}, d)
		if failingSince() == nil {
			t.Fatal("a failed attempt left no failure run")
		}
		h.clock.Advance(2 * time.Hour)
		deliverUntil(t, func() bool { return h.pending() == 0 }, d)
		if s := failingSince(); s != nil {
			t.Fatalf("failure run still open at %v after a success", s)
		}

		h.rcv.FailFirst(0)
		must(t, h.db.Model(&models.WebhookEndpoint{}).Where("id = ?", h.endpoint.Endpoint.ID).
			Update("failing_since", h.now()).Error)
		h.issue(h.campaign, 1)
		deliverUntil(t, func() bool { return h.pending() == 0 }, d)
		if s := failingSince(); s != nil {
			t.Fatalf("failure run another worker opened still open at %v after a success", s)
		}
	})
}

// TestWebhookLateClaimHandedBack: an attempt that waited for a slot until
// too little of its lease was left to finish within it is not sent but
// handed back, so no second worker can take it over while it is in flight.
func TestWebhookLateClaimHandedBack(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		h := newHookSetup(t, db, models.EventCouponIssued)
		h.issueEvents(3)
		pc := h.counted()
		h.rcv.Delay(500 * time.Millisecond)
		d := h.delivererWith(services.DelivererOptions{Concurrency: 1, Schedule: []time.Duration{time.Hour},
			Timeout: 2 * time.Second})
		n, err := d.RunOnce(context.Background())
		must(t, err)
		if n != 3 {
			t.Fatalf("claimed %d; want all 3 (claims run ahead of the one slot)", n)
		}
		// While the first attempt is in flight, the two waiting claims'
		// leases run nearly out.
		waitFor(t, "the first attempt did not start", func() bool { return pc.current() == 1 })
		h.clock.Advance(30 * time.Second)
		d.Wait()
		if n := len(h.rcv.Deliveries()); n != 1 {
			t.Fatalf("%d requests sent; want 1", n)
		}
		if n := h.count(&models.WebhookDelivery{}, "status = ? AND attempts = 0 AND lease_until IS NULL", models.DeliveryPending); n != 2 {
			t.Fatalf("%d late claims handed back; want 2", n)
		}
		h.rcv.Delay(0)
		deliverUntil(t, func() bool { return h.pending() == 0 }, d)
		h.wantEachOnce(3)
	})
}

// TestWebhookMetricsCountEveryEvent reads /metrics' outbox figures while
// redemptions commit at once, and on PostgreSQL across a transaction that
// holds its event uncommitted while a later one commits: the event count
// read from the watermark on must equal the events stored after every
// reading, and must take in the late commit. The count reads the outbox in
// statements over one watermark key at first, so that their boundaries fall
// between the events. The deliveries' gauges count the PENDING and FAILED
// ones.
func TestWebhookMetricsCountEveryEvent(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorldWith(t, db, true, allowPrivate)
		services.SetEventCountSpan(w.svc.Webhooks, 1)
		ctx := context.Background()
		ep, err := w.svc.Webhooks.CreateEndpoint(ctx, w.admin, services.WebhookEndpointInput{URL: "http://127.0.0.1:9/hook",
			Events: []string{models.EventRedemptionSucceeded}})
		must(t, err)
		stored := func() int64 {
			var n int64
			must(t, db.Model(&models.OutboxEvent{}).Count(&n).Error)
			return n
		}
		metrics := func() services.WebhookMetrics {
			m, err := w.svc.Webhooks.Metrics(ctx)
			must(t, err)
			return m
		}
		if got, want := metrics().Events, stored(); got != want {
			t.Fatalf("events %d at first, want %d", got, want)
		}
		const n = 60
		w.redeemConcurrently(w.issue(w.campaign, n), func(done <-chan struct{}) {
			for {
				select {
				case <-done:
					return
				default:
					metrics()
					time.Sleep(2 * time.Millisecond)
				}
			}
		})
		m := metrics()
		if got, want := m.Events, stored(); got != want {
			t.Fatalf("events %d after the redemptions, want %d", got, want)
		}
		if m.Deliveries[models.DeliveryPending] != n || m.Deliveries[models.DeliveryFailed] != 0 {
			t.Fatalf("deliveries %v, want %d PENDING and none FAILED", m.Deliveries, n)
		}
		must(t, db.Exec("UPDATE webhook_deliveries SET status = 'FAILED' WHERE event_id IN (SELECT event_id FROM webhook_deliveries WHERE endpoint_id = ? ORDER BY event_id LIMIT 3)",
			ep.Endpoint.ID).Error)
		if m := metrics(); m.Deliveries[models.DeliveryPending] != n-3 || m.Deliveries[models.DeliveryFailed] != 3 {
			t.Fatalf("deliveries %v, want %d PENDING and 3 FAILED", m.Deliveries, n-3)
		}
		if models.DialectOfDB(db) != models.Postgres {
			return // SQLite's writers take turns: no commit can overtake another.
		}
		event := func() *models.OutboxEvent {
			return &models.OutboxEvent{MerchantID: w.merchant.ID, UID: models.NewEventUID(), Type: models.EventCouponVoided,
				Data: `{}`, CreatedAt: time.Now().UTC()}
		}
		wrote, hold, errc := make(chan struct{}), make(chan struct{}), make(chan error, 1)
		go func() {
			errc <- db.Transaction(func(tx *gorm.DB) error {
				if err := models.InsertEvent(tx, event()); err != nil {
					return err
				}
				close(wrote)
				<-hold
				return nil
			})
		}()
		<-wrote
		must(t, models.InsertEvent(db, event()))
		if got, want := metrics().Events, stored(); got != want {
			t.Fatalf("events %d with one uncommitted, want %d", got, want)
		}
		close(hold)
		must(t, <-errc)
		if got, want := metrics().Events, stored(); got != want {
			t.Fatalf("events %d after the earlier transaction committed last, want %d", got, want)
		}
	})
}

// TestWebhookDeliveryBeforeTheFloor writes a delivery due well before its
// endpoint's floor, as a transaction that began long before it committed,
// or a replica whose clock is behind, would: the searches from the floor
// pass it by, and the next reading of the floors from the start, within
// half a minute, finds it and it is delivered once.
func TestWebhookDeliveryBeforeTheFloor(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		h := newHookSetup(t, db, models.EventCouponIssued)
		d := h.deliverer(4)
		h.issueEvents(1)
		deliverUntil(t, func() bool { return h.pending() == 0 }, d)
		h.clock.Advance(2 * time.Second)
		_, err := d.RunOnce(context.Background())
		must(t, err)
		d.Wait()

		h.issueEvents(1)
		must(t, db.Exec("UPDATE webhook_deliveries SET next_attempt_at = ? WHERE status = ?", h.now().Add(-10*time.Second),
			models.DeliveryPending).Error)
		n, err := d.RunOnce(context.Background())
		must(t, err)
		d.Wait()
		if n != 0 || h.pending() != 1 {
			t.Fatalf("claimed %d, %d PENDING; want the delivery before the floor passed by", n, h.pending())
		}
		h.clock.Advance(31 * time.Second)
		deliverUntil(t, func() bool { return h.pending() == 0 }, d)
		h.wantEachOnce(2)
	})
}
