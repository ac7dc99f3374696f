package services_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/internal/testdb"
	"coupond/models"
	"coupond/services"
)

// redeemCodes redeems codes for one order at store A as clerk A.
func (w *world) redeemCodes(requestID string, amount int64, codes ...string) (*services.OrderRedemption, error) {
	return w.svc.Redemptions.RedeemCodes(context.Background(), w.clerkA,
		services.RedeemCodesInput{Codes: codes, StoreID: w.storeA.ID, RequestID: requestID, OrderAmount: amount})
}

// stackable is a stackable campaign of ten yuan off, no minimum spend.
func (w *world) stackable() *models.Campaign {
	w.t.Helper()
	return w.newCampaign(services.CreateCampaignInput{Name: "Stack ten off", Type: models.CampaignCash, Value: 1000,
		TotalQuantity: 1000, Stackable: true})
}

// eachAdapter runs fn with the two ways a one-shot redemption makes its
// order: the general protocol (reserve, adapter, settle) and the builtin
// adapter's one commit.
func eachAdapter(t *testing.T, db *gorm.DB, fn func(t *testing.T, w *world)) {
	for _, oneCommit := range []bool{false, true} {
		t.Run(fmt.Sprintf("oneCommit=%t", oneCommit), func(t *testing.T) {
			sdb := db
			if oneCommit {
				sdb = freshDB(t, db)
			}
			fn(t, newWorldWith(t, sdb, oneCommit))
		})
	}
}

// A 3-code order whose second code is taken takes nothing: the order is
// REJECTED with every code's reasons, the taken code's COUPON_NOT_AVAILABLE,
// and a replay gives the same answer without writing anything.
func TestRedeemCodesAllOrNothing(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		eachAdapter(t, db, func(t *testing.T, w *world) {
			codes := w.issue(w.stackable(), 3)
			if f, err := w.redeem(codes[1], "taken", 5000); err != nil || f.Status != models.FlowSucceeded {
				t.Fatalf("redeem the second code alone: %v %v", f, err)
			}
			flowsBefore := w.count(&models.RedemptionFlow{}, "1 = 1")
			out, err := w.redeemCodes("order-1", 5000, codes...)
			must(t, err)
			if out.Order.Status != models.FlowRejected || len(out.Flows) != 0 {
				t.Fatalf("order %s with %d flows, want REJECTED with none", out.Order.Status, len(out.Flows))
			}
			want := [][]string{{}, {services.RejectNotAvailable}, {}}
			if len(out.Verdicts) != 3 {
				t.Fatalf("%d verdicts, want 3", len(out.Verdicts))
			}
			for i, v := range out.Verdicts {
				if v.Code != codes[i] || !slices.Equal(v.Reasons, want[i]) {
					t.Errorf("verdict %d: %+v, want %s %v", i, v, codes[i], want[i])
				}
			}
			for _, i := range []int{0, 2} {
				if c := w.coupon(codes[i]); c.Status != models.CouponUnused || c.Version != 0 {
					t.Errorf("code %d is %s v%d, want untouched", i, c.Status, c.Version)
				}
			}
			if n := w.count(&models.RedemptionFlow{}, "1 = 1"); n != flowsBefore {
				t.Fatalf("%d flows, want %d: a rejected order writes none", n, flowsBefore)
			}
			again, err := w.redeemCodes("order-1", 5000, codes...)
			must(t, err)
			if again.Order.ID != out.Order.ID || again.Order.Status != models.FlowRejected || len(again.Verdicts) != 3 ||
				!slices.Equal(again.Verdicts[1].Reasons, want[1]) {
				t.Fatalf("replay %+v %+v", again.Order, again.Verdicts)
			}
			if n := w.count(&models.RedemptionOrder{}, "1 = 1"); n != 1 {
				t.Fatalf("%d orders, want 1", n)
			}
			w.noViolations(t)
		})
	})
}

