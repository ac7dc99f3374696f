package services_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/internal/testdb"
	"coupond/models"
	"coupond/services"
)

// The first question: two scans at the same moment never use a coupon twice.
// With lines, the scans of one process wait behind the first; without, they
// race at the database, as scans reaching different replicas do.
func TestConcurrentRedeemsOfOneCoupon(t *testing.T) {
	for _, oneCommit := range []bool{false, true} {
		for _, lines := range []bool{true, false} {
			t.Run(fmt.Sprintf("one-commit=%t/lines=%t", oneCommit, lines), func(t *testing.T) { concurrentRedeems(t, oneCommit, lines) })
		}
	}
}

func concurrentRedeems(t *testing.T, oneCommit, lines bool) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorldWith(t, db, oneCommit, func(o *services.Options) { o.NoCouponLines = !lines })
		code := w.issue(w.campaign, 1)[0]
		n := 200
		if models.DialectOfDB(db) == models.SQLite {
			n = 50
		}
		results := make([]*models.RedemptionFlow, n)
		errs := make([]error, n)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				results[i], errs[i] = w.redeem(code, fmt.Sprintf("scan-%d", i), 5000)
			}()
		}
		close(start)
		wg.Wait()
		succeeded, rejected := 0, 0
		for i := range n {
			must(t, errs[i])
			switch results[i].Status {
			case models.FlowSucceeded:
				succeeded++
			case models.FlowRejected:
				if *results[i].RejectReason != services.RejectNotAvailable {
					t.Fatalf("reject reason %s", *results[i].RejectReason)
				}
				rejected++
			default:
				t.Fatalf("unexpected status %s", results[i].Status)
			}
		}
		if succeeded != 1 || rejected != n-1 {
			t.Fatalf("succeeded=%d rejected=%d, want 1 and %d", succeeded, rejected, n-1)
		}
		c := w.coupon(code)
		if c.Status != models.CouponRedeemed || c.Version != 2 {
			t.Fatalf("coupon %s v%d, want REDEEMED v2", c.Status, c.Version)
		}
		if got := w.count(&models.Order{}, "coupon_id = ? AND status = 'CREATED'", c.ID); got != 1 {
			t.Fatalf("%d orders, want 1", got)
		}
		if got := w.count(&models.RedemptionFlow{}, "coupon_id = ? AND status = 'SUCCEEDED'", c.ID); got != 1 {
			t.Fatalf("%d succeeded flows, want 1", got)
		}
		if got := w.count(&models.RedemptionFlow{}, "coupon_id = ?", c.ID); got != int64(n) {
			t.Fatalf("%d flows, want %d", got, n)
		}
		if got := w.count(&models.CouponTransition{}, "coupon_id = ?", c.ID); got != 2 {
			t.Fatalf("%d transitions, want 2", got)
		}
	})
}

// The second question: a request retried many times runs once.
func TestSameRequestIDRunsOnce(t *testing.T) {
	for _, oneCommit := range []bool{false, true} {
		t.Run(fmt.Sprintf("one-commit=%t", oneCommit), func(t *testing.T) { sameRequestID(t, oneCommit) })
	}
}

func sameRequestID(t *testing.T, oneCommit bool) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorldWith(t, db, oneCommit)
		code := w.issue(w.campaign, 1)[0]
		const n = 100
		results := make([]*models.RedemptionFlow, n)
		errs := make([]error, n)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				results[i], errs[i] = w.redeem(code, "pos-42-txn-7", 5000)
			}()
		}
		close(start)
		wg.Wait()
		for i := range n {
			must(t, errs[i])
			if results[i].RedeemNo != results[0].RedeemNo {
				t.Fatalf("answer %d has redeemNo %s, want %s", i, results[i].RedeemNo, results[0].RedeemNo)
			}
			if results[i].Status == models.FlowRejected || results[i].Status == models.FlowReleased {
				t.Fatalf("answer %d is %s", i, results[i].Status)
			}
		}
		if got := w.ful.fulfils; !oneCommit && got != 1 {
			t.Fatalf("fulfilled %d times, want 1", got)
		}
		c := w.coupon(code)
		if got := w.count(&models.RedemptionFlow{}, "coupon_id = ?", c.ID); got != 1 {
			t.Fatalf("%d flows, want 1", got)
		}
		if got := w.count(&models.Order{}, "coupon_id = ?", c.ID); got != 1 {
			t.Fatalf("%d orders, want 1", got)
		}
		// A later retry replays the final result.
		again, err := w.redeem(code, "pos-42-txn-7", 5000)
		must(t, err)
		if again.Status != models.FlowSucceeded || again.RedeemNo != results[0].RedeemNo {
			t.Fatalf("replay %s %s", again.Status, again.RedeemNo)
		}
	})
}

