package graph_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"coupond/graph"
	"coupond/internal/testdb"
	"coupond/services"
)

// FuzzHandler: no body, however malformed, makes the API answer with a server
// error or panic.
func FuzzHandler(f *testing.F) {
	seeds := []string{
		gqlBody(`{ viewer { role } }`, nil),
		gqlBody(redeemCoupon, map[string]any{"in": map[string]any{"code": services.NewCouponCode(), "storeId": "1", "requestId": "f", "orderAmount": 1}}),
		`[{"query":"{viewer{role}}"}]`, `{"query": 1}`, `{"query":"{","variables":[]}`, `null`, `"`, `{"query":"query($a:Int){stores(first:$a){edges{cursor}}}","variables":{"a":"x"}}`,
	}
	for _, s := range seeds {
		f.Add(s)
	}
	db := testdb.SQLite(f)
	a := newAPI(&testing.T{}, db, graph.Options{})
	f.Fuzz(func(t *testing.T, body string) {
		r := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer "+a.admin)
		w := httptest.NewRecorder()
		a.h.ServeHTTP(w, r)
		if w.Code >= 500 {
			t.Fatalf("status %d for %q: %s", w.Code, body, w.Body.String())
		}
	})
}