// Stacked coupons take their discounts in the order given, each on what the
// ones before left, never below zero; the order is one business order keyed
// by the first flow's redemption number, every coupon is REDEEMED by its own
// flow with an event each, and the ledger reconciles. A replay returns the
// same redemptions; the same request id with other codes is
// IDEMPOTENCY_KEY_REUSED.
func TestRedeemCodesStacksInOrder(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		eachAdapter(t, db, func(t *testing.T, w *world) {
			ten := w.issue(w.stackable(), 2)
			half := w.newCampaign(services.CreateCampaignInput{Name: "Half off", Type: models.CampaignDiscount, Value: 50,
				TotalQuantity: 10, Stackable: true})
			pct := w.issue(half, 1)[0]
			// 2500: ten off -> 1500, half off -> 750 (750 left), ten off -> 750 (not 1000: never below zero).
			out, err := w.redeemCodes("stack-1", 2500, ten[0], pct, ten[1])
			must(t, err)
			if out.Order.Status != models.FlowSucceeded || len(out.Flows) != 3 {
				t.Fatalf("order %s with %d flows", out.Order.Status, len(out.Flows))
			}
			for i, want := range []int64{1000, 750, 750} {
				f := out.Flows[i]
				if f.DiscountAmount != want || f.Status != models.FlowSucceeded || f.OrderRef == nil ||
					*f.OrderRef != *out.Order.OrderRef {
					t.Errorf("flow %d: discount %d %s ref %v, want %d SUCCEEDED on the order's ref", i, f.DiscountAmount,
						f.Status, f.OrderRef, want)
				}
			}
			if out.Order.DiscountAmount != 2500 || out.PayAmount() != 0 {
				t.Fatalf("order discount %d pay %d, want 2500 and 0", out.Order.DiscountAmount, out.PayAmount())
			}
			if out.Order.OrderNo != out.Flows[0].RedeemNo {
				t.Fatalf("order key %s, want the first flow's %s", out.Order.OrderNo, out.Flows[0].RedeemNo)
			}
			if n := w.count(&models.Order{}, "status = 'CREATED'"); n != 1 {
				t.Fatalf("%d orders, want one for the whole set", n)
			}
			for _, code := range []string{ten[0], pct, ten[1]} {
				if c := w.coupon(code); c.Status != models.CouponRedeemed {
					t.Errorf("%s is %s", code, c.Status)
				}
			}
			if n := w.count(&models.OutboxEvent{}, "type = ?", models.EventRedemptionSucceeded); n != 3 {
				t.Fatalf("%d redemption.succeeded events, want 3", n)
			}
			w.noViolations(t)

			again, err := w.redeemCodes("stack-1", 2500, ten[0], pct, ten[1])
			must(t, err)
			if again.Order.ID != out.Order.ID || len(again.Flows) != 3 {
				t.Fatalf("replay %+v", again.Order)
			}
			for i := range again.Flows {
				if again.Flows[i].RedeemNo != out.Flows[i].RedeemNo || again.Flows[i].Status != models.FlowSucceeded {
					t.Errorf("replayed flow %d: %s %s", i, again.Flows[i].RedeemNo, again.Flows[i].Status)
				}
			}
			_, err = w.redeemCodes("stack-1", 2500, ten[0], pct)
			wantCode(t, err, "IDEMPOTENCY_KEY_REUSED")
			_, err = w.redeemCodes("stack-1", 2600, ten[0], pct, ten[1])
			wantCode(t, err, "IDEMPOTENCY_KEY_REUSED")
		})
	})
}

// At most one coupon of a non-stackable campaign goes on an order: a second
// is NOT_STACKABLE and the order takes nothing; with stackable coupons one
// non-stackable coupon is fine.
func TestRedeemCodesNotStackable(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		plain := w.issue(w.campaign, 2) // not stackable: the default
		stack := w.issue(w.stackable(), 1)
		out, err := w.redeemCodes("ns-1", 5000, plain[0], stack[0], plain[1])
		must(t, err)
		if out.Order.Status != models.FlowRejected {
			t.Fatalf("order %s, want REJECTED", out.Order.Status)
		}
		if !slices.Equal(out.Verdicts[2].Reasons, []string{services.RejectNotStackable}) ||
			len(out.Verdicts[0].Reasons) != 0 || len(out.Verdicts[1].Reasons) != 0 {
			t.Fatalf("verdicts %+v", out.Verdicts)
		}
		for _, code := range append(plain, stack...) {
			if c := w.coupon(code); c.Status != models.CouponUnused {
				t.Fatalf("%s is %s", code, c.Status)
			}
		}
		q, err := w.svc.Redemptions.QuoteCodes(context.Background(), w.clerkA, services.QuoteCodesInput{
			Codes: []string{plain[0], stack[0], plain[1]}, StoreID: w.storeA.ID, OrderAmount: 5000})
		must(t, err)
		if q.Eligible() || q.Quotes[2].RejectReason != services.RejectNotStackable || q.DiscountAmount != 2000 || q.PayAmount != 3000 {
			t.Fatalf("quote eligible=%t %s discount %d pay %d", q.Eligible(), q.Quotes[2].RejectReason, q.DiscountAmount, q.PayAmount)
		}

		ok, err := w.redeemCodes("ns-2", 5000, plain[0], stack[0])
		must(t, err)
		if ok.Order.Status != models.FlowSucceeded || ok.Order.DiscountAmount != 2000 {
			t.Fatalf("one non-stackable with a stackable: %s, discount %d", ok.Order.Status, ok.Order.DiscountAmount)
		}
		w.noViolations(t)
	})
}

