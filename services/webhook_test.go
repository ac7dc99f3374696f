package services_test

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/internal/orderservice"
	"coupond/internal/testdb"
	"coupond/internal/webhookreceiver"
	"coupond/models"
	"coupond/orderwire"
	"coupond/services"
)

var webhookSecret = []byte("s3cret-shared-with-the-kitchen")

func newOrderService(t *testing.T) (*orderservice.Server, *httptest.Server) {
	t.Helper()
	orders := orderservice.New(webhookSecret, nil)
	srv := httptest.NewServer(orders)
	t.Cleanup(srv.Close)
	return orders, srv
}

func newWebhook(t *testing.T, url string, secret []byte, timeout time.Duration, retries int) *services.WebhookFulfiller {
	t.Helper()
	w, err := services.NewWebhookFulfiller(services.WebhookConfig{URL: url, Secret: secret, Timeout: timeout,
		Retries: retries, Backoff: time.Millisecond})
	must(t, err)
	return w
}

func fulfilReq(redeemNo string) services.FulfilRequest {
	return services.FulfilRequest{MerchantID: 1, RedeemNo: redeemNo, CouponID: 7, StoreID: 3, OrderAmount: 5000, DiscountAmount: 1000}
}

func TestWebhookAdapter(t *testing.T) {
	ctx := context.Background()
	t.Run("success is idempotent", func(t *testing.T) {
		orders, srv := newOrderService(t)
		wh := newWebhook(t, srv.URL, webhookSecret, time.Second, 2)
		ref, err := wh.Fulfil(ctx, fulfilReq("RD1"))
		must(t, err)
		again, err := wh.Fulfil(ctx, fulfilReq("RD1"))
		must(t, err)
		if ref == "" || again != ref || orders.LiveOrders() != 1 {
			t.Fatalf("refs %q %q, %d live orders", ref, again, orders.LiveOrders())
		}
		look, err := wh.Lookup(ctx, 1, "RD1")
		must(t, err)
		if !look.Exists || look.OrderRef != ref {
			t.Fatalf("lookup %+v", look)
		}
		must(t, wh.Cancel(ctx, 1, "RD1"))
		must(t, wh.Cancel(ctx, 1, "RD1"))
		if look, err = wh.Lookup(ctx, 1, "RD1"); err != nil || look.Exists {
			t.Fatalf("lookup after cancel %+v %v", look, err)
		}
		if _, err := wh.Fulfil(ctx, fulfilReq("RD1")); !errors.Is(err, services.ErrFulfilmentRejected) {
			t.Fatalf("fulfil after cancel: %v", err)
		}
	})
	t.Run("cancel before fulfil fences", func(t *testing.T) {
		orders, srv := newOrderService(t)
		wh := newWebhook(t, srv.URL, webhookSecret, time.Second, 2)
		must(t, wh.Cancel(ctx, 1, "RD2"))
		if _, err := wh.Fulfil(ctx, fulfilReq("RD2")); !errors.Is(err, services.ErrFenced) {
			t.Fatalf("fulfil after fence: %v", err)
		}
		if orders.LiveOrders() != 0 {
			t.Fatal("fenced number got an order")
		}
	})
	t.Run("rejected is a definite failure", func(t *testing.T) {
		orders, srv := newOrderService(t)
		wh := newWebhook(t, srv.URL, webhookSecret, time.Second, 2)
		orders.SetFault(orderservice.FaultReject)
		if _, err := wh.Fulfil(ctx, fulfilReq("RD3")); !errors.Is(err, services.ErrFulfilmentRejected) {
			t.Fatalf("rejected: %v", err)
		}
		if orders.Calls("fulfil") != 1 {
			t.Fatalf("a definite answer was retried: %d calls", orders.Calls("fulfil"))
		}
	})
	t.Run("5xx before creating is unknown, retried, creates nothing", func(t *testing.T) {
		orders, srv := newOrderService(t)
		wh := newWebhook(t, srv.URL, webhookSecret, time.Second, 2)
		orders.SetFault(orderservice.FaultFailBeforeCreate)
		_, err := wh.Fulfil(ctx, fulfilReq("RD4"))
		if err == nil || errors.Is(err, services.ErrFulfilmentRejected) {
			t.Fatalf("5xx: %v, want an unknown outcome", err)
		}
		if orders.Calls("fulfil") != 3 || orders.LiveOrders() != 0 {
			t.Fatalf("%d calls, %d live orders; want 3 and 0", orders.Calls("fulfil"), orders.LiveOrders())
		}
		if look, err := wh.Lookup(ctx, 1, "RD4"); err != nil || look.Exists {
			t.Fatalf("lookup %+v %v", look, err)
		}
	})
	t.Run("creating then 5xx is ambiguous until looked up", func(t *testing.T) {
		orders, srv := newOrderService(t)
		wh := newWebhook(t, srv.URL, webhookSecret, time.Second, 2)
		orders.SetFault(orderservice.FaultFailAfterCreate)
		_, err := wh.Fulfil(ctx, fulfilReq("RD5"))
		if err == nil || errors.Is(err, services.ErrFulfilmentRejected) {
			t.Fatalf("create then 5xx: %v, want an unknown outcome", err)
		}
		if orders.LiveOrders() != 1 {
			t.Fatalf("%d live orders after retries, want exactly 1", orders.LiveOrders())
		}
		look, err := wh.Lookup(ctx, 1, "RD5")
		must(t, err)
		if !look.Exists {
			t.Fatal("lookup does not see the order")
		}
	})
	t.Run("hang past the timeout", func(t *testing.T) {
		orders, srv := newOrderService(t)
		wh := newWebhook(t, srv.URL, webhookSecret, 100*time.Millisecond, -1)
		orders.SetFault(orderservice.FaultHang)
		start := time.Now()
		_, err := wh.Fulfil(ctx, fulfilReq("RD6"))
		if err == nil || errors.Is(err, services.ErrFulfilmentRejected) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("hang: %v, want a deadline error", err)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Fatalf("hung call took %s", took)
		}
	})
	t.Run("bad signature refused", func(t *testing.T) {
		orders, srv := newOrderService(t)
		wh := newWebhook(t, srv.URL, []byte("wrong secret"), time.Second, 2)
		_, err := wh.Fulfil(ctx, fulfilReq("RD7"))
		if err == nil || errors.Is(err, services.ErrFulfilmentRejected) {
			t.Fatalf("bad signature: %v", err)
		}
		if orders.LiveOrders() != 0 || orders.Calls("fulfil") != 1 {
			t.Fatalf("%d live orders, %d calls", orders.LiveOrders(), orders.Calls("fulfil"))
		}
		resp, err := http.Post(srv.URL+"/fulfil", "application/json", strings.NewReader(`{"merchantId":1,"redeemNo":"RD8"}`))
		must(t, err)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || orders.LiveOrders() != 0 {
			t.Fatalf("unsigned call: %d, %d live orders", resp.StatusCode, orders.LiveOrders())
		}
	})
}