func TestRequestIDReusedWithOtherParameters(t *testing.T) {
	for _, oneCommit := range []bool{false, true} {
		t.Run(fmt.Sprintf("one-commit=%t", oneCommit), func(t *testing.T) { requestIDReused(t, oneCommit) })
	}
}

func requestIDReused(t *testing.T, oneCommit bool) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorldWith(t, db, oneCommit)
		codes := w.issue(w.campaign, 2)
		first, err := w.redeem(codes[0], "req-1", 5000)
		must(t, err)
		if first.Status != models.FlowSucceeded {
			t.Fatalf("first %s", first.Status)
		}
		flows := w.count(&models.RedemptionFlow{}, "1 = 1")
		tests := []struct {
			name   string
			code   string
			amount int64
		}{
			{"another code", codes[1], 5000},
			{"another amount", codes[0], 6000},
			{"an unknown code", services.NewCouponCode(), 5000},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := w.redeem(tt.code, "req-1", tt.amount)
				wantCode(t, err, "IDEMPOTENCY_KEY_REUSED")
			})
		}
		// The same request again is the first answer, not a rejection.
		again, err := w.redeem(codes[0], "req-1", 5000)
		must(t, err)
		if again.Status != models.FlowSucceeded || again.RedeemNo != first.RedeemNo {
			t.Fatalf("repeat answered %s/%s, want %s/SUCCEEDED", again.RedeemNo, again.Status, first.RedeemNo)
		}
		if got := w.count(&models.RedemptionFlow{}, "1 = 1"); got != flows {
			t.Fatalf("flows %d, want %d: a reused key wrote", got, flows)
		}
		if c := w.coupon(codes[1]); c.Status != models.CouponUnused || c.Version != 0 {
			t.Fatalf("other coupon touched: %s v%d", c.Status, c.Version)
		}
		// A rejection is the final answer for its request id, too.
		rej, err := w.redeem(codes[0], "req-2", 5000)
		must(t, err)
		again, err = w.redeem(codes[0], "req-2", 5000)
		must(t, err)
		if rej.Status != models.FlowRejected || again.RedeemNo != rej.RedeemNo || again.Status != models.FlowRejected {
			t.Fatalf("rejection not replayed: %s/%s then %s/%s", rej.RedeemNo, rej.Status, again.RedeemNo, again.Status)
		}
	})
}

// The third question: when the business step fails, the customer gets the
// coupon back.
func TestFulfilmentFailureReleasesCoupon(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		code := w.issue(w.campaign, 1)[0]
		w.ful.failWith(fmt.Errorf("kitchen printer offline: %w", services.ErrFulfilmentRejected))
		flow, err := w.redeem(code, "req-fail", 5000)
		must(t, err)
		if flow.Status != models.FlowReleased || *flow.ReleaseReason != services.ReleaseFulfilmentFailed {
			t.Fatalf("flow %s, want RELEASED", flow.Status)
		}
		c := w.coupon(code)
		if c.Status != models.CouponUnused || c.Version != 2 || c.RedeemNo != nil {
			t.Fatalf("coupon %s v%d, want UNUSED v2 with no hold", c.Status, c.Version)
		}
		if got := w.count(&models.Order{}, "coupon_id = ?", c.ID); got != 0 {
			t.Fatalf("%d orders after a failed fulfilment", got)
		}
		// The same request id replays the release; a new one redeems.
		again, err := w.redeem(code, "req-fail", 5000)
		must(t, err)
		if again.Status != models.FlowReleased || again.RedeemNo != flow.RedeemNo {
			t.Fatalf("replay %s", again.Status)
		}
		w.ful.failWith(nil)
		ok, err := w.redeem(code, "req-retry", 5000)
		must(t, err)
		if ok.Status != models.FlowSucceeded {
			t.Fatalf("redeem after release: %s", ok.Status)
		}
		if c := w.coupon(code); c.Status != models.CouponRedeemed || c.Version != 4 {
			t.Fatalf("coupon %s v%d, want REDEEMED v4", c.Status, c.Version)
		}
	})
}

