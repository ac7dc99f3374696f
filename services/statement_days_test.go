package services_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/internal/testdb"
	"coupond/models"
	"coupond/services"
)

// The daily-statement job stores yesterday per store and campaign; finance
// closes a day, which then never changes; business that reaches the closed
// day afterwards is booked once, as an adjustment, on the day it is found.
// A second merchant's business never shows in the first's statements or
// liability.
func TestStatementDaysStoreCloseAndAdjust(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db) // Asia/Shanghai; the clock starts at 12:00 local on 2026-12-01
		ctx := context.Background()
		half := w.newCampaign(services.CreateCampaignInput{Name: "Half off", Type: models.CampaignDiscount, Value: 50,
			MaxDiscount: 2000, TotalQuantity: 100})
		open := w.newCampaign(services.CreateCampaignInput{Name: "Tenth off", Type: models.CampaignDiscount, Value: 10,
			TotalQuantity: 100})
		soon := w.newCampaign(services.CreateCampaignInput{Name: "Soon over", Type: models.CampaignCash, Value: 500,
			TotalQuantity: 10, ValidTo: w.clock.Now().Add(2 * time.Hour)})
		cash, disc, uncapped := w.issue(w.campaign, 6), w.issue(half, 3), w.issue(open, 1)
		w.issue(soon, 2)

		// A second merchant in another zone, busy on the same days.
		other, err := w.svc.Merchants.Create(ctx, "beta", "Beta Tea", "Europe/Berlin")
		must(t, err)
		otherAdmin := services.SystemActor(other.ID)
		otherStore, err := w.svc.Stores.Create(ctx, otherAdmin, services.CreateStoreInput{Code: "B1", Name: "Berlin"})
		must(t, err)
		otherCamp, err := w.svc.Campaigns.Create(ctx, otherAdmin, services.CreateCampaignInput{Name: "Beta five", Type: models.CampaignCash,
			Value: 700, TotalQuantity: 10, ValidFrom: w.clock.Now().Add(-time.Hour), ValidTo: w.clock.Now().Add(30 * 24 * time.Hour)})
		must(t, err)
		otherCodes, err := w.svc.Campaigns.IssueCoupons(ctx, otherAdmin, services.IssueInput{CampaignID: otherCamp.ID, Count: 3})
		must(t, err)

		redeemAt := func(actor services.Actor, store int64, code, req string, amount int64) *models.RedemptionFlow {
			t.Helper()
			f, err := w.svc.Redemptions.Redeem(ctx, actor, services.RedeemInput{Code: code, StoreID: store, RequestID: req, OrderAmount: amount})
			must(t, err)
			if f.Status != models.FlowSucceeded {
				t.Fatalf("redeem %s: %s", req, f.Status)
			}
			return f
		}
		// 2026-12-01: two at A (cash, half-off), one at B; the other merchant one.
		a1 := redeemAt(w.admin, w.storeA.ID, cash[0], "a1", 5000)
		redeemAt(w.admin, w.storeA.ID, disc[0], "a2", 3000) // 1500 off
		b1 := redeemAt(w.admin, w.storeB.ID, cash[1], "b1", 5000)
		redeemAt(otherAdmin, otherStore.ID, otherCodes.Codes[0], "o1", 5000)
		// 15:00 local: the two "Soon over" coupons have ended; the expiry job
		// moves them, and a void (someone else's feature) is counted from its
		// transition alone.
		w.clock.Advance(3 * time.Hour)
		if res, err := w.svc.Expiry.Run(ctx); err != nil || res.Expired != 2 {
			t.Fatalf("expiry %+v %v", res, err)
		}
		voided := w.coupon(uncapped[0])
		must(t, models.RecordTransitions(db, models.CouponTransition{MerchantID: w.merchant.ID, CouponID: voided.ID,
			FromStatus: models.CouponUnused, ToStatus: "VOIDED", VersionAfter: voided.Version + 1, FlowNo: "VD-test",
			Actor: "system", CreatedAt: w.clock.Now()}))

		// 2026-12-02 01:00 local: the job stores 12-01, twice over (idempotent).
		w.clock.Advance(10 * time.Hour)
		for range 2 {
			run, err := w.svc.JobRuns.RunJob(ctx, services.JobDailyStatement, "")
			must(t, err)
			if run.Status != models.JobSucceeded {
				t.Fatalf("run %+v", run)
			}
		}
		if n := w.count(&models.StatementDay{}, "merchant_id = ? AND day = '2026-12-01'", w.merchant.ID); n != 6 {
			t.Fatalf("%d stored rows of 12-01, want the day row, 3 store lines and 2 lapse lines", n)
		}
		if n := w.count(&models.StatementDay{}, "merchant_id = ? AND store_id = ?", w.merchant.ID, otherStore.ID); n != 0 {
			t.Fatalf("the other merchant's store in this merchant's statement: %d rows", n)
		}
		daily := func(actor services.Actor, from, to string, store int64) *services.Statement {
			t.Helper()
			st, err := w.svc.Statements.Daily(ctx, actor, services.StatementInput{From: from, To: to, StoreID: store})
			must(t, err)
			return st
		}
		st := daily(w.finance, "2026-12-01", "2026-12-02", 0)
		wantStores := []services.StatementLine{
			{Day: "2026-12-01", StoreID: w.storeA.ID, RedeemedCount: 2, RedeemedAmount: 2500, NetCount: 2, NetAmount: 2500, Stored: true},
			{Day: "2026-12-01", StoreID: w.storeB.ID, RedeemedCount: 1, RedeemedAmount: 1000, NetCount: 1, NetAmount: 1000, Stored: true},
		}
		if !slices.Equal(st.Stores, wantStores) || len(st.Campaigns) != 3 || len(st.ClosedDays) != 0 {
			t.Fatalf("stored 12-01: %+v / %+v / closed %v", st.Stores, st.Campaigns, st.ClosedDays)
		}
		wantLapsed := []services.StatementLine{
			{Day: "2026-12-01", CampaignID: open.ID, VoidedCount: 1, Stored: true},
			{Day: "2026-12-01", CampaignID: soon.ID, ExpiredCount: 2, ExpiredValue: 1000, Stored: true},
		}
		if open.ID > soon.ID {
			wantLapsed[0], wantLapsed[1] = wantLapsed[1], wantLapsed[0]
		}
		if !slices.Equal(st.Lapsed, wantLapsed) {
			t.Fatalf("lapsed %+v, want %+v", st.Lapsed, wantLapsed)
		}
		if got := daily(w.finance, "2026-12-01", "2026-12-01", w.storeB.ID); len(got.Stores) != 1 || len(got.Lapsed) != 0 {
			t.Fatalf("store B alone: %+v, lapsed %+v", got.Stores, got.Lapsed)
		}

		// Liability: 4 cash coupons at 1000, 2 half-off at their cap of 2000,
		// 1 uncapped at nothing; the expired ones and the other merchant's are
		// not owed.
		_, err = w.svc.Statements.Liability(ctx, w.clerkA)
		wantCode(t, err, "FORBIDDEN")
		l, err := w.svc.Statements.Liability(ctx, w.finance)
		must(t, err)
		if l.UnusedCount != 7 || l.FaceValue != 8000 || l.UncappedDiscountCount != 1 || l.DiscountCouponsAt != services.DiscountAtCap {
			t.Fatalf("liability %+v", l)
		}
		if ol, err := w.svc.Statements.Liability(ctx, otherAdmin); err != nil || ol.UnusedCount != 2 || ol.FaceValue != 1400 {
			t.Fatalf("other merchant's liability %+v %v", ol, err)
		}

		// Closing: who may, and which days.
		closeDay := func(actor services.Actor, day string) (*services.Statement, error) {
			return w.svc.Statements.CloseStatementDay(ctx, actor, day)
		}
		_, err = closeDay(w.clerkA, "2026-12-01")
		wantCode(t, err, "FORBIDDEN")
		for _, day := range []string{"2026-12-02", "2026-12-03", "12/01/2026"} {
			_, err = closeDay(w.finance, day)
			wantCode(t, err, "BAD_USER_INPUT")
		}
		closed, err := closeDay(w.finance, "2026-12-01")
		must(t, err)
		if !slices.Equal(closed.ClosedDays, []string{"2026-12-01"}) || len(closed.Stores) != 2 || !closed.Stores[0].Closed ||
			closed.Stores[0].RedeemedAmount != 2500 || len(closed.Lapsed) != 2 || !closed.Lapsed[0].Closed {
			t.Fatalf("closed 12-01: %+v", closed)
		}
		again, err := closeDay(w.admin, "2026-12-01")
		must(t, err)
		if !slices.Equal(again.Stores, closed.Stores) {
			t.Fatalf("closed twice: %+v, then %+v", closed.Stores, again.Stores)
		}
		if n := w.count(&models.AuditEvent{}, "action = 'statement.close' AND target = 'statement_day:2026-12-01'"); n != 1 {
			t.Fatalf("%d statement.close audit events, want 1", n)
		}
		// A day before the merchant's first coupon closes empty.
		empty, err := closeDay(w.finance, "2026-11-01")
		must(t, err)
		if len(empty.Stores) != 0 || !slices.Equal(empty.ClosedDays, []string{"2026-11-01"}) {
			t.Fatalf("empty day: %+v", empty)
		}

		// 12-02: a refund of a 12-01 redemption is 12-02's business, as every
		// refund is the business of the day it is made; the closed day stays.
		_, err = w.svc.Redemptions.Refund(ctx, w.admin, services.RefundInput{RedeemNo: a1.RedeemNo, RequestID: "rf-a1"})
		must(t, err)
		// A refund that lands inside the closed day after the close: its
		// transaction read the clock before midnight and committed after
		// finance closed the day (or a replica's clock lags).
		w.clock.Advance(-(time.Hour + time.Second)) // 2026-12-01 23:59:59 local
		_, err = w.svc.Redemptions.Refund(ctx, w.admin, services.RefundInput{RedeemNo: b1.RedeemNo, RequestID: "rf-b1"})
		must(t, err)
		w.clock.Advance(10*time.Hour + time.Second) // 2026-12-02 10:00 local
		if got := daily(w.finance, "2026-12-01", "2026-12-01", 0); !slices.Equal(got.Stores, closed.Stores) || len(got.Adjustments) != 0 {
			t.Fatalf("closed 12-01 changed: %+v, was %+v", got.Stores, closed.Stores)
		}
		for range 2 { // the job books the difference once, however often it runs
			_, err := w.svc.JobRuns.RunJob(ctx, services.JobDailyStatement, "")
			must(t, err)
		}
		st = daily(w.finance, "2026-12-01", "2026-12-02", 0)
		wantAdj := []services.StatementAdjustment{{Day: "2026-12-02", ClosedDay: "2026-12-01", StoreID: w.storeB.ID,
			CampaignID: w.campaign.ID, Figure: models.AdjustRefunded, Count: 1, Amount: 1000}}
		if !slices.Equal(st.Adjustments, wantAdj) {
			t.Fatalf("adjustments %+v, want %+v", st.Adjustments, wantAdj)
		}
		if !slices.Equal(st.Stores[:2], closed.Stores) {
			t.Fatalf("closed 12-01 changed: %+v", st.Stores)
		}
		today := st.Stores[2:]
		if len(today) != 1 || today[0].Day != "2026-12-02" || today[0].StoreID != w.storeA.ID || today[0].RefundedCount != 1 ||
			today[0].RefundedAmount != 1000 || today[0].Stored || today[0].Closed {
			t.Fatalf("12-02 live: %+v", today)
		}
		if got := daily(w.finance, "2026-12-02", "2026-12-02", w.storeA.ID); len(got.Adjustments) != 0 {
			t.Fatalf("store A sees store B's adjustment: %+v", got.Adjustments)
		}
		if n := w.count(&models.StatementAdjustment{}, "merchant_id = ?", w.merchant.ID); n != 1 {
			t.Fatalf("%d adjustment rows, want 1", n)
		}

		// 12-03: the job stores 12-02 and finds nothing more to adjust.
		w.clock.Advance(24 * time.Hour)
		_, err = w.svc.JobRuns.RunJob(ctx, services.JobDailyStatement, "")
		must(t, err)
		st = daily(w.finance, "2026-12-02", "2026-12-02", 0)
		if len(st.Stores) != 1 || !st.Stores[0].Stored || st.Stores[0].RefundedCount != 1 || !slices.Equal(st.Adjustments, wantAdj) {
			t.Fatalf("stored 12-02: %+v, adjustments %+v", st.Stores, st.Adjustments)
		}
		if n := w.count(&models.StatementAdjustment{}, "merchant_id = ?", w.merchant.ID); n != 1 {
			t.Fatalf("%d adjustment rows after another run, want 1", n)
		}

		// Nothing of this merchant in the other's statement.
		os := daily(otherAdmin, "2026-11-30", "2026-12-03", 0)
		for _, l := range slices.Concat(os.Stores, os.Campaigns, os.Lapsed) {
			if l.StoreID != otherStore.ID || (l.CampaignID != 0 && l.CampaignID != otherCamp.ID) {
				t.Fatalf("other merchant's statement has %+v", l)
			}
		}
		if len(os.Stores) != 1 || os.Stores[0].RedeemedAmount != 700 || len(os.Adjustments) != 0 || len(os.ClosedDays) != 0 {
			t.Fatalf("other merchant's statement %+v", os)
		}
	})
}
