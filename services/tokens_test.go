package services_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/errcode"
	"coupond/internal/testdb"
	"coupond/models"
	"coupond/services"
)

// An expired token is refused on time, cache or not; a token revoked on
// another replica is refused here once the cache TTL has passed, and at once
// on the replica that revoked it.
func TestTokenExpiryAndRevocationThroughTheCache(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		const ttl = 5 * time.Second
		w := newWorldWith(t, db, false, func(o *services.Options) { o.TokenCacheTTL = ttl })
		ctx := context.Background()
		exp := w.clock.Now().Add(time.Minute)
		short, err := w.svc.Tokens.CreateAs(ctx, w.admin, services.CreateTokenInput{Role: models.RoleFinance, ExpiresAt: &exp})
		must(t, err)
		if short.Secret == "" || short.Token.ExpiresAt == nil || !short.Token.ExpiresAt.Equal(exp) {
			t.Fatalf("created %+v", short.Token)
		}
		for range 2 { // from the database, then from the cache
			_, err = w.svc.Tokens.Authenticate(ctx, short.Secret)
			must(t, err)
		}
		w.clock.Advance(time.Minute - time.Second)
		_, err = w.svc.Tokens.Authenticate(ctx, short.Secret)
		must(t, err)
		w.clock.Advance(time.Second) // the cache entry is younger than the TTL, but the token has expired
		_, err = w.svc.Tokens.Authenticate(ctx, short.Secret)
		wantCode(t, err, errcode.Unauthenticated)

		live, err := w.svc.Tokens.CreateAs(ctx, w.admin, services.CreateTokenInput{Role: models.RoleAdmin})
		must(t, err)
		_, err = w.svc.Tokens.Authenticate(ctx, live.Secret)
		must(t, err)
		other := services.New(db, services.Options{Now: w.clock.Now, TokenCacheTTL: ttl})
		_, err = other.Tokens.Authenticate(ctx, live.Secret)
		must(t, err)
		revoked, err := other.Tokens.Revoke(ctx, w.admin, live.Token.ID)
		must(t, err)
		if revoked.RevokedAt == nil {
			t.Fatal("revoke returned a live token")
		}
		_, err = other.Tokens.Authenticate(ctx, live.Secret)
		wantCode(t, err, errcode.Unauthenticated)
		w.clock.Advance(ttl - time.Second)
		if _, err := w.svc.Tokens.Authenticate(ctx, live.Secret); err != nil {
			t.Fatalf("another replica refused the token before its cache TTL: %v", err)
		}
		w.clock.Advance(time.Second)
		_, err = w.svc.Tokens.Authenticate(ctx, live.Secret)
		wantCode(t, err, errcode.Unauthenticated)

		// Revoking again changes nothing and audits nothing more.
		again, err := other.Tokens.Revoke(ctx, w.admin, live.Token.ID)
		must(t, err)
		if !again.RevokedAt.Equal(*revoked.RevokedAt) {
			t.Fatalf("second revoke moved revokedAt from %v to %v", revoked.RevokedAt, again.RevokedAt)
		}
		if n := w.count(&models.AuditEvent{}, "action = 'token.revoke'"); n != 1 {
			t.Fatalf("%d token.revoke events, want 1", n)
		}
	})
}

