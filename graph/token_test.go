package graph_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/errcode"
	"coupond/graph"
	"coupond/internal/testdb"
	"coupond/models"
	"coupond/services"
)

const (
	createToken = `mutation($in: CreateTokenInput!) { createToken(input: $in) {
		token apiToken { id name role stores { id code name } createdAt lastUsedAt expiresAt revokedAt } } }`
	revokeToken = `mutation($id: ID!) { revokeToken(input: {id: $id}) { id revokedAt } }`
	listTokens  = `{ tokens(first: 100) { edges { cursor node { id name role revokedAt } } pageInfo { hasNextPage endCursor } } }`
)

type apiToken struct {
	ID     string
	Name   string
	Role   string
	Stores []struct{ ID, Code, Name string }
	// Times as strings: the test compares what the API says, not instants.
	ExpiresAt, RevokedAt, LastUsedAt *string
}

type createdToken struct {
	CreateToken struct {
		Token    *string
		APIToken apiToken `json:"apiToken"`
	}
}

type operator struct{ ID, Name, Role string }

func TestTokensOverGraphQL(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		a := newAPI(t, db, graph.Options{})
		ctx := context.Background()
		storeID, codes := a.setup(2)
		mB, err := a.svc.Merchants.Create(ctx, "beta", "Beta", "")
		must(t, err)
		adminB, _, err := a.svc.Tokens.Create(ctx, services.CreateTokenInput{MerchantID: mB.ID, Role: models.RoleAdmin})
		must(t, err)
		expires := time.Now().UTC().Add(720 * time.Hour).Truncate(time.Second).Format(time.RFC3339)
		give := map[string]any{"name": "till 1", "role": "CLERK", "storeIds": []string{storeID}, "expiresAt": expires, "requestId": "tok-1"}

		var c createdToken
		a.mustDo(t, a.admin, createToken, map[string]any{"in": give}, &c)
		tok := c.CreateToken.APIToken
		if c.CreateToken.Token == nil || tok.Name != "till 1" || tok.Role != "CLERK" || len(tok.Stores) != 1 ||
			tok.Stores[0].Code != "SH01" || tok.ExpiresAt == nil || *tok.ExpiresAt != expires || tok.RevokedAt != nil {
			t.Fatalf("created %+v", c.CreateToken)
		}
		clerk := *c.CreateToken.Token

		t.Run("a repeat returns the token without its secret", func(t *testing.T) {
			var again createdToken
			a.mustDo(t, a.admin, createToken, map[string]any{"in": give}, &again)
			if again.CreateToken.Token != nil || again.CreateToken.APIToken.ID != tok.ID {
				t.Fatalf("repeat %+v", again.CreateToken)
			}
		})
		refusals := []struct {
			name, token string
			give        map[string]any
			want        string
		}{
			{"the request id for another token", a.admin, map[string]any{"name": "till 2", "role": "CLERK", "storeIds": []string{storeID}, "requestId": "tok-1"}, errcode.IdempotencyKeyReused},
			{"an expiry in the past", a.admin, map[string]any{"role": "ADMIN", "expiresAt": "2020-01-01T00:00:00Z"}, errcode.BadUserInput},
			{"a clerk", clerk, map[string]any{"role": "ADMIN"}, errcode.Forbidden},
			{"finance", a.finance, map[string]any{"role": "ADMIN"}, errcode.Forbidden},
			{"another merchant's store", adminB, map[string]any{"role": "CLERK", "storeIds": []string{storeID}}, errcode.NotFound},
		}
		for _, tt := range refusals {
			t.Run(tt.name, func(t *testing.T) {
				var n, audits int64
				must(t, db.Model(&models.APIToken{}).Count(&n).Error)
				must(t, db.Model(&models.AuditEvent{}).Where("action = 'token.create'").Count(&audits).Error)
				if codes := a.do(t, tt.token, createToken, map[string]any{"in": tt.give}, nil); len(codes) != 1 || codes[0] != tt.want {
					t.Fatalf("codes %v, want %s", codes, tt.want)
				}
				var after, auditsAfter int64
				must(t, db.Model(&models.APIToken{}).Count(&after).Error)
				must(t, db.Model(&models.AuditEvent{}).Where("action = 'token.create'").Count(&auditsAfter).Error)
				if after != n || auditsAfter != audits {
					t.Fatalf("a refused createToken wrote %d tokens and %d token.create events", after-n, auditsAfter-audits)
				}
			})
		}

		t.Run("the operator shows on the redemption and the refund", func(t *testing.T) {
			var red struct{ RedeemCoupon redemption }
			a.mustDo(t, clerk, redeemCoupon, redeemVars(codes[0], storeID, "op-1", 5000), &red)
			a.mustDo(t, clerk, refund, map[string]any{"in": map[string]any{"redeemNo": red.RedeemCoupon.RedeemNo, "requestId": "op-refund-1"}}, nil)
			m, err := a.svc.Merchants.ByCode(ctx, "acme")
			must(t, err)
			sid, err := strconv.ParseInt(storeID, 10, 64)
			must(t, err)
			sys, err := a.svc.Redemptions.Redeem(ctx, services.SystemActor(m.ID), services.RedeemInput{Code: codes[1],
				StoreID: sid, RequestID: "op-2", OrderAmount: 5000})
			must(t, err)
			var got struct {
				Clerk struct {
					Operator *operator
					Refund   struct{ Operator *operator }
				}
				System struct{ Operator *operator }
			}
			a.mustDo(t, a.finance, `query($a: String!, $b: String!) { clerk: redemption(redeemNo: $a) { operator { id name role } refund { operator { id name role } } }
				system: redemption(redeemNo: $b) { operator { id name role } } }`, map[string]any{"a": red.RedeemCoupon.RedeemNo, "b": sys.RedeemNo}, &got)
			want := operator{ID: tok.ID, Name: "till 1", Role: "CLERK"}
			if got.Clerk.Operator == nil || *got.Clerk.Operator != want || got.Clerk.Refund.Operator == nil || *got.Clerk.Refund.Operator != want {
				t.Fatalf("operators %+v, want %+v", got.Clerk, want)
			}
			if got.System.Operator != nil {
				t.Fatalf("a system redemption has operator %+v", got.System.Operator)
			}
			// The ledger list resolves operators too.
			var list struct {
				Redemptions struct {
					Edges []struct{ Node struct{ Operator *operator } }
				}
			}
			a.mustDo(t, a.admin, `{ redemptions(first: 10) { edges { node { operator { name } } } } }`, nil, &list)
			if len(list.Redemptions.Edges) != 2 {
				t.Fatalf("list %+v", list)
			}
		})

		t.Run("another merchant's admin neither sees nor revokes the token", func(t *testing.T) {
			var l struct {
				Tokens struct{ Edges []struct{ Node apiToken } }
			}
			a.mustDo(t, adminB, listTokens, nil, &l)
			for _, e := range l.Tokens.Edges {
				if e.Node.ID == tok.ID {
					t.Fatal("B lists A's token")
				}
			}
			if len(l.Tokens.Edges) != 1 {
				t.Fatalf("B lists %d tokens, want its own", len(l.Tokens.Edges))
			}
			if codes := a.do(t, adminB, revokeToken, map[string]any{"id": tok.ID}, nil); len(codes) != 1 || codes[0] != errcode.NotFound {
				t.Fatalf("B revoking A's token: %v", codes)
			}
			if codes := a.do(t, a.admin, revokeToken, map[string]any{"id": "999999"}, nil); len(codes) != 1 || codes[0] != errcode.NotFound {
				t.Fatalf("revoking an unknown token: %v", codes)
			}
			if codes := a.do(t, a.finance, listTokens, nil, nil); len(codes) != 1 || codes[0] != errcode.Forbidden {
				t.Fatalf("finance listing tokens: %v", codes)
			}
		})

		t.Run("a revoked token is refused", func(t *testing.T) {
			var r1, r2 struct{ RevokeToken apiToken }
			a.mustDo(t, a.admin, revokeToken, map[string]any{"id": tok.ID}, &r1)
			a.mustDo(t, a.admin, revokeToken, map[string]any{"id": tok.ID}, &r2)
			if r1.RevokeToken.RevokedAt == nil || *r1.RevokeToken.RevokedAt != *r2.RevokeToken.RevokedAt {
				t.Fatalf("revoked at %v, then %v", r1.RevokeToken.RevokedAt, r2.RevokeToken.RevokedAt)
			}
			if codes := a.do(t, clerk, `{ viewer { role } }`, nil, nil); len(codes) != 1 || codes[0] != errcode.Unauthenticated {
				t.Fatalf("revoked token: %v", codes)
			}
			var l struct {
				Tokens struct{ Edges []struct{ Node apiToken } }
			}
			a.mustDo(t, a.admin, listTokens, nil, &l)
			found := false
			for _, e := range l.Tokens.Edges {
				found = found || e.Node.ID == tok.ID && e.Node.RevokedAt != nil
			}
			if !found {
				t.Fatalf("the revoked token is not listed as revoked: %+v", l)
			}
		})
	})
}

// Twenty concurrent createToken requests with one requestId make one token;
// one answer carries the secret.
func TestCreateTokenConcurrentRepeats(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		a := newAPI(t, db, graph.Options{})
		const n = 20
		results := make([]createdToken, n)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				codes, err := a.post(a.admin, createToken, map[string]any{"in": map[string]any{"name": "ops", "role": "FINANCE", "requestId": "same"}}, &results[i])
				if err != nil || len(codes) > 0 {
					t.Errorf("create %d: %v %v", i, codes, err)
				}
			}()
		}
		close(start)
		wg.Wait()
		secrets := 0
		for _, r := range results {
			if r.CreateToken.APIToken.ID != results[0].CreateToken.APIToken.ID {
				t.Fatalf("two tokens for one requestId: %s and %s", results[0].CreateToken.APIToken.ID, r.CreateToken.APIToken.ID)
			}
			if r.CreateToken.Token != nil {
				secrets++
			}
		}
		var count int64
		must(t, db.Model(&models.APIToken{}).Where("request_id = 'same'").Count(&count).Error)
		if secrets != 1 || count != 1 {
			t.Fatalf("%d secrets shown, %d tokens; want 1 and 1", secrets, count)
		}
	})
}
