package services_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/internal/testdb"
	"coupond/models"
	"coupond/services"
)

func TestRateLimits(t *testing.T) {
	db := testdb.SQLite(t)
	w := newWorld(t, db)
	w.svc = services.New(db, services.Options{Now: w.clock.Now, Fulfiller: w.ful, Limits: services.Limits{
		RedeemsPerToken:       services.RateLimit{PerSecond: 1, Burst: 3},
		FailedLookupsPerToken: services.RateLimit{PerSecond: 0.2, Burst: 2},
	}})
	ctx := context.Background()
	codes := w.issue(w.campaign, 5)
	redeem := func(code string, i int) error {
		_, err := w.svc.Redemptions.Redeem(ctx, w.clerkA, services.RedeemInput{Code: code, StoreID: w.storeA.ID,
			RequestID: fmt.Sprintf("rl-%d", i), OrderAmount: 5000})
		return err
	}
	for i := range 3 {
		must(t, redeem(codes[i], i))
	}
	err := redeem(codes[3], 3)
	wantCode(t, err, "RATE_LIMITED")
	var se *services.Error
	if !errors.As(err, &se) || se.RetryAfter != time.Second {
		t.Fatalf("retry after %v, want 1s", se.RetryAfter)
	}
	w.clock.Advance(time.Second)
	must(t, redeem(codes[3], 4))

	// Unknown codes: two answers, then the token is refused until the bucket refills.
	w.clock.Advance(10 * time.Second)
	for i := range 2 {
		wantCode(t, redeem(services.NewCouponCode(), 10+i), "COUPON_NOT_FOUND")
	}
	wantCode(t, redeem(codes[4], 20), "RATE_LIMITED")
	w.clock.Advance(5 * time.Second)
	must(t, redeem(codes[4], 21))
	if got := w.count(&models.RedemptionFlow{}, "1 = 1"); got != 5 {
		t.Fatalf("%d flows, want 5: refused requests must not write", got)
	}
}

func TestRefusalsAreAudited(t *testing.T) {
	db := testdb.SQLite(t)
	w := newWorld(t, db)
	ctx := context.Background()
	for range 15 {
		w.svc.Audit.Refusal(ctx, w.clerkA, "FORBIDDEN", "redeemCoupon")
	}
	// At most the burst is written within the same instant.
	if got := w.count(&models.AuditEvent{}, "action = 'request.refused'"); got != 10 {
		t.Fatalf("%d refusals audited, want 10", got)
	}
}

func TestTokenCacheAndRevocation(t *testing.T) {
	db := testdb.SQLite(t)
	w := newWorld(t, db)
	ctx := context.Background()
	svc := services.New(db, services.Options{Now: w.clock.Now, TokenCacheTTL: 10 * time.Second})
	plain, tok, err := svc.Tokens.Create(ctx, services.CreateTokenInput{MerchantID: w.merchant.ID, Role: models.RoleAdmin})
	must(t, err)
	a, err := svc.Tokens.Authenticate(ctx, plain)
	must(t, err)
	// Revoked elsewhere (another replica): trusted until the cache entry expires.
	must(t, db.Exec("UPDATE api_tokens SET revoked_at = ? WHERE id = ?", w.clock.Now(), tok.ID).Error)
	if _, err := svc.Tokens.Authenticate(ctx, plain); err != nil {
		t.Fatalf("cached token refused: %v", err)
	}
	w.clock.Advance(11 * time.Second)
	_, err = svc.Tokens.Authenticate(ctx, plain)
	wantCode(t, err, "UNAUTHENTICATED")
	// Revoked here: refused at once.
	plain2, tok2, err := svc.Tokens.Create(ctx, services.CreateTokenInput{MerchantID: w.merchant.ID, Role: models.RoleFinance})
	must(t, err)
	_, err = svc.Tokens.Authenticate(ctx, plain2)
	must(t, err)
	_, err = svc.Tokens.Revoke(ctx, a, tok2.ID)
	must(t, err)
	_, err = svc.Tokens.Authenticate(ctx, plain2)
	wantCode(t, err, "UNAUTHENTICATED")
}

func TestHoldStats(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		n, oldest, err := w.svc.Coupons.HoldStats(ctx, w.clock.Now())
		must(t, err)
		if n != 0 || oldest != 0 {
			t.Fatalf("empty: %d %v", n, oldest)
		}
		code := w.issue(w.campaign, 1)[0]
		_, err = w.svc.Redemptions.Reserve(ctx, w.clerkA, services.RedeemInput{Code: code, StoreID: w.storeA.ID, RequestID: "h", OrderAmount: 5000})
		must(t, err)
		n, oldest, err = w.svc.Coupons.HoldStats(ctx, w.clock.Now().Add(90*time.Second))
		must(t, err)
		if n != 1 || oldest != 90*time.Second {
			t.Fatalf("held %d, oldest %v; want 1 and 90s", n, oldest)
		}
	})
}

func TestRedemptionsByHour(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		codes := w.issue(w.campaign, 3)
		start := w.clock.Now().Truncate(time.Hour)
		at := []time.Duration{10 * time.Minute, 70 * time.Minute, 190 * time.Minute} // hours 0, 1 and 3
		for i, code := range codes {
			w.clock.Advance(start.Add(at[i]).Sub(w.clock.Now()))
			_, err := w.redeem(code, fmt.Sprintf("h-%d", i), 5000)
			must(t, err)
		}
		hours, err := w.svc.Coupons.RedemptionsByHour(ctx, w.finance, start, start.Add(24*time.Hour), 0)
		must(t, err)
		want := map[time.Time]int64{start: 1, start.Add(time.Hour): 1, start.Add(3 * time.Hour): 1}
		if len(hours) != 3 {
			t.Fatalf("hours %+v", hours)
		}
		for _, h := range hours {
			if want[h.Hour] != h.Redeemed || h.DiscountAmount != 1000*h.Redeemed {
				t.Fatalf("hour %v: %+v, want %d", h.Hour, h, want[h.Hour])
			}
		}
		_, err = w.svc.Coupons.RedemptionsByHour(ctx, w.finance, start, start.Add(40*24*time.Hour), 0)
		wantCode(t, err, "BAD_USER_INPUT")
	})
}
