package services_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"gorm.io/gorm"

	"coupond/internal/testdb"
	"coupond/models"
	"coupond/services"
)

// Voiding takes an UNUSED coupon to VOIDED for good: redemptions are then
// rejected, nothing else can be voided, and a repeat under the request id
// changes nothing.
func TestVoidCoupon(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		codes := w.issue(w.campaign, 2)
		in := services.VoidInput{Code: codes[0], Reason: "leaked on a forum", RequestID: "void-1"}
		c, err := w.svc.Coupons.Void(ctx, w.admin, in)
		must(t, err)
		if c.Status != models.CouponVoided || c.Version != 1 {
			t.Fatalf("voided coupon %s v%d", c.Status, c.Version)
		}
		again, err := w.svc.Coupons.Void(ctx, w.admin, in)
		must(t, err)
		if again.ID != c.ID || again.Version != 1 {
			t.Fatalf("repeat answered %+v", again)
		}
		if n := w.count(&models.CouponTransition{}, "coupon_id = ? AND to_status = 'VOIDED'", c.ID); n != 1 {
			t.Fatalf("%d void transitions, want 1", n)
		}
		if n := w.count(&models.AuditEvent{}, "action = 'coupon.void'"); n != 1 {
			t.Fatalf("%d void audit records, want 1", n)
		}
		f, err := w.redeem(codes[0], "after-void", 5000)
		must(t, err)
		if f.Status != models.FlowRejected || *f.RejectReason != services.RejectNotAvailable {
			t.Fatalf("redeem of a voided coupon: %s %v", f.Status, f.RejectReason)
		}
		_, err = w.redeem(codes[1], "used", 5000)
		must(t, err)
		tests := []struct {
			name  string
			actor services.Actor
			in    services.VoidInput
			code  string
		}{
			{"redeemed", w.admin, services.VoidInput{Code: codes[1], Reason: "x"}, "INVALID_STATE"},
			{"voided", w.admin, services.VoidInput{Code: codes[0], Reason: "again"}, "INVALID_STATE"},
			{"same id, other reason", w.admin, services.VoidInput{Code: codes[0], Reason: "other", RequestID: "void-1"}, "IDEMPOTENCY_KEY_REUSED"},
			{"no reason", w.admin, services.VoidInput{Code: codes[1]}, "BAD_USER_INPUT"},
			{"clerk", w.clerkA, services.VoidInput{Code: codes[1], Reason: "x"}, "FORBIDDEN"},
			{"unknown", w.admin, services.VoidInput{Code: services.NewCouponCode(), Reason: "x"}, "COUPON_NOT_FOUND"},
			{"other merchant", otherMerchantAdmin(t, w), services.VoidInput{Code: codes[1], Reason: "x"}, "COUPON_NOT_FOUND"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := w.svc.Coupons.Void(ctx, tt.actor, tt.in)
				wantCode(t, err, tt.code)
			})
		}
		if got := w.coupon(codes[1]); got.Status != models.CouponRedeemed {
			t.Fatalf("a refused void moved the coupon to %s", got.Status)
		}
		w.consistent()
	})
}

// A void racing scans of the same coupon: the coupon ends VOIDED or
// REDEEMED, never both, and the ledger agrees.
func TestVoidRacesRedemptions(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorldWith(t, db, true)
		ctx := context.Background()
		for round := range 5 {
			code := w.issue(w.campaign, 1)[0]
			const scans = 20
			release := make(chan struct{})
			var wg sync.WaitGroup
			flows := make([]*models.RedemptionFlow, scans)
			errs := make([]error, scans)
			for i := range scans {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-release
					flows[i], errs[i] = w.redeem(code, fmt.Sprintf("r%d-%d", round, i), 5000)
				}()
			}
			var voidErr error
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-release
				_, voidErr = w.svc.Coupons.Void(ctx, w.admin, services.VoidInput{Code: code, Reason: "race"})
			}()
			close(release)
			wg.Wait()
			succeeded := 0
			for i := range scans {
				must(t, errs[i])
				if flows[i].Status == models.FlowSucceeded {
					succeeded++
				}
			}
			c := w.coupon(code)
			switch {
			case voidErr == nil && (c.Status != models.CouponVoided || succeeded != 0):
				t.Fatalf("round %d: void won but coupon %s with %d successes", round, c.Status, succeeded)
			case voidErr != nil && (c.Status != models.CouponRedeemed || succeeded != 1):
				t.Fatalf("round %d: void lost (%v) but coupon %s with %d successes", round, voidErr, c.Status, succeeded)
			}
			if voidErr != nil {
				wantCode(t, voidErr, "INVALID_STATE")
			}
		}
		w.consistent()
	})
}
