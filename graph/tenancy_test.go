package graph_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/graph"
	"coupond/internal/testdb"
	"coupond/models"
	"coupond/services"
)

// Two merchants on one server: every query and mutation that names an
// object of merchant A, tried by merchant B's administrator, answers exactly
// as it does for an object that does not exist, every list B reads holds
// nothing of A, and nothing of A changes.
func TestTenantBoundary(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		a := newAPI(t, db, graph.Options{})
		ctx := context.Background()
		storeA, codes := a.setup(3)
		var redeemed struct{ RedeemCoupon redemption }
		a.mustDo(t, a.admin, redeemCoupon, redeemVars(codes[0], storeA, "a-1", 5000), &redeemed)
		var reserved struct{ ReserveCoupon redemption }
		a.mustDo(t, a.admin, reserveCoupon, redeemVars(codes[1], storeA, "a-2", 5000), &reserved)
		var camps struct {
			Campaigns struct {
				Edges []struct{ Node struct{ ID string } }
			}
		}
		a.mustDo(t, a.admin, `{ campaigns { edges { node { id } } } }`, nil, &camps)
		campA := camps.Campaigns.Edges[0].Node.ID
		var toks struct {
			Tokens struct {
				Edges []struct{ Node struct{ ID string } }
			}
		}
		a.mustDo(t, a.admin, `{ tokens { edges { node { id } } } }`, nil, &toks)
		tokenA := toks.Tokens.Edges[0].Node.ID
		// A discrepancy for A's reconciliation to find.
		must(t, db.Exec("UPDATE coupons SET version = version + 7 WHERE code = ?", codes[2]).Error)
		a.mustDo(t, a.admin, `mutation { runJob(input: {job: "reconciliation"}) { id } }`, nil, nil)
		var finds struct {
			Findings struct {
				Edges []struct{ Node struct{ ID string } }
			}
		}
		a.mustDo(t, a.admin, `{ findings { edges { node { id } } } }`, nil, &finds)
		if len(finds.Findings.Edges) == 0 {
			t.Fatal("no finding for A")
		}
		findingA := finds.Findings.Edges[0].Node.ID

		mB, err := a.svc.Merchants.Create(ctx, "bravo", "Bravo Tea", "Asia/Shanghai")
		must(t, err)
		adminB, _, err := a.svc.Tokens.Create(ctx, services.CreateTokenInput{MerchantID: mB.ID, Role: models.RoleAdmin})
		must(t, err)
		financeB, _, err := a.svc.Tokens.Create(ctx, services.CreateTokenInput{MerchantID: mB.ID, Role: models.RoleFinance})
		must(t, err)
		var stB struct{ CreateStore struct{ ID string } }
		a.mustDo(t, adminB, createStore, map[string]any{"in": map[string]any{"code": "BJ01", "name": "Beijing"}}, &stB)
		storeB := stB.CreateStore.ID

		before := snapshot(t, db)
		unknownCode := services.NewCouponCode()
		now := time.Now().UTC()
		tests := []struct {
			name    string
			query   string
			vars    func(id string) map[string]any
			ofA     string
			unknown string
		}{
			{"coupon", `query($id: String!) { coupon(code: $id) { id } }`, str("id"), codes[0], unknownCode},
			{"campaign", `query($id: ID!) { campaign(id: $id) { id } }`, str("id"), campA, "99999"},
			{"redemption", `query($id: String!) { redemption(redeemNo: $id) { redeemNo } }`, str("id"), redeemed.RedeemCoupon.RedeemNo, "RD20990101000000XXXXXXXXXXXX"},
			{"quote", `query($id: String!) { redemptionQuote(code: $id, storeId: "` + storeB + `", orderAmount: 5000) { eligible } }`, str("id"), codes[2], unknownCode},
			{"redeem", redeemCoupon, func(id string) map[string]any { return redeemVars(id, storeB, "b-"+id, 5000) }, codes[2], unknownCode},
			{"redeem at A's store", redeemCoupon, func(id string) map[string]any { return redeemVars(services.NewCouponCode(), id, "b-store-"+id, 5000) }, storeA, "99999"},
			{"confirm", confirm, in("redeemNo", id2("orderRef", "X1")), reserved.ReserveCoupon.RedeemNo, "RD20990101000000XXXXXXXXXXXX"},
			{"cancel", cancel, in("redeemNo", nil), reserved.ReserveCoupon.RedeemNo, "RD20990101000000XXXXXXXXXXXX"},
			{"refund", refund, in("redeemNo", id2("requestId", "b-refund")), redeemed.RedeemCoupon.RedeemNo, "RD20990101000000XXXXXXXXXXXX"},
			{"issue", issueCoupons, in("campaignId", id2("count", 1)), campA, "99999"},
			{"update campaign", `mutation($in: UpdateCampaignInput!) { updateCampaign(input: $in) { id } }`, in("id", id2("version", 0)), campA, "99999"},
			{"pause campaign", `mutation($in: CampaignVersionInput!) { pauseCampaign(input: $in) { id } }`, in("id", id2("version", 0)), campA, "99999"},
			{"end campaign", `mutation($in: CampaignVersionInput!) { endCampaign(input: $in) { id } }`, in("id", id2("version", 0)), campA, "99999"},
			{"void", `mutation($in: VoidCouponInput!) { voidCoupon(input: $in) { id } }`, in("code", id2("reason", "x")), codes[2], unknownCode},
			{"revoke token", `mutation($in: RevokeTokenInput!) { revokeToken(input: $in) { id } }`, in("id", nil), tokenA, "99999"},
			{"resolve finding", `mutation($in: ResolveFindingInput!) { resolveFinding(input: $in) { id } }`, in("findingId", id2("note", "x")), findingA, "99999"},
			{"campaign at A's store", createCampaign, func(id string) map[string]any {
				return map[string]any{"in": map[string]any{"name": "x", "type": "CASH", "value": 100, "totalQuantity": 10,
					"validFrom": now.Format(time.RFC3339), "validTo": now.Add(time.Hour).Format(time.RFC3339), "storeIds": []string{id}}}
			}, storeA, "99999"},
			{"token at A's store", `mutation($in: CreateTokenInput!) { createToken(input: $in) { token } }`, func(id string) map[string]any {
				return map[string]any{"in": map[string]any{"name": "x", "role": "CLERK", "storeIds": []string{id}}}
			}, storeA, "99999"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				var gotA, gotUnknown map[string]any
				codesA := a.do(t, adminB, tt.query, tt.vars(tt.ofA), &gotA)
				codesUnknown := a.do(t, adminB, tt.query, tt.vars(tt.unknown), &gotUnknown)
				if len(codesA) != 1 || (codesA[0] != "NOT_FOUND" && codesA[0] != "COUPON_NOT_FOUND") {
					t.Fatalf("A's object answers %v, want NOT_FOUND or COUPON_NOT_FOUND", codesA)
				}
				if !slices.Equal(codesA, codesUnknown) || fmt.Sprint(gotA) != fmt.Sprint(gotUnknown) {
					t.Fatalf("A's object answers %v %v, an unknown one %v %v", codesA, gotA, codesUnknown, gotUnknown)
				}
			})
		}
		lists := []struct{ name, query string }{
			{"campaigns", `{ campaigns { edges { node { id } } } }`},
			{"coupons", `{ coupons { edges { node { id } } } }`},
			{"redemptions", `{ redemptions { edges { node { id: redeemNo } } } }`},
			{"findings", `{ findings { edges { node { id } } } }`},
			{"jobRuns", `{ jobRuns { edges { node { id } } } }`},
			{"tokens", `{ tokens { edges { node { id } } } }`},
			{"auditEvents", `{ auditEvents { edges { node { id } } } }`},
			{"stores", `{ stores { edges { node { id } } } }`},
		}
		ids := func(t *testing.T, tok string, l struct{ name, query string }) []any {
			t.Helper()
			var got map[string]map[string][]map[string]map[string]any
			a.mustDo(t, tok, l.query, nil, &got)
			var out []any
			for _, e := range got[l.name]["edges"] {
				out = append(out, e["node"]["id"])
			}
			return out
		}
		for _, l := range lists {
			t.Run("list "+l.name, func(t *testing.T) {
				ofA := ids(t, a.admin, l)
				if len(ofA) == 0 {
					t.Fatalf("A has no %s to hide", l.name)
				}
				for _, tok := range []string{adminB, financeB} {
					if l.name == "tokens" && tok == financeB {
						continue // ADMIN only
					}
					for _, id := range ids(t, tok, l) {
						if slices.Contains(ofA, id) {
							t.Fatalf("B lists %s %v of A", l.name, id)
						}
					}
				}
			})
		}
		var st struct {
			Statements struct{ Stores []struct{ RedeemedCount int } }
		}
		today := now.Format("2006-01-02")
		a.mustDo(t, adminB, `query($d: String!) { statements(from: $d, to: $d) { stores { redeemedCount } } }`, map[string]any{"d": today}, &st)
		if len(st.Statements.Stores) != 0 {
			t.Fatalf("B's statement has A's lines: %+v", st.Statements.Stores)
		}
		if after := snapshot(t, db); after != before {
			t.Fatalf("B changed A's rows:\nbefore %s\nafter  %s", before, after)
		}
	})
}

