package services_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/internal/testdb"
	"coupond/models"
	"coupond/services"
)

// redeemAll redeems each code once, all at once, as actor at store with
// customer, and returns the flows.
func (w *world) redeemAll(actor services.Actor, store int64, customer, prefix string, codes []string) []*models.RedemptionFlow {
	w.t.Helper()
	flows := make([]*models.RedemptionFlow, len(codes))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, code := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			f, err := w.svc.Redemptions.Redeem(context.Background(), actor, services.RedeemInput{Code: code, StoreID: store,
				RequestID: fmt.Sprintf("%s-%d", prefix, i), OrderAmount: 5000, CustomerRef: customer})
			if err != nil {
				w.t.Errorf("redeem %d: %v", i, err)
			}
			flows[i] = f
		}()
	}
	close(start)
	wg.Wait()
	return flows
}

// outcomes counts flows by status, and rejections by reason.
func outcomes(flows []*models.RedemptionFlow) map[string]int {
	out := map[string]int{}
	for _, f := range flows {
		switch {
		case f == nil:
			out["error"]++
		case f.Status == models.FlowRejected:
			out[*f.RejectReason]++
		default:
			out[string(f.Status)]++
		}
	}
	return out
}

// Per-customer and per-store limits under 100 concurrent redemptions of
// distinct coupons: exactly the limit succeeds, the rest are rejected with
// the limit's reason; a refunded or released use gives its allowance back;
// the next merchant-local day (Asia/Shanghai) starts a new daily count. On
// every one-shot strategy and both databases.
func TestRedemptionLimitsExact(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		for _, oneCommit := range []bool{false, true} {
			t.Run(fmt.Sprintf("oneCommit=%t", oneCommit), func(t *testing.T) {
				sdb := db
				if oneCommit {
					sdb = freshDB(t, db)
				}
				w := newWorldWith(t, sdb, oneCommit)
				ctx := context.Background()
				const n = 100

				t.Run("per customer", func(t *testing.T) {
					camp := w.newCampaign(services.CreateCampaignInput{Name: "2 per customer", Type: models.CampaignCash,
						Value: 500, TotalQuantity: 1000, PerCustomerLimit: 2})
					codes := w.issue(camp, n+1)
					got := outcomes(w.redeemAll(w.clerkA, w.storeA.ID, "alice", "pc", codes[:n]))
					if got["SUCCEEDED"] != 2 || got[services.RejectCustomerLimitReached] != n-2 {
						t.Fatalf("outcomes %v, want 2 SUCCEEDED and %d %s", got, n-2, services.RejectCustomerLimitReached)
					}
					// Another customer has an allowance of its own.
					if f, err := w.svc.Redemptions.Redeem(ctx, w.clerkA, services.RedeemInput{Code: codes[n], StoreID: w.storeA.ID,
						RequestID: "pc-bob", OrderAmount: 5000, CustomerRef: "bob"}); err != nil || f.Status != models.FlowSucceeded {
						t.Fatalf("bob: %+v %v", f, err)
					}
					// A refunded use gives alice one use back.
					var done *models.RedemptionFlow
					must(t, w.db.Where("customer_ref = ? AND status = 'SUCCEEDED'", "alice").Take(&done).Error)
					if w.count(&models.RedemptionFlow{}, "customer_ref = ? AND status = 'SUCCEEDED'", "alice") != 2 {
						t.Fatal("alice's uses are not recorded with her customerRef")
					}
					_, err := w.svc.Redemptions.Refund(ctx, w.admin, services.RefundInput{RedeemNo: done.RedeemNo, RequestID: "pc-rf"})
					must(t, err)
					got = outcomes(w.redeemAll(w.clerkA, w.storeA.ID, "alice", "pc2", w.issue(camp, 10)))
					if got["SUCCEEDED"] != 1 || got[services.RejectCustomerLimitReached] != 9 {
						t.Fatalf("after a refund: %v, want 1 SUCCEEDED", got)
					}
				})

				t.Run("per customer per day", func(t *testing.T) {
					camp := w.newCampaign(services.CreateCampaignInput{Name: "1 a day", Type: models.CampaignCash,
						Value: 500, TotalQuantity: 1000, PerCustomerDailyLimit: int64p(1)})
					got := outcomes(w.redeemAll(w.clerkA, w.storeA.ID, "carol", "pd", w.issue(camp, n)))
					if got["SUCCEEDED"] != 1 || got[services.RejectCustomerLimitReached] != n-1 {
						t.Fatalf("outcomes %v, want 1 SUCCEEDED", got)
					}
					// The world's clock is 12:00 in Shanghai: 11:59:59 later is
					// still today, 12:00:00 later is tomorrow.
					w.clock.Advance(12*time.Hour - time.Second)
					if got := outcomes(w.redeemAll(w.clerkA, w.storeA.ID, "carol", "pd-late", w.issue(camp, 1))); got[services.RejectCustomerLimitReached] != 1 {
						t.Fatalf("23:59:59 local: %v, want the day's limit", got)
					}
					w.clock.Advance(time.Second)
					if got := outcomes(w.redeemAll(w.clerkA, w.storeA.ID, "carol", "pd-next", w.issue(camp, 3))); got["SUCCEEDED"] != 1 {
						t.Fatalf("00:00:00 local the next day: %v, want 1 SUCCEEDED", got)
					}
				})

				t.Run("per store per day", func(t *testing.T) {
					camp := w.newCampaign(services.CreateCampaignInput{Name: "3 a store a day", Type: models.CampaignCash,
						Value: 500, TotalQuantity: 1000, PerStoreDailyLimit: int64p(3)})
					got := outcomes(w.redeemAll(w.clerkA, w.storeA.ID, "", "ps", w.issue(camp, n)))
					if got["SUCCEEDED"] != 3 || got[services.RejectStoreDailyLimitReached] != n-3 {
						t.Fatalf("outcomes %v, want 3 SUCCEEDED", got)
					}
					clerkB := w.actor(models.RoleClerk, "BJ01")
					if got := outcomes(w.redeemAll(clerkB, w.storeB.ID, "", "ps-b", w.issue(camp, 5))); got["SUCCEEDED"] != 3 {
						t.Fatalf("store B: %v, want its own 3", got)
					}
					if oneCommit {
						return
					}
					// A use released after a failed business step gives the
					// allowance back.
					camp2 := w.newCampaign(services.CreateCampaignInput{Name: "1 a store a day", Type: models.CampaignCash,
						Value: 500, TotalQuantity: 1000, PerStoreDailyLimit: int64p(1)})
					codes := w.issue(camp2, 2)
					w.ful.failWith(fmt.Errorf("printer offline: %w", services.ErrFulfilmentRejected))
					f, err := w.redeem(codes[0], "ps-fail", 5000)
					w.ful.failWith(nil)
					must(t, err)
					if f.Status != models.FlowReleased {
						t.Fatalf("failed fulfilment: %+v", f)
					}
					if f, err := w.redeem(codes[1], "ps-after", 5000); err != nil || f.Status != models.FlowSucceeded {
						t.Fatalf("after a released use: %+v %v", f, err)
					}
				})
				w.noViolations(t)
			})
		}
	})
}