// An unknown outcome (timeout) leaves the flow PROCESSING for compensation; the
// coupon is not released on a guess.
func TestUnknownFulfilmentOutcomeStaysProcessing(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		code := w.issue(w.campaign, 1)[0]
		w.ful.failWith(context.DeadlineExceeded)
		flow, err := w.redeem(code, "req-hang", 5000)
		must(t, err)
		if flow.Status != models.FlowProcessing {
			t.Fatalf("flow %s, want PROCESSING", flow.Status)
		}
		if c := w.coupon(code); c.Status != models.CouponRedeeming {
			t.Fatalf("coupon %s, want REDEEMING", c.Status)
		}
		other, err := w.redeem(code, "req-other", 5000)
		must(t, err)
		if other.Status != models.FlowRejected {
			t.Fatalf("a held coupon was taken again: %s", other.Status)
		}
	})
}

func TestRefund(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		code := w.issue(w.campaign, 1)[0]
		flow, err := w.redeem(code, "req-1", 5000)
		must(t, err)
		refund, err := w.svc.Redemptions.Refund(ctx, w.clerkA, services.RefundInput{RedeemNo: flow.RedeemNo,
			RequestID: "refund-1", Reason: "customer changed mind", Reissue: true})
		must(t, err)
		if refund.Status != models.FlowSucceeded || refund.ReissuedCouponID == nil || refund.Amount != 1000 {
			t.Fatalf("refund %+v", refund)
		}
		c := w.coupon(code)
		if c.Status != models.CouponRefunded || c.Version != 3 {
			t.Fatalf("coupon %s v%d, want REFUNDED v3", c.Status, c.Version)
		}
		var o models.Order
		must(t, db.Where("redeem_no = ?", flow.RedeemNo).Take(&o).Error)
		if o.Status != models.OrderCancelled {
			t.Fatalf("order %s after refund, want CANCELLED", o.Status)
		}
		// Replay of the refund request returns the same refund.
		again, err := w.svc.Redemptions.Refund(ctx, w.clerkA, services.RefundInput{RedeemNo: flow.RedeemNo,
			RequestID: "refund-1", Reason: "customer changed mind", Reissue: true})
		must(t, err)
		if again.RefundNo != refund.RefundNo {
			t.Fatalf("refund replay gave %s, want %s", again.RefundNo, refund.RefundNo)
		}
		// REFUNDED is terminal: no reserve, redeem or refund moves it.
		r, err := w.redeem(code, "req-after-refund", 5000)
		must(t, err)
		if r.Status != models.FlowRejected || *r.RejectReason != services.RejectNotAvailable {
			t.Fatalf("redeem of refunded coupon: %s", r.Status)
		}
		r, err = w.svc.Redemptions.Reserve(ctx, w.clerkA, services.RedeemInput{Code: code, StoreID: w.storeA.ID,
			RequestID: "reserve-after-refund", OrderAmount: 5000})
		must(t, err)
		if r.Status != models.FlowRejected {
			t.Fatalf("reserve of refunded coupon: %s", r.Status)
		}
		_, err = w.svc.Redemptions.Refund(ctx, w.admin, services.RefundInput{RedeemNo: flow.RedeemNo, RequestID: "refund-2"})
		wantCode(t, err, "INVALID_STATE")
		if c := w.coupon(code); c.Status != models.CouponRefunded || c.Version != 3 {
			t.Fatalf("refunded coupon moved: %s v%d", c.Status, c.Version)
		}
		// The replacement works.
		var repl models.Coupon
		must(t, db.Take(&repl, *refund.ReissuedCouponID).Error)
		if repl.ReissuedFrom == nil || *repl.ReissuedFrom != c.ID || repl.Code == code {
			t.Fatalf("replacement not linked: %+v", repl)
		}
		ok, err := w.redeem(repl.Code, "req-replacement", 5000)
		must(t, err)
		if ok.Status != models.FlowSucceeded {
			t.Fatalf("replacement redeem %s", ok.Status)
		}
	})
}