// The webhook adapter behind the real redemption and compensation paths.
func TestWebhookRedemptionConverges(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		orders, srv := newOrderService(t)
		w.ful.Fulfiller = newWebhook(t, srv.URL, webhookSecret, time.Second, 1)
		codes := w.issue(w.campaign, 3)

		ok, err := w.redeem(codes[0], "wh-1", 5000)
		must(t, err)
		if ok.Status != models.FlowSucceeded || ok.OrderRef == nil || !strings.HasPrefix(*ok.OrderRef, "EXT") {
			t.Fatalf("redeem %s %v", ok.Status, ok.OrderRef)
		}

		orders.SetFault(orderservice.FaultFailAfterCreate)
		lost, err := w.redeem(codes[1], "wh-2", 5000)
		must(t, err)
		orders.SetFault(orderservice.FaultFailBeforeCreate)
		never, err := w.redeem(codes[2], "wh-3", 5000)
		must(t, err)
		orders.SetFault(orderservice.FaultNone)
		if lost.Status != models.FlowProcessing || never.Status != models.FlowProcessing {
			t.Fatalf("unknown outcomes answered %s and %s", lost.Status, never.Status)
		}
		w.clock.Advance(holdTimeout + time.Second)
		res, err := w.svc.Compensation.Run(ctx)
		must(t, err)
		if res != (services.CompensationResult{Claimed: 2, RolledForward: 1, Released: 1}) {
			t.Fatalf("compensation %+v", res)
		}
		if f := w.flow(lost.RedeemNo); f.Status != models.FlowSucceeded {
			t.Fatalf("created order: flow %s", f.Status)
		}
		if f := w.flow(never.RedeemNo); f.Status != models.FlowReleased {
			t.Fatalf("no order: flow %s", f.Status)
		}
		if o, _ := orders.Order(never.RedeemNo); !o.Fenced {
			t.Fatalf("released number not fenced at the order system: %+v", o)
		}
		if orders.LiveOrders() != 2 {
			t.Fatalf("%d live orders, want 2", orders.LiveOrders())
		}
	})
}

// TestWebhookAdapterSignsBothWays: the fulfillment calls carry the Standard
// Webhooks headers and, for one release, the X-Coupond ones; a receiver
// verifying either accepts them.
func TestWebhookAdapterSignsBothWays(t *testing.T) {
	var got http.Header
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		body, _ = io.ReadAll(r.Body)
		_, _ = io.WriteString(w, `{"exists": true, "orderRef": "EXT1"}`)
	}))
	t.Cleanup(srv.Close)
	wh := newWebhook(t, srv.URL, webhookSecret, time.Second, 0)
	_, err := wh.Fulfil(context.Background(), fulfilReq("RD9"))
	must(t, err)
	id, ts := got.Get(orderwire.HeaderWebhookID), got.Get(orderwire.HeaderWebhookTimestamp)
	if id != "fulfil:RD9" || !orderwire.VerifyStandard(webhookSecret, id, ts, body, got.Get(orderwire.HeaderWebhookSignature)) {
		t.Fatalf("standard headers %v", got)
	}
	if !orderwire.VerifySignature(webhookSecret, got.Get(orderwire.HeaderTimestamp), string(body), got.Get(orderwire.HeaderSignature)) {
		t.Fatalf("previous headers %v", got)
	}
	key := "whsec_" + base64.StdEncoding.EncodeToString(webhookSecret)
	if _, err := webhookreceiver.Verify([]string{key}, got, body, time.Now()); err != nil {
		t.Fatalf("reference receiver: %v", err)
	}
}