// A coupon issued to a customer takes only that customer: another
// customerRef is CUSTOMER_MISMATCH, none counts the use for the coupon's
// customer. The quote says the same, and every limit at once.
func TestCustomerMismatch(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		for _, oneCommit := range []bool{false, true} {
			t.Run(fmt.Sprintf("oneCommit=%t", oneCommit), func(t *testing.T) {
				sdb := db
				if oneCommit {
					sdb = freshDB(t, db)
				}
				w := newWorldWith(t, sdb, oneCommit)
				ctx := context.Background()
				res, err := w.svc.Campaigns.IssueCoupons(ctx, w.admin, services.IssueInput{CampaignID: w.campaign.ID,
					CustomerRefs: []string{"alice"}, Count: 2})
				must(t, err)
				redeem := func(code, id, customer string) *models.RedemptionFlow {
					f, err := w.svc.Redemptions.Redeem(ctx, w.clerkA, services.RedeemInput{Code: code, StoreID: w.storeA.ID,
						RequestID: id, OrderAmount: 5000, CustomerRef: customer})
					must(t, err)
					return f
				}
				q, err := w.svc.Redemptions.Quote(ctx, w.clerkA, services.QuoteInput{Code: res.Codes[0], StoreID: w.storeA.ID,
					OrderAmount: 100, CustomerRef: "bob"})
				must(t, err)
				if strings.Join(q.Reasons, ",") != services.RejectMinSpendNotMet+","+services.RejectCustomerMismatch {
					t.Fatalf("quote reasons %v", q.Reasons)
				}
				if f := redeem(res.Codes[0], "m1", "bob"); f.Status != models.FlowRejected || *f.RejectReason != services.RejectCustomerMismatch {
					t.Fatalf("bob redeemed alice's coupon: %+v", f)
				}
				if f := redeem(res.Codes[0], "m2", "alice"); f.Status != models.FlowSucceeded || deref(f.CustomerRef) != "alice" {
					t.Fatalf("alice: %+v", f)
				}
				if f := redeem(res.Codes[1], "m3", ""); f.Status != models.FlowSucceeded || deref(f.CustomerRef) != "alice" {
					t.Fatalf("no customerRef: %+v", f)
				}
				// A different customerRef under a used request id is another request.
				_, err = w.svc.Redemptions.Redeem(ctx, w.clerkA, services.RedeemInput{Code: res.Codes[1], StoreID: w.storeA.ID,
					RequestID: "m3", OrderAmount: 5000, CustomerRef: "bob"})
				wantCode(t, err, "IDEMPOTENCY_KEY_REUSED")
			})
		}
	})
}