// snapshot is a digest of merchant 1's rows that any change would alter
// (audit events excepted: refusals are audited).
func snapshot(t *testing.T, db *gorm.DB) string {
	t.Helper()
	var out []string
	for _, q := range []string{
		"SELECT COUNT(*) || ':' || COALESCE(SUM(version), 0) FROM coupons WHERE merchant_id = 1",
		"SELECT COUNT(*) || ':' || COALESCE(SUM(version), 0) FROM redemption_flows WHERE merchant_id = 1",
		"SELECT COUNT(*) FROM refund_flows WHERE merchant_id = 1",
		"SELECT COUNT(*) || ':' || COALESCE(SUM(version), 0) || ':' || COALESCE(SUM(issued), 0) FROM campaigns WHERE merchant_id = 1",
		"SELECT COUNT(*) FROM api_tokens WHERE merchant_id = 1 AND revoked_at IS NULL",
		"SELECT COUNT(*) FROM findings WHERE merchant_id = 1 AND status = 'OPEN'",
		"SELECT COUNT(*) FROM stores WHERE merchant_id = 1",
	} {
		var s string
		must(t, db.Raw(q).Scan(&s).Error)
		out = append(out, s)
	}
	return fmt.Sprint(out)
}

func str(key string) func(string) map[string]any {
	return func(id string) map[string]any { return map[string]any{key: id} }
}

// in makes {"in": {key: id, ...more}}.
func in(key string, more map[string]any) func(string) map[string]any {
	return func(id string) map[string]any {
		m := map[string]any{key: id}
		for k, v := range more {
			m[k] = v
		}
		return map[string]any{"in": m}
	}
}

func id2(k string, v any) map[string]any { return map[string]any{k: v} }
