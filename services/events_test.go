package services_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/internal/testdb"
	"coupond/models"
	"coupond/services"
)

// subscribe adds an endpoint of the world's merchant subscribed to every
// event type, straight into the table.
func (w *world) subscribe(url string) *models.WebhookEndpoint {
	w.t.Helper()
	now := w.clock.Now()
	e := &models.WebhookEndpoint{MerchantID: w.merchant.ID, URL: url, Events: models.JoinEventTypes(models.EventTypes),
		Enabled: true, Secret: "whsec_dGVzdHNlY3JldHRlc3RzZWNyZXQ=", CreatedAt: now, UpdatedAt: now}
	must(w.t, w.db.Transaction(func(tx *gorm.DB) error {
		if _, err := models.CountWebhookEndpointsLocked(tx, w.merchant.ID); err != nil {
			return err
		}
		return models.InsertWebhookEndpoint(tx, e)
	}))
	return e
}

// events returns the merchant's events of typ, oldest first, with data decoded.
func (w *world) events(typ string) []map[string]any {
	w.t.Helper()
	var evs []models.OutboxEvent
	must(w.t, w.db.Where("merchant_id = ? AND type = ?", w.merchant.ID, typ).Order("id").Find(&evs).Error)
	out := make([]map[string]any, len(evs))
	for i, ev := range evs {
		must(w.t, json.Unmarshal([]byte(ev.Data), &out[i]))
		out[i]["_uid"] = ev.UID
		out[i]["_coupon"] = ev.CouponID
		if w.count(&models.WebhookDelivery{}, "merchant_id = ? AND event_id = ?", w.merchant.ID, ev.ID) != 1 {
			w.t.Fatalf("event %s %s has no delivery to the endpoint", typ, ev.UID)
		}
	}
	return out
}

func TestEventsOfEveryChange(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		for _, oneCommit := range []bool{true, false} {
			t.Run(fmt.Sprintf("oneCommit=%t", oneCommit), func(t *testing.T) {
				db := db
				if !oneCommit {
					db = freshDB(t, db)
				}
				ctx := context.Background()
				w := newWorldWith(t, db, oneCommit)
				w.subscribe("https://pos.example/hook")
				codes := w.issue(w.campaign, 4)
				if got := w.events(models.EventCouponIssued); len(got) != 1 || got[0]["count"] != float64(4) ||
					got[0]["codesExport"] == "" {
					t.Fatalf("coupon.issued = %v", got)
				}

				flow, err := w.redeem(codes[0], "r-1", 5000)
				must(t, err)
				// A repeat of the request and a rejected scan write no event.
				_, err = w.redeem(codes[0], "r-1", 5000)
				must(t, err)
				rej, err := w.redeem(codes[0], "r-2", 5000)
				must(t, err)
				if rej.Status != models.FlowRejected {
					t.Fatalf("second redemption %s", rej.Status)
				}
				got := w.events(models.EventRedemptionSucceeded)
				if len(got) != 1 || got[0]["redeemNo"] != flow.RedeemNo || got[0]["code"] != codes[0] ||
					got[0]["storeCode"] != "SH01" || got[0]["discountAmount"] != float64(1000) ||
					got[0]["requestId"] != "r-1" || got[0]["orderRef"] != *flow.OrderRef || got[0]["operator"] == nil {
					t.Fatalf("redemption.succeeded = %v", got)
				}

				rf, err := w.svc.Redemptions.Refund(ctx, w.admin, services.RefundInput{RedeemNo: flow.RedeemNo,
					RequestID: "rf-1", Reason: "returned", Reissue: true})
				must(t, err)
				// A second refund is refused and writes nothing.
				_, err = w.svc.Redemptions.Refund(ctx, w.admin, services.RefundInput{RedeemNo: flow.RedeemNo, RequestID: "rf-2", Reason: "again"})
				if err == nil {
					t.Fatal("second refund succeeded")
				}
				refunds := w.events(models.EventRedemptionRefunded)
				reissued := w.events(models.EventCouponReissued)
				if len(refunds) != 1 || refunds[0]["refundNo"] != rf.RefundNo || refunds[0]["reissuedCode"] == nil ||
					len(reissued) != 1 || reissued[0]["reissuedCode"] != refunds[0]["reissuedCode"] || reissued[0]["code"] != codes[0] {
					t.Fatalf("refund events %v %v", refunds, reissued)
				}

				_, err = w.svc.Coupons.Void(ctx, w.admin, services.VoidInput{Code: codes[1], Reason: "leaked"})
				must(t, err)
				_, err = w.svc.Coupons.Void(ctx, w.admin, services.VoidInput{Code: codes[0], Reason: "used"})
				if err == nil {
					t.Fatal("void of a refunded coupon succeeded")
				}
				if got := w.events(models.EventCouponVoided); len(got) != 1 || fmt.Sprint(got[0]["codes"]) != "["+codes[1]+"]" {
					t.Fatalf("coupon.voided = %v", got)
				}

				if !oneCommit {
					w.ful.failWith(services.ErrFulfilmentRejected)
					rel, err := w.redeem(codes[2], "r-3", 5000)
					must(t, err)
					w.ful.failWith(nil)
					if got := w.events(models.EventRedemptionReleased); rel.Status != models.FlowReleased || len(got) != 1 ||
						got[0]["redeemNo"] != rel.RedeemNo || got[0]["releaseReason"] == nil {
						t.Fatalf("redemption.released = %v (%s)", got, rel.Status)
					}
				}

				w.clock.Advance(40 * 24 * time.Hour)
				_, err = w.svc.Expiry.Run(ctx)
				must(t, err)
				expired := w.events(models.EventCouponExpired)
				if len(expired) != 1 {
					t.Fatalf("coupon.expired = %v", expired)
				}

				_, err = models.InsertFindings(w.db, []models.Finding{{MerchantID: w.merchant.ID, Kind: models.FindingStuckRedeeming,
					Details: "d", DedupeKey: "k1", Status: models.FindingOpen, CreatedAt: w.clock.Now()}})
				must(t, err)
				_, err = models.InsertFindings(w.db, []models.Finding{{MerchantID: w.merchant.ID, Kind: models.FindingStuckRedeeming,
					Details: "d", DedupeKey: "k1", Status: models.FindingOpen, CreatedAt: w.clock.Now()}})
				must(t, err)
				if got := w.events(models.EventFindingOpened); len(got) != 1 || got[0]["kind"] != string(models.FindingStuckRedeeming) {
					t.Fatalf("finding.opened = %v", got)
				}
			})
		}
	})
}