// Daily limits below 1 are BAD_USER_INPUT naming the field; nothing written.
func TestDailyLimitBounds(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		before := w.count(&models.Campaign{}, "1 = 1")
		for _, tt := range []struct {
			field string
			in    services.CreateCampaignInput
		}{
			{"perCustomerDailyLimit", services.CreateCampaignInput{PerCustomerDailyLimit: int64p(0)}},
			{"perStoreDailyLimit", services.CreateCampaignInput{PerStoreDailyLimit: int64p(-1)}},
		} {
			in := tt.in
			in.Name, in.Type, in.Value, in.TotalQuantity = "bad", models.CampaignCash, 100, 1
			in.ValidFrom, in.ValidTo = w.clock.Now(), w.clock.Now().AddDate(0, 1, 0)
			_, err := w.svc.Campaigns.Create(context.Background(), w.admin, in)
			var se *services.Error
			if !errors.As(err, &se) || se.Code != "BAD_USER_INPUT" || !strings.Contains(se.Message, tt.field) {
				t.Fatalf("%s: %v", tt.field, err)
			}
		}
		if w.count(&models.Campaign{}, "1 = 1") != before {
			t.Fatal("a refused campaign was written")
		}
	})
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// Reconciliation holds the limits' counters to the uses they count: after
// uses that were taken, refunded and released under all three limits, a
// clean run finds nothing; a counter raised by one, a counter deleted while
// its uses stand and a counter of no use are each an ALLOWANCE_COUNT_MISMATCH
// naming the counter, and nothing else is found.
func TestAllowanceCountersReconcile(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		camp := w.newCampaign(services.CreateCampaignInput{Name: "limited", Type: models.CampaignCash, Value: 500,
			TotalQuantity: 1000, PerCustomerLimit: 5, PerCustomerDailyLimit: int64p(3), PerStoreDailyLimit: int64p(10)})
		codes := w.issue(camp, 6)
		redeem := func(i int, customer string) *models.RedemptionFlow {
			f, err := w.svc.Redemptions.Redeem(ctx, w.clerkA, services.RedeemInput{Code: codes[i], StoreID: w.storeA.ID,
				RequestID: fmt.Sprintf("al-%d", i), OrderAmount: 5000, CustomerRef: customer})
			must(t, err)
			return f
		}
		redeem(0, "alice")
		refunded := redeem(1, "alice")
		redeem(2, "bob")
		redeem(3, "")
		_, err := w.svc.Redemptions.Refund(ctx, w.admin, services.RefundInput{RedeemNo: refunded.RedeemNo, RequestID: "al-rf"})
		must(t, err)
		w.ful.failWith(fmt.Errorf("printer offline: %w", services.ErrFulfilmentRejected))
		if f := redeem(4, "alice"); f.Status != models.FlowReleased {
			t.Fatalf("failed fulfilment: %+v", f)
		}
		w.ful.failWith(nil)
		// A use held by a two-phase reservation counts as well.
		held, err := w.svc.Redemptions.Reserve(ctx, w.clerkA, services.RedeemInput{Code: codes[5], StoreID: w.storeA.ID,
			RequestID: "al-held", OrderAmount: 5000, CustomerRef: "carol"})
		must(t, err)
		if held.Status != models.FlowProcessing {
			t.Fatalf("reserve: %+v", held)
		}
		w.noViolations(t)

		day := refunded.AllowanceDay
		store := fmt.Sprint(w.storeA.ID)
		var storeUsed int64
		must(t, db.Raw(`SELECT used FROM redemption_allowances WHERE campaign_id = ? AND scope = 'STORE_DAY'`, camp.ID).Scan(&storeUsed).Error)
		if storeUsed != 4 {
			t.Fatalf("store counter %d, want 4 (alice, bob, the anonymous use and carol's held one)", storeUsed)
		}
		mustExec := func(sql string, args ...any) {
			t.Helper()
			if res := db.Exec(sql, args...); res.Error != nil || res.RowsAffected != 1 {
				t.Fatalf("%s: %v, %d rows", sql, res.Error, res.RowsAffected)
			}
		}
		mustExec(`UPDATE redemption_allowances SET used = used + 1 WHERE campaign_id = ? AND scope = 'STORE_DAY'`, camp.ID)
		mustExec(`DELETE FROM redemption_allowances WHERE campaign_id = ? AND scope = 'CUSTOMER' AND subject = 'bob'`, camp.ID)
		mustExec(`INSERT INTO redemption_allowances (merchant_id, campaign_id, scope, subject, day, used) VALUES (?, ?, 'CUSTOMER_DAY', 'dave', ?, 2)`,
			w.merchant.ID, camp.ID, day)
		vs, err := w.svc.Reconciliation.Check(ctx)
		must(t, err)
		got := map[string]string{}
		for _, v := range vs {
			if v.Kind != models.FindingAllowanceCountMismatch || v.MerchantID != w.merchant.ID {
				t.Fatalf("unexpected violation %+v", v)
			}
			got[v.Key] = v.Details
		}
		k := func(scope, subject, day string) string {
			return fmt.Sprintf("ALLOWANCE_COUNT_MISMATCH:%d:%s:%s:%s", camp.ID, scope, subject, day)
		}
		want := map[string]string{
			k("STORE_DAY", store, day): fmt.Sprintf("campaign %d's STORE_DAY limit counter of %s on %s counts 5 uses, "+
				"but 4 held or succeeded, unrefunded uses count against it", camp.ID, store, day),
			k("CUSTOMER", "bob", ""): fmt.Sprintf("campaign %d's CUSTOMER limit counter of bob counts 0 uses, "+
				"but 1 held or succeeded, unrefunded uses count against it", camp.ID),
			k("CUSTOMER_DAY", "dave", day): fmt.Sprintf("campaign %d's CUSTOMER_DAY limit counter of dave on %s counts 2 uses, "+
				"but 0 held or succeeded, unrefunded uses count against it", camp.ID, day),
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("violations\n%v\nwant\n%v", got, want)
		}
		// The job writes them as findings finance sees.
		_, err = w.svc.Reconciliation.Reconcile(ctx)
		must(t, err)
		if n := w.count(&models.Finding{}, "kind = ?", models.FindingAllowanceCountMismatch); n != 3 {
			t.Fatalf("%d ALLOWANCE_COUNT_MISMATCH findings, want 3", n)
		}
	})
}