func TestRefundWindow(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		window := int64(30)
		camp := w.newCampaign(services.CreateCampaignInput{Name: "short window", Type: models.CampaignCash, Value: 500,
			TotalQuantity: 10, RefundWindowMinutes: &window})
		codes := w.issue(camp, 1)
		flow, err := w.redeem(codes[0], "req-1", 1000)
		must(t, err)
		w.clock.Advance(31 * time.Minute)
		_, err = w.svc.Redemptions.Refund(ctx, w.clerkA, services.RefundInput{RedeemNo: flow.RedeemNo, RequestID: "rf-1"})
		wantCode(t, err, "REFUND_WINDOW_CLOSED")
		// An administrator may still refund.
		_, err = w.svc.Redemptions.Refund(ctx, w.admin, services.RefundInput{RedeemNo: flow.RedeemNo, RequestID: "rf-2"})
		must(t, err)
	})
}

func TestRejectReasonsLeaveCouponUntouched(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		now := w.clock.Now()
		onlyB := w.newCampaign(services.CreateCampaignInput{Name: "only B", Type: models.CampaignCash, Value: 100,
			TotalQuantity: 10, StoreIDs: []int64{w.storeB.ID}})
		expired := w.newCampaign(services.CreateCampaignInput{Name: "expired", Type: models.CampaignCash, Value: 100,
			TotalQuantity: 10, ValidFrom: now.Add(-48 * time.Hour), ValidTo: now.Add(-time.Hour)})
		future := w.newCampaign(services.CreateCampaignInput{Name: "future", Type: models.CampaignCash, Value: 100,
			TotalQuantity: 10, ValidFrom: now.Add(time.Hour), ValidTo: now.Add(48 * time.Hour)})
		tests := []struct {
			name     string
			campaign *models.Campaign
			amount   int64
			want     string
		}{
			{"expired", expired, 5000, services.RejectExpired},
			{"not yet valid", future, 5000, services.RejectNotYetValid},
			{"wrong store", onlyB, 5000, services.RejectStoreNotEligible},
			{"below minimum spend", w.campaign, 2999, services.RejectMinSpendNotMet},
		}
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				code := w.issue(tt.campaign, 1)[0]
				flow, err := w.redeem(code, fmt.Sprintf("req-%d", i), tt.amount)
				must(t, err)
				if flow.Status != models.FlowRejected || *flow.RejectReason != tt.want {
					t.Fatalf("got %s %v, want REJECTED %s", flow.Status, flow.RejectReason, tt.want)
				}
				if c := w.coupon(code); c.Status != models.CouponUnused || c.Version != 0 {
					t.Fatalf("coupon touched: %s v%d", c.Status, c.Version)
				}
			})
		}
	})
}

