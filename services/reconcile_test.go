package services_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/internal/testdb"
	"coupond/models"
	"coupond/services"
)

// ledger is a world with one coupon in every state reachable through the API.
type ledger struct {
	*world
	redeemedA, redeemedB *models.RedemptionFlow // one-shot, succeeded, order live
	refunded             *models.RedemptionFlow // one-shot, refunded, order cancelled
	confirmed            *models.RedemptionFlow // two-phase, succeeded
	confirmedRefunded    *models.RedemptionFlow // two-phase, refunded
	reserved             *models.RedemptionFlow // two-phase, within its hold
	released             *models.RedemptionFlow // one-shot, fulfilment rejected
	unused               []string
	spare                *models.Campaign
}

func newLedger(t *testing.T, db *gorm.DB) *ledger {
	t.Helper()
	ctx := context.Background()
	l := &ledger{world: newWorld(t, db)}
	codes := l.issue(l.campaign, 12)
	redeem := func(code, req string) *models.RedemptionFlow {
		f, err := l.redeem(code, req, 5000)
		must(t, err)
		return f
	}
	twoPhase := func(code, req string, confirm bool) *models.RedemptionFlow {
		f, err := l.svc.Redemptions.Reserve(ctx, l.clerkA, services.RedeemInput{Code: code, StoreID: l.storeA.ID,
			RequestID: req, OrderAmount: 5000})
		must(t, err)
		if confirm {
			f, err = l.svc.Redemptions.Confirm(ctx, l.clerkA, services.ConfirmInput{RedeemNo: f.RedeemNo, OrderRef: "POS-" + req})
			must(t, err)
		}
		return f
	}
	refund := func(f *models.RedemptionFlow, req string) {
		_, err := l.svc.Redemptions.Refund(ctx, l.admin, services.RefundInput{RedeemNo: f.RedeemNo, RequestID: req})
		must(t, err)
	}
	l.redeemedA = redeem(codes[0], "r-a")
	l.redeemedB = redeem(codes[1], "r-b")
	l.refunded = redeem(codes[2], "r-c")
	refund(l.refunded, "rf-c")
	l.confirmed = twoPhase(codes[3], "mp-d", true)
	l.confirmedRefunded = twoPhase(codes[4], "mp-e", true)
	refund(l.confirmedRefunded, "rf-e")
	l.reserved = twoPhase(codes[5], "mp-f", false)
	l.ful.failWith(services.ErrFulfilmentRejected)
	l.released = redeem(codes[6], "r-g")
	l.ful.failWith(nil)
	if l.released.Status != models.FlowReleased {
		t.Fatalf("released %s", l.released.Status)
	}
	l.unused = codes[7:]
	l.spare = l.newCampaign(services.CreateCampaignInput{Name: "spare", Type: models.CampaignCash, Value: 500, TotalQuantity: 10})
	l.issue(l.spare, 2)
	return l
}

func (l *ledger) exec(sql string, args ...any) {
	l.t.Helper()
	must(l.t, l.db.Exec(sql, args...).Error)
}

func (l *ledger) couponID(code string) int64 { l.t.Helper(); return l.coupon(code).ID }

func TestReconciliationOnConsistentData(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		l := newLedger(t, db)
		vs, err := l.svc.Reconciliation.Check(context.Background())
		must(t, err)
		for _, v := range vs {
			t.Errorf("violation on consistent data: %s", v)
		}
		res, err := l.svc.Reconciliation.Reconcile(context.Background())
		must(t, err)
		if res != (services.ReconcileResult{}) {
			t.Fatalf("reconcile %+v", res)
		}
	})
}