// More than ten codes, none, or a code twice is BAD_USER_INPUT naming the
// field, and nothing is written.
func TestRedeemCodesBadInput(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		codes := w.issue(w.stackable(), 11)
		tests := []struct {
			name  string
			codes []string
			field string
		}{
			{"eleven", codes, "codes"},
			{"none", nil, "codes"},
			{"twice", []string{codes[0], codes[1], codes[0]}, "codes"},
			{"twice in another case", []string{codes[0], strings.ToLower(codes[0])}, "codes"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := w.redeemCodes("bad-"+tt.name[:3], 5000, tt.codes...)
				wantCode(t, err, "BAD_USER_INPUT")
				if !strings.Contains(err.Error(), tt.field) {
					t.Fatalf("%v does not name %s", err, tt.field)
				}
				_, err = w.svc.Redemptions.QuoteCodes(context.Background(), w.clerkA,
					services.QuoteCodesInput{Codes: tt.codes, StoreID: w.storeA.ID, OrderAmount: 5000})
				wantCode(t, err, "BAD_USER_INPUT")
			})
		}
		if n := w.count(&models.RedemptionOrder{}, "1 = 1") + w.count(&models.RedemptionFlow{}, "1 = 1"); n != 0 {
			t.Fatalf("%d rows written", n)
		}
		for _, c := range codes {
			if w.coupon(c).Version != 0 {
				t.Fatalf("%s touched", c)
			}
		}
		// An unknown code writes nothing either.
		_, err := w.redeemCodes("unknown-1", 5000, codes[0], "NOPE-NOPE-1")
		if err == nil {
			t.Fatal("an unknown code was accepted")
		}
		if n := w.count(&models.RedemptionOrder{}, "1 = 1"); n != 0 {
			t.Fatalf("%d orders written for an unknown code", n)
		}
	})
}

// 50 concurrent copies of one multi-code request execute once: one order
// row, one business order, each coupon taken once by one flow, every copy
// answered with the same redemptions.
func TestRedeemCodesConcurrentCopies(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		eachAdapter(t, db, func(t *testing.T, w *world) {
			codes := w.issue(w.stackable(), 3)
			const n = 50
			var wg sync.WaitGroup
			start := make(chan struct{})
			outs := make([]*services.OrderRedemption, n)
			errs := make([]error, n)
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					outs[i], errs[i] = w.redeemCodes("same-order", 5000, codes...)
				}()
			}
			close(start)
			wg.Wait()
			var first []string
			for i := range n {
				if errs[i] != nil {
					t.Fatalf("copy %d: %v", i, errs[i])
				}
				var nos []string
				for _, f := range outs[i].Flows {
					nos = append(nos, f.RedeemNo)
				}
				if len(nos) != 3 {
					t.Fatalf("copy %d: %s with %d flows", i, outs[i].Order.Status, len(nos))
				}
				if first == nil {
					first = nos
				} else if !slices.Equal(first, nos) {
					t.Fatalf("copy %d answered %v, copy 0 %v", i, nos, first)
				}
			}
			if got := w.count(&models.RedemptionOrder{}, "1 = 1"); got != 1 {
				t.Fatalf("%d order rows, want 1", got)
			}
			if got := w.count(&models.RedemptionFlow{}, "1 = 1"); got != 3 {
				t.Fatalf("%d flows, want 3", got)
			}
			if got := w.count(&models.Order{}, "1 = 1"); got != 1 {
				t.Fatalf("%d business orders, want 1", got)
			}
			for _, c := range codes {
				if got := w.coupon(c); got.Status != models.CouponRedeemed || got.Version != 2 {
					t.Fatalf("%s is %s v%d, want REDEEMED v2 (taken once)", c, got.Status, got.Version)
				}
			}
			w.noViolations(t)
		})
	})
}

