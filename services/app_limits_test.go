package services_test

import (
	"context"
	"fmt"
	"testing"

	"gorm.io/gorm"

	"coupond/internal/testdb"
	"coupond/models"
	"coupond/services"
)

// An APP token's requests are charged to their customerRef before the
// token: a customer over its limit is refused without spending the token's
// budget, so the other customers of the mini-program go on.
func TestAppRateLimitsPerCustomer(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		w.svc = services.New(db, services.Options{Now: w.clock.Now, Fulfiller: w.ful, Limits: services.Limits{
			RedeemsPerToken:          services.RateLimit{PerSecond: 1, Burst: 6},
			RedeemsPerCustomer:       services.RateLimit{PerSecond: 1, Burst: 2},
			FailedLookupsPerToken:    services.RateLimit{PerSecond: 0.1, Burst: 4},
			FailedLookupsPerCustomer: services.RateLimit{PerSecond: 0.1, Burst: 2},
		}})
		app := w.actor(models.RoleApp)
		ctx := context.Background()
		codes := w.issue(w.campaign, 10)
		n := 0
		redeem := func(code, customer string) error {
			n++
			_, err := w.svc.Redemptions.Redeem(ctx, app, services.RedeemInput{Code: code, StoreID: w.storeB.ID,
				RequestID: fmt.Sprintf("app-%d", n), OrderAmount: 5000, CustomerRef: customer})
			return err
		}
		// The abusive customer: its burst, then refused, however often it tries.
		must(t, redeem(codes[0], "bad"))
		must(t, redeem(codes[1], "bad"))
		for range 20 {
			wantCode(t, redeem(codes[2], "bad"), "RATE_LIMITED")
		}
		// The token spent 2 of its 6: the others go on.
		for i, c := range []string{"u1", "u2", "u3", "u4"} {
			must(t, redeem(codes[2+i], c))
		}
		wantCode(t, redeem(codes[6], "u5"), "RATE_LIMITED") // now the token's own limit
		if got := w.count(&models.RedemptionFlow{}, "status = 'SUCCEEDED'"); got != 6 {
			t.Fatalf("%d redemptions, want 6", got)
		}

		// Unknown codes: the customer is cut off after its own 2, before the
		// token's 4 are gone, and the token still answers other customers.
		w.clock.Advance(10 * 1e9)
		quote := func(code, customer string) error {
			_, err := w.svc.Redemptions.Quote(ctx, app, services.QuoteInput{Code: code, StoreID: w.storeA.ID,
				OrderAmount: 5000, CustomerRef: customer})
			return err
		}
		wantCode(t, quote(services.NewCouponCode(), "guesser"), "COUPON_NOT_FOUND")
		wantCode(t, quote("NOSUCHCODE1", "guesser"), "COUPON_NOT_FOUND") // an imported code's shape
		for range 10 {
			wantCode(t, quote(services.NewCouponCode(), "guesser"), "RATE_LIMITED")
		}
		wantCode(t, quote(services.NewCouponCode(), "u1"), "COUPON_NOT_FOUND")
		must(t, quote(codes[7], "u1"))

		// A clerk names no customer and is limited as before.
		_, err := w.svc.Redemptions.Quote(ctx, w.clerkA, services.QuoteInput{Code: codes[7], StoreID: w.storeA.ID, OrderAmount: 5000})
		must(t, err)
	})
}
