package services

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/internal/testdb"
	"coupond/models"
)

// The eligibility rule has one definition, the SQL condition every taking
// statement carries; diagnose explains it reason by reason. For every reject
// reason, at the boundaries of the validity window, for store lists and for
// the minimum spend, diagnose must call a coupon eligible exactly when the
// SQL condition takes it, on both databases.
func TestEligibilityExplained(t *testing.T) {
	SkipUnderRace(t)
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		base := time.Date(2026, 12, 1, 4, 0, 0, 0, time.UTC)
		svc := New(db, Options{Now: func() time.Time { return base }})
		m, err := svc.Merchants.Create(ctx, "elig", "Eligibility", "Asia/Shanghai")
		must(t, err)
		admin := SystemActor(m.ID)
		storeA, err := svc.Stores.Create(ctx, admin, CreateStoreInput{Code: "A1", Name: "A"})
		must(t, err)
		storeB, err := svc.Stores.Create(ctx, admin, CreateStoreInput{Code: "B1", Name: "B"})
		must(t, err)
		validFrom, validTo := base, base.Add(24*time.Hour)
		everywhere, err := svc.Campaigns.Create(ctx, admin, CreateCampaignInput{Name: "everywhere", Type: models.CampaignCash,
			Value: 500, MinSpend: 3000, ValidFrom: validFrom, ValidTo: validTo, TotalQuantity: 100})
		must(t, err)
		onlyA, err := svc.Campaigns.Create(ctx, admin, CreateCampaignInput{Name: "only A", Type: models.CampaignDiscount,
			Value: 10, ValidFrom: validFrom, ValidTo: validTo, TotalQuantity: 100, StoreIDs: []int64{storeA.ID}})
		must(t, err)
		paused, err := svc.Campaigns.Create(ctx, admin, CreateCampaignInput{Name: "paused", Type: models.CampaignCash,
			Value: 500, ValidFrom: validFrom, ValidTo: validTo, TotalQuantity: 100})
		must(t, err)
		ended, err := svc.Campaigns.Create(ctx, admin, CreateCampaignInput{Name: "ended", Type: models.CampaignCash,
			Value: 500, ValidFrom: validFrom, ValidTo: validTo, TotalQuantity: 100})
		must(t, err)
		// Tuesdays 22:00 to 02:00 in Asia/Shanghai, a window that crosses
		// midnight and belongs to the Tuesday it starts on.
		timed, err := svc.Campaigns.Create(ctx, admin, CreateCampaignInput{Name: "timed", Type: models.CampaignCash,
			Value: 500, ValidFrom: validFrom, ValidTo: validTo, TotalQuantity: 100,
			Weekdays: []time.Weekday{time.Tuesday}, DailyWindow: &DailyWindow{From: 22 * 60, To: 2 * 60}})
		must(t, err)

		statuses := []models.CouponStatus{models.CouponUnused, models.CouponRedeeming, models.CouponRedeemed,
			models.CouponRefunded, models.CouponExpired}
		type coupon struct {
			campaign *models.Campaign
			row      *models.Coupon
		}
		var coupons []coupon
		for _, camp := range []*models.Campaign{everywhere, onlyA, paused, ended, timed} {
			res, err := svc.Campaigns.IssueCoupons(ctx, admin, IssueInput{CampaignID: camp.ID, Count: int64(len(statuses))})
			must(t, err)
			for i, code := range res.Codes {
				// The test puts each coupon in its state directly: it checks
				// the rule, not the transitions.
				must(t, db.Exec("UPDATE coupons SET status = ? WHERE merchant_id = ? AND code = ?",
					string(statuses[i]), m.ID, code).Error)
				if camp == onlyA {
					// onlyA's coupons were issued to a customer.
					must(t, db.Exec("UPDATE coupons SET customer_ref = 'alice' WHERE merchant_id = ? AND code = ?",
						m.ID, code).Error)
				}
				row, err := models.CouponByCode(db, m.ID, code)
				must(t, err)
				coupons = append(coupons, coupon{camp, row})
			}
		}
		// A paused campaign keeps its coupons' validity; the ended one is
		// marked ENDED without cutting its coupons' validity, so the state
		// alone is what the rule must see.
		paused, err = svc.Campaigns.Pause(ctx, admin, paused.ID, paused.Version)
		must(t, err)
		must(t, db.Exec("UPDATE campaigns SET state = 'ENDED' WHERE id = ?", ended.ID).Error)
		for i := range coupons {
			c, err := svc.Campaigns.current(db, coupons[i].campaign.ID)
			must(t, err)
			coupons[i].campaign = c
		}
		shanghai, err := time.LoadLocation("Asia/Shanghai")
		must(t, err)
		local := func(day, hour, minute, sec int) time.Time {
			return time.Date(2026, 12, day, hour, minute, sec, 0, shanghai)
		}
		// validFrom is Tuesday 1 December 2026, 12:00 in Shanghai.
		times := []time.Time{validFrom.Add(-time.Second), validFrom, validFrom.Add(time.Second),
			validTo.Add(-time.Second), validTo, validTo.Add(time.Second),
			local(1, 21, 59, 59), local(1, 22, 0, 0), local(1, 23, 59, 59), local(2, 0, 0, 0),
			local(2, 1, 59, 59), local(2, 2, 0, 0)}
		amounts := []int64{0, 2999, 3000, 3001}
		stores := []int64{storeA.ID, storeB.ID}
		customers := []string{"", "alice", "bob"}

		reasons := map[string]int{}
		for _, c := range coupons {
			for _, now := range times {
				for _, amount := range amounts {
					for _, store := range stores {
						for _, customer := range customers {
							now := now.In(shanghai)
							name := fmt.Sprintf("%s/%s/%s/amount=%d/store=%d/customer=%s", c.campaign.Name, c.row.Status,
								now.Format(time.RFC3339), amount, store, customer)
							reason, err := diagnose(db, c.campaign, c.row, store, amount, customer, now)
							must(t, err)
							all, err := diagnoseAll(db, c.campaign, c.row, store, amount, customer, now)
							must(t, err)
							if want := wantReasons(c.campaign, c.row, store, storeA.ID, amount, customer, now); !slices.Equal(all, want) {
								t.Errorf("%s: diagnoseAll %v, want %v", name, all, want)
							}
							taken, err := models.CouponEligible(db, c.row.ID, store, amount, customer, models.ClockOf(now), now)
							must(t, err)
							if taken != (reason == "") {
								t.Errorf("%s: SQL takes it: %t, diagnose says %q", name, taken, reason)
							}
							if want := wantReason(c.campaign, c.row, store, storeA.ID, amount, customer, now); reason != want {
								t.Errorf("%s: diagnose %q, want %q", name, reason, want)
							}
							reasons[reason]++
						}
					}
				}
			}
		}
		for _, r := range []string{"", RejectNotAvailable, RejectExpired, RejectNotYetValid, RejectStoreNotEligible,
			RejectMinSpendNotMet, RejectCampaignPaused, RejectCustomerMismatch, RejectNotValidToday, RejectOutsideHours} {
			if reasons[r] == 0 {
				t.Errorf("no case gave reason %q: the table no longer covers it", r)
			}
		}
	})
}