// refundRedemptions refunds several redemptions all or nothing and is
// idempotent; the multi-code order's one business order is cancelled with
// its last redemption, also when they are refunded one by one, and the
// ledger reconciles at every step.
func TestRefundRedemptionsTogether(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		codes := w.issue(w.stackable(), 5)
		out, err := w.redeemCodes("rf-order", 5000, codes[0], codes[1], codes[2])
		must(t, err)
		if out.Order.Status != models.FlowSucceeded {
			t.Fatalf("order %s", out.Order.Status)
		}
		nos := []string{out.Flows[0].RedeemNo, out.Flows[1].RedeemNo, out.Flows[2].RedeemNo}
		single, err := w.redeem(codes[3], "rf-single", 5000)
		must(t, err)
		rejected, err := w.redeem(codes[1], "rf-rejected", 5000)
		must(t, err)
		if rejected.Status != models.FlowRejected {
			t.Fatalf("redeem a taken code: %s", rejected.Status)
		}
		refund := func(requestID string, nos ...string) ([]*models.RefundFlow, error) {
			return w.svc.Redemptions.RefundMany(ctx, w.admin, services.RefundManyInput{RedeemNos: nos, RequestID: requestID,
				Reason: "customer left"})
		}

		// One of them may not be refunded: none is.
		_, err = refund("rf-1", nos[0], rejected.RedeemNo)
		wantCode(t, err, "INVALID_STATE")
		if !strings.Contains(err.Error(), rejected.RedeemNo) {
			t.Fatalf("%v does not name %s", err, rejected.RedeemNo)
		}
		if n := w.count(&models.RefundFlow{}, "1 = 1"); n != 0 {
			t.Fatalf("%d refunds written", n)
		}
		_, err = refund("rf-2", nos[0], nos[0])
		wantCode(t, err, "BAD_USER_INPUT")

		// The first redemption alone: the order stands for the other two.
		got, err := refund("rf-3", nos[0])
		must(t, err)
		if len(got) != 1 || w.coupon(codes[0]).Status != models.CouponRefunded {
			t.Fatalf("refund of one: %+v", got)
		}
		if n := w.count(&models.Order{}, "status = 'CREATED'"); n != 2 {
			t.Fatalf("%d live orders, want 2 (the multi-code order and the single one)", n)
		}
		w.noViolations(t)

		// The other two with the single redemption, together.
		got, err = refund("rf-4", nos[1], single.RedeemNo, nos[2])
		must(t, err)
		if len(got) != 3 || got[0].RedeemNo != nos[1] || got[1].RedeemNo != single.RedeemNo || got[2].RedeemNo != nos[2] {
			t.Fatalf("refunds %+v", got)
		}
		if n := w.count(&models.Order{}, "status = 'CREATED'"); n != 0 {
			t.Fatalf("%d live orders, want 0", n)
		}
		if n := w.count(&models.OutboxEvent{}, "type = ?", models.EventRedemptionRefunded); n != 4 {
			t.Fatalf("%d refund events, want 4", n)
		}
		again, err := refund("rf-4", nos[1], single.RedeemNo, nos[2])
		must(t, err)
		for i := range again {
			if again[i].RefundNo != got[i].RefundNo {
				t.Fatalf("replay %d: %s, want %s", i, again[i].RefundNo, got[i].RefundNo)
			}
		}
		_, err = refund("rf-4", nos[1], nos[2])
		wantCode(t, err, "IDEMPOTENCY_KEY_REUSED")
		if n := w.count(&models.RefundFlow{}, "1 = 1"); n != 4 {
			t.Fatalf("%d refunds, want 4", n)
		}
		w.noViolations(t)
	})
}

