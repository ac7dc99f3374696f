package graph_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
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
// are not, and this process's CPU per redemption (cpu-ns/op, without
// PostgreSQL's). The request bodies are built with the timer stopped, so
// what is counted is the handler's and the recorder's. The figures of
// docs/PERFORMANCE.md come from bench/.
//
//	TEST_DATABASE_URL=... go test -run '^$' -bench RedeemCoupon -benchmem ./graph
func BenchmarkRedeemCoupon(b *testing.B) {
	r := newRedeemBench(b)
	var bodies []string
	n := 0
	var cpu time.Duration // this process's CPU while the timer runs
	mark := processCPU()
	for b.Loop() {
		if len(bodies) == 0 {
			b.StopTimer()
			cpu += processCPU() - mark
			bodies = r.bodies(b, services.MaxCodesReturned)
			mark = processCPU()
			b.StartTimer()
		}
		n++
		r.redeem(b, bodies[0])
		bodies = bodies[1:]
	}
	cpu += processCPU() - mark
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(n), "cpu-ns/op")
}

// BenchmarkRedeemCouponParallel sends the same redemptions from 16
// goroutines per GOMAXPROCS at once, so the handler is measured busy, as at
// the knee, rather than waking for every request. Run it with -cpu 1 for the
// benchmark's server (GOMAXPROCS at half the cores).
func BenchmarkRedeemCouponParallel(b *testing.B) {
	r := newRedeemBench(b)
	bodies := r.bodies(b, b.N)
	var next atomic.Int64
	b.SetParallelism(16)
	b.ResetTimer()
	mark := processCPU()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r.redeem(b, bodies[next.Add(1)-1])
		}
	})
	b.ReportMetric(float64((processCPU()-mark).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// redeemBench is a merchant with a store, a clerk and a campaign to redeem
// at, behind the real handler.
type redeemBench struct {
	svc     *services.Services
	h       http.Handler
	admin   services.Actor
	clerk   string
	storeID string
	camp    int64
	n       int
}

func newRedeemBench(b *testing.B) *redeemBench {
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
	return &redeemBench{svc: svc, h: graph.NewHandler(svc, graph.Options{}), admin: admin, clerk: clerk,
		storeID: strconv.FormatInt(st.ID, 10), camp: camp.ID}
}

// bodies issues n new codes and returns a redemption request body for each.
func (r *redeemBench) bodies(b *testing.B, n int) []string {
	out := make([]string, 0, n)
	for len(out) < n {
		res, err := r.svc.Campaigns.IssueCoupons(context.Background(), r.admin, services.IssueInput{CampaignID: r.camp,
			Count: int64(min(n-len(out), services.MaxCodesReturned))})
		must(b, err)
		for _, code := range res.Codes {
			r.n++
			body, err := json.Marshal(map[string]any{"query": benchRedeem, "variables": map[string]any{"in": map[string]any{
				"code": code, "storeId": r.storeID, "requestId": "bench-" + strconv.Itoa(r.n), "orderAmount": 5000}}})
			must(b, err)
			out = append(out, string(body))
		}
	}
	return out
}

// redeem sends one redemption and fails the benchmark unless it succeeded.
func (r *redeemBench) redeem(b *testing.B, body string) {
	req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+r.clerk)
	w := httptest.NewRecorder()
	r.h.ServeHTTP(w, req)
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"SUCCEEDED"`) {
		b.Errorf("redemption: HTTP %d %s", w.Code, w.Body.String())
	}
}

// processCPU is the user and system CPU this process has used so far: the
// handler's own, garbage collection included, without PostgreSQL's, which
// runs in its own processes.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
