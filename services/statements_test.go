package services_test

import (
	"context"
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/internal/testdb"
	"coupond/models"
	"coupond/services"
)

// ledgerStatement recomputes statements the slow way, row by row from the
// ledger, to check the SQL aggregates against.
func ledgerStatement(t *testing.T, db *gorm.DB, merchantID int64, loc *time.Location) map[[3]int64]map[string]services.StatementLine {
	t.Helper()
	out := map[[3]int64]map[string]services.StatementLine{}
	add := func(day string, store, campaign int64, redeemed bool, amount int64) {
		for _, c := range []int64{campaign, 0} {
			k := [3]int64{store, c}
			if out[k] == nil {
				out[k] = map[string]services.StatementLine{}
			}
			l := out[k][day]
			l.Day, l.StoreID, l.CampaignID = day, store, c
			if redeemed {
				l.RedeemedCount++
				l.RedeemedAmount += amount
			} else {
				l.RefundedCount++
				l.RefundedAmount += amount
			}
			l.NetCount, l.NetAmount = l.RedeemedCount-l.RefundedCount, l.RedeemedAmount-l.RefundedAmount
			out[k][day] = l
		}
	}
	campaignOf := func(couponID int64) int64 {
		var c models.Coupon
		must(t, db.Take(&c, couponID).Error)
		return c.CampaignID
	}
	var flows []models.RedemptionFlow
	must(t, db.Where("merchant_id = ? AND status = 'SUCCEEDED'", merchantID).Find(&flows).Error)
	for _, f := range flows {
		add(f.FinishedAt.In(loc).Format(time.DateOnly), f.StoreID, campaignOf(f.CouponID), true, f.DiscountAmount)
	}
	var refunds []models.RefundFlow
	must(t, db.Where("merchant_id = ?", merchantID).Find(&refunds).Error)
	for _, r := range refunds {
		add(r.CreatedAt.In(loc).Format(time.DateOnly), r.StoreID, campaignOf(r.CouponID), false, r.Amount)
	}
	return out
}

func TestStatementsEqualTheLedger(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db) // Asia/Shanghai, UTC+8; the clock starts at 12:00 local on 2026-12-01
		ctx := context.Background()
		half := w.newCampaign(services.CreateCampaignInput{Name: "Half off", Type: models.CampaignDiscount, Value: 50,
			MaxDiscount: 2000, TotalQuantity: 100})
		cash := w.issue(w.campaign, 6)
		disc := w.issue(half, 3)
		redeemAt := func(store int64, code, req string, amount int64) *models.RedemptionFlow {
			f, err := w.svc.Redemptions.Redeem(ctx, w.admin, services.RedeemInput{Code: code, StoreID: store, RequestID: req, OrderAmount: amount})
			must(t, err)
			if f.Status != models.FlowSucceeded {
				t.Fatalf("redeem %s: %s", req, f.Status)
			}
			return f
		}
		// 2026-12-01, local noon: three at A (two cash, one half-off), one at B.
		a1 := redeemAt(w.storeA.ID, cash[0], "a1", 5000)
		redeemAt(w.storeA.ID, cash[1], "a2", 5000)
		redeemAt(w.storeA.ID, disc[0], "a3", 3000) // 1500 off
		redeemAt(w.storeB.ID, cash[2], "b1", 9000)
		// 23:59:59 local on 12-01 is still the first day...
		w.clock.Advance(11*time.Hour + 59*time.Minute + 59*time.Second)
		redeemAt(w.storeB.ID, disc[1], "b2", 10000) // 2000 off (capped)
		// ...and one second later, 2026-12-02 00:00 local (16:00 UTC on 12-01).
		w.clock.Advance(time.Second)
		redeemAt(w.storeA.ID, cash[3], "a4", 5000)
		_, err := w.svc.Redemptions.Refund(ctx, w.admin, services.RefundInput{RedeemNo: a1.RedeemNo, RequestID: "rf-a1"})
		must(t, err)
		// A later day outside the range.
		w.clock.Advance(48 * time.Hour)
		redeemAt(w.storeA.ID, cash[4], "a5", 5000)

		_, err = w.svc.Statements.Daily(ctx, w.clerkA, services.StatementInput{From: "2026-12-01", To: "2026-12-02"})
		wantCode(t, err, "FORBIDDEN")
		_, err = w.svc.Statements.Daily(ctx, w.finance, services.StatementInput{From: "2026-12-03", To: "2026-12-01"})
		wantCode(t, err, "BAD_USER_INPUT")
		_, err = w.svc.Statements.Daily(ctx, w.finance, services.StatementInput{From: "yesterday", To: "2026-12-01"})
		wantCode(t, err, "BAD_USER_INPUT")

		st, err := w.svc.Statements.Daily(ctx, w.finance, services.StatementInput{From: "2026-12-01", To: "2026-12-02"})
		must(t, err)
		want := []services.StatementLine{
			{Day: "2026-12-01", StoreID: w.storeA.ID, RedeemedCount: 3, RedeemedAmount: 3500, NetCount: 3, NetAmount: 3500},
			{Day: "2026-12-01", StoreID: w.storeB.ID, RedeemedCount: 2, RedeemedAmount: 3000, NetCount: 2, NetAmount: 3000},
			{Day: "2026-12-02", StoreID: w.storeA.ID, RedeemedCount: 1, RedeemedAmount: 1000, RefundedCount: 1,
				RefundedAmount: 1000, NetCount: 0, NetAmount: 0},
		}
		if st.Timezone != "Asia/Shanghai" || len(st.Stores) != len(want) {
			t.Fatalf("statement %s with %d store lines: %+v", st.Timezone, len(st.Stores), st.Stores)
		}
		for i := range want {
			if st.Stores[i] != want[i] {
				t.Fatalf("line %d: %+v, want %+v", i, st.Stores[i], want[i])
			}
		}

		loc, _ := time.LoadLocation("Asia/Shanghai")
		slow := ledgerStatement(t, db, w.merchant.ID, loc)
		lines := append(append([]services.StatementLine(nil), st.Stores...), st.Campaigns...)
		n := 0
		for _, byDay := range slow {
			for day := range byDay {
				if day == "2026-12-01" || day == "2026-12-02" {
					n++
				}
			}
		}
		if len(lines) != n {
			t.Fatalf("%d statement lines, ledger has %d", len(lines), n)
		}
		for _, l := range lines {
			if got := slow[[3]int64{l.StoreID, l.CampaignID}][l.Day]; got != l {
				t.Fatalf("statement %+v, ledger %+v", l, got)
			}
		}

		// A single day.
		day2, err := w.svc.Statements.Daily(ctx, w.finance, services.StatementInput{From: "2026-12-02", To: "2026-12-02"})
		must(t, err)
		if len(day2.Stores) != 1 || day2.Stores[0] != want[2] {
			t.Fatalf("2026-12-02 alone: %+v", day2.Stores)
		}

		// One store only.
		onlyB, err := w.svc.Statements.Daily(ctx, w.admin, services.StatementInput{From: "2026-12-01", To: "2026-12-05", StoreID: w.storeB.ID})
		must(t, err)
		if len(onlyB.Stores) != 1 || onlyB.Stores[0] != want[1] || len(onlyB.Campaigns) != 2 {
			t.Fatalf("store B: %+v / %+v", onlyB.Stores, onlyB.Campaigns)
		}
	})
}