// With an adapter outside the database the order is made once for the set:
// a definite failure releases every coupon; an unknown outcome leaves the
// order to compensation, which settles all its flows the same way, by the
// order's key: no order, all released and the key fenced; an order made
// whose answer was lost, all confirmed.
func TestRedeemCodesFulfilmentOutcomes(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		codes := w.issue(w.stackable(), 6)
		w.ful.failWith(fmt.Errorf("kitchen closed: %w", services.ErrFulfilmentRejected))
		out, err := w.redeemCodes("fail-1", 5000, codes[0], codes[1])
		must(t, err)
		if out.Order.Status != models.FlowReleased {
			t.Fatalf("order %s, want RELEASED", out.Order.Status)
		}
		for _, f := range out.Flows {
			if f.Status != models.FlowReleased || *f.ReleaseReason != services.ReleaseFulfilmentFailed {
				t.Fatalf("flow %s %v", f.Status, f.ReleaseReason)
			}
		}
		for _, c := range codes[:2] {
			if w.coupon(c).Status != models.CouponUnused {
				t.Fatalf("%s not given back", c)
			}
		}
		if n := w.count(&models.OutboxEvent{}, "type = ?", models.EventRedemptionReleased); n != 2 {
			t.Fatalf("%d release events, want 2", n)
		}

		// Unknown outcome, no order: compensation releases the whole order.
		w.ful.failWith(errors.New("timeout"))
		lost, err := w.redeemCodes("unknown-1", 5000, codes[2], codes[3])
		must(t, err)
		if lost.Order.Status != models.FlowProcessing {
			t.Fatalf("order %s, want PROCESSING", lost.Order.Status)
		}
		// Unknown outcome, order made: compensation confirms the whole order.
		made, err := w.redeemCodes("unknown-2", 5000, codes[4], codes[5])
		must(t, err)
		_, err = services.NewBuiltinFulfiller(w.db, w.clock.Now).Fulfil(ctx, services.FulfilRequest{MerchantID: made.Order.MerchantID,
			RedeemNo: made.Order.OrderNo, StoreID: made.Order.StoreID, OrderAmount: made.Order.OrderAmount})
		must(t, err)
		w.ful.failWith(nil)
		w.clock.Advance(holdTimeout + time.Second)
		res, err := w.svc.Compensation.Run(ctx)
		must(t, err)
		if res.Claimed != 4 || res.Released != 1 || res.RolledForward != 1 || res.Lost != 2 || res.Failed != 0 {
			t.Fatalf("compensation %+v", res)
		}
		again, err := w.redeemCodes("unknown-1", 5000, codes[2], codes[3])
		must(t, err)
		if again.Order.Status != models.FlowReleased || again.Flows[0].Status != models.FlowReleased ||
			again.Flows[1].Status != models.FlowReleased {
			t.Fatalf("released order replays %s", again.Order.Status)
		}
		_, err = w.svc.Fulfiller.Fulfil(ctx, services.FulfilRequest{MerchantID: lost.Order.MerchantID, RedeemNo: lost.Order.OrderNo})
		if !errors.Is(err, services.ErrFenced) {
			t.Fatalf("late fulfil of a released order: %v, want ErrFenced", err)
		}
		confirmed, err := w.redeemCodes("unknown-2", 5000, codes[4], codes[5])
		must(t, err)
		if confirmed.Order.Status != models.FlowSucceeded || confirmed.Flows[1].Status != models.FlowSucceeded {
			t.Fatalf("rolled forward order replays %s", confirmed.Order.Status)
		}
		for _, c := range codes[4:] {
			if w.coupon(c).Status != models.CouponRedeemed {
				t.Fatalf("%s not redeemed", c)
			}
		}
		w.noViolations(t)
	})
}

