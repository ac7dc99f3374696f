package load

import "testing"

func TestClassify(t *testing.T) {
	tests := []struct {
		name   string
		kind   string
		status int
		body   string
		want   Outcome
		result string
	}{
		{"success", "redeem", 200, `{"data":{"redeemCoupon":{"redeemNo":"RD1","status":"SUCCEEDED"}}}`, OK, "SUCCEEDED"},
		{"rejected", "redeem", 200, `{"data":{"redeemCoupon":{"redeemNo":"RD1","status":"REJECTED","rejectReason":"COUPON_NOT_AVAILABLE"}}}`, Fail, "REJECTED:COUPON_NOT_AVAILABLE"},
		{"in flight", "redeem", 200, `{"data":{"redeemCoupon":{"redeemNo":"RD1","status":"PROCESSING"}}}`, Unknown, "PROCESSING"},
		{"internal", "redeem", 200, `{"errors":[{"message":"x","extensions":{"code":"INTERNAL"}}],"data":null}`, Unknown, "INTERNAL"},
		{"refused before reading", "redeem", 503, `{"errors":[{"message":"busy","extensions":{"code":"OVERLOADED"}}]}`, Fail, "OVERLOADED"},
		{"token not checkable", "redeem", 503, `{"errors":[{"message":"retry","extensions":{"code":"UNAVAILABLE"}}]}`, Fail, "UNAVAILABLE"},
		{"other 5xx", "redeem", 502, `bad gateway`, Unknown, "http:502"},
		{"ping", "ping", 200, `{"data":{"__typename":"Query"}}`, OK, "PONG"},
		{"ping refused", "ping", 503, `{"errors":[{"message":"busy","extensions":{"code":"OVERLOADED"}}]}`, Fail, "http:503"},
		{"order taken", "multi", 200, `{"data":{"redeemCoupons":{"status":"SUCCEEDED","redemptions":[{"redeemNo":"RD1"},{"redeemNo":"RD2"}],"reasons":[]}}}`, OK, "SUCCEEDED"},
		{"order rejected", "multi", 200, `{"data":{"redeemCoupons":{"status":"REJECTED","redemptions":[],"reasons":[{"rejectReason":null},{"rejectReason":"COUPON_NOT_AVAILABLE"}]}}}`, Fail, "REJECTED:COUPON_NOT_AVAILABLE"},
		{"rate limited", "redeem", 200, `{"errors":[{"message":"slow down","extensions":{"code":"RATE_LIMITED"}}],"data":null}`, Fail, "RATE_LIMITED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Record{Op: Op{Kind: tt.kind}}
			Classify(r, tt.status, []byte(tt.body))
			if r.Outcome != tt.want || r.Result != tt.result {
				t.Fatalf("got %s %s, want %s %s", r.Outcome, r.Result, tt.want, tt.result)
			}
			if tt.name == "order taken" && (len(r.GotRedeemNos) != 2 || r.GotRedeemNos[1] != "RD2") {
				t.Fatalf("order's redemption numbers %v", r.GotRedeemNos)
			}
		})
	}
}

func TestNearestRank(t *testing.T) {
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	tests := []struct {
		name   string
		sorted []int
		p      float64
		want   int
	}{
		{"one value", []int{7}, 0.99, 7},
		{"p99 of 100", hundred, 0.99, 99},
		{"p50 of 100", hundred, 0.5, 50},
		{"max", hundred, 1, 100},
		{"p99 of 10 is the largest", hundred[:10], 0.99, 10},
		{"small p is the smallest", hundred, 0.001, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NearestRank(tt.sorted, tt.p); got != tt.want {
				t.Fatalf("NearestRank(%v, %v) = %d, want %d", len(tt.sorted), tt.p, got, tt.want)
			}
		})
	}
}
