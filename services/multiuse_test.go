package services_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"gorm.io/gorm"

	"coupond/internal/testdb"
	"coupond/models"
	"coupond/services"
)

func int64p(n int64) *int64 { return &n }

// noViolations fails t unless reconciliation (the checks coupond audit runs)
// finds nothing.
func (w *world) noViolations(t testing.TB) {
	t.Helper()
	v, err := w.svc.Reconciliation.Check(context.Background())
	must(t, err)
	if len(v) > 0 {
		t.Fatalf("reconciliation found %d violations, first %+v", len(v), v[0])
	}
}

// A 3-use card under 100 concurrent one-shot redemptions with distinct
// request ids, then sequential ones until rejected, gives exactly 3
// successful uses, whichever way the one-shot redemption takes its coupon.
// The card is UNUSED between uses and REDEEMED after the last, each use is
// its own flow with its own use number, and the ledger reconciles.
func TestMultiUseCardExactUses(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		for _, oneCommit := range []bool{false, true} {
			t.Run(fmt.Sprintf("oneCommit=%t", oneCommit), func(t *testing.T) {
				sdb := db
				if oneCommit {
					sdb = freshDB(t, db)
				}
				w := newWorldWith(t, sdb, oneCommit)
				card := w.newCampaign(services.CreateCampaignInput{Name: "3 coffees", Type: models.CampaignExchange,
					Value: 1500, TotalQuantity: 10, UsesPerCoupon: int64p(3)})
				code := w.issue(card, 1)[0]
				if c := w.coupon(code); c.UsesTotal != 3 || c.UsesLeft != 3 || c.Status != models.CouponUnused {
					t.Fatalf("issued card %+v", c)
				}
				const n = 100
				var wg sync.WaitGroup
				start := make(chan struct{})
				flows := make([]*models.RedemptionFlow, n)
				for i := range n {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						f, err := w.redeem(code, fmt.Sprintf("c-%d", i), 5000)
						if err != nil {
							t.Errorf("redeem %d: %v", i, err)
						}
						flows[i] = f
					}()
				}
				close(start)
				wg.Wait()
				succeeded := map[int64]bool{}
				for _, f := range flows {
					switch {
					case f == nil:
					case f.Status == models.FlowSucceeded:
						if succeeded[f.UseNo] || f.UseNo < 1 || f.UseNo > 3 {
							t.Fatalf("use %d taken twice or out of range", f.UseNo)
						}
						succeeded[f.UseNo] = true
					case f.Status != models.FlowRejected || *f.RejectReason != services.RejectNotAvailable:
						t.Fatalf("flow %+v", f)
					}
				}
				var firstSequential *models.RedemptionFlow
				for i := 0; ; i++ {
					f, err := w.redeem(code, fmt.Sprintf("s-%d", i), 5000)
					must(t, err)
					if i == 0 {
						firstSequential = f
					}
					if f.Status == models.FlowRejected {
						break
					}
					if f.Status != models.FlowSucceeded || succeeded[f.UseNo] {
						t.Fatalf("sequential flow %+v", f)
					}
					succeeded[f.UseNo] = true
					if c := w.coupon(code); len(succeeded) < 3 && (c.Status != models.CouponUnused || c.UsesLeft != 3-int64(len(succeeded))) {
						t.Fatalf("card between uses %s with %d left", c.Status, c.UsesLeft)
					}
				}
				if len(succeeded) != 3 {
					t.Fatalf("%d successful uses, want 3", len(succeeded))
				}
				if got := w.count(&models.RedemptionFlow{}, "status = 'SUCCEEDED'"); got != 3 {
					t.Fatalf("%d SUCCEEDED flows, want 3", got)
				}
				if c := w.coupon(code); c.Status != models.CouponRedeemed || c.UsesLeft != 0 || c.Version != 6 {
					t.Fatalf("card after its last use %s v%d with %d left", c.Status, c.Version, c.UsesLeft)
				}
				// A retry of a successful use is that use, not a fourth.
				again, err := w.redeem(code, "s-0", 5000)
				must(t, err)
				if again.RedeemNo != firstSequential.RedeemNo || again.Status != firstSequential.Status {
					t.Fatalf("retry %s %s, want the first answer %s %s", again.RedeemNo, again.Status,
						firstSequential.RedeemNo, firstSequential.Status)
				}
				if got := w.count(&models.RedemptionFlow{}, "status = 'SUCCEEDED'"); got != 3 {
					t.Fatalf("%d SUCCEEDED flows after a retry, want 3", got)
				}
				w.noViolations(t)
			})
		}
	})
}

// Two-phase uses of a card: a cancelled reserve gives its use back, a
// confirmed one counts it off, and the card is REDEEMING only while a use is
// held.
func TestMultiUseCardReserve(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		card := w.newCampaign(services.CreateCampaignInput{Name: "2 washes", Type: models.CampaignExchange,
			Value: 3000, TotalQuantity: 10, UsesPerCoupon: int64p(2)})
		code := w.issue(card, 1)[0]
		reserve := func(id string) *models.RedemptionFlow {
			f, err := w.svc.Redemptions.Reserve(ctx, w.clerkA, services.RedeemInput{Code: code, StoreID: w.storeA.ID, RequestID: id, OrderAmount: 5000})
			must(t, err)
			return f
		}
		f := reserve("r1")
		if f.Status != models.FlowProcessing || f.UseNo != 1 {
			t.Fatalf("reserve %+v", f)
		}
		if busy := reserve("r1-busy"); busy.Status != models.FlowRejected {
			t.Fatalf("a held card was taken again: %+v", busy)
		}
		_, err := w.svc.Redemptions.Cancel(ctx, w.clerkA, services.CancelInput{RedeemNo: f.RedeemNo})
		must(t, err)
		if c := w.coupon(code); c.Status != models.CouponUnused || c.UsesLeft != 2 {
			t.Fatalf("after cancel %s with %d left", c.Status, c.UsesLeft)
		}
		for i, id := range []string{"r2", "r3"} {
			f := reserve(id)
			if f.Status != models.FlowProcessing || f.UseNo != int64(i+1) {
				t.Fatalf("reserve %s: %+v", id, f)
			}
			_, err := w.svc.Redemptions.Confirm(ctx, w.clerkA, services.ConfirmInput{RedeemNo: f.RedeemNo, OrderRef: "order-" + id})
			must(t, err)
		}
		if c := w.coupon(code); c.Status != models.CouponRedeemed || c.UsesLeft != 0 {
			t.Fatalf("after two confirmed uses %s with %d left", c.Status, c.UsesLeft)
		}
		if f := reserve("r4"); f.Status != models.FlowRejected || *f.RejectReason != services.RejectNotAvailable {
			t.Fatalf("a used-up card was taken: %+v", f)
		}
		w.noViolations(t)
	})
}

