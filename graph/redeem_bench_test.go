package graph_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"coupond/graph"
	"coupond/internal/testdb"
	"coupond/models"
	"coupond/services"
)

// benchRedeem is the redemption bench/load sends at the knee.
const benchRedeem = `mutation($in: RedeemCouponInput!) { redeemCoupon(input: $in) { redeemNo status rejectReason } }`

// BenchmarkRedeemCoupon sends the benchmark's one-shot redemption through
// the real GraphQL handler, one request at a time, on the PostgreSQL named by
// TEST_DATABASE_URL (the statement path of the knee). Its time includes
// PostgreSQL's; what it is for is the handler's allocations per redemption,
// which are the same from run to run where CPU seconds on a shared machine
// are not. The request bodies are built with the timer stopped, so what is
// counted is the handler's and the recorder's. The figures of
// docs/PERFORMANCE.md come from bench/.
//
//	TEST_DATABASE_URL=... go test -run '^$' -bench RedeemCoupon -benchmem ./graph
func BenchmarkRedeemCoupon(b *testing.B) {
	db := testdb.Postgres(b)
	ctx := context.Background()
	// As serve runs it: a token is checked once a minute, not per request.
	svc := services.New(db, services.Options{TokenCacheTTL: time.Minute})
	m, err := svc.Merchants.Create(ctx, "acme", "Acme", "")
	must(b, err)
	admin := services.SystemActor(m.ID)
	st, err := svc.Stores.Create(ctx, admin, services.CreateStoreInput{Code: "SH01", Name: "Shanghai 1"})
	must(b, err)
	clerk, _, err := svc.Tokens.Create(ctx, services.CreateTokenInput{MerchantID: m.ID, Role: models.RoleClerk, StoreCodes: []string{"SH01"}})
	must(b, err)
	now := time.Now()
	camp, err := svc.Campaigns.Create(ctx, admin, services.CreateCampaignInput{Name: "bench", Type: models.CampaignCash,
		Value: 100, ValidFrom: now.Add(-time.Hour), ValidTo: now.Add(24 * time.Hour), TotalQuantity: 100_000_000})
	must(b, err)
	h := graph.NewHandler(svc, graph.Options{})
	storeID := strconv.FormatInt(st.ID, 10)
	var bodies []string
	n := 0
	for b.Loop() {
		if len(bodies) == 0 {
			b.StopTimer()
			res, err := svc.Campaigns.IssueCoupons(ctx, admin, services.IssueInput{CampaignID: camp.ID, Count: services.MaxCodesReturned})
			must(b, err)
			for i, code := range res.Codes {
				body, err := json.Marshal(map[string]any{"query": benchRedeem, "variables": map[string]any{"in": map[string]any{
					"code": code, "storeId": storeID, "requestId": "bench-" + strconv.Itoa(n+i), "orderAmount": 5000}}})
				must(b, err)
				bodies = append(bodies, string(body))
			}
			b.StartTimer()
		}
		n++
		r := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(bodies[0]))
		bodies = bodies[1:]
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer "+clerk)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"SUCCEEDED"`) {
			b.Fatalf("redemption %d: HTTP %d %s", n, w.Code, w.Body.String())
		}
	}
}
