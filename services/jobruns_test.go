package services_test

import (
	"context"
	"encoding/json"
	"maps"
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/internal/testdb"
	"coupond/models"
	"coupond/services"
)

// Job runs belong to a merchant or to the installation. A merchant's runJob
// works on that merchant's rows only and records that merchant's counts; a
// merchant lists only its own runs and its shares of installation runs; an
// installation run writes a share only for the merchants it did something
// for.
func TestJobRunsAreTenantScoped(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db) // merchant A
		ctx := context.Background()
		adminA := w.actor(models.RoleAdmin)

		mB, err := w.svc.Merchants.Create(ctx, "bravo", "Bravo Tea", "Asia/Shanghai")
		must(t, err)
		tokB, _, err := w.svc.Tokens.Create(ctx, services.CreateTokenInput{MerchantID: mB.ID, Role: models.RoleAdmin})
		must(t, err)
		adminB, err := w.svc.Tokens.Authenticate(ctx, tokB)
		must(t, err)
		financeB := services.Actor{MerchantID: mB.ID, Role: models.RoleFinance}

		// A: one redemption stuck in PROCESSING past its hold, and one coupon
		// REDEEMING without any flow, which reconciliation reports.
		codes := w.issue(w.campaign, 2)
		stuck := w.stuck(codes[0], "stuck-1", false)
		must(t, db.Exec("UPDATE coupons SET status = 'REDEEMING', redeem_no = 'RDGHOST', version = version + 1 WHERE merchant_id = ? AND code = ?",
			w.merchant.ID, codes[1]).Error)
		w.clock.Advance(holdTimeout + time.Minute)

		// B's runs see nothing of A and change nothing of A.
		for _, job := range services.JobNames() {
			run, err := w.svc.JobRuns.Trigger(ctx, adminB, job)
			must(t, err)
			if run.MerchantID != mB.ID || run.Status != models.JobSucceeded {
				t.Fatalf("%s for B: %+v", job, run)
			}
			for name, n := range counts(t, run) {
				if name == "merchants" && n == 1 { // B itself, the daily statement's one merchant
					continue
				}
				if n != 0 {
					t.Fatalf("%s for B counted %s = %d of another merchant's rows", job, name, n)
				}
			}
		}
		if got := w.flow(stuck.RedeemNo); got.Status != models.FlowProcessing {
			t.Fatalf("B's compensation touched A's redemption: %s", got.Status)
		}
		if n := w.count(&models.Finding{}, "1 = 1"); n != 0 {
			t.Fatalf("B's reconciliation wrote %d findings", n)
		}

		// An installation run resolves A's redemption and finds A's ghost;
		// only A gets shares, and B, which it did nothing for, none.
		totals := map[string]map[string]int64{}
		for _, job := range []string{services.JobCompensation, services.JobReconciliation} {
			run, err := w.svc.JobRuns.RunJob(ctx, job, "")
			must(t, err)
			if run.MerchantID != 0 {
				t.Fatalf("installation run of %s recorded for merchant %d", job, run.MerchantID)
			}
			totals[job] = counts(t, run)
		}
		if got := w.flow(stuck.RedeemNo); got.Status != models.FlowReleased {
			t.Fatalf("installation compensation left A's redemption %s", got.Status)
		}

		list := func(a services.Actor) []services.JobRun {
			t.Helper()
			p, err := w.svc.JobRuns.List(ctx, a, services.JobRunFilter{}, services.PageArgs{First: 100})
			must(t, err)
			return p.Items
		}
		runsA := list(adminA)
		if len(runsA) != 2 {
			t.Fatalf("A lists %d runs, want its 2 shares: %+v", len(runsA), runsA)
		}
		for _, r := range runsA {
			if r.MerchantID != w.merchant.ID || r.ParentID == 0 {
				t.Fatalf("A lists %+v", r)
			}
			// Everything the installation runs did was A's.
			c := counts(t, &r)
			if !maps.Equal(c, totals[r.Job]) {
				t.Fatalf("A's share of %s %v, the run's totals %v", r.Job, c, totals[r.Job])
			}
			if r.Job == services.JobCompensation && (c["claimed"] != 1 || c["released"] != 1) ||
				r.Job == services.JobReconciliation && (c["violations"] == 0 || c["opened"] != c["violations"]) {
				t.Fatalf("A's share of %s %v", r.Job, c)
			}
		}
		runsB := list(financeB)
		if len(runsB) != len(services.JobNames()) {
			t.Fatalf("B lists %d runs, want its own %d", len(runsB), len(services.JobNames()))
		}
		for _, r := range runsB {
			if r.MerchantID != mB.ID || r.ParentID != 0 {
				t.Fatalf("B lists %+v", r)
			}
		}

		// The operator sees the installation's runs, with the totals.
		p, err := w.svc.JobRuns.ListInstallation(ctx, 0, services.JobRunFilter{}, services.PageArgs{First: 100})
		must(t, err)
		if len(p.Items) != 2 {
			t.Fatalf("%d installation runs, want 2", len(p.Items))
		}
		for _, r := range p.Items {
			if r.MerchantID != 0 || r.ParentID != 0 {
				t.Fatalf("installation lists %+v", r)
			}
		}

		// A quiet installation run writes no shares.
		before := w.count(&models.JobRun{}, "1 = 1")
		_, err = w.svc.JobRuns.RunJob(ctx, services.JobCompensation, "")
		must(t, err)
		if n := w.count(&models.JobRun{}, "1 = 1"); n != before+1 {
			t.Fatalf("a quiet compensation run wrote %d rows, want 1", n-before)
		}
	})
}

func counts(t *testing.T, run *services.JobRun) map[string]int64 {
	t.Helper()
	var c map[string]int64
	must(t, json.Unmarshal([]byte(run.Counts), &c))
	return c
}
