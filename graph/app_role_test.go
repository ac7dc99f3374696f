package graph_test

import (
	"context"
	"testing"

	"gorm.io/gorm"

	"coupond/graph"
	"coupond/internal/testdb"
	"coupond/models"
	"coupond/services"
)

// An APP token (a mini-program back end) may quote, reserve, confirm, cancel
// and redeem (one code or several for one order) at any store of its merchant, each time naming the customer, and
// read one customer's coupons; every other operation is FORBIDDEN.
func TestAppTokenRole(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		a := newAPI(t, db, graph.Options{})
		ctx := context.Background()
		m, err := a.svc.Merchants.ByCode(ctx, "acme")
		must(t, err)
		app, _, err := a.svc.Tokens.Create(ctx, services.CreateTokenInput{MerchantID: m.ID, Role: models.RoleApp})
		must(t, err)
		var st struct {
			CreateStore struct{ ID string } `json:"createStore"`
		}
		a.mustDo(t, a.admin, createStore, map[string]any{"in": map[string]any{"code": "SH01", "name": "Shanghai"}}, &st)
		var other struct {
			CreateStore struct{ ID string } `json:"createStore"`
		}
		a.mustDo(t, a.admin, createStore, map[string]any{"in": map[string]any{"code": "BJ01", "name": "Beijing"}}, &other)
		var camp struct {
			CreateCampaign struct{ ID string } `json:"createCampaign"`
		}
		a.mustDo(t, a.admin, createCampaign, map[string]any{"in": map[string]any{"name": "Ten off", "type": "CASH", "value": 1000,
			"validFrom": "2020-01-01T00:00:00Z", "validTo": "2099-01-01T00:00:00Z", "totalQuantity": 100}}, &camp)
		var issued struct {
			IssueCoupons struct{ Codes []string } `json:"issueCoupons"`
		}
		a.mustDo(t, a.admin, issueCoupons, map[string]any{"in": map[string]any{"campaignId": camp.CreateCampaign.ID, "count": 4,
			"customerRefs": []string{"u1"}}}, &issued)
		a.mustDo(t, a.admin, issueCoupons, map[string]any{"in": map[string]any{"campaignId": camp.CreateCampaign.ID, "count": 1,
			"customerRefs": []string{"u2"}}}, nil)
		codes := issued.IssueCoupons.Codes
		store, otherStore := st.CreateStore.ID, other.CreateStore.ID
		in := func(code, requestID, customer string) map[string]any {
			v := map[string]any{"code": code, "storeId": store, "requestId": requestID, "orderAmount": 5000}
			if customer != "" {
				v["customerRef"] = customer
			}
			return map[string]any{"in": v}
		}
		const wallet = `query($c: String) { coupons(filter: {customerRef: $c}) { edges { node { code status customerRef campaign { name } } } } }`
		const quote = `query($code: String!, $s: ID!, $c: String) { redemptionQuote(code: $code, storeId: $s, orderAmount: 5000, customerRef: $c) {
			eligible discountAmount payAmount coupon { status } } }`

		t.Run("allowed", func(t *testing.T) {
			var w struct {
				Coupons struct {
					Edges []struct {
						Node struct {
							Code, Status, CustomerRef string
							Campaign                  struct{ Name string }
						}
					}
				}
			}
			a.mustDo(t, app, wallet, map[string]any{"c": "u1"}, &w)
			if len(w.Coupons.Edges) != 4 || w.Coupons.Edges[0].Node.CustomerRef != "u1" || w.Coupons.Edges[0].Node.Campaign.Name != "Ten off" {
				t.Fatalf("wallet of u1: %+v", w)
			}
			var q struct {
				RedemptionQuote struct {
					Eligible       bool
					DiscountAmount int64
					PayAmount      int64
				}
			}
			a.mustDo(t, app, quote, map[string]any{"code": codes[0], "s": store, "c": "u1"}, &q)
			if !q.RedemptionQuote.Eligible || q.RedemptionQuote.PayAmount != 4000 {
				t.Fatalf("quote: %+v", q)
			}
			// reserve with the order, then confirm; at any store of the merchant
			var r struct{ ReserveCoupon redemption }
			a.mustDo(t, app, reserveCoupon, in(codes[0], "mp-1", "u1"), &r)
			if r.ReserveCoupon.Status != "PROCESSING" {
				t.Fatalf("reserve: %+v", r)
			}
			var c struct{ ConfirmRedemption redemption }
			a.mustDo(t, app, confirm, map[string]any{"in": map[string]any{"redeemNo": r.ReserveCoupon.RedeemNo, "orderRef": "MP-1",
				"customerRef": "u1"}}, &c)
			if c.ConfirmRedemption.Status != "SUCCEEDED" {
				t.Fatalf("confirm: %+v", c)
			}
			// reserve, then cancel
			other := in(codes[1], "mp-2", "u1")
			other["in"].(map[string]any)["storeId"] = otherStore
			a.mustDo(t, app, reserveCoupon, other, &r)
			var x struct{ CancelRedemption redemption }
			a.mustDo(t, app, cancel, map[string]any{"in": map[string]any{"redeemNo": r.ReserveCoupon.RedeemNo, "reason": "left",
				"customerRef": "u1"}}, &x)
			if x.CancelRedemption.Status != "RELEASED" {
				t.Fatalf("cancel: %+v", x)
			}
			// one-shot
			var d struct{ RedeemCoupon redemption }
			a.mustDo(t, app, redeemCoupon, in(codes[2], "mp-3", "u1"), &d)
			if d.RedeemCoupon.Status != "SUCCEEDED" || d.RedeemCoupon.Coupon.Status != "REDEEMED" {
				t.Fatalf("redeem: %+v", d)
			}
			// several codes for one order, at another store; and their quote
			var more struct {
				IssueCoupons struct{ Codes []string } `json:"issueCoupons"`
			}
			a.mustDo(t, a.admin, issueCoupons, map[string]any{"in": map[string]any{"campaignId": camp.CreateCampaign.ID, "count": 1,
				"customerRefs": []string{"u1"}}}, &more)
			var mq struct {
				QuoteCoupons struct{ Eligible bool }
			}
			a.mustDo(t, app, quoteCoupons, map[string]any{"codes": more.IssueCoupons.Codes, "s": otherStore, "amount": 5000,
				"c": "u1"}, &mq)
			if !mq.QuoteCoupons.Eligible {
				t.Fatalf("quoteCoupons: %+v", mq)
			}
			var mr struct{ RedeemCoupons redeemCouponsPayload }
			multi := ordersVars(otherStore, "mp-4", 5000, more.IssueCoupons.Codes...)
			multi["in"].(map[string]any)["customerRef"] = "u1"
			a.mustDo(t, app, redeemCoupons, multi, &mr)
			if mr.RedeemCoupons.Status != "SUCCEEDED" || len(mr.RedeemCoupons.Redemptions) != 1 {
				t.Fatalf("redeemCoupons: %+v", mr)
			}
			// the viewer says who the token is
			var v struct{ Viewer struct{ Role string } }
			a.mustDo(t, app, `{ viewer { role } }`, nil, &v)
			if v.Viewer.Role != "APP" {
				t.Fatalf("viewer: %+v", v)
			}
		})

		t.Run("customerRef required", func(t *testing.T) {
			tests := []struct {
				name  string
				query string
				vars  map[string]any
				want  string
			}{
				{"quote", quote, map[string]any{"code": codes[3], "s": store}, "BAD_USER_INPUT"},
				{"reserve", reserveCoupon, in(codes[3], "mp-10", ""), "BAD_USER_INPUT"},
				{"redeem", redeemCoupon, in(codes[3], "mp-11", ""), "BAD_USER_INPUT"},
				{"quoteCoupons", quoteCoupons, map[string]any{"codes": []string{codes[3]}, "s": store, "amount": 5000}, "BAD_USER_INPUT"},
				{"redeemCoupons", redeemCoupons, ordersVars(store, "mp-12", 5000, codes[3]), "BAD_USER_INPUT"},
				{"confirm", confirm, map[string]any{"in": map[string]any{"redeemNo": "RD1", "orderRef": "x"}}, "BAD_USER_INPUT"},
				{"cancel", cancel, map[string]any{"in": map[string]any{"redeemNo": "RD1"}}, "BAD_USER_INPUT"},
				{"wallet without customer", wallet, nil, "FORBIDDEN"},
				{"all coupons", `{ coupons { edges { node { code } } } }`, nil, "FORBIDDEN"},
				{"a campaign's coupons", `query($id: ID) { coupons(filter: {campaignId: $id}) { edges { node { code } } } }`,
					map[string]any{"id": camp.CreateCampaign.ID}, "FORBIDDEN"},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					if got := a.do(t, app, tt.query, tt.vars, nil); len(got) != 1 || got[0] != tt.want {
						t.Fatalf("got %v, want %s", got, tt.want)
					}
				})
			}
			if n := countWhere(t, db, &models.RedemptionOrder{}, "request_id = 'mp-12'"); n != 0 {
				t.Fatalf("%d orders written without a customerRef", n)
			}
			if n := countWhere(t, db, &models.RedemptionFlow{}, "request_id IN ('mp-10', 'mp-11')"); n != 0 {
				t.Fatalf("%d flows written without a customerRef", n)
			}
		})

		t.Run("forbidden", func(t *testing.T) {
			var done struct{ RedeemCoupon redemption }
			a.mustDo(t, a.admin, redeemCoupon, in(codes[3], "admin-1", ""), &done)
			campaign := map[string]any{"in": map[string]any{"name": "x", "type": "CASH", "value": 1,
				"validFrom": "2020-01-01T00:00:00Z", "validTo": "2099-01-01T00:00:00Z", "totalQuantity": 1}}
			version := map[string]any{"in": map[string]any{"id": camp.CreateCampaign.ID, "version": 0}}
			tests := []struct {
				name  string
				query string
				vars  map[string]any
			}{
				{"refundRedemption", refund, map[string]any{"in": map[string]any{"redeemNo": done.RedeemCoupon.RedeemNo, "requestId": "rf-1"}}},
				{"refundRedemptions", refundRedemptions, map[string]any{"in": map[string]any{"redeemNos": []string{done.RedeemCoupon.RedeemNo},
					"requestId": "rf-1"}}},
				{"coupon", `query($c: String!) { coupon(code: $c) { status } }`, map[string]any{"c": codes[0]}},
				{"campaign", `query($id: ID!) { campaign(id: $id) { name } }`, map[string]any{"id": camp.CreateCampaign.ID}},
				{"campaigns", `{ campaigns { edges { node { name } } } }`, nil},
				{"createCampaign", createCampaign, campaign},
				{"issueCoupons", issueCoupons, map[string]any{"in": map[string]any{"campaignId": camp.CreateCampaign.ID, "count": 1}}},
				{"importCoupons", `mutation($in: ImportCouponsInput!) { importCoupons(input: $in) { imported } }`,
					map[string]any{"in": map[string]any{"campaignId": camp.CreateCampaign.ID, "codes": []string{"ABCDEF12"}}}},
				{"updateCampaign", `mutation($in: UpdateCampaignInput!) { updateCampaign(input: $in) { name } }`,
					map[string]any{"in": map[string]any{"id": camp.CreateCampaign.ID, "version": 0, "name": "y"}}},
				{"pauseCampaign", `mutation($in: CampaignVersionInput!) { pauseCampaign(input: $in) { state } }`, version},
				{"resumeCampaign", `mutation($in: CampaignVersionInput!) { resumeCampaign(input: $in) { state } }`, version},
				{"endCampaign", `mutation($in: CampaignVersionInput!) { endCampaign(input: $in) { state } }`, version},
				{"voidCoupon", `mutation($in: VoidCouponInput!) { voidCoupon(input: $in) { status } }`,
					map[string]any{"in": map[string]any{"code": codes[3], "reason": "x"}}},
				{"createStore", createStore, map[string]any{"in": map[string]any{"code": "GZ01", "name": "x"}}},
				{"stores", `{ stores { edges { node { code } } } }`, nil},
				{"createToken", `mutation($in: CreateTokenInput!) { createToken(input: $in) { token } }`,
					map[string]any{"in": map[string]any{"role": "ADMIN"}}},
				{"revokeToken", `mutation { revokeToken(input: {id: "1"}) { id } }`, nil},
				{"tokens", `{ tokens { edges { node { id } } } }`, nil},
				{"redemption", `query($r: String!) { redemption(redeemNo: $r) { status } }`, map[string]any{"r": done.RedeemCoupon.RedeemNo}},
				{"redemptions", `{ redemptions { edges { node { redeemNo } } } }`, nil},
				{"redemptionsByHour", `{ redemptionsByHour(from: "2026-01-01T00:00:00Z", to: "2026-01-02T00:00:00Z") { hour } }`, nil},
				{"statements", `{ statements(from: "2026-01-01", to: "2026-01-02") { timezone } }`, nil},
				{"closeStatementDay", `mutation { closeStatementDay(input: {date: "2026-01-01"}) { closedDays } }`, nil},
				{"liability", `{ liability { unusedCount } }`, nil},
				{"findings", `{ findings { edges { node { id } } } }`, nil},
				{"resolveFinding", `mutation { resolveFinding(input: {findingId: "1", note: "x"}) { id } }`, nil},
				{"auditEvents", `{ auditEvents { edges { node { action } } } }`, nil},
				{"jobRuns", `{ jobRuns { edges { node { id } } } }`, nil},
				{"runJob", `mutation { runJob(input: {job: "reconcile"}) { id } }`, nil},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					got, err := a.post(app, tt.query, tt.vars, nil)
					must(t, err)
					if len(got) != 1 || got[0] != "FORBIDDEN" {
						t.Fatalf("got %v, want FORBIDDEN", got)
					}
				})
			}
		})
	})
}

func countWhere(t *testing.T, db *gorm.DB, model any, where string) int64 {
	t.Helper()
	var n int64
	must(t, db.Model(model).Where(where).Count(&n).Error)
	return n
}