// TestEventDataSame holds the one-statement redemption's event data to the
// data InsertRedemptionEvent renders from the stored flow.
func TestEventDataSame(t *testing.T) {
	db := testdb.Postgres(t)
	w := newWorldWith(t, db, true)
	w.subscribe("https://pos.example/hook")
	codes := w.issue(w.campaign, 1)
	flow, err := w.redeem(codes[0], "r-1", 5000)
	must(t, err)
	must(t, db.Transaction(func(tx *gorm.DB) error {
		return models.InsertRedemptionEvent(tx, models.EventRedemptionSucceeded, w.merchant.ID, flow.ID, w.clock.Now())
	}))
	got := w.events(models.EventRedemptionSucceeded)
	if len(got) != 2 {
		t.Fatalf("%d events", len(got))
	}
	for _, g := range got {
		delete(g, "_uid")
	}
	a, _ := json.Marshal(got[0])
	b, _ := json.Marshal(got[1])
	if string(a) != string(b) {
		t.Fatalf("statement data %s\nstored-flow data %s", a, b)
	}
}

// TestEventFeedSkipsNothing pages the feed while redemptions commit
// concurrently, and must see every event exactly once.
func TestEventFeedSkipsNothing(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorldWith(t, db, true)
		const n = 200
		codes := w.issue(w.campaign, n)
		seen := map[string]int{}
		var afterTx, afterID int64
		read := func() {
			evs, err := models.EventFeedPage(db, w.merchant.ID, []string{models.EventRedemptionSucceeded}, nil, nil, afterTx, afterID, 50)
			must(t, err)
			for _, ev := range evs {
				seen[ev.UID]++
				afterTx, afterID = ev.TxID, ev.ID
			}
		}
		w.redeemConcurrently(codes, func(done <-chan struct{}) {
			for {
				select {
				case <-done:
					return
				default:
					read()
					time.Sleep(2 * time.Millisecond)
				}
			}
		})
		// A write transaction still open anywhere on the server (another
		// test's) holds the horizon back; the feed then waits, never skips.
		for deadline := time.Now().Add(30 * time.Second); len(seen) < n && time.Now().Before(deadline); {
			read()
			time.Sleep(10 * time.Millisecond)
		}
		var all []string
		must(t, db.Model(&models.OutboxEvent{}).Where("merchant_id = ? AND type = ?", w.merchant.ID, models.EventRedemptionSucceeded).
			Pluck("uid", &all).Error)
		sort.Strings(all)
		if len(all) != n || len(seen) != n {
			t.Fatalf("%d events stored, %d seen", len(all), len(seen))
		}
		for uid, k := range seen {
			if k != 1 {
				t.Fatalf("event %s seen %d times", uid, k)
			}
		}
	})
}