func TestCreateTokenRefusals(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		other, err := w.svc.Merchants.Create(ctx, "other", "Other", "")
		must(t, err)
		otherStore, err := w.svc.Stores.Create(ctx, services.SystemActor(other.ID), services.CreateStoreInput{Code: "X1", Name: "X"})
		must(t, err)
		past := w.clock.Now().Add(-time.Second)
		tests := []struct {
			name  string
			actor services.Actor
			give  services.CreateTokenInput
			want  string
		}{
			{"clerk may not", w.clerkA, services.CreateTokenInput{Role: models.RoleAdmin}, errcode.Forbidden},
			{"finance may not", w.finance, services.CreateTokenInput{Role: models.RoleAdmin}, errcode.Forbidden},
			{"expiry in the past", w.admin, services.CreateTokenInput{Role: models.RoleAdmin, ExpiresAt: &past}, errcode.BadUserInput},
			{"clerk without stores", w.admin, services.CreateTokenInput{Role: models.RoleClerk}, errcode.BadUserInput},
			{"admin with stores", w.admin, services.CreateTokenInput{Role: models.RoleAdmin, StoreIDs: []int64{w.storeA.ID}}, errcode.BadUserInput},
			{"another merchant's store", w.admin, services.CreateTokenInput{Role: models.RoleClerk, StoreIDs: []int64{otherStore.ID}}, errcode.NotFound},
			{"bad request id", w.admin, services.CreateTokenInput{Role: models.RoleAdmin, RequestID: "a b"}, errcode.BadUserInput},
		}
		before := w.count(&models.APIToken{}, "1 = 1")
		audits := w.count(&models.AuditEvent{}, "1 = 1")
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := w.svc.Tokens.CreateAs(ctx, tt.actor, tt.give)
				wantCode(t, err, tt.want)
			})
		}
		if n := w.count(&models.APIToken{}, "1 = 1"); n != before {
			t.Fatalf("refused creations wrote %d tokens", n-before)
		}
		if n := w.count(&models.AuditEvent{}, "1 = 1"); n != audits {
			t.Fatalf("refused creations wrote %d audit events", n-audits)
		}
	})
}

// Twenty concurrent copies of one createToken make one token, and exactly one
// of them sees its secret; a later repeat gets the token without it, and the
// request id with other parameters is IDEMPOTENCY_KEY_REUSED.
func TestCreateTokenIdempotent(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		admin := w.actor(models.RoleAdmin)
		exp := w.clock.Now().Add(720 * time.Hour)
		in := services.CreateTokenInput{Name: "till 1", Role: models.RoleClerk, StoreIDs: []int64{w.storeA.ID, w.storeA.ID},
			ExpiresAt: &exp, RequestID: "tok-1"}
		const n = 20
		results := make([]services.CreatedToken, n)
		errs := make([]error, n)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				results[i], errs[i] = w.svc.Tokens.CreateAs(ctx, admin, in)
			}()
		}
		close(start)
		wg.Wait()
		secrets := 0
		for i := range n {
			must(t, errs[i])
			if results[i].Token.ID != results[0].Token.ID {
				t.Fatalf("tokens %d and %d created under one request id", results[0].Token.ID, results[i].Token.ID)
			}
			if results[i].Secret != "" {
				secrets++
			}
		}
		if secrets != 1 {
			t.Fatalf("%d answers carried the secret, want 1", secrets)
		}
		if got := w.count(&models.APIToken{}, "request_id = ?", "tok-1"); got != 1 {
			t.Fatalf("%d tokens for the request id", got)
		}
		if got := w.count(&models.AuditEvent{}, "action = 'token.create' AND request_id = ?", "tok-1"); got != 1 {
			t.Fatalf("%d token.create audit events for the request id", got)
		}
		again, err := w.svc.Tokens.CreateAs(ctx, admin, in)
		must(t, err)
		if again.Secret != "" || again.Token.ID != results[0].Token.ID {
			t.Fatalf("repeat: %+v", again)
		}
		in.Name = "till 2"
		_, err = w.svc.Tokens.CreateAs(ctx, admin, in)
		wantCode(t, err, errcode.IdempotencyKeyReused)
	})
}

// A token's use is recorded in the background, at most once a minute.
func TestTokenLastUsed(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		ct, err := w.svc.Tokens.CreateAs(ctx, w.admin, services.CreateTokenInput{Role: models.RoleFinance})
		must(t, err)
		if ct.Token.LastUsedAt != nil {
			t.Fatal("a new token has a last use")
		}
		lastUsed := func() *time.Time {
			var tok models.APIToken
			must(t, db.Take(&tok, ct.Token.ID).Error)
			return tok.LastUsedAt
		}
		waitFor := func(want time.Time) {
			t.Helper()
			w.svc.Tokens.WaitUsageWrites()
			if got := lastUsed(); got == nil || !got.Equal(want) {
				t.Fatalf("last use %v, want %v", got, want)
			}
		}
		first := w.clock.Now()
		_, err = w.svc.Tokens.Authenticate(ctx, ct.Secret)
		must(t, err)
		waitFor(first)
		w.clock.Advance(30 * time.Second)
		_, err = w.svc.Tokens.Authenticate(ctx, ct.Secret)
		must(t, err)
		w.svc.Tokens.WaitUsageWrites()
		if got := lastUsed(); !got.Equal(first) {
			t.Fatalf("last use written again after 30s: %v", got)
		}
		w.clock.Advance(31 * time.Second)
		_, err = w.svc.Tokens.Authenticate(ctx, ct.Secret)
		must(t, err)
		waitFor(w.clock.Now())
	})
}