func TestRolesAndTenancy(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		code := w.issue(w.campaign, 1)[0]
		other, err := w.svc.Merchants.Create(ctx, "rival", "Rival Tea", "")
		must(t, err)
		_, err = w.svc.Stores.Create(ctx, services.SystemActor(other.ID), services.CreateStoreInput{Code: "R1", Name: "Rival 1"})
		must(t, err)
		plain, _, err := w.svc.Tokens.Create(ctx, services.CreateTokenInput{MerchantID: other.ID, Role: models.RoleAdmin})
		must(t, err)
		rival, err := w.svc.Tokens.Authenticate(ctx, plain)
		must(t, err)
		in := func(store int64) services.RedeemInput {
			return services.RedeemInput{Code: code, StoreID: store, RequestID: "r-1", OrderAmount: 5000}
		}
		tests := []struct {
			name  string
			actor services.Actor
			input services.RedeemInput
			want  string
		}{
			{"clerk of A at B", w.clerkA, in(w.storeB.ID), "FORBIDDEN"},
			{"finance redeeming", w.finance, in(w.storeA.ID), "FORBIDDEN"},
			{"no token", services.Actor{}, in(w.storeA.ID), "UNAUTHENTICATED"},
			{"another merchant's code", rival, in(w.storeA.ID), "NOT_FOUND"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := w.svc.Redemptions.Redeem(ctx, tt.actor, tt.input)
				wantCode(t, err, tt.want)
			})
		}
		// With a store of its own, the rival sees the code exactly like an unknown one.
		rst, err := w.svc.Stores.List(ctx, rival, services.PageArgs{})
		must(t, err)
		_, err = w.svc.Redemptions.Redeem(ctx, rival, services.RedeemInput{Code: code, StoreID: rst.Items[0].ID, RequestID: "r-2", OrderAmount: 5000})
		wantCode(t, err, "COUPON_NOT_FOUND")
		_, err = w.svc.Coupons.ByCode(ctx, rival, code)
		wantCode(t, err, "COUPON_NOT_FOUND")
		_, err = w.svc.Coupons.ByCode(ctx, rival, services.NewCouponCode())
		wantCode(t, err, "COUPON_NOT_FOUND")
		if c := w.coupon(code); c.Status != models.CouponUnused || c.Version != 0 {
			t.Fatalf("coupon touched: %s", c.Status)
		}
		if got := w.count(&models.RedemptionFlow{}, "1 = 1"); got != 0 {
			t.Fatalf("%d flows written by refused requests", got)
		}
		_, err = w.svc.Tokens.Authenticate(ctx, "cpd_notatoken")
		wantCode(t, err, "UNAUTHENTICATED")
	})
}

func TestTwoPhase(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		codes := w.issue(w.campaign, 2)
		r := w.svc.Redemptions
		reserve := func(code, req string) *models.RedemptionFlow {
			f, err := r.Reserve(ctx, w.clerkA, services.RedeemInput{Code: code, StoreID: w.storeA.ID, RequestID: req, OrderAmount: 8000})
			must(t, err)
			if f.Status != models.FlowProcessing || f.HoldUntil == nil {
				t.Fatalf("reserve %s", f.Status)
			}
			return f
		}
		// reserve then confirm
		f := reserve(codes[0], "mp-1")
		if c := w.coupon(codes[0]); c.Status != models.CouponRedeeming {
			t.Fatalf("coupon %s after reserve", c.Status)
		}
		done, err := r.Confirm(ctx, w.clerkA, services.ConfirmInput{RedeemNo: f.RedeemNo, OrderRef: "POS-1"})
		must(t, err)
		if done.Status != models.FlowSucceeded || *done.OrderRef != "POS-1" {
			t.Fatalf("confirm %s", done.Status)
		}
		again, err := r.Confirm(ctx, w.clerkA, services.ConfirmInput{RedeemNo: f.RedeemNo, OrderRef: "POS-1"})
		must(t, err)
		if again.Status != models.FlowSucceeded {
			t.Fatalf("confirm replay %s", again.Status)
		}
		_, err = r.Confirm(ctx, w.clerkA, services.ConfirmInput{RedeemNo: f.RedeemNo, OrderRef: "POS-2"})
		wantCode(t, err, "INVALID_STATE")
		_, err = r.Cancel(ctx, w.clerkA, services.CancelInput{RedeemNo: f.RedeemNo})
		wantCode(t, err, "INVALID_STATE")
		if c := w.coupon(codes[0]); c.Status != models.CouponRedeemed || c.Version != 2 {
			t.Fatalf("coupon %s v%d", c.Status, c.Version)
		}
		// reserve then cancel; confirm after cancel changes nothing
		g := reserve(codes[1], "mp-2")
		rel, err := r.Cancel(ctx, w.clerkA, services.CancelInput{RedeemNo: g.RedeemNo, Reason: "customer left"})
		must(t, err)
		if rel.Status != models.FlowReleased {
			t.Fatalf("cancel %s", rel.Status)
		}
		_, err = r.Confirm(ctx, w.clerkA, services.ConfirmInput{RedeemNo: g.RedeemNo, OrderRef: "POS-3"})
		wantCode(t, err, "INVALID_STATE")
		if c := w.coupon(codes[1]); c.Status != models.CouponUnused || c.Version != 2 {
			t.Fatalf("coupon %s v%d after cancel", c.Status, c.Version)
		}
		_, err = r.Confirm(ctx, w.clerkA, services.ConfirmInput{RedeemNo: "RDNOPE", OrderRef: "x"})
		wantCode(t, err, "NOT_FOUND")
	})
}

