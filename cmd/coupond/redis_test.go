package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"coupond/internal/testredis"
)

// A malformed --redis-url stops serve from starting; an unreachable one does
// not: requests are answered without Redis, which is used once it is up, and
// /metrics counts both.
func TestRedisURL(t *testing.T) {
	err := run(context.Background(), []string{"serve", "--addr", freeAddr(t), "--database-url", t.TempDir() + "/coupond.db",
		"--redis-url", "redis://127.0.0.1:notaport/0"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--redis-url") {
		t.Fatalf("serve with a malformed --redis-url: %v", err)
	}

	srv := testredis.Reserve(t)
	addr, out := startServe(t, t.TempDir()+"/coupond.db", "--redis-url", srv.URL())
	admin, clerk := token(t, out.String(), "ADMIN"), token(t, out.String(), "CLERK")
	data := gql(t, addr, admin, `{ coupons(first: 20, filter: {status: UNUSED}) { edges { node { code } } } }`, nil)
	edges := data["coupons"].(map[string]any)["edges"].([]any)
	stores := gql(t, addr, clerk, `{ viewer { storeIds } }`, nil)["viewer"].(map[string]any)["storeIds"].([]any)
	redeem := func(i int, rid string) {
		t.Helper()
		code := edges[i].(map[string]any)["node"].(map[string]any)["code"]
		red := gql(t, addr, clerk, `mutation($in: RedeemCouponInput!) { redeemCoupon(input: $in) { status } }`,
			map[string]any{"in": map[string]any{"code": code, "storeId": stores[0], "requestId": rid, "orderAmount": 10000}})
		if st := red["redeemCoupon"].(map[string]any)["status"]; st != "SUCCEEDED" {
			t.Fatalf("redeem %s: %v", rid, st)
		}
	}
	redeem(0, "while-down")
	_, metrics, _ := get(t, "http://"+addr+"/metrics", "")
	if metricValue(metrics, "coupond_redis_errors_total") < 1 || metricValue(metrics, "coupond_redis_fallbacks_total") < 1 {
		t.Fatalf("no Redis errors counted while it was down:\n%s", metrics)
	}
	srv.Start()
	// After many failed dials the client tries again about once a second.
	i := 1
	for deadline := time.Now().Add(10 * time.Second); ; i++ {
		redeem(i, fmt.Sprintf("while-up-%d", i))
		_, metrics, _ = get(t, "http://"+addr+"/metrics", "")
		if metricValue(metrics, "coupond_redis_misses_total") >= 1 {
			break
		}
		if time.Now().After(deadline) || i == len(edges)-1 {
			t.Fatalf("Redis not used once up:\n%s", metrics)
		}
		time.Sleep(200 * time.Millisecond)
	}
	redeem(i, fmt.Sprintf("while-up-%d", i))
	_, metrics, _ = get(t, "http://"+addr+"/metrics", "")
	if metricValue(metrics, "coupond_redis_hits_total") != 1 {
		t.Fatalf("a repeated request id was not answered through Redis:\n%s", metrics)
	}
}