// Merchant B's administrator sees none of merchant A's tokens and cannot
// revoke them; the redemption and the refund name the clerk token that made
// them, and a system redemption names none.
func TestTokensStayInTheirMerchant(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		mB, err := w.svc.Merchants.Create(ctx, "beta", "Beta", "")
		must(t, err)
		plainB, _, err := w.svc.Tokens.Create(ctx, services.CreateTokenInput{MerchantID: mB.ID, Role: models.RoleAdmin})
		must(t, err)
		adminB, err := w.svc.Tokens.Authenticate(ctx, plainB)
		must(t, err)
		page, err := w.svc.Tokens.List(ctx, adminB, services.PageArgs{})
		must(t, err)
		if len(page.Items) != 1 || page.Items[0].MerchantID != mB.ID {
			t.Fatalf("B lists %+v", page.Items)
		}
		_, err = w.svc.Tokens.Revoke(ctx, adminB, w.clerkA.TokenID)
		wantCode(t, err, errcode.NotFound)
		ops, err := w.svc.Tokens.Operators(ctx, adminB, []int64{w.clerkA.TokenID})
		must(t, err)
		if len(ops) != 0 {
			t.Fatalf("B sees A's operators %+v", ops)
		}
		stores, err := w.svc.Tokens.StoreIDs(ctx, adminB, []int64{w.clerkA.TokenID})
		must(t, err)
		if len(stores) != 0 {
			t.Fatalf("B sees A's token stores %v", stores)
		}
		if _, err := w.svc.Tokens.List(ctx, w.clerkA, services.PageArgs{}); err == nil {
			t.Fatal("a clerk listed tokens")
		}
		pageA, err := w.svc.Tokens.List(ctx, w.admin, services.PageArgs{})
		must(t, err)
		if len(pageA.Items) != 2 { // clerkA and finance
			t.Fatalf("A lists %d tokens", len(pageA.Items))
		}
	})
}

// TestTokenLookupsShared counts the database lookups of a clerk's token
// (its row, then its stores) while fifty requests authenticate at once:
// those that miss the cache together share one lookup, and a cached token
// is looked up again in the background after four fifths of its TTL, so
// that the requests after the TTL are still answered from the cache.
func TestTokenLookupsShared(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		const ttl = 10 * time.Second
		var lookups atomic.Int64
		must(t, db.Callback().Query().After("gorm:query").Register("test:token_lookups", func(tx *gorm.DB) {
			if tx.Statement.Table == "api_tokens" {
				lookups.Add(1)
			}
		}))
		w := newWorldWith(t, db, false, func(o *services.Options) { o.TokenCacheTTL = ttl })
		ctx := context.Background()
		clerk, err := w.svc.Tokens.CreateAs(ctx, w.admin, services.CreateTokenInput{Role: models.RoleClerk,
			StoreIDs: []int64{w.storeA.ID}})
		must(t, err)
		all := func() {
			t.Helper()
			var wg sync.WaitGroup
			errs := make(chan error, 50)
			for range 50 {
				wg.Go(func() {
					a, err := w.svc.Tokens.Authenticate(ctx, clerk.Secret)
					if err == nil && (a.TokenID != clerk.Token.ID || len(a.StoreIDs) != 1) {
						err = fmt.Errorf("authenticated as %+v", a)
					}
					errs <- err
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				must(t, err)
			}
		}
		lookups.Store(0)
		all()
		if n := lookups.Load(); n != 1 {
			t.Fatalf("%d lookups of the token by fifty requests at once, want 1", n)
		}
		w.clock.Advance(ttl * 4 / 5)
		all()
		waitFor(t, "no lookup ahead of the cache's expiry", func() bool { return lookups.Load() == 2 })
		w.clock.Advance(ttl / 2)
		all()
		if n := lookups.Load(); n != 2 {
			t.Fatalf("%d lookups after the first entry's TTL, want 2 (the second entry answers)", n)
		}
	})
}
