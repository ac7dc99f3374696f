package graph_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	gqlerrcode "github.com/99designs/gqlgen/graphql/errcode"

	"coupond/errcode"
	"coupond/graph"
	"coupond/internal/testdb"
	"coupond/models"
	"coupond/services"
)

// Refusals are audited as errcode's table says: FORBIDDEN as a refused
// request, RATE_LIMITED as a rate-limited one and never as a refusal, and an
// unknown coupon not at all.
func TestRefusalsAreAuditedByKind(t *testing.T) {
	db := testdb.SQLite(t)
	ctx := context.Background()
	svc := services.New(db, services.Options{Limits: services.Limits{
		FailedLookupsPerToken: services.RateLimit{PerSecond: 0.001, Burst: 1}}})
	m, err := svc.Merchants.Create(ctx, "acme", "Acme", "")
	must(t, err)
	a := &api{t: t, db: db, svc: svc, h: graph.NewHandler(svc, graph.Options{})}
	a.admin, _, err = svc.Tokens.Create(ctx, services.CreateTokenInput{MerchantID: m.ID, Role: models.RoleAdmin})
	must(t, err)
	a.finance, _, err = svc.Tokens.Create(ctx, services.CreateTokenInput{MerchantID: m.ID, Role: models.RoleFinance})
	must(t, err)
	storeID, _ := a.setup(1)

	audited := func(action string) int64 {
		var n int64
		must(t, db.Model(&models.AuditEvent{}).Where("action = ?", action).Count(&n).Error)
		return n
	}
	redeem := func(req string) []string {
		return a.do(t, a.admin, redeemCoupon, map[string]any{"in": map[string]any{
			"code": services.NewCouponCode(), "storeId": storeID, "requestId": req, "orderAmount": 5000}}, nil)
	}

	if codes := redeem("unknown-1"); len(codes) != 1 || codes[0] != errcode.CouponNotFound {
		t.Fatalf("unknown code answered %v", codes)
	}
	if codes := redeem("unknown-2"); len(codes) != 1 || codes[0] != errcode.RateLimited {
		t.Fatalf("second unknown code answered %v, want RATE_LIMITED", codes)
	}
	if r, l := audited(services.ActionRefused), audited(services.ActionRateLimited); r != 0 || l != 1 {
		t.Fatalf("after a rate limit: %d refusals, %d rate limits audited; want 0 and 1", r, l)
	}
	codes := a.do(t, a.finance, createStore, map[string]any{"in": map[string]any{"code": "EV1", "name": "x"}}, nil)
	if len(codes) != 1 || codes[0] != errcode.Forbidden {
		t.Fatalf("finance creating a store answered %v", codes)
	}
	if r, l := audited(services.ActionRefused), audited(services.ActionRateLimited); r != 1 || l != 1 {
		t.Fatalf("after a refusal: %d refusals, %d rate limits audited; want 1 and 1", r, l)
	}
}

// The codes the table borrows from gqlgen are gqlgen's.
func TestGqlgenCodesMatch(t *testing.T) {
	if errcode.GraphQLParseFailed != gqlerrcode.ParseFailed || errcode.GraphQLValidationFailed != gqlerrcode.ValidationFailed {
		t.Fatalf("errcode has %s and %s, gqlgen %s and %s", errcode.GraphQLParseFailed, errcode.GraphQLValidationFailed,
			gqlerrcode.ParseFailed, gqlerrcode.ValidationFailed)
	}
}

// The codes the GraphQL endpoint answers before any resolver runs come in a
// 200 answer to application/json and a 400 answer to
// application/graphql-response+json (GraphQL over HTTP), except a batch, which
// is not a well-formed request and is 400 to both.
func TestRefusalsBeforeResolversFollowTheMediaType(t *testing.T) {
	a := newAPI(t, testdb.SQLite(t), graph.Options{})
	tests := []struct {
		name     string
		body     string
		want     string
		wantJSON int
	}{
		{"too deep", gqlBody(nested(16), nil), errcode.QueryTooComplex, http.StatusOK},
		{"past complexity", gqlBody(`{ coupons(first: 100) { edges { node {
			redemptions { coupon { redemptions { coupon { redemptions { redeemNo } } } } } } } } }`, nil), errcode.ComplexityLimitExceeded, http.StatusOK},
		{"token flood", gqlBody("{ viewer { "+strings.Repeat("role ", 4000)+"} }", nil), errcode.GraphQLParseFailed, http.StatusOK},
		{"unknown field", gqlBody(`{ coupns { edges { cursor } } }`, nil), errcode.GraphQLValidationFailed, http.StatusOK},
		{"batch", "[" + gqlBody(`{ viewer { role } }`, nil) + "]", errcode.BadUserInput, http.StatusBadRequest},
	}
	for _, tt := range tests {
		for _, accept := range []string{"application/json", "application/graphql-response+json"} {
			t.Run(tt.name+" as "+accept, func(t *testing.T) {
				r := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(tt.body))
				r.Header.Set("Content-Type", "application/json")
				r.Header.Set("Accept", accept)
				r.Header.Set("Authorization", "Bearer "+a.admin)
				w := httptest.NewRecorder()
				a.h.ServeHTTP(w, r)
				var resp struct {
					Errors []struct{ Extensions map[string]any }
				}
				must(t, json.Unmarshal(w.Body.Bytes(), &resp))
				want := tt.wantJSON
				if accept != "application/json" {
					want = http.StatusBadRequest
				}
				if len(resp.Errors) == 0 || resp.Errors[0].Extensions["code"] != tt.want || w.Code != want {
					t.Fatalf("HTTP %d %s; want %s with HTTP %d", w.Code, w.Body.String(), tt.want, want)
				}
			})
		}
	}
}