// The checks' SQL and their plain reference agree on the ledger of
// multi-code orders, whose one business order is keyed by the first flow's
// redemption number: refunds of some or all of an order's flows, old and
// young, and an order's business order gone.
func TestReconciliationMatchesReferenceForOrders(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		now := w.clock.Now()
		codes := w.issue(w.stackable(), 7)
		order := func(req string, codes ...string) *services.OrderRedemption {
			out, err := w.redeemCodes(req, 5000, codes...)
			must(t, err)
			if out.Order.Status != models.FlowSucceeded {
				t.Fatalf("order %s: %s", req, out.Order.Status)
			}
			return out
		}
		a := order("o-a", codes[0], codes[1], codes[2])
		b := order("o-b", codes[3], codes[4])
		c := order("o-c", codes[5], codes[6])
		refund := func(f *models.RedemptionFlow, no string, at time.Time) {
			must(t, w.db.Exec(`INSERT INTO refund_flows (merchant_id, refund_no, request_id, fingerprint, redemption_id, redeem_no,
  coupon_id, store_id, status, reason, amount, reissue, created_at) VALUES (?, ?, ?, 'x', ?, ?, ?, ?, 'SUCCEEDED', '', 1000, false, ?)`,
				f.MerchantID, no, no, f.ID, f.RedeemNo, f.CouponID, f.StoreID, at).Error)
		}
		old := now.Add(-time.Hour)
		plants := []struct {
			name  string
			plant func()
		}{
			{"nothing", func() {}},
			{"an order's first flow refunded long ago, the others stand", func() { refund(a.Flows[0], "RF-A0", old) }},
			{"every flow of an order refunded long ago, its order live", func() {
				refund(a.Flows[1], "RF-A1", old)
				refund(a.Flows[2], "RF-A2", old)
			}},
			{"the first flow refunded long ago, the other just now", func() {
				refund(b.Flows[0], "RF-B0", old)
				refund(b.Flows[1], "RF-B1", now)
			}},
			{"an order's business order cancelled", func() {
				must(t, w.db.Exec("UPDATE orders SET status = 'CANCELLED' WHERE redeem_no = ?", c.Order.OrderNo).Error)
			}},
		}
		for i, p := range plants {
			p.plant()
			got, err := w.svc.Reconciliation.Check(ctx)
			must(t, err)
			want, err := services.CheckWithReference(ctx, w.svc.Reconciliation)
			must(t, err)
			if g, r := violationSet(got), violationSet(want); g != r {
				t.Fatalf("after %s:\ngot\n%s\nwant\n%s", p.name, g, r)
			}
			if i == 0 && len(got) != 0 {
				t.Fatalf("%d violations on a consistent ledger of orders", len(got))
			}
			for _, span := range []int64{1, 2, 0} {
				yielded, err := services.CheckYielding(ctx, w.svc.Reconciliation, span)
				must(t, err)
				if g, r := violationSet(yielded), violationSet(want); g != r {
					t.Fatalf("yielding run in batches of %d after %s:\ngot\n%s\nwant\n%s", span, p.name, g, r)
				}
			}
		}
		kinds := map[models.FindingKind]int{}
		vs, err := w.svc.Reconciliation.Check(ctx)
		must(t, err)
		for _, v := range vs {
			kinds[v.Kind]++
		}
		if kinds[models.FindingOrderWithoutRedemption] != 1 || kinds[models.FindingRedemptionWithoutOrder] != 2 {
			t.Fatalf("violations by kind %v, want the order of o-a without a redemption and both flows of o-c without an order", kinds)
		}
	})
}

// Concurrent copies of a request whose order is rejected record one
// rejection, which every copy answers with, and take nothing.
func TestRedeemCodesConcurrentRejection(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		codes := w.issue(w.stackable(), 3)
		if _, err := w.redeem(codes[1], "taken", 5000); err != nil {
			t.Fatal(err)
		}
		const n = 50
		var wg sync.WaitGroup
		start := make(chan struct{})
		outs := make([]*services.OrderRedemption, n)
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				outs[i], errs[i] = w.redeemCodes("same-rejected", 5000, codes...)
			}()
		}
		close(start)
		wg.Wait()
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("copy %d: %v", i, errs[i])
			}
			if o := outs[i]; o.Order.Status != models.FlowRejected || len(o.Verdicts) != 3 ||
				!slices.Equal(o.Verdicts[1].Reasons, []string{services.RejectNotAvailable}) || o.Order.ID != outs[0].Order.ID {
				t.Fatalf("copy %d: %s %+v", i, o.Order.Status, o.Verdicts)
			}
		}
		if got := w.count(&models.RedemptionOrder{}, "1 = 1"); got != 1 {
			t.Fatalf("%d order rows, want 1", got)
		}
		for _, i := range []int{0, 2} {
			if c := w.coupon(codes[i]); c.Status != models.CouponUnused || c.Version != 0 {
				t.Fatalf("code %d is %s v%d", i, c.Status, c.Version)
			}
		}
		w.noViolations(t)
	})
}

// Orders that share coupons, given in opposite orders, wait for each other
// rather than deadlock: exactly one takes the coupons, every other is
// rejected, none fails.
func TestRedeemCodesSharedCouponsNoDeadlock(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		codes := w.issue(w.stackable(), 2)
		const n = 20
		var wg sync.WaitGroup
		start := make(chan struct{})
		outs := make([]*services.OrderRedemption, n)
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				order := []string{codes[0], codes[1]}
				if i%2 == 1 {
					order = []string{codes[1], codes[0]}
				}
				outs[i], errs[i] = w.redeemCodes(fmt.Sprintf("shared-%d", i), 5000, order...)
			}()
		}
		close(start)
		wg.Wait()
		succeeded := 0
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("order %d: %v", i, errs[i])
			}
			switch outs[i].Order.Status {
			case models.FlowSucceeded:
				succeeded++
			case models.FlowRejected:
			default:
				t.Fatalf("order %d: %s", i, outs[i].Order.Status)
			}
		}
		if succeeded != 1 {
			t.Fatalf("%d orders succeeded, want 1", succeeded)
		}
		w.noViolations(t)
	})
}