// A confirm and a cancel racing on one reservation: exactly one wins, and the
// coupon ends in the state of the winner.
func TestConfirmCancelRace(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		const rounds = 20
		codes := w.issue(w.campaign, rounds)
		for i, code := range codes {
			f, err := w.svc.Redemptions.Reserve(ctx, w.clerkA, services.RedeemInput{Code: code, StoreID: w.storeA.ID,
				RequestID: fmt.Sprintf("race-%d", i), OrderAmount: 5000})
			must(t, err)
			var cerr, xerr error
			var wg sync.WaitGroup
			wg.Add(2)
			go func() {
				defer wg.Done()
				_, cerr = w.svc.Redemptions.Confirm(ctx, w.clerkA, services.ConfirmInput{RedeemNo: f.RedeemNo, OrderRef: "POS"})
			}()
			go func() {
				defer wg.Done()
				_, xerr = w.svc.Redemptions.Cancel(ctx, w.clerkA, services.CancelInput{RedeemNo: f.RedeemNo})
			}()
			wg.Wait()
			if (cerr == nil) == (xerr == nil) {
				t.Fatalf("round %d: confirm err %v, cancel err %v: want exactly one winner", i, cerr, xerr)
			}
			c := w.coupon(code)
			want := models.CouponRedeemed
			if cerr != nil {
				wantCode(t, cerr, "INVALID_STATE")
				want = models.CouponUnused
			} else {
				wantCode(t, xerr, "INVALID_STATE")
			}
			if c.Status != want || c.Version != 2 {
				t.Fatalf("round %d: coupon %s v%d, want %s v2", i, c.Status, c.Version, want)
			}
		}
	})
}

func TestIssueBudgetUnderConcurrency(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		camp := w.newCampaign(services.CreateCampaignInput{Name: "limited", Type: models.CampaignExchange, Value: 1200, TotalQuantity: 100})
		const n = 12
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = w.svc.Campaigns.IssueCoupons(context.Background(), w.admin, services.IssueInput{CampaignID: camp.ID, Count: 10})
			}()
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			if err == nil {
				ok++
			} else {
				wantCode(t, err, "QUOTA_EXCEEDED")
			}
		}
		if ok != 10 {
			t.Fatalf("%d issuances succeeded, want 10", ok)
		}
		if got := w.count(&models.Coupon{}, "campaign_id = ?", camp.ID); got != 100 {
			t.Fatalf("%d coupons, want 100", got)
		}
		got, err := w.svc.Campaigns.Get(context.Background(), w.admin, camp.ID)
		must(t, err)
		if got.Issued != 100 {
			t.Fatalf("issued counter %d, want 100", got.Issued)
		}
	})
}

func TestPerCustomerLimit(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		camp := w.newCampaign(services.CreateCampaignInput{Name: "one each", Type: models.CampaignCash, Value: 100,
			TotalQuantity: 100, PerCustomerLimit: 2})
		res, err := w.svc.Campaigns.IssueCoupons(ctx, w.admin, services.IssueInput{CampaignID: camp.ID, Count: 2, CustomerRefs: []string{"u1", "u2"}})
		must(t, err)
		if res.Issued != 4 || len(res.Codes) != 4 {
			t.Fatalf("issued %d", res.Issued)
		}
		_, err = w.svc.Campaigns.IssueCoupons(ctx, w.admin, services.IssueInput{CampaignID: camp.ID, CustomerRefs: []string{"u3", "u1"}})
		wantCode(t, err, "CUSTOMER_LIMIT_EXCEEDED")
		if got := w.count(&models.Coupon{}, "campaign_id = ?", camp.ID); got != 4 {
			t.Fatalf("%d coupons after a refused issuance, want 4", got)
		}
		if got := w.count(&models.Coupon{}, "campaign_id = ? AND customer_ref = 'u1'", camp.ID); got != 2 {
			t.Fatalf("u1 has %d coupons", got)
		}
	})
}