// wantReason is the reject reason the design gives, written independently of
// diagnose: status first, then the window, the minimum spend, the store.
func wantReason(camp *models.Campaign, c *models.Coupon, store, onlyStore, amount int64, customer string, now time.Time) string {
	switch {
	case c.Status == models.CouponExpired:
		return RejectExpired
	case c.Status != models.CouponUnused:
		return RejectNotAvailable
	case now.Before(camp.ValidFrom):
		return RejectNotYetValid
	case !now.Before(camp.ValidTo), camp.State == models.CampaignEnded:
		return RejectExpired
	case camp.State == models.CampaignPaused:
		return RejectCampaignPaused
	case !tuesdayNight(camp, now):
		return RejectNotValidToday
	case !inTuesdayWindow(camp, now):
		return RejectOutsideHours
	case amount < camp.MinSpend:
		return RejectMinSpendNotMet
	case !camp.AllStores && store != onlyStore:
		return RejectStoreNotEligible
	case c.CustomerRef != nil && customer != "" && customer != *c.CustomerRef:
		return RejectCustomerMismatch
	}
	return ""
}

// wantReasons is every reject reason the design gives for the case, each
// once, in the rank of wantReason, written independently of diagnoseAll.
func wantReasons(camp *models.Campaign, c *models.Coupon, store, onlyStore, amount int64, customer string, now time.Time) []string {
	var out []string
	add := func(fails bool, r string) {
		if fails && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	add(c.Status == models.CouponExpired, RejectExpired)
	add(c.Status != models.CouponUnused && c.Status != models.CouponExpired, RejectNotAvailable)
	add(now.Before(camp.ValidFrom), RejectNotYetValid)
	add(!now.Before(camp.ValidTo) || camp.State == models.CampaignEnded, RejectExpired)
	add(camp.State == models.CampaignPaused, RejectCampaignPaused)
	add(!tuesdayNight(camp, now), RejectNotValidToday)
	add(!inTuesdayWindow(camp, now), RejectOutsideHours)
	add(amount < camp.MinSpend, RejectMinSpendNotMet)
	add(!camp.AllStores && store != onlyStore, RejectStoreNotEligible)
	add(c.CustomerRef != nil && customer != "" && customer != *c.CustomerRef, RejectCustomerMismatch)
	return out
}

// tuesdayNight and inTuesdayWindow state the test's timed campaign
// (Tuesdays 22:00-02:00 in now's zone) plainly; any other campaign has no
// time rule. tuesdayNight: the use belongs to a Tuesday (the part of the
// window after midnight belongs to the day before). inTuesdayWindow: inside
// the window's hours.
func tuesdayNight(camp *models.Campaign, now time.Time) bool {
	if camp.Name != "timed" {
		return true
	}
	day := now
	if now.Hour() < 2 {
		day = now.AddDate(0, 0, -1)
	}
	return day.Weekday() == time.Tuesday
}

func inTuesdayWindow(camp *models.Campaign, now time.Time) bool {
	return camp.Name != "timed" || now.Hour() >= 22 || now.Hour() < 2
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
