package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/graph"
	"coupond/internal/testdb"
	"coupond/models"
	"coupond/services"
)

// api is the real GraphQL handler over a real database, with tokens for each role.
type api struct {
	t       *testing.T
	db      *gorm.DB
	h       http.Handler
	svc     *services.Services
	admin   string
	finance string
}

func newAPI(t *testing.T, db *gorm.DB, o graph.Options) *api {
	t.Helper()
	ctx := context.Background()
	svc := services.New(db, services.Options{})
	m, err := svc.Merchants.Create(ctx, "acme", "Acme", "")
	must(t, err)
	a := &api{t: t, db: db, svc: svc, h: graph.NewHandler(svc, o)}
	a.admin, _, err = svc.Tokens.Create(ctx, services.CreateTokenInput{MerchantID: m.ID, Role: models.RoleAdmin})
	must(t, err)
	a.finance, _, err = svc.Tokens.Create(ctx, services.CreateTokenInput{MerchantID: m.ID, Role: models.RoleFinance})
	must(t, err)
	return a
}

func (a *api) clerk(stores ...string) string {
	a.t.Helper()
	m, err := a.svc.Merchants.ByCode(context.Background(), "acme")
	must(a.t, err)
	tok, _, err := a.svc.Tokens.Create(context.Background(), services.CreateTokenInput{MerchantID: m.ID, Role: models.RoleClerk, StoreCodes: stores})
	must(a.t, err)
	return tok
}