func TestDiscountAmounts(t *testing.T) {
	for _, oneCommit := range []bool{false, true} {
		t.Run(fmt.Sprintf("one-commit=%t", oneCommit), func(t *testing.T) { discountAmounts(t, oneCommit) })
	}
}

func discountAmounts(t *testing.T, oneCommit bool) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorldWith(t, db, oneCommit)
		tests := []struct {
			name   string
			in     services.CreateCampaignInput
			amount int64
			want   int64
		}{
			{"cash", services.CreateCampaignInput{Type: models.CampaignCash, Value: 1000}, 5000, 1000},
			{"cash above order", services.CreateCampaignInput{Type: models.CampaignCash, Value: 1000}, 600, 600},
			{"discount", services.CreateCampaignInput{Type: models.CampaignDiscount, Value: 20}, 5000, 1000},
			{"discount capped", services.CreateCampaignInput{Type: models.CampaignDiscount, Value: 50, MaxDiscount: 800}, 5000, 800},
			{"discount truncates", services.CreateCampaignInput{Type: models.CampaignDiscount, Value: 15}, 999, 149},
			{"discount under its cap", services.CreateCampaignInput{Type: models.CampaignDiscount, Value: 10, MaxDiscount: 800}, 5000, 500},
			{"discount of nothing", services.CreateCampaignInput{Type: models.CampaignDiscount, Value: 30}, 0, 0},
			{"exchange", services.CreateCampaignInput{Type: models.CampaignExchange, Value: 1800}, 0, 1800},
		}
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				tt.in.Name, tt.in.TotalQuantity = tt.name, 1
				code := w.issue(w.newCampaign(tt.in), 1)[0]
				f, err := w.redeem(code, fmt.Sprintf("d-%d", i), tt.amount)
				must(t, err)
				if f.DiscountAmount != tt.want {
					t.Fatalf("discount %d, want %d", f.DiscountAmount, tt.want)
				}
				// PostgreSQL computes the discount in SQL on the one-statement
				// path: what is stored must be what was answered.
				var stored models.RedemptionFlow
				must(t, db.First(&stored, f.ID).Error)
				if stored.DiscountAmount != tt.want || stored.Status != models.FlowSucceeded || f.ID == 0 {
					t.Fatalf("stored flow %+v, want discount %d", stored, tt.want)
				}
			})
		}
	})
}

func TestQuote(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		codes := w.issue(w.campaign, 2)
		_, err := w.redeem(codes[1], "used", 5000)
		must(t, err)
		onlyB := w.newCampaign(services.CreateCampaignInput{Name: "only B", Type: models.CampaignDiscount, Value: 20,
			MaxDiscount: 500, TotalQuantity: 1, StoreIDs: []int64{w.storeB.ID}})
		bCode := w.issue(onlyB, 1)[0]
		tests := []struct {
			name       string
			code       string
			amount     int64
			wantReason string
			wantOff    int64
			wantPay    int64
		}{
			{"eligible", codes[0], 5000, "", 1000, 4000},
			{"below minimum spend", codes[0], 2000, services.RejectMinSpendNotMet, 0, 2000},
			{"already redeemed", codes[1], 5000, services.RejectNotAvailable, 0, 5000},
			{"other store's campaign", bCode, 5000, services.RejectStoreNotEligible, 0, 5000},
		}
		flows := w.count(&models.RedemptionFlow{}, "1 = 1")
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				q, err := w.svc.Redemptions.Quote(ctx, w.clerkA, services.QuoteInput{Code: tt.code, StoreID: w.storeA.ID, OrderAmount: tt.amount})
				must(t, err)
				if q.RejectReason != tt.wantReason || q.DiscountAmount != tt.wantOff || q.PayAmount != tt.wantPay || q.Eligible() != (tt.wantReason == "") {
					t.Fatalf("quote %+v, want reason %q off %d pay %d", q, tt.wantReason, tt.wantOff, tt.wantPay)
				}
			})
		}
		_, err = w.svc.Redemptions.Quote(ctx, w.clerkA, services.QuoteInput{Code: codes[0], StoreID: w.storeB.ID, OrderAmount: 1})
		wantCode(t, err, "FORBIDDEN")
		_, err = w.svc.Redemptions.Quote(ctx, w.clerkA, services.QuoteInput{Code: services.NewCouponCode(), StoreID: w.storeA.ID})
		wantCode(t, err, "COUPON_NOT_FOUND")
		if got := w.count(&models.RedemptionFlow{}, "1 = 1"); got != flows {
			t.Fatalf("a quote wrote %d flows", got-flows)
		}
		if c := w.coupon(codes[0]); c.Status != models.CouponUnused || c.Version != 0 {
			t.Fatalf("a quote moved the coupon: %s v%d", c.Status, c.Version)
		}
	})
}

