package graph_test

import (
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/graph"
	"coupond/internal/testdb"
	"coupond/models"
)

// Finance reviews reconciliation through the API: a planted discrepancy shows
// up once as a finding, is resolved with a note, and the statement of the day
// equals the ledger.
func TestReconciliationOverGraphQL(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		a := newAPI(t, db, graph.Options{})
		storeID, codes := a.setup(3)
		clerk := a.clerk("SH01")
		for i, amount := range []int{5000, 8000} {
			a.mustDo(t, clerk, redeemCoupon, redeemVars(codes[i], storeID, "ok-"+string(rune('a'+i)), amount), nil)
		}
		// Plant a discrepancy: a coupon marked REDEEMED behind the ledger's back.
		must(t, db.Exec("UPDATE coupons SET status = 'REDEEMED', version = version + 1 WHERE code = ?", codes[2]).Error)

		const runJob = `mutation($job: String!) { runJob(input: {job: $job}) { job status counts { name value } } }`
		if got := a.do(t, a.finance, runJob, map[string]any{"job": "reconciliation"}, nil); len(got) != 1 || got[0] != "FORBIDDEN" {
			t.Fatalf("finance running a job: %v", got)
		}
		for range 2 { // running twice must not duplicate findings
			var run struct{ RunJob struct{ Status string } }
			a.mustDo(t, a.admin, runJob, map[string]any{"job": "reconciliation"}, &run)
			if run.RunJob.Status != "SUCCEEDED" {
				t.Fatalf("run %+v", run.RunJob)
			}
		}
		const findings = `{ findings(filter: {status: OPEN}) { edges { node { id kind status coupon { code } details } } } }`
		var open struct {
			Findings struct {
				Edges []struct {
					Node struct {
						ID, Kind, Status, Details string
						Coupon                    *struct{ Code string }
					}
				}
			}
		}
		a.mustDo(t, a.finance, findings, nil, &open)
		byKind := map[string]int{}
		for _, e := range open.Findings.Edges {
			byKind[e.Node.Kind]++
			if e.Node.Coupon == nil || e.Node.Coupon.Code != codes[2] {
				t.Fatalf("finding about the wrong coupon: %+v", e.Node)
			}
		}
		if byKind["REDEEMED_COUPON_FLOW_COUNT"] != 1 || byKind["HISTORY_MISMATCH"] != 1 || len(byKind) != 2 {
			t.Fatalf("findings %v, want one REDEEMED_COUPON_FLOW_COUNT and one HISTORY_MISMATCH", byKind)
		}
		if got := a.do(t, clerk, findings, nil, nil); len(got) == 0 || got[0] != "FORBIDDEN" {
			t.Fatalf("clerk listing findings: %v", got)
		}
		const resolve = `mutation($in: ResolveFindingInput!) { resolveFinding(input: $in) { status note resolvedBy resolvedAt } }`
		id := open.Findings.Edges[0].Node.ID
		if got := a.do(t, a.finance, resolve, map[string]any{"in": map[string]any{"findingId": id, "note": ""}}, nil); len(got) == 0 || got[0] != "BAD_USER_INPUT" {
			t.Fatalf("resolve without a note: %v", got)
		}
		var res struct {
			ResolveFinding struct{ Status, Note, ResolvedBy string }
		}
		a.mustDo(t, a.finance, resolve, map[string]any{"in": map[string]any{"findingId": id, "note": "coupon fixed by hand in the old system"}}, &res)
		if res.ResolveFinding.Status != "RESOLVED" || res.ResolveFinding.ResolvedBy == "" {
			t.Fatalf("resolve %+v", res.ResolveFinding)
		}
		if got := a.do(t, a.finance, resolve, map[string]any{"in": map[string]any{"findingId": id, "note": "again"}}, nil); len(got) == 0 || got[0] != "INVALID_STATE" {
			t.Fatalf("second resolve: %v", got)
		}
		var audit int64
		must(t, db.Model(&models.AuditEvent{}).Where("action = 'finding.resolve'").Count(&audit).Error)
		if audit != 1 {
			t.Fatalf("%d resolve audit events", audit)
		}

		today := time.Now().In(time.FixedZone("CST", 8*3600)).Format("2006-01-02")
		var st struct {
			Statements struct {
				Timezone string
				Stores   []struct {
					Day                           string
					Store                         struct{ Code string }
					Campaign                      *struct{ Name string }
					RedeemedCount, RedeemedAmount int64
					NetAmount                     int64
				}
			}
		}
		a.mustDo(t, a.finance, `query($d: String!) { statements(from: $d, to: $d) { timezone stores { day store { code } campaign { name }
			redeemedCount redeemedAmount netAmount } } }`, map[string]any{"d": today}, &st)
		if st.Statements.Timezone != "Asia/Shanghai" || len(st.Statements.Stores) != 1 {
			t.Fatalf("statement %+v", st.Statements)
		}
		line := st.Statements.Stores[0]
		if line.Day != today || line.Store.Code != "SH01" || line.Campaign != nil || line.RedeemedCount != 2 ||
			line.RedeemedAmount != 2000 || line.NetAmount != 2000 {
			t.Fatalf("statement line %+v, want 2 redemptions worth 2000 fen", line)
		}

		var runs struct {
			JobRuns struct {
				Edges []struct{ Node struct{ Job, Status string } }
			}
		}
		a.mustDo(t, a.finance, `{ jobRuns(filter: {job: "reconciliation"}) { edges { node { job status } } } }`, nil, &runs)
		if len(runs.JobRuns.Edges) != 2 {
			t.Fatalf("%d reconciliation runs listed, want 2", len(runs.JobRuns.Edges))
		}
	})
}