// Days follow the merchant's zone across a daylight-saving change: on the day
// New York falls back, the local day is 25 hours long.
func TestStatementsAcrossDaylightSaving(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		clk := &clock{t: time.Date(2026, 10, 31, 12, 0, 0, 0, time.UTC)}
		svc := services.New(db, services.Options{Now: clk.Now})
		m, err := svc.Merchants.Create(ctx, "nyc", "NYC Bagels", "America/New_York")
		must(t, err)
		admin := services.SystemActor(m.ID)
		st, err := svc.Stores.Create(ctx, admin, services.CreateStoreInput{Code: "NY1", Name: "Broadway"})
		must(t, err)
		camp, err := svc.Campaigns.Create(ctx, admin, services.CreateCampaignInput{Name: "Dollar off", Type: models.CampaignCash,
			Value: 100, TotalQuantity: 10, ValidFrom: clk.Now().Add(-time.Hour), ValidTo: clk.Now().Add(30 * 24 * time.Hour)})
		must(t, err)
		issued, err := svc.Campaigns.IssueCoupons(ctx, admin, services.IssueInput{CampaignID: camp.ID, Count: 3})
		must(t, err)
		redeemAt := func(at time.Time, code, req string) {
			clk.mu.Lock()
			clk.t = at
			clk.mu.Unlock()
			f, err := svc.Redemptions.Redeem(ctx, admin, services.RedeemInput{Code: code, StoreID: st.ID, RequestID: req, OrderAmount: 500})
			must(t, err)
			if f.Status != models.FlowSucceeded {
				t.Fatalf("redeem %s", f.Status)
			}
		}
		// 2026-11-01 00:30 EDT = 04:30 UTC; 23:30 EST = 2026-11-02 04:30 UTC;
		// 2026-11-02 00:30 EST = 05:30 UTC.
		redeemAt(time.Date(2026, 11, 1, 4, 30, 0, 0, time.UTC), issued.Codes[0], "n1")
		redeemAt(time.Date(2026, 11, 2, 4, 30, 0, 0, time.UTC), issued.Codes[1], "n2")
		redeemAt(time.Date(2026, 11, 2, 5, 30, 0, 0, time.UTC), issued.Codes[2], "n3")
		got, err := svc.Statements.Daily(ctx, admin, services.StatementInput{From: "2026-11-01", To: "2026-11-02"})
		must(t, err)
		if len(got.Stores) != 2 || got.Stores[0].Day != "2026-11-01" || got.Stores[0].RedeemedCount != 2 ||
			got.Stores[1].Day != "2026-11-02" || got.Stores[1].RedeemedCount != 1 {
			t.Fatalf("statement %+v", got.Stores)
		}
	})
}