// A quote names every rule the coupon fails, not only the first, and says
// when it is usable next when only time stands in the way.
func TestQuoteReasons(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		codes := w.issue(w.campaign, 2)
		_, err := w.redeem(codes[1], "used", 5000)
		must(t, err)
		onlyB := w.newCampaign(services.CreateCampaignInput{Name: "only B", Type: models.CampaignCash, Value: 500,
			MinSpend: 3000, TotalQuantity: 1, StoreIDs: []int64{w.storeB.ID}})
		bCode := w.issue(onlyB, 1)[0]
		start := w.clock.Now().Add(2 * time.Hour)
		later := w.newCampaign(services.CreateCampaignInput{Name: "later", Type: models.CampaignCash, Value: 500,
			MinSpend: 3000, TotalQuantity: 1, ValidFrom: start})
		laterCode := w.issue(later, 1)[0]
		tests := []struct {
			name     string
			code     string
			amount   int64
			want     []string
			wantNext *time.Time
		}{
			{"eligible", codes[0], 5000, nil, nil},
			{"used and below minimum spend", codes[1], 2000,
				[]string{services.RejectNotAvailable, services.RejectMinSpendNotMet}, nil},
			{"below minimum spend at another store's campaign", bCode, 2000,
				[]string{services.RejectMinSpendNotMet, services.RejectStoreNotEligible}, nil},
			{"not yet valid only", laterCode, 5000, []string{services.RejectNotYetValid}, &start},
			{"not yet valid and below minimum spend", laterCode, 100,
				[]string{services.RejectNotYetValid, services.RejectMinSpendNotMet}, nil},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				q, err := w.svc.Redemptions.Quote(ctx, w.clerkA, services.QuoteInput{Code: tt.code, StoreID: w.storeA.ID, OrderAmount: tt.amount})
				must(t, err)
				if !slices.Equal(q.Reasons, tt.want) {
					t.Fatalf("reasons %v, want %v", q.Reasons, tt.want)
				}
				if len(tt.want) > 0 && q.RejectReason != tt.want[0] {
					t.Fatalf("rejectReason %q, want the first of %v", q.RejectReason, tt.want)
				}
				if (q.UsableNextAt == nil) != (tt.wantNext == nil) || (q.UsableNextAt != nil && !q.UsableNextAt.Equal(*tt.wantNext)) {
					t.Fatalf("usableNextAt %v, want %v", q.UsableNextAt, tt.wantNext)
				}
			})
		}
	})
}

func TestCouponsRedeemedAtStore(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		codes := w.issue(w.campaign, 3)
		clerkB := w.actor(models.RoleClerk, "BJ01")
		_, err := w.redeem(codes[0], "a", 5000)
		must(t, err)
		_, err = w.svc.Redemptions.Redeem(ctx, clerkB, services.RedeemInput{Code: codes[1], StoreID: w.storeB.ID, RequestID: "b", OrderAmount: 5000})
		must(t, err)
		page, err := w.svc.Coupons.List(ctx, w.admin, services.CouponFilter{RedeemedAt: w.storeB.ID}, services.PageArgs{})
		must(t, err)
		if len(page.Items) != 1 || page.Items[0].Code != codes[1] {
			t.Fatalf("coupons redeemed at B: %+v", page.Items)
		}
	})
}