// Refunding one use of a card kills that use for good and leaves the card's
// other uses alone; with reissue the customer gets the use back on a new
// single-use coupon. Reconciliation stays clean, and it notices a card whose
// counters disagree with its ledger.
func TestMultiUseCardRefund(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		card := w.newCampaign(services.CreateCampaignInput{Name: "3 coffees", Type: models.CampaignExchange,
			Value: 1500, TotalQuantity: 10, UsesPerCoupon: int64p(3)})
		code := w.issue(card, 1)[0]
		first, err := w.redeem(code, "u1", 5000)
		must(t, err)
		rf, err := w.svc.Redemptions.Refund(ctx, w.clerkA, services.RefundInput{RedeemNo: first.RedeemNo, RequestID: "rf1", Reissue: true})
		must(t, err)
		if c := w.coupon(code); c.Status != models.CouponUnused || c.UsesLeft != 2 || c.Version != 2 {
			t.Fatalf("card after one refunded use: %s v%d with %d left", c.Status, c.Version, c.UsesLeft)
		}
		if rf.ReissuedCouponID == nil {
			t.Fatal("no replacement for the refunded use")
		}
		repl, err := models.CouponByID(db, *rf.ReissuedCouponID)
		must(t, err)
		if repl.UsesTotal != 1 || repl.UsesLeft != 1 || repl.ReissuedFrom == nil || *repl.ReissuedFrom != w.coupon(code).ID {
			t.Fatalf("replacement %+v", repl)
		}
		// The refunded use cannot be refunded again; the replay is the refund.
		again, err := w.svc.Redemptions.Refund(ctx, w.clerkA, services.RefundInput{RedeemNo: first.RedeemNo, RequestID: "rf1", Reissue: true})
		must(t, err)
		if again.RefundNo != rf.RefundNo {
			t.Fatalf("replayed refund %s, want %s", again.RefundNo, rf.RefundNo)
		}
		_, err = w.svc.Redemptions.Refund(ctx, w.clerkA, services.RefundInput{RedeemNo: first.RedeemNo, RequestID: "rf2"})
		wantCode(t, err, "INVALID_STATE")
		// The card's two other uses and the replacement's one: 3 more, no more.
		uses := 0
		for i, c := range []string{code, code, code, repl.Code, repl.Code} {
			f, err := w.redeem(c, fmt.Sprintf("after-%d", i), 5000)
			must(t, err)
			if f.Status == models.FlowSucceeded {
				uses++
			}
		}
		if uses != 3 {
			t.Fatalf("%d uses after the refund, want 3", uses)
		}
		if c := w.coupon(code); c.Status != models.CouponRedeemed || c.UsesLeft != 0 {
			t.Fatalf("card %s with %d left", c.Status, c.UsesLeft)
		}
		w.noViolations(t)

		// A card whose counter says fewer uses than its ledger is found.
		must(t, db.Exec("UPDATE coupons SET uses_left = 1 WHERE code = ?", code).Error)
		v, err := w.svc.Reconciliation.Check(ctx)
		must(t, err)
		if len(v) != 1 || v[0].Kind != models.FindingRedeemedCouponFlowCount {
			t.Fatalf("violations %+v, want one %s", v, models.FindingRedeemedCouponFlowCount)
		}
	})
}

// usesPerCoupon outside 1..100 is BAD_USER_INPUT naming the field, and
// nothing is written.
func TestUsesPerCouponBounds(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		before := w.count(&models.Campaign{}, "1 = 1")
		for _, uses := range []int64{0, -1, 101} {
			_, err := w.svc.Campaigns.Create(context.Background(), w.admin, services.CreateCampaignInput{Name: "bad",
				Type: models.CampaignCash, Value: 100, ValidFrom: w.clock.Now(), ValidTo: w.clock.Now().AddDate(0, 1, 0),
				TotalQuantity: 1, UsesPerCoupon: int64p(uses)})
			wantCode(t, err, "BAD_USER_INPUT")
			if se := (*services.Error)(nil); !errors.As(err, &se) || !strings.Contains(se.Message, "usesPerCoupon") {
				t.Fatalf("message %q does not name usesPerCoupon", se.Message)
			}
		}
		if got := w.count(&models.Campaign{}, "1 = 1"); got != before {
			t.Fatalf("a refused campaign was written")
		}
		c := w.newCampaign(services.CreateCampaignInput{Name: "max", Type: models.CampaignCash, Value: 100,
			TotalQuantity: 1, UsesPerCoupon: int64p(100)})
		if c.UsesPerCoupon != 100 {
			t.Fatalf("uses per coupon %d", c.UsesPerCoupon)
		}
	})
}
