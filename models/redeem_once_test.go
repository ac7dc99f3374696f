package models

import (
	"reflect"
	"regexp"
	"strconv"
	"testing"
)

// The parameter names printed with the statement must match its placeholders
// one for one, or the benchmark's own-SQL baseline would bind the wrong values.
func TestRedeemOnceStatementNamesEveryParameter(t *testing.T) {
	sql, names := RedeemOnceStatement()
	highest := 0
	for _, m := range regexp.MustCompile(`\$(\d+)`).FindAllStringSubmatch(sql, -1) {
		n, _ := strconv.Atoi(m[1])
		highest = max(highest, n)
	}
	if highest != len(names) {
		t.Fatalf("statement uses $1..$%d, names given for %d: %v", highest, len(names), names)
	}
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] || n == "" {
			t.Fatalf("parameter name %q empty or repeated in %v", n, names)
		}
		seen[n] = true
	}
}

// A batch's calls for one coupon go into successive statements, in their
// order, so each sees the one before it; calls for different coupons share
// the first statement.
func TestCouponRounds(t *testing.T) {
	call := func(merchant int64, code string) *OnceCall {
		return &OnceCall{Args: ReserveArgs{MerchantID: merchant, Code: code}}
	}
	tests := []struct {
		name string
		give []*OnceCall
		want [][]int
	}{
		{"none", nil, nil},
		{"all different", []*OnceCall{call(1, "A"), call(1, "B"), call(2, "A")}, [][]int{{0, 1, 2}}},
		{"one coupon thrice", []*OnceCall{call(1, "A"), call(1, "B"), call(1, "A"), call(1, "A")}, [][]int{{0, 1}, {2}, {3}}},
		{"two coupons twice", []*OnceCall{call(1, "A"), call(1, "A"), call(1, "B"), call(1, "B"), call(1, "C")}, [][]int{{0, 2, 4}, {1, 3}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := couponRounds(tt.give); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("couponRounds = %v, want %v", got, tt.want)
			}
		})
	}
}

// The one-request arguments, the batch's arrays and the printed names all
// follow redeemColumns, one for one.
func TestRedeemValuesFollowTheColumns(t *testing.T) {
	call := &OnceCall{Args: ReserveArgs{MerchantID: 1, Code: "A"}, Flow: &RedemptionFlow{}}
	n := len(redeemColumns)
	if got := len(redeemOnceArgs(call.Args, call.Flow, "x")); got != n {
		t.Fatalf("redeemOnceArgs gives %d values for %d columns", got, n)
	}
	if got := len(redeemBatchArgs([]*OnceCall{call}, []int{0})); got != n {
		t.Fatalf("redeemBatchArgs gives %d arrays for %d columns", got, n)
	}
	if got := len(redeemOnceParams); got != n {
		t.Fatalf("%d parameter names for %d columns", got, n)
	}
}
