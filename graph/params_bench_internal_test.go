package graph

import (
	"strings"
	"testing"
)

// BenchmarkParamsFromBody decodes the body of the benchmark's redemption,
// as every POST /graphql does before gqlgen sees it.
func BenchmarkParamsFromBody(b *testing.B) {
	body := `{"query":"mutation($in: RedeemCouponInput!) { redeemCoupon(input: $in) { redeemNo status rejectReason } }","variables":{"in":{"code":"K7M2-Q9XD-4HTP","storeId":"12","requestId":"bench-000123456","orderAmount":5000}}}`
	b.ReportAllocs()
	for b.Loop() {
		if _, bad := paramsFromBody(strings.NewReader(body)); bad != nil {
			b.Fatal(bad)
		}
	}
}