func TestReconciliationFindsEachPlantedDiscrepancy(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		l := newLedger(t, db)
		ctx := context.Background()
		now := l.clock.Now()
		tests := []struct {
			name  string
			plant func()
			want  []models.FindingKind
		}{
			{"succeeded flow, coupon given back", func() {
				l.exec("UPDATE coupons SET status = 'UNUSED', redeem_no = NULL WHERE id = ?", l.redeemedA.CouponID)
			}, []models.FindingKind{models.FindingSucceededFlowCouponNotRedeemed, models.FindingHistoryMismatch}},
			{"redeemed coupon without its succeeded flow", func() {
				l.exec("UPDATE redemption_flows SET status = 'RELEASED' WHERE id = ?", l.confirmed.ID)
			}, []models.FindingKind{models.FindingRedeemedCouponFlowCount}},
			{"order without a redemption", func() {
				l.exec("INSERT INTO orders (merchant_id, redeem_no, amount, status, created_at) VALUES (?, 'RDGHOST', 100, 'CREATED', ?)",
					l.merchant.ID, now)
			}, []models.FindingKind{models.FindingOrderWithoutRedemption}},
			{"succeeded flow whose order was cancelled", func() {
				l.exec("UPDATE orders SET status = 'CANCELLED' WHERE redeem_no = ?", l.redeemedB.RedeemNo)
			}, []models.FindingKind{models.FindingRedemptionWithoutOrder}},
			{"coupon stuck in REDEEMING", func() {
				l.exec("UPDATE redemption_flows SET hold_until = ? WHERE id = ?", now.Add(-time.Hour), l.reserved.ID)
			}, []models.FindingKind{models.FindingStuckRedeeming}},
			{"refund of a released redemption", func() {
				l.exec(`INSERT INTO refund_flows (merchant_id, refund_no, request_id, fingerprint, redemption_id, redeem_no, coupon_id,
  store_id, status, reason, amount, reissue, created_at) VALUES (?, 'RFGHOST', 'rf-ghost', 'x', ?, ?, ?, ?, 'SUCCEEDED', '', 1000, false, ?)`,
					l.merchant.ID, l.released.ID, l.released.RedeemNo, l.released.CouponID, l.storeA.ID, now)
			}, []models.FindingKind{models.FindingRefundWithoutRedemption, models.FindingRefundCount}},
			{"refunded coupon without its refund", func() {
				l.exec("DELETE FROM refund_flows WHERE redemption_id = ?", l.confirmedRefunded.ID)
			}, []models.FindingKind{models.FindingRefundCount}},
			{"version without a transition", func() {
				l.exec("UPDATE coupons SET version = version + 1 WHERE id = ?", l.couponID(l.unused[0]))
			}, []models.FindingKind{models.FindingHistoryMismatch}},
			{"illegal edge", func() {
				id := l.couponID(l.unused[1])
				l.exec(`INSERT INTO coupon_transitions (merchant_id, coupon_id, from_status, to_status, version_after, flow_no, actor, created_at)
VALUES (?, ?, 'UNUSED', 'EXPIRED', 1, 'job', 'system', ?), (?, ?, 'EXPIRED', 'UNUSED', 2, 'hack', 'system', ?)`,
					l.merchant.ID, id, now, l.merchant.ID, id, now)
				l.exec("UPDATE coupons SET version = 2 WHERE id = ?", id)
			}, []models.FindingKind{models.FindingIllegalTransition}},
			{"REDEEMING without a flow", func() {
				id := l.couponID(l.unused[2])
				l.exec(`INSERT INTO coupon_transitions (merchant_id, coupon_id, from_status, to_status, version_after, flow_no, actor, created_at)
VALUES (?, ?, 'UNUSED', 'REDEEMING', 1, 'RDNOFLOW', 'system', ?)`, l.merchant.ID, id, now)
				l.exec("UPDATE coupons SET status = 'REDEEMING', redeem_no = 'RDNOFLOW', version = 1 WHERE id = ?", id)
			}, []models.FindingKind{models.FindingRedeemingCouponWithoutFlow}},
			{"issued counter off", func() {
				l.exec("UPDATE campaigns SET issued = issued + 1 WHERE id = ?", l.spare.ID)
			}, []models.FindingKind{models.FindingIssuedCountMismatch}},
		}
		seen := map[string]bool{}
		total := 0
		for _, tt := range tests {
			tt.plant()
			vs, err := l.svc.Reconciliation.Check(ctx)
			must(t, err)
			var got []models.FindingKind
			for _, v := range vs {
				if !seen[v.Key] {
					seen[v.Key] = true
					got = append(got, v.Kind)
				}
			}
			want := append([]models.FindingKind(nil), tt.want...)
			sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
			sort.Slice(want, func(i, j int) bool { return want[i] < want[j] })
			if len(got) != len(want) {
				t.Fatalf("%s: new violations %v, want %v", tt.name, got, want)
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("%s: new violations %v, want %v", tt.name, got, want)
				}
			}
			if len(vs) != total+len(want) {
				t.Fatalf("%s: %d violations in all, want %d", tt.name, len(vs), total+len(want))
			}
			total = len(vs)
		}

		// Findings are written once, however often reconciliation runs.
		res, err := l.svc.Reconciliation.Reconcile(ctx)
		must(t, err)
		if res.Violations != total || res.Opened != total {
			t.Fatalf("first reconcile %+v, want %d opened", res, total)
		}
		res, err = l.svc.Reconciliation.Reconcile(ctx)
		must(t, err)
		if res.Violations != total || res.Opened != 0 {
			t.Fatalf("second reconcile %+v, want nothing opened", res)
		}
		if n := l.count(&models.Finding{}, "merchant_id = ?", l.merchant.ID); n != int64(total) {
			t.Fatalf("%d findings, want %d", n, total)
		}

		// Paging through the findings visits each once.
		var all []models.Finding
		page := services.PageArgs{First: 4}
		for {
			p, err := l.svc.Reconciliation.Findings(ctx, l.finance, services.FindingFilter{Status: models.FindingOpen}, page)
			must(t, err)
			all = append(all, p.Items...)
			if !p.HasNextPage {
				break
			}
			page.After = services.EncodeCursor(p.Items[len(p.Items)-1].ID)
		}
		if len(all) != total {
			t.Fatalf("paged %d findings, want %d", len(all), total)
		}
		_, err = l.svc.Reconciliation.Findings(ctx, l.clerkA, services.FindingFilter{}, services.PageArgs{})
		wantCode(t, err, "FORBIDDEN")

		// Finance resolves one with a note, once.
		f := all[0]
		_, err = l.svc.Reconciliation.ResolveFinding(ctx, l.clerkA, f.ID, "fixed")
		wantCode(t, err, "FORBIDDEN")
		_, err = l.svc.Reconciliation.ResolveFinding(ctx, l.finance, f.ID, "  ")
		wantCode(t, err, "BAD_USER_INPUT")
		got, err := l.svc.Reconciliation.ResolveFinding(ctx, l.finance, f.ID, "order re-sent by the kitchen")
		must(t, err)
		if got.Status != models.FindingResolved || *got.Note != "order re-sent by the kitchen" || got.ResolvedBy == nil || got.ResolvedAt == nil {
			t.Fatalf("resolved finding %+v", got)
		}
		_, err = l.svc.Reconciliation.ResolveFinding(ctx, l.finance, f.ID, "again")
		wantCode(t, err, "INVALID_STATE")
		_, err = l.svc.Reconciliation.ResolveFinding(ctx, l.finance, 999999, "nope")
		wantCode(t, err, "NOT_FOUND")
		if n := l.count(&models.AuditEvent{}, "action = 'finding.resolve' AND target = ?", "finding:"+strconv.FormatInt(f.ID, 10)); n != 1 {
			t.Fatalf("%d audit events for the resolution", n)
		}
		// The discrepancy is still there: the next run reopens the resolved
		// finding rather than writing a second one.
		res, err = l.svc.Reconciliation.Reconcile(ctx)
		must(t, err)
		if res.Opened != 0 || res.Reopened != 1 {
			t.Fatalf("reconcile after resolution %+v, want 1 reopened", res)
		}
		open, err := l.svc.Reconciliation.Findings(ctx, l.admin, services.FindingFilter{Status: models.FindingOpen}, services.PageArgs{First: 100})
		must(t, err)
		if len(open.Items) != total {
			t.Fatalf("%d open findings, want %d", len(open.Items), total)
		}
	})
}

