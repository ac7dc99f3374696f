package graph_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/graph"
	"coupond/internal/testdb"
	"coupond/models"
)

const (
	redeemCoupons = `mutation($in: RedeemCouponsInput!) { redeemCoupons(input: $in) {
		status requestId discountAmount amountToPay orderRef
		redemptions { redeemNo requestId status discountAmount orderRef coupon { code status } }
		reasons { code rejectReason reasons } } }`
	quoteCoupons = `query($codes: [String!]!, $s: ID!, $amount: Int!, $c: String) {
		quoteCoupons(codes: $codes, storeId: $s, orderAmount: $amount, customerRef: $c) {
			eligible discountAmount amountToPay quotes { eligible rejectReason reasons discountAmount coupon { code } } } }`
	refundRedemptions = `mutation($in: RefundRedemptionsInput!) { refundRedemptions(input: $in) {
		refundNo requestId amount redemption { redeemNo coupon { status } } } }`
)

type redeemCouponsPayload struct {
	Status         string
	RequestID      string
	DiscountAmount int64
	AmountToPay    int64
	OrderRef       *string
	Redemptions    []redemption
	Reasons        []struct {
		Code         string
		RejectReason *string
		Reasons      []string
	}
}

// stackableCodes creates a stackable campaign of ten yuan off and issues n
// of its codes.
func (a *api) stackableCodes(n int) []string {
	a.t.Helper()
	var camp struct{ CreateCampaign struct{ ID string } }
	now := time.Now().UTC()
	a.mustDo(a.t, a.admin, `mutation($in: CreateCampaignInput!) { createCampaign(input: $in) { id stackable } }`,
		map[string]any{"in": map[string]any{"name": "Stack", "type": "CASH", "value": 1000, "stackable": true,
			"validFrom": now.Add(-time.Hour).Format(time.RFC3339), "validTo": now.Add(24 * time.Hour).Format(time.RFC3339),
			"totalQuantity": 100}}, &camp)
	var iss struct{ IssueCoupons struct{ Codes []string } }
	a.mustDo(a.t, a.admin, issueCoupons, map[string]any{"in": map[string]any{"campaignId": camp.CreateCampaign.ID, "count": n}}, &iss)
	return iss.IssueCoupons.Codes
}

func ordersVars(storeID, requestID string, amount int, codes ...string) map[string]any {
	if codes == nil {
		codes = []string{}
	}
	return map[string]any{"in": map[string]any{"codes": codes, "storeId": storeID, "requestId": requestID, "orderAmount": amount}}
}