// perCustomerLimit caps both a customer's coupons and their uses, so on a
// multi-use campaign it must leave room for a whole card: below
// usesPerCoupon it is BAD_USER_INPUT naming it and nothing is written; 0 (no
// limit) or a multiple of usesPerCoupon is taken.
func TestPerCustomerLimitOnCards(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		tests := []struct {
			name       string
			uses, per  int64
			wantRefuse bool
		}{
			{"single use, limit 1", 1, 1, false},
			{"card of 3, limit 1", 3, 1, true},
			{"card of 3, limit 2", 3, 2, true},
			{"card of 3, limit 3", 3, 3, false},
			{"card of 3, two cards", 3, 6, false},
			{"card of 3, no limit", 3, 0, false},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				before := w.count(&models.Campaign{}, "1 = 1")
				_, err := w.svc.Campaigns.Create(ctx, w.admin, services.CreateCampaignInput{Name: tt.name, Type: models.CampaignCash,
					Value: 500, TotalQuantity: 10, ValidFrom: w.clock.Now().Add(-time.Hour), ValidTo: w.clock.Now().Add(time.Hour),
					UsesPerCoupon: int64p(tt.uses), PerCustomerLimit: tt.per})
				if !tt.wantRefuse {
					must(t, err)
					return
				}
				wantCode(t, err, "BAD_USER_INPUT")
				if !strings.Contains(err.Error(), "perCustomerLimit") {
					t.Fatalf("%v does not name perCustomerLimit", err)
				}
				if w.count(&models.Campaign{}, "1 = 1") != before {
					t.Fatal("a refused campaign was written")
				}
			})
		}
		// A customer with a 3-use card and perCustomerLimit 3 uses all of it.
		camp := w.newCampaign(services.CreateCampaignInput{Name: "card", Type: models.CampaignCash, Value: 500,
			TotalQuantity: 10, UsesPerCoupon: int64p(3), PerCustomerLimit: 3})
		code := w.issue(camp, 1)[0]
		for i := range 4 {
			f, err := w.svc.Redemptions.Redeem(ctx, w.clerkA, services.RedeemInput{Code: code, StoreID: w.storeA.ID,
				RequestID: fmt.Sprintf("card-%d", i), OrderAmount: 5000, CustomerRef: "erin"})
			must(t, err)
			if want := models.FlowSucceeded; i < 3 && f.Status != want {
				t.Fatalf("use %d: %+v", i+1, f)
			} else if i == 3 && f.Status != models.FlowRejected {
				t.Fatalf("a fourth use: %+v", f)
			}
		}
	})
}