// post runs a GraphQL request as token through the real handler and returns
// the decoded data and the error codes. gqlgen's test client is not used
// because it refuses to decode the 4xx answers whose codes these tests assert.
func (a *api) post(token, query string, vars map[string]any, data any) ([]string, error) {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	r := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(string(body)))
	r.Header.Set("Content-Type", "application/json")
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	a.h.ServeHTTP(w, r)
	if w.Code >= 500 {
		return nil, fmt.Errorf("http %d: %s", w.Code, w.Body.String())
	}
	var resp struct {
		Data   json.RawMessage `json:"data"`
		Errors []struct {
			Message    string         `json:"message"`
			Extensions map[string]any `json:"extensions"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
		return nil, fmt.Errorf("decode %q: %w", w.Body.String(), err)
	}
	if data != nil && len(resp.Data) > 0 && string(resp.Data) != "null" {
		if err := json.Unmarshal(resp.Data, data); err != nil {
			return nil, err
		}
	}
	codes := make([]string, 0, len(resp.Errors))
	for _, e := range resp.Errors {
		code, _ := e.Extensions["code"].(string)
		codes = append(codes, code)
		for _, leak := range []string{"SQL", "sql:", "gorm", "pgx", "sqlite", "*models.", "goroutine", "panic"} {
			if strings.Contains(e.Message, leak) {
				return codes, fmt.Errorf("error message leaks %q: %s", leak, e.Message)
			}
		}
	}
	return codes, nil
}

// do runs a request and returns its error codes, failing t on a transport error.
func (a *api) do(t testing.TB, token, query string, vars map[string]any, data any) []string {
	t.Helper()
	codes, err := a.post(token, query, vars, data)
	must(t, err)
	return codes
}

// mustDo runs a request that must not fail.
func (a *api) mustDo(t testing.TB, token, query string, vars map[string]any, data any) {
	t.Helper()
	if codes := a.do(t, token, query, vars, data); len(codes) > 0 {
		t.Fatalf("unexpected errors %v for %s", codes, query)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

const (
	createStore    = `mutation($in: CreateStoreInput!) { createStore(input: $in) { id code } }`
	createCampaign = `mutation($in: CreateCampaignInput!) { createCampaign(input: $in) { id issued } }`
	issueCoupons   = `mutation($in: IssueCouponsInput!) { issueCoupons(input: $in) { issued codes campaign { issued } } }`
	redeemCoupon   = `mutation($in: RedeemCouponInput!) { redeemCoupon(input: $in) {
		redeemNo requestId status rejectReason discountAmount orderRef coupon { code status version } store { code } } }`
	reserveCoupon = `mutation($in: RedeemCouponInput!) { reserveCoupon(input: $in) { redeemNo status holdUntil } }`
	confirm       = `mutation($in: ConfirmRedemptionInput!) { confirmRedemption(input: $in) { redeemNo status orderRef } }`
	cancel        = `mutation($in: CancelRedemptionInput!) { cancelRedemption(input: $in) { redeemNo status releaseReason } }`
	refund        = `mutation($in: RefundRedemptionInput!) { refundRedemption(input: $in) {
		refundNo requestId status redemption { redeemNo coupon { status version } } reissuedCoupon { code status } } }`
)

type redemption struct {
	RedeemNo       string  `json:"redeemNo"`
	RequestID      string  `json:"requestId"`
	Status         string  `json:"status"`
	RejectReason   *string `json:"rejectReason"`
	DiscountAmount int64   `json:"discountAmount"`
	OrderRef       *string `json:"orderRef"`
	Coupon         struct {
		Code    string `json:"code"`
		Status  string `json:"status"`
		Version int64  `json:"version"`
	} `json:"coupon"`
}

// setup creates a store and a campaign and issues n coupons over GraphQL.
func (a *api) setup(n int) (storeID string, codes []string) {
	a.t.Helper()
	t := a.t
	var st struct{ CreateStore struct{ ID string } }
	a.mustDo(t, a.admin, createStore, map[string]any{"in": map[string]any{"code": "SH01", "name": "Shanghai 1"}}, &st)
	var camp struct{ CreateCampaign struct{ ID string } }
	now := time.Now().UTC()
	a.mustDo(t, a.admin, createCampaign, map[string]any{"in": map[string]any{"name": "Ten off", "type": "CASH", "value": 1000,
		"minSpend": 2000, "validFrom": now.Add(-time.Hour).Format(time.RFC3339), "validTo": now.Add(24 * time.Hour).Format(time.RFC3339),
		"totalQuantity": 1000}}, &camp)
	var iss struct {
		IssueCoupons struct {
			Issued   int64
			Codes    []string
			Campaign struct{ Issued int64 }
		}
	}
	a.mustDo(t, a.admin, issueCoupons, map[string]any{"in": map[string]any{"campaignId": camp.CreateCampaign.ID, "count": n}}, &iss)
	if iss.IssueCoupons.Issued != int64(n) || len(iss.IssueCoupons.Codes) != n || iss.IssueCoupons.Campaign.Issued != int64(n) {
		a.t.Fatalf("issued %+v", iss.IssueCoupons)
	}
	return st.CreateStore.ID, iss.IssueCoupons.Codes
}

func redeemVars(code, storeID, requestID string, amount int) map[string]any {
	return map[string]any{"in": map[string]any{"code": code, "storeId": storeID, "requestId": requestID, "orderAmount": amount}}
}

// A client following the README: concurrent redeems of one coupon over the real
// handler give exactly one SUCCEEDED; a replayed request id gives the same
// redeemNo; the refund kills the code and reissues a working one.
func TestRedeemOverGraphQL(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		a := newAPI(t, db, graph.Options{})
		storeID, codes := a.setup(2)
		clerk := a.clerk("SH01")
		n := 100
		if models.DialectOfDB(db) == models.SQLite {
			n = 50
		}
		results := make([]redemption, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				var out struct{ RedeemCoupon redemption }
				codes, err := a.post(clerk, redeemCoupon, redeemVars(strings.ToLower(codes[0]), storeID, fmt.Sprintf("scan-%d", i), 5000), &out)
				if err != nil || len(codes) > 0 {
					t.Errorf("redeem %d: %v %v", i, codes, err)
				}
				results[i] = out.RedeemCoupon
			}()
		}
		close(start)
		wg.Wait()
		var winner redemption
		succeeded := 0
		for _, r := range results {
			switch r.Status {
			case "SUCCEEDED":
				succeeded++
				winner = r
			case "REJECTED":
				if r.RejectReason == nil || *r.RejectReason != "COUPON_NOT_AVAILABLE" {
					t.Fatalf("reject reason %v", r.RejectReason)
				}
			default:
				t.Fatalf("status %s", r.Status)
			}
		}
		if succeeded != 1 {
			t.Fatalf("%d SUCCEEDED, want 1", succeeded)
		}
		if winner.DiscountAmount != 1000 || winner.OrderRef == nil || winner.Coupon.Status != "REDEEMED" || winner.Coupon.Version != 2 {
			t.Fatalf("winner %+v", winner)
		}
		// Replaying the winner's request id returns the same redemption.
		var again struct{ RedeemCoupon redemption }
		a.mustDo(t, clerk, redeemCoupon, redeemVars(codes[0], storeID, winner.RequestID, 5000), &again)
		if again.RedeemCoupon.RedeemNo != winner.RedeemNo || again.RedeemCoupon.Status != "SUCCEEDED" {
			t.Fatalf("replay %+v, want %s", again.RedeemCoupon, winner.RedeemNo)
		}
		// Refund with reissue.
		var rf struct {
			RefundRedemption struct {
				Status     string
				Redemption struct {
					Coupon struct {
						Status  string
						Version int64
					}
				}
				ReissuedCoupon *struct{ Code, Status string }
			}
		}
		a.mustDo(t, clerk, refund, map[string]any{"in": map[string]any{"redeemNo": winner.RedeemNo, "requestId": "refund-1",
			"reason": "wrong dish", "reissue": true}}, &rf)
		r := rf.RefundRedemption
		if r.Status != "SUCCEEDED" || r.Redemption.Coupon.Status != "REFUNDED" || r.Redemption.Coupon.Version != 3 ||
			r.ReissuedCoupon == nil || r.ReissuedCoupon.Status != "UNUSED" {
			t.Fatalf("refund %+v", r)
		}
		var dead struct{ RedeemCoupon redemption }
		a.mustDo(t, clerk, redeemCoupon, redeemVars(codes[0], storeID, "after-refund", 5000), &dead)
		if dead.RedeemCoupon.Status != "REJECTED" {
			t.Fatalf("refunded code redeemed: %s", dead.RedeemCoupon.Status)
		}
		var fresh struct{ RedeemCoupon redemption }
		a.mustDo(t, clerk, redeemCoupon, redeemVars(r.ReissuedCoupon.Code, storeID, "replacement", 5000), &fresh)
		if fresh.RedeemCoupon.Status != "SUCCEEDED" {
			t.Fatalf("replacement %s", fresh.RedeemCoupon.Status)
		}
	})
}

func TestTwoPhaseOverGraphQL(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		a := newAPI(t, db, graph.Options{})
		storeID, codes := a.setup(2)
		clerk := a.clerk("SH01")
		var res struct {
			ReserveCoupon struct{ RedeemNo, Status, HoldUntil string }
		}
		a.mustDo(t, clerk, reserveCoupon, redeemVars(codes[0], storeID, "mp-1", 5000), &res)
		if res.ReserveCoupon.Status != "PROCESSING" || res.ReserveCoupon.HoldUntil == "" {
			t.Fatalf("reserve %+v", res.ReserveCoupon)
		}
		var conf struct {
			ConfirmRedemption struct{ Status, OrderRef string }
		}
		a.mustDo(t, clerk, confirm, map[string]any{"in": map[string]any{"redeemNo": res.ReserveCoupon.RedeemNo, "orderRef": "POS-9"}}, &conf)
		if conf.ConfirmRedemption.Status != "SUCCEEDED" || conf.ConfirmRedemption.OrderRef != "POS-9" {
			t.Fatalf("confirm %+v", conf.ConfirmRedemption)
		}
		a.mustDo(t, clerk, reserveCoupon, redeemVars(codes[1], storeID, "mp-2", 5000), &res)
		var can struct {
			CancelRedemption struct{ Status, ReleaseReason string }
		}
		a.mustDo(t, clerk, cancel, map[string]any{"in": map[string]any{"redeemNo": res.ReserveCoupon.RedeemNo, "reason": "left"}}, &can)
		if can.CancelRedemption.Status != "RELEASED" || can.CancelRedemption.ReleaseReason != "CANCELLED" {
			t.Fatalf("cancel %+v", can.CancelRedemption)
		}
		codes2 := a.do(t, clerk, confirm, map[string]any{"in": map[string]any{"redeemNo": res.ReserveCoupon.RedeemNo, "orderRef": "POS-10"}}, nil)
		if len(codes2) != 1 || codes2[0] != "INVALID_STATE" {
			t.Fatalf("confirm after cancel: %v, want INVALID_STATE", codes2)
		}
	})
}

func TestErrorCodes(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		a := newAPI(t, db, graph.Options{})
		storeID, codes := a.setup(3)
		clerk := a.clerk("SH01")
		var other struct{ CreateStore struct{ ID string } }
		a.mustDo(t, a.admin, createStore, map[string]any{"in": map[string]any{"code": "BJ01", "name": "Beijing"}}, &other)
		a.mustDo(t, clerk, redeemCoupon, redeemVars(codes[0], storeID, "used-once", 5000), nil)
		var res struct{ ReserveCoupon struct{ RedeemNo string } }
		a.mustDo(t, clerk, reserveCoupon, redeemVars(codes[1], storeID, "held", 5000), &res)
		a.mustDo(t, clerk, cancel, map[string]any{"in": map[string]any{"redeemNo": res.ReserveCoupon.RedeemNo}}, nil)

		tests := []struct {
			name  string
			token string
			query string
			vars  map[string]any
			want  string
		}{
			{"no token", "", `{ coupons { edges { cursor } } }`, nil, "UNAUTHENTICATED"},
			{"unknown token", "cpd_nope", `{ stores { edges { cursor } } }`, nil, "UNAUTHENTICATED"},
			{"clerk creating a campaign", clerk, createStore, map[string]any{"in": map[string]any{"code": "X1", "name": "x"}}, "FORBIDDEN"},
			{"clerk at another store", clerk, redeemCoupon, redeemVars(codes[2], other.CreateStore.ID, "r-1", 5000), "FORBIDDEN"},
			{"finance redeeming", a.finance, redeemCoupon, redeemVars(codes[2], storeID, "r-2", 5000), "FORBIDDEN"},
			{"unknown code", clerk, redeemCoupon, redeemVars(services.NewCouponCode(), storeID, "r-3", 5000), "COUPON_NOT_FOUND"},
			{"mistyped code", clerk, redeemCoupon, redeemVars(codes[2][:12]+"!", storeID, "r-4", 5000), "BAD_USER_INPUT"},
			{"bad request id", clerk, redeemCoupon, redeemVars(codes[2], storeID, "has space", 5000), "BAD_USER_INPUT"},
			{"negative amount", clerk, redeemCoupon, redeemVars(codes[2], storeID, "r-5", -1), "BAD_USER_INPUT"},
			{"invalid ID", clerk, redeemCoupon, redeemVars(codes[2], "abc", "r-6", 5000), "BAD_USER_INPUT"},
			{"missing input field", clerk, `mutation { redeemCoupon(input: {code: "x"}) { status } }`, nil, "GRAPHQL_VALIDATION_FAILED"},
			{"reused request id", clerk, redeemCoupon, redeemVars(codes[2], storeID, "used-once", 5000), "IDEMPOTENCY_KEY_REUSED"},
			{"confirm of cancelled", clerk, confirm, map[string]any{"in": map[string]any{"redeemNo": res.ReserveCoupon.RedeemNo, "orderRef": "P"}}, "INVALID_STATE"},
			{"unknown redemption", a.admin, confirm, map[string]any{"in": map[string]any{"redeemNo": "RD0000", "orderRef": "P"}}, "NOT_FOUND"},
			{"duplicate store code", a.admin, createStore, map[string]any{"in": map[string]any{"code": "SH01", "name": "again"}}, "CONFLICT"},
			{"page too large", a.admin, `{ coupons(first: 1000) { edges { cursor } } }`, nil, "BAD_USER_INPUT"},
			{"bad cursor", a.admin, `{ coupons(after: "zzz") { edges { cursor } } }`, nil, "BAD_USER_INPUT"},
			{"introspection disabled", a.admin, `{ __schema { types { name } } }`, nil, "GRAPHQL_VALIDATION_FAILED"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				flows := count(t, db, &models.RedemptionFlow{})
				got := a.do(t, tt.token, tt.query, tt.vars, nil)
				if len(got) == 0 || got[0] != tt.want {
					t.Fatalf("codes %v, want %s", got, tt.want)
				}
				if after := count(t, db, &models.RedemptionFlow{}); after != flows {
					t.Fatalf("a refused request wrote %d flows", after-flows)
				}
			})
		}
	})
}

func count(t *testing.T, db *gorm.DB, model any) int64 {
	var n int64
	must(t, db.Model(model).Count(&n).Error)
	return n
}

// An unexpected failure is INTERNAL with a masked message.
func TestInternalErrorsAreMasked(t *testing.T) {
	db := testdb.SQLite(t)
	a := newAPI(t, db, graph.Options{})
	must(t, db.Exec("DROP TABLE audit_events").Error)
	codes := a.do(t, a.admin, createStore, map[string]any{"in": map[string]any{"code": "S1", "name": "s"}}, nil)
	if len(codes) != 1 || codes[0] != "INTERNAL" {
		t.Fatalf("codes %v, want INTERNAL", codes)
	}
}

func TestHTTPRules(t *testing.T) {
	db := testdb.SQLite(t)
	a := newAPI(t, db, graph.Options{MaxBodyBytes: 4096})
	send := func(method, contentType, body string) *httptest.ResponseRecorder {
		var r *http.Request
		if method == http.MethodGet {
			r = httptest.NewRequest(method, "/graphql?query="+body, nil)
		} else {
			r = httptest.NewRequest(method, "/graphql", strings.NewReader(body))
			r.Header.Set("Content-Type", contentType)
		}
		r.Header.Set("Authorization", "Bearer "+a.admin)
		w := httptest.NewRecorder()
		a.h.ServeHTTP(w, r)
		return w
	}
	tests := []struct {
		name, method, contentType, body string
		wantStatus                      int
		wantBody                        string
	}{
		{"GET query", http.MethodGet, "", "%7B%20viewer%20%7B%20role%20%7D%20%7D", 200, `"role":"ADMIN"`},
		{"GET mutation refused", http.MethodGet, "", "mutation%20%7B%20createStore(input%3A%7Bcode%3A%22A%22%2Cname%3A%22a%22%7D)%20%7B%20id%20%7D%20%7D", 405, "GET requests only allow query operations"},
		{"form post refused", http.MethodPost, "application/x-www-form-urlencoded", "query=%7B%7D", 415, "application/json"},
		{"body too large", http.MethodPost, "application/json", `{"query":"` + strings.Repeat(" ", 5000) + `{ viewer { role } }"}`, 413, "too large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := send(tt.method, tt.contentType, tt.body)
			if w.Code != tt.wantStatus || !strings.Contains(w.Body.String(), tt.wantBody) {
				t.Fatalf("got %d %s, want %d containing %q", w.Code, w.Body.String(), tt.wantStatus, tt.wantBody)
			}
		})
	}
	if n := count(t, db, &models.Store{}); n != 0 {
		t.Fatalf("a refused request created %d stores", n)
	}
}

// With introspection enabled, GraphiQL's own schema query is not refused as too deep.
func TestIntrospectionWhenEnabled(t *testing.T) {
	a := newAPI(t, testdb.SQLite(t), graph.Options{Introspection: true})
	const graphiql = `query IntrospectionQuery { __schema { queryType { name } types { ...FullType } } }
fragment FullType on __Type { kind name fields(includeDeprecated: true) { name args { ...InputValue } type { ...TypeRef } }
  inputFields { ...InputValue } interfaces { ...TypeRef } enumValues(includeDeprecated: true) { name } possibleTypes { ...TypeRef } }
fragment InputValue on __InputValue { name type { ...TypeRef } defaultValue }
fragment TypeRef on __Type { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name
  ofType { kind name ofType { kind name ofType { kind name } } } } } } } }`
	var out struct {
		Schema struct{ QueryType struct{ Name string } } `json:"__schema"`
	}
	a.mustDo(t, a.admin, graphiql, nil, &out)
	if out.Schema.QueryType.Name != "Query" {
		t.Fatalf("introspection answered %+v", out)
	}
}

// A token that cannot be checked because the database is down is not an
// invalid token: the answer is 503 UNAVAILABLE with Retry-After, so clients
// retry instead of dropping their credentials.
func TestTokenCheckWithDatabaseDown(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		a := newAPI(t, db, graph.Options{})
		if codes := a.do(t, "cpd_not-a-real-token", `{ stores { edges { cursor } } }`, nil, nil); len(codes) == 0 || codes[0] != "UNAUTHENTICATED" {
			t.Fatalf("unknown token answered %v", codes)
		}
		sqlDB, err := db.DB()
		must(t, err)
		must(t, sqlDB.Close())
		body := `{"query":"{ stores { edges { cursor } } }"}`
		r := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer "+a.admin)
		w := httptest.NewRecorder()
		a.h.ServeHTTP(w, r)
		if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != "1" ||
			!strings.Contains(w.Body.String(), `"UNAVAILABLE"`) || strings.Contains(w.Body.String(), "sql") {
			t.Fatalf("database down: HTTP %d Retry-After %q %s", w.Code, w.Header().Get("Retry-After"), w.Body.String())
		}
	})
}

// The quote over GraphQL names every failing rule and keeps its older
// fields: rejectReason is the first of reasons.
func TestQuoteReasonsOverGraphQL(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		a := newAPI(t, db, graph.Options{})
		storeID, codes := a.setup(1)
		clerk := a.clerk("SH01")
		var used struct{ RedeemCoupon redemption }
		a.mustDo(t, clerk, redeemCoupon, redeemVars(codes[0], storeID, "use", 5000), &used)
		const quote = `query($code: String!, $store: ID!, $amount: Int!) { redemptionQuote(code: $code, storeId: $store, orderAmount: $amount) {
			eligible rejectReason reasons discountAmount payAmount usableNextAt } }`
		var out struct {
			RedemptionQuote struct {
				Eligible       bool
				RejectReason   *string
				Reasons        []string
				DiscountAmount int64
				PayAmount      int64
				UsableNextAt   *string
			}
		}
		a.mustDo(t, clerk, quote, map[string]any{"code": codes[0], "store": storeID, "amount": 1000}, &out)
		q := out.RedemptionQuote
		if q.Eligible || q.RejectReason == nil || *q.RejectReason != "COUPON_NOT_AVAILABLE" ||
			strings.Join(q.Reasons, ",") != "COUPON_NOT_AVAILABLE,MIN_SPEND_NOT_MET" || q.PayAmount != 1000 || q.UsableNextAt != nil {
			t.Fatalf("quote %+v", q)
		}
	})
}

// A multi-use card with a per-customer daily limit over GraphQL: the card
// shows its uses, each use names its number and customer, and the limit is
// a rejection with its reason.
func TestCardAndLimitsOverGraphQL(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		a := newAPI(t, db, graph.Options{})
		storeID, _ := a.setup(1)
		clerk := a.clerk("SH01")
		now := time.Now().UTC()
		var camp struct {
			CreateCampaign struct {
				ID                    string
				UsesPerCoupon         int64
				PerCustomerDailyLimit int64
				PerStoreDailyLimit    int64
			}
		}
		a.mustDo(t, a.admin, `mutation($in: CreateCampaignInput!) { createCampaign(input: $in) {
			id usesPerCoupon perCustomerDailyLimit perStoreDailyLimit } }`, map[string]any{"in": map[string]any{
			"name": "3 coffees", "type": "EXCHANGE", "value": 1500, "usesPerCoupon": 3, "perCustomerDailyLimit": 1,
			"validFrom": now.Add(-time.Hour).Format(time.RFC3339), "validTo": now.Add(24 * time.Hour).Format(time.RFC3339),
			"totalQuantity": 10}}, &camp)
		if c := camp.CreateCampaign; c.UsesPerCoupon != 3 || c.PerCustomerDailyLimit != 1 || c.PerStoreDailyLimit != 0 {
			t.Fatalf("campaign %+v", c)
		}
		var iss struct{ IssueCoupons struct{ Codes []string } }
		a.mustDo(t, a.admin, issueCoupons, map[string]any{"in": map[string]any{"campaignId": camp.CreateCampaign.ID, "count": 1}}, &iss)
		code := iss.IssueCoupons.Codes[0]
		const redeem = `mutation($in: RedeemCouponInput!) { redeemCoupon(input: $in) {
			status rejectReason useNo customerRef coupon { status usesTotal usesLeft } } }`
		type out struct {
			RedeemCoupon struct {
				Status       string
				RejectReason *string
				UseNo        int64
				CustomerRef  *string
				Coupon       struct {
					Status              string
					UsesTotal, UsesLeft int64
				}
			}
		}
		in := func(id string) map[string]any {
			return map[string]any{"in": map[string]any{"code": code, "storeId": storeID, "requestId": id,
				"orderAmount": 5000, "customerRef": "alice"}}
		}
		var first out
		a.mustDo(t, clerk, redeem, in("use-1"), &first)
		r := first.RedeemCoupon
		if r.Status != "SUCCEEDED" || r.UseNo != 1 || r.CustomerRef == nil || *r.CustomerRef != "alice" ||
			r.Coupon.Status != "UNUSED" || r.Coupon.UsesTotal != 3 || r.Coupon.UsesLeft != 2 {
			t.Fatalf("first use %+v", r)
		}
		var second out
		a.mustDo(t, clerk, redeem, in("use-2"), &second)
		if r := second.RedeemCoupon; r.Status != "REJECTED" || r.RejectReason == nil || *r.RejectReason != "CUSTOMER_LIMIT_REACHED" ||
			r.Coupon.UsesLeft != 2 {
			t.Fatalf("second use the same day %+v", r)
		}
		codes := a.do(t, a.admin, `mutation($in: CreateCampaignInput!) { createCampaign(input: $in) { id } }`,
			map[string]any{"in": map[string]any{"name": "bad", "type": "CASH", "value": 100, "usesPerCoupon": 101,
				"validFrom": now.Format(time.RFC3339), "validTo": now.Add(time.Hour).Format(time.RFC3339), "totalQuantity": 1}}, nil)
		if len(codes) != 1 || codes[0] != "BAD_USER_INPUT" {
			t.Fatalf("usesPerCoupon 101: %v", codes)
		}
	})
}

// Time rules over GraphQL: the campaign shows them as given; a window with
// from == to, a malformed time, a weekday twice or no days are BAD_USER_INPUT,
// an unknown weekday fails the schema's enum (GRAPHQL_VALIDATION_FAILED), and
// nothing is written.
func TestTimeRulesOverGraphQL(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		a := newAPI(t, db, graph.Options{})
		now := time.Now().UTC()
		in := func(extra map[string]any) map[string]any {
			m := map[string]any{"name": "lunch", "type": "CASH", "value": 100, "totalQuantity": 10,
				"validFrom": now.Format(time.RFC3339), "validTo": now.Add(24 * time.Hour).Format(time.RFC3339)}
			for k, v := range extra {
				m[k] = v
			}
			return map[string]any{"in": m}
		}
		const create = `mutation($in: CreateCampaignInput!) { createCampaign(input: $in) {
			validDaysAfterIssue weekdays dailyWindow { from to } } }`
		var out struct {
			CreateCampaign struct {
				ValidDaysAfterIssue int64
				Weekdays            []string
				DailyWindow         *struct{ From, To string }
			}
		}
		a.mustDo(t, a.admin, create, in(map[string]any{"validDaysAfterIssue": 7, "weekdays": []string{"FRIDAY", "MONDAY"},
			"dailyWindow": map[string]any{"from": "22:00", "to": "02:30"}}), &out)
		c := out.CreateCampaign
		if c.ValidDaysAfterIssue != 7 || strings.Join(c.Weekdays, ",") != "MONDAY,FRIDAY" || c.DailyWindow == nil ||
			c.DailyWindow.From != "22:00" || c.DailyWindow.To != "02:30" {
			t.Fatalf("campaign %+v", c)
		}
		var n int64
		must(t, db.Model(&models.Campaign{}).Count(&n).Error)
		for name, extra := range map[string]map[string]any{
			"unknown weekday":  {"weekdays": []string{"FUNDAY"}},
			"from == to":       {"dailyWindow": map[string]any{"from": "10:00", "to": "10:00"}},
			"malformed time":   {"dailyWindow": map[string]any{"from": "9:00", "to": "10:00"}},
			"no days of issue": {"validDaysAfterIssue": 0},
			"a weekday twice":  {"weekdays": []string{"MONDAY", "MONDAY"}},
		} {
			codes := a.do(t, a.admin, create, in(extra), nil)
			if len(codes) != 1 || (codes[0] != "BAD_USER_INPUT" && codes[0] != "GRAPHQL_VALIDATION_FAILED") {
				t.Errorf("%s: %v", name, codes)
			}
			if name != "unknown weekday" && codes[0] != "BAD_USER_INPUT" {
				t.Errorf("%s: %v, want BAD_USER_INPUT", name, codes)
			}
		}
		var after int64
		must(t, db.Model(&models.Campaign{}).Count(&after).Error)
		if after != n {
			t.Fatal("a refused campaign was written")
		}
	})
}

// An unknown weekday never reaches a resolver: the schema's Weekday enum
// refuses it while the request is validated, before anything runs. The
// client gets GRAPHQL_VALIDATION_FAILED, and the message names the input
// field (weekdays, with the position in the list) and the value, whether the
// value came in a variable or in the query text; nothing is written.
func TestUnknownWeekdayNamesTheField(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		a := newAPI(t, db, graph.Options{})
		now := time.Now().UTC()
		from, to := now.Format(time.RFC3339), now.Add(24*time.Hour).Format(time.RFC3339)
		for _, tt := range []struct {
			name, field string
			query       string
			vars        map[string]any
		}{
			{"in a variable", "$in.weekdays[1]: ", `mutation($in: CreateCampaignInput!) { createCampaign(input: $in) { id } }`,
				map[string]any{"in": map[string]any{"name": "lunch", "type": "CASH", "value": 100, "totalQuantity": 10,
					"validFrom": from, "validTo": to, "weekdays": []string{"MONDAY", "FUNDAY"}}}},
			{"in the query", "input.weekdays[1]: ", fmt.Sprintf(`mutation { createCampaign(input: {name: "lunch", type: CASH, value: 100, totalQuantity: 10,
				validFrom: %q, validTo: %q, weekdays: [MONDAY, FUNDAY]}) { id } }`, from, to), nil},
		} {
			t.Run(tt.name, func(t *testing.T) {
				body, _ := json.Marshal(map[string]any{"query": tt.query, "variables": tt.vars})
				r := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(string(body)))
				r.Header.Set("Content-Type", "application/json")
				r.Header.Set("Authorization", "Bearer "+a.admin)
				w := httptest.NewRecorder()
				a.h.ServeHTTP(w, r)
				var resp struct {
					Data   map[string]any
					Errors []struct {
						Message    string
						Extensions map[string]any
					}
				}
				must(t, json.Unmarshal(w.Body.Bytes(), &resp))
				if len(resp.Errors) != 1 || resp.Errors[0].Extensions["code"] != "GRAPHQL_VALIDATION_FAILED" || resp.Data != nil {
					t.Fatalf("HTTP %d %s, want one GRAPHQL_VALIDATION_FAILED and no data", w.Code, w.Body.String())
				}
				msg := resp.Errors[0].Message
				if !strings.HasPrefix(msg, tt.field) || !strings.Contains(msg, "FUNDAY") {
					t.Fatalf("message %q does not name the field weekdays and the value FUNDAY: %s", msg, w.Body.String())
				}
			})
		}
		var n int64
		must(t, db.Model(&models.Campaign{}).Where("name = 'lunch'").Count(&n).Error)
		if n != 0 {
			t.Fatal("a campaign with an unknown weekday was written")
		}
	})
}