// A client redeeming several codes for one order over the real handler: the
// quote shows the stacked discounts and NOT_STACKABLE, a rejected order
// returns every code's reasons and takes nothing, a good one takes all with
// one order reference, a replay returns it, and the refunds go together.
// Bad input is BAD_USER_INPUT and other parameters under a request id
// IDEMPOTENCY_KEY_REUSED, in extensions.code.
func TestRedeemCouponsOverGraphQL(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		a := newAPI(t, db, graph.Options{})
		store, plain := a.setup(3) // ten off, minimum spend 2000, not stackable
		stack := a.stackableCodes(12)

		var q struct {
			QuoteCoupons struct {
				Eligible       bool
				DiscountAmount int64
				AmountToPay    int64
				Quotes         []struct {
					Eligible       bool
					RejectReason   *string
					Reasons        []string
					DiscountAmount int64
				}
			}
		}
		a.mustDo(t, a.admin, quoteCoupons, map[string]any{"codes": []string{plain[0], stack[0], plain[1]}, "s": store,
			"amount": 2500}, &q)
		if qc := q.QuoteCoupons; qc.Eligible || qc.DiscountAmount != 2000 || qc.AmountToPay != 500 ||
			qc.Quotes[2].RejectReason == nil || *qc.Quotes[2].RejectReason != "NOT_STACKABLE" || qc.Quotes[1].DiscountAmount != 1000 {
			t.Fatalf("quote %+v", qc)
		}

		// The second code is taken: nothing is taken, three reasons.
		var one struct{ RedeemCoupon redemption }
		a.mustDo(t, a.admin, redeemCoupon, redeemVars(stack[1], store, "alone", 5000), &one)
		var rej struct{ RedeemCoupons redeemCouponsPayload }
		a.mustDo(t, a.admin, redeemCoupons, ordersVars(store, "order-1", 5000, stack[0], stack[1], stack[2]), &rej)
		p := rej.RedeemCoupons
		if p.Status != "REJECTED" || len(p.Redemptions) != 0 || len(p.Reasons) != 3 || p.AmountToPay != 5000 {
			t.Fatalf("rejected order %+v", p)
		}
		if p.Reasons[1].RejectReason == nil || *p.Reasons[1].RejectReason != "COUPON_NOT_AVAILABLE" ||
			p.Reasons[0].RejectReason != nil || len(p.Reasons[2].Reasons) != 0 || p.Reasons[0].Code != stack[0] {
			t.Fatalf("reasons %+v", p.Reasons)
		}

		var ok struct{ RedeemCoupons redeemCouponsPayload }
		a.mustDo(t, a.admin, redeemCoupons, ordersVars(store, "order-2", 2500, stack[0], plain[0], stack[2]), &ok)
		p = ok.RedeemCoupons
		if p.Status != "SUCCEEDED" || len(p.Redemptions) != 3 || p.DiscountAmount != 2500 || p.AmountToPay != 0 ||
			p.OrderRef == nil || p.RequestID != "order-2" {
			t.Fatalf("order %+v", p)
		}
		for i, r := range p.Redemptions {
			if r.Status != "SUCCEEDED" || r.Coupon.Status != "REDEEMED" || *r.OrderRef != *p.OrderRef ||
				!strings.HasPrefix(r.RequestID, "order-2#") {
				t.Fatalf("redemption %d: %+v", i, r)
			}
		}
		if got := []int64{p.Redemptions[0].DiscountAmount, p.Redemptions[1].DiscountAmount, p.Redemptions[2].DiscountAmount}; !slices.Equal(got, []int64{1000, 1000, 500}) {
			t.Fatalf("discounts %v, want 1000 1000 500", got)
		}
		var again struct{ RedeemCoupons redeemCouponsPayload }
		a.mustDo(t, a.admin, redeemCoupons, ordersVars(store, "order-2", 2500, stack[0], plain[0], stack[2]), &again)
		if again.RedeemCoupons.Redemptions[2].RedeemNo != p.Redemptions[2].RedeemNo {
			t.Fatalf("replay %+v", again.RedeemCoupons)
		}

		var refunds struct {
			RefundRedemptions []struct {
				RefundNo   string
				Redemption struct{ RedeemNo string }
			}
		}
		nos := []string{p.Redemptions[0].RedeemNo, p.Redemptions[1].RedeemNo, p.Redemptions[2].RedeemNo}
		a.mustDo(t, a.admin, refundRedemptions, map[string]any{"in": map[string]any{"redeemNos": nos, "requestId": "rf-1"}}, &refunds)
		if len(refunds.RefundRedemptions) != 3 || refunds.RefundRedemptions[1].Redemption.RedeemNo != nos[1] {
			t.Fatalf("refunds %+v", refunds)
		}

		tests := []struct {
			name  string
			query string
			vars  map[string]any
			want  string
		}{
			{"eleven codes", redeemCoupons, ordersVars(store, "bad-1", 5000, stack[1:12]...), "BAD_USER_INPUT"},
			{"a code twice", redeemCoupons, ordersVars(store, "bad-2", 5000, stack[3], stack[4], stack[3]), "BAD_USER_INPUT"},
			{"no codes", redeemCoupons, ordersVars(store, "bad-3", 5000), "BAD_USER_INPUT"},
			{"quote a code twice", quoteCoupons, map[string]any{"codes": []string{stack[3], stack[3]}, "s": store, "amount": 100}, "BAD_USER_INPUT"},
			{"malformed code", redeemCoupons, ordersVars(store, "bad-4", 5000, stack[3], "ZZ"), "BAD_USER_INPUT"},
			{"request id reused", redeemCoupons, ordersVars(store, "order-2", 2500, stack[0], plain[0]), "IDEMPOTENCY_KEY_REUSED"},
			{"refund again", refundRedemptions, map[string]any{"in": map[string]any{"redeemNos": nos[:1], "requestId": "rf-2"}}, "INVALID_STATE"},
			{"refund reused", refundRedemptions, map[string]any{"in": map[string]any{"redeemNos": nos[:2], "requestId": "rf-1"}}, "IDEMPOTENCY_KEY_REUSED"},
			{"refund twice", refundRedemptions, map[string]any{"in": map[string]any{"redeemNos": []string{nos[0], nos[0]}, "requestId": "rf-3"}}, "BAD_USER_INPUT"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if got := a.do(t, a.admin, tt.query, tt.vars, nil); len(got) != 1 || got[0] != tt.want {
					t.Fatalf("got %v, want %s", got, tt.want)
				}
			})
		}
		if n := countWhere(t, db, &models.RedemptionOrder{}, "request_id LIKE 'bad-%'"); n != 0 {
			t.Fatalf("%d orders written by bad input", n)
		}
	})
}