// A tenant never sees or resolves another merchant's findings.
func TestFindingsAreScopedToTheMerchant(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		l := newLedger(t, db)
		ctx := context.Background()
		l.exec("UPDATE campaigns SET issued = issued + 1 WHERE id = ?", l.spare.ID)
		_, err := l.svc.Reconciliation.Reconcile(ctx)
		must(t, err)
		other, err := l.svc.Merchants.Create(ctx, "other", "Other", "")
		must(t, err)
		stranger := services.SystemActor(other.ID)
		p, err := l.svc.Reconciliation.Findings(ctx, stranger, services.FindingFilter{}, services.PageArgs{})
		must(t, err)
		if len(p.Items) != 0 {
			t.Fatalf("stranger sees %d findings", len(p.Items))
		}
		mine, err := l.svc.Reconciliation.Findings(ctx, l.admin, services.FindingFilter{}, services.PageArgs{})
		must(t, err)
		if len(mine.Items) != 1 {
			t.Fatalf("%d findings", len(mine.Items))
		}
		_, err = l.svc.Reconciliation.ResolveFinding(ctx, stranger, mine.Items[0].ID, "not mine")
		if !errors.Is(err, services.ErrNotFound) {
			t.Fatalf("stranger resolves: %v", err)
		}
	})
}

// The yielding run skips the allowance check for a merchant with no
// campaign with a limit and no counter, and only for such a merchant: a
// counter left behind on a campaign without limits (its limit removed, or
// a row written by hand) is still found, batch size whatever, as the one
// statement finds it.
func TestYieldingAllowanceCheckSkipsOnlyMerchantsWithoutLimits(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		l := newLedger(t, db)
		ctx := context.Background()
		allowances := func(vs []services.Violation) string {
			var out []services.Violation
			for _, v := range vs {
				if v.Kind == models.FindingAllowanceCountMismatch {
					out = append(out, v)
				}
			}
			return violationSet(out)
		}
		check := func(want string) {
			t.Helper()
			got, err := l.svc.Reconciliation.Check(ctx)
			must(t, err)
			if g := allowances(got); g != want {
				t.Fatalf("one statement:\n%s\nwant\n%s", g, want)
			}
			for _, span := range []int64{1, 3, 0} {
				got, err := services.CheckYielding(ctx, l.svc.Reconciliation, span)
				must(t, err)
				if g := allowances(got); g != want {
					t.Fatalf("yielding run in batches of %d:\n%s\nwant\n%s", span, g, want)
				}
			}
		}
		check("")
		l.exec(`INSERT INTO redemption_allowances (merchant_id, campaign_id, scope, subject, day, used) VALUES (?, ?, 'CUSTOMER', 'zed', '', 2)`,
			l.merchant.ID, l.spare.ID)
		want := fmt.Sprintf("ALLOWANCE_COUNT_MISMATCH:%d:CUSTOMER:zed: | ", l.spare.ID)
		got, err := l.svc.Reconciliation.Check(ctx)
		must(t, err)
		if g := allowances(got); !strings.HasPrefix(g, want) || strings.Contains(g, "\n") {
			t.Fatalf("one statement found %q, want one violation %q...", g, want)
		}
		check(allowances(got))
	})
}
