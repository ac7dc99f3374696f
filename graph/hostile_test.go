package graph_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"coupond/graph"
	"coupond/internal/testdb"
	"coupond/models"
)

// hostile is one request an attacker or a broken client might send.
type hostile struct {
	name        string
	method      string // default POST
	contentType string // default application/json
	auth        string // "admin", "clerk", "finance", "none" or a raw header value
	body        string // raw body for POST, query string for GET
	wantStatus  int    // default 200: with no Accept header the answer is application/json, where errors before execution ride in a 200
	wantCode    string
}

func gqlBody(query string, vars map[string]any) string {
	b, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	return string(b)
}

func nested(depth int) string {
	q := "redeemNo"
	for i := 0; i < depth; i++ {
		if i%2 == 0 {
			q = "coupon { redemptions { " + q + " } }"
		}
	}
	return `{ redemptions(first: 1) { edges { node { ` + q + ` } } } }`
}

// TestHostileRequests sends requests an attacker or a broken client might, and
// asserts for each the exact code, no server error and no write to any table
// of the ledger.
func TestHostileRequests(t *testing.T) {
	db := testdb.SQLite(t)
	a := newAPI(t, db, graph.Options{})
	storeID, codes := a.setup(2)
	clerk := a.clerk("SH01")
	code := codes[0]
	redeem := func(code, req string, amount any) string {
		return gqlBody(redeemCoupon, map[string]any{"in": map[string]any{"code": code, "storeId": storeID, "requestId": req, "orderAmount": amount}})
	}
	aliases := "{ " + strings.Repeat("a: viewer { role } ", 1)
	for i := 0; i < 11; i++ {
		aliases += "v" + string(rune('a'+i)) + ": viewer { role } "
	}
	aliases += "}"
	tests := []hostile{
		{name: "no token", auth: "none", body: gqlBody(`{ viewer { role } }`, nil), wantCode: "UNAUTHENTICATED"},
		{name: "bearer without token", auth: "Bearer", body: gqlBody(`{ viewer { role } }`, nil), wantCode: "UNAUTHENTICATED"},
		{name: "injection in token", auth: "Bearer cpd_' OR 1=1 --", body: gqlBody(`{ viewer { role } }`, nil), wantCode: "UNAUTHENTICATED"},
		{name: "basic auth", auth: "Basic YWRtaW46YWRtaW4=", body: gqlBody(`{ viewer { role } }`, nil), wantCode: "UNAUTHENTICATED"},
		{name: "too deep", auth: "admin", body: gqlBody(nested(16), nil), wantCode: "QUERY_TOO_COMPLEX"},
		{name: "too many aliases", auth: "admin", body: gqlBody(aliases, nil), wantCode: "QUERY_TOO_COMPLEX"},
		{name: "two mutations in one operation", auth: "clerk", body: gqlBody(`mutation {
			a: redeemCoupon(input: {code: "`+code+`", storeId: "`+storeID+`", requestId: "m1", orderAmount: 5000}) { status }
			b: redeemCoupon(input: {code: "`+code+`", storeId: "`+storeID+`", requestId: "m2", orderAmount: 5000}) { status } }`, nil),
			wantCode: "QUERY_TOO_COMPLEX"},
		{name: "nested lists past complexity", auth: "admin", body: gqlBody(`{ coupons(first: 100) { edges { node {
			redemptions { coupon { redemptions { coupon { redemptions { redeemNo } } } } } } } } }`, nil), wantCode: "COMPLEXITY_LIMIT_EXCEEDED"},
		{name: "page size zero", auth: "admin", body: gqlBody(`{ coupons(first: 0) { edges { cursor } } }`, nil), wantCode: "BAD_USER_INPUT"},
		{name: "page size 101", auth: "admin", body: gqlBody(`{ coupons(first: 101) { edges { cursor } } }`, nil), wantCode: "BAD_USER_INPUT"},
		{name: "negative page size", auth: "admin", body: gqlBody(`{ stores(first: -5) { edges { cursor } } }`, nil), wantCode: "BAD_USER_INPUT"},
		{name: "forged cursor", auth: "admin", body: gqlBody(`{ coupons(after: "aWQ6LTE") { edges { cursor } } }`, nil), wantCode: "BAD_USER_INPUT"},
		{name: "token flood", auth: "admin", body: gqlBody("{ viewer { "+strings.Repeat("role ", 4000)+"} }", nil), wantCode: "GRAPHQL_PARSE_FAILED"},
		{name: "body over the limit", auth: "admin", body: gqlBody(`{ viewer { role } }`, map[string]any{"pad": strings.Repeat("x", 2<<20)}), wantStatus: 413, wantCode: "BAD_USER_INPUT"},
		{name: "batch as JSON array", auth: "admin", body: "[" + gqlBody(`{ viewer { role } }`, nil) + "]", wantStatus: 400, wantCode: "BAD_USER_INPUT"},
		{name: "mutation over GET", method: http.MethodGet, auth: "clerk", body: "query=" + strings.ReplaceAll(`mutation { cancelRedemption(input: {redeemNo: "RD1"}) { status } }`, " ", "%20"), wantStatus: 405},
		{name: "text/plain body", contentType: "text/plain", auth: "admin", body: gqlBody(`{ viewer { role } }`, nil), wantStatus: 415, wantCode: "BAD_USER_INPUT"},
		{name: "form body", contentType: "application/x-www-form-urlencoded", auth: "admin", body: "query={viewer{role}}", wantStatus: 415, wantCode: "BAD_USER_INPUT"},
		{name: "not JSON at all", auth: "admin", body: "{query: nope", wantStatus: 400},
		{name: "misspelt field gets no suggestion", auth: "admin", body: gqlBody(`{ coupns { edges { cursor } } }`, nil), wantCode: "GRAPHQL_VALIDATION_FAILED"},
		{name: "introspection", auth: "admin", body: gqlBody(`{ __schema { types { name } } }`, nil), wantCode: "GRAPHQL_VALIDATION_FAILED"},
		{name: "introspection of a type", auth: "admin", body: gqlBody(`{ __type(name: "Coupon") { fields { name } } }`, nil), wantCode: "GRAPHQL_VALIDATION_FAILED"},
		{name: "SQL in a code", auth: "clerk", body: redeem("' OR 1=1 --", "r1", 5000), wantCode: "BAD_USER_INPUT"},
		{name: "NUL in a code", auth: "clerk", body: redeem(code[:5]+"\x00"+code[5:], "r2", 5000), wantCode: "BAD_USER_INPUT"},
		{name: "invalid UTF-8 in a code", auth: "clerk", body: strings.Replace(redeem(code, "r3", 5000), code[:4], "\xff\xfe", 1), wantCode: "BAD_USER_INPUT"},
		{name: "Cyrillic homoglyph in a code", auth: "clerk", body: redeem("А"+code[1:], "r4", 5000), wantCode: "BAD_USER_INPUT"},
		{name: "full-width code", auth: "clerk", body: redeem("０１２３４５６７８９ＡＢＣ", "r5", 5000), wantCode: "BAD_USER_INPUT"},
		{name: "wrong check symbol", auth: "clerk", body: redeem(code[:12]+string("0123456789ABCDEFGHJKMNPQRSTVWXYZ"[(strings.IndexByte("0123456789ABCDEFGHJKMNPQRSTVWXYZ", code[12])+1)%32]), "r6", 5000), wantCode: "BAD_USER_INPUT"},
		{name: "request id too long", auth: "clerk", body: redeem(code, strings.Repeat("x", 65), 5000), wantCode: "BAD_USER_INPUT"},
		{name: "NUL in request id", auth: "clerk", body: redeem(code, "req\x00id", 5000), wantCode: "BAD_USER_INPUT"},
		{name: "unicode request id", auth: "clerk", body: redeem(code, "请求-1", 5000), wantCode: "BAD_USER_INPUT"},
		{name: "empty request id", auth: "clerk", body: redeem(code, "", 5000), wantCode: "BAD_USER_INPUT"},
		{name: "negative amount", auth: "clerk", body: redeem(code, "r7", -100), wantCode: "BAD_USER_INPUT"},
		{name: "amount that would overflow", auth: "clerk", body: redeem(code, "r8", int64(1)<<62), wantCode: "BAD_USER_INPUT"},
		{name: "amount as a string", auth: "clerk", body: redeem(code, "r9", "5000"), wantCode: "BAD_USER_INPUT"},
		{name: "amount as a float", auth: "clerk", body: redeem(code, "r10", 1e30), wantCode: "GRAPHQL_VALIDATION_FAILED"},
		{name: "store id that is not an id", auth: "clerk", body: gqlBody(redeemCoupon, map[string]any{"in": map[string]any{"code": code, "storeId": "1; DROP TABLE coupons", "requestId": "r11", "orderAmount": 1}}), wantCode: "BAD_USER_INPUT"},
		{name: "clerk at a store not its own", auth: "clerk", body: gqlBody(redeemCoupon, map[string]any{"in": map[string]any{"code": code, "storeId": "999", "requestId": "r12", "orderAmount": 1}}), wantCode: "FORBIDDEN"},
		{name: "admin at a store of nobody", auth: "admin", body: gqlBody(redeemCoupon, map[string]any{"in": map[string]any{"code": code, "storeId": "999", "requestId": "r13", "orderAmount": 1}}), wantCode: "NOT_FOUND"},
		{name: "finance creating a store", auth: "finance", body: gqlBody(createStore, map[string]any{"in": map[string]any{"code": "EV1", "name": "evil"}}), wantCode: "FORBIDDEN"},
		{name: "control characters in a name", auth: "admin", body: gqlBody(createStore, map[string]any{"in": map[string]any{"code": "EV2", "name": "evil\x1b[31m"}}), wantCode: "BAD_USER_INPUT"},
		{name: "huge name", auth: "admin", body: gqlBody(createStore, map[string]any{"in": map[string]any{"code": "EV3", "name": strings.Repeat("名", 101)}}), wantCode: "BAD_USER_INPUT"},
		{name: "store code with a slash", auth: "admin", body: gqlBody(createStore, map[string]any{"in": map[string]any{"code": "../etc", "name": "x"}}), wantCode: "BAD_USER_INPUT"},
		{name: "campaign ending before it starts", auth: "admin", body: gqlBody(createCampaign, map[string]any{"in": map[string]any{"name": "x", "type": "CASH", "value": 1, "validFrom": "2027-01-02T00:00:00Z", "validTo": "2027-01-01T00:00:00Z", "totalQuantity": 1}}), wantCode: "BAD_USER_INPUT"},
		{name: "time that is not a time", auth: "admin", body: gqlBody(createCampaign, map[string]any{"in": map[string]any{"name": "x", "type": "CASH", "value": 1, "validFrom": "yesterday", "validTo": "2027-01-01T00:00:00Z", "totalQuantity": 1}}), wantCode: "BAD_USER_INPUT"},
		{name: "enum value that does not exist", auth: "admin", body: gqlBody(createCampaign, map[string]any{"in": map[string]any{"name": "x", "type": "FREE_MONEY", "value": 1, "validFrom": "2026-01-01T00:00:00Z", "validTo": "2027-01-01T00:00:00Z", "totalQuantity": 1}}), wantCode: "GRAPHQL_VALIDATION_FAILED"},
		{name: "discount of 100 percent", auth: "admin", body: gqlBody(createCampaign, map[string]any{"in": map[string]any{"name": "x", "type": "DISCOUNT", "value": 100, "validFrom": "2026-01-01T00:00:00Z", "validTo": "2027-01-01T00:00:00Z", "totalQuantity": 1}}), wantCode: "BAD_USER_INPUT"},
		{name: "issuing a million and one", auth: "admin", body: gqlBody(issueCoupons, map[string]any{"in": map[string]any{"campaignId": "1", "count": 1_000_001}}), wantCode: "BAD_USER_INPUT"},
	}
	tables := []any{&models.Coupon{}, &models.RedemptionFlow{}, &models.RefundFlow{}, &models.CouponTransition{},
		&models.Order{}, &models.Store{}, &models.Campaign{}}
	counts := func() []int64 {
		out := make([]int64, len(tables))
		for i, m := range tables {
			must(t, db.Model(m).Count(&out[i]).Error)
		}
		return out
	}
	if len(tests) < 30 {
		t.Fatalf("only %d hostile requests", len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := counts()
			method := tt.method
			if method == "" {
				method = http.MethodPost
			}
			var r *http.Request
			if method == http.MethodGet {
				r = httptest.NewRequest(method, "/graphql?"+tt.body, nil)
			} else {
				r = httptest.NewRequest(method, "/graphql", strings.NewReader(tt.body))
				ct := tt.contentType
				if ct == "" {
					ct = "application/json"
				}
				r.Header.Set("Content-Type", ct)
			}
			switch tt.auth {
			case "admin":
				r.Header.Set("Authorization", "Bearer "+a.admin)
			case "clerk":
				r.Header.Set("Authorization", "Bearer "+clerk)
			case "finance":
				r.Header.Set("Authorization", "Bearer "+a.finance)
			case "none":
			default:
				r.Header.Set("Authorization", tt.auth)
			}
			w := httptest.NewRecorder()
			a.h.ServeHTTP(w, r)
			want := tt.wantStatus
			if want == 0 {
				want = http.StatusOK
			}
			if w.Code != want {
				t.Fatalf("status %d, want %d: %s", w.Code, want, w.Body.String())
			}
			if tt.wantCode != "" {
				var resp struct {
					Errors []struct {
						Message    string
						Extensions map[string]any
					}
				}
				if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
					t.Fatalf("body %q: %v", w.Body.String(), err)
				}
				if len(resp.Errors) == 0 || resp.Errors[0].Extensions["code"] != tt.wantCode {
					t.Fatalf("errors %+v, want code %s", resp.Errors, tt.wantCode)
				}
				for _, e := range resp.Errors {
					for _, leak := range []string{"Did you mean", "sql", "SQL", "gorm", "runtime", "coupond/"} {
						if strings.Contains(e.Message, leak) {
							t.Fatalf("message leaks %q: %s", leak, e.Message)
						}
					}
				}
			}
			if after := counts(); !equal(before, after) {
				t.Fatalf("rows before %v, after %v: a hostile request wrote", before, after)
			}
		})
	}
}

func equal(a, b []int64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}
