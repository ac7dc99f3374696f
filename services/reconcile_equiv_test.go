package services_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/internal/testdb"
	"coupond/models"
	"coupond/services"
)

// The checks' SQL is written for speed; the reference checks are the plain
// statement of each invariant. On a ledger broken in every way the faster SQL
// treats differently (refunds old and young, orders of other merchants,
// version gaps, broken chains, versions below one), planted one after another,
// both must report exactly the same violations with the same details.
func TestReconciliationMatchesReference(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		l := newLedger(t, db)
		ctx := context.Background()
		now := l.clock.Now()
		other, err := l.svc.Merchants.Create(ctx, "other", "Other", "")
		must(t, err)
		refund := func(f *models.RedemptionFlow, no string, at time.Time) {
			l.exec(`INSERT INTO refund_flows (merchant_id, refund_no, request_id, fingerprint, redemption_id, redeem_no, coupon_id,
  store_id, status, reason, amount, reissue, created_at) VALUES (?, ?, ?, 'x', ?, ?, ?, ?, 'SUCCEEDED', '', 1000, false, ?)`,
				f.MerchantID, no, no, f.ID, f.RedeemNo, f.CouponID, l.storeA.ID, at)
		}
		order := func(merchantID int64, redeemNo string) {
			l.exec("INSERT INTO orders (merchant_id, redeem_no, amount, status, created_at) VALUES (?, ?, 100, 'CREATED', ?)",
				merchantID, redeemNo, now)
		}
		transition := func(code string, from, to models.CouponStatus, version int64) {
			l.exec(`INSERT INTO coupon_transitions (merchant_id, coupon_id, from_status, to_status, version_after, flow_no, actor, created_at)
VALUES (?, ?, ?, ?, ?, 'planted', 'system', ?)`, l.merchant.ID, l.couponID(code), from, to, version, now)
		}
		coupon := func(code string, status models.CouponStatus, version int64) {
			l.exec("UPDATE coupons SET status = ?, version = ? WHERE id = ?", status, version, l.couponID(code))
		}
		spare := l.issue(l.spare, 3)
		plants := []struct {
			name  string
			plant func()
		}{
			{"nothing", func() {}},
			{"order without any flow", func() { order(l.merchant.ID, "RDGHOST") }},
			{"order of a redemption in flight", func() { order(l.merchant.ID, l.reserved.RedeemNo) }},
			{"order of a released redemption", func() { order(l.merchant.ID, l.released.RedeemNo) }},
			{"order of another merchant's redemption", func() { order(other.ID, l.confirmed.RedeemNo) }},
			{"refund older than the grace period, order live", func() { refund(l.redeemedA, "RFOLD", now.Add(-time.Hour)) }},
			{"refund within the grace period, order live", func() { refund(l.redeemedB, "RFYOUNG", now) }},
			{"version gap", func() {
				transition(l.unused[0], models.CouponUnused, models.CouponRedeeming, 1)
				transition(l.unused[0], models.CouponRedeeming, models.CouponUnused, 3)
				coupon(l.unused[0], models.CouponUnused, 2)
			}},
			{"last transition ends elsewhere", func() {
				transition(l.unused[1], models.CouponUnused, models.CouponExpired, 1)
				coupon(l.unused[1], models.CouponUnused, 1)
			}},
			{"redeemed at version 0", func() { coupon(l.unused[2], models.CouponRedeemed, 0) }},
			{"transition of a coupon at version 0", func() {
				transition(l.unused[3], models.CouponUnused, models.CouponRedeeming, 1)
			}},
			{"broken chain", func() {
				transition(l.unused[4], models.CouponUnused, models.CouponRedeeming, 1)
				transition(l.unused[4], models.CouponUnused, models.CouponRedeeming, 2)
				coupon(l.unused[4], models.CouponRedeeming, 2)
			}},
			{"legal edge at version 0", func() { transition(spare[0], models.CouponUnused, models.CouponExpired, 0) }},
			{"illegal edge at version 0", func() { transition(spare[1], models.CouponRefunded, models.CouponUnused, 0) }},
			{"first transition not from UNUSED", func() {
				transition(spare[2], models.CouponRedeeming, models.CouponUnused, 1)
				coupon(spare[2], models.CouponUnused, 1)
			}},
			// A yielding run counts coupons in batches of their own (a
			// tally), apart from the counters it compares them with.
			{"issued counter above the coupons", func() { l.exec("UPDATE campaigns SET issued = issued + 1 WHERE id = ?", l.spare.ID) }},
			{"issued counter below the coupons", func() { l.exec("UPDATE campaigns SET issued = issued - 2 WHERE id = ?", l.campaign.ID) }},
		}
		for _, p := range plants {
			p.plant()
			got, err := l.svc.Reconciliation.Check(ctx)
			must(t, err)
			want, err := services.CheckWithReference(ctx, l.svc.Reconciliation)
			must(t, err)
			if g, w := violationSet(got), violationSet(want); g != w {
				t.Fatalf("after %s:\ngot\n%s\nwant\n%s", p.name, g, w)
			}
			// The job's yielding run (one check at a time, in batches of
			// each merchant's ids, no parallel workers, pauses) reports the
			// same, whether a batch holds one id, a few, or all of them.
			for _, span := range []int64{1, 3, 0} {
				yielded, err := services.CheckYielding(ctx, l.svc.Reconciliation, span)
				must(t, err)
				if g, w := violationSet(yielded), violationSet(want); g != w {
					t.Fatalf("yielding run in batches of %d after %s:\ngot\n%s\nwant\n%s", span, p.name, g, w)
				}
			}
		}
		if vs, _ := l.svc.Reconciliation.Check(ctx); len(vs) < len(plants)-1 {
			t.Fatalf("only %d violations planted in %d ways", len(vs), len(plants)-1)
		}
	})
}

func violationSet(vs []services.Violation) string {
	lines := make([]string, len(vs))
	for i, v := range vs {
		lines[i] = v.Key + " | " + v.String()
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// Checks run concurrently; a cancelled context stops them all and fails Check
// instead of returning a partial result.
func TestReconciliationCheckCancelled(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		l := newLedger(t, db)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if vs, err := l.svc.Reconciliation.Check(ctx); err == nil {
			t.Fatalf("check with a cancelled context returned %d violations and no error", len(vs))
		}
	})
}

// A yielding run counts each campaign's coupons in batches, apart from the
// counter it compares them with. Coupons issued while the batches run land
// in a range still to be counted when their ids were drawn before the walk's
// end was read; the counter that moved with them is then left to the next
// run, instead of being reported against a count that already holds them.
func TestReconciliationTallyLeavesMovingCounters(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		l := newLedger(t, db)
		ctx := context.Background()
		now := l.clock.Now()
		var top int64
		must(t, db.Raw("SELECT MAX(id) FROM coupons").Scan(&top).Error)
		// plant issues one coupon of the spare campaign with the given id,
		// counted in the same transaction, as issuance does.
		plant := func(tx *gorm.DB, id int64) error {
			if err := tx.Exec(`INSERT INTO coupons (id, merchant_id, campaign_id, code, status, version, valid_from, valid_to,
  created_at, updated_at, uses_total, uses_left) VALUES (?, ?, ?, ?, 'UNUSED', 0, ?, ?, ?, ?, 1, 1)`,
				id, l.merchant.ID, l.spare.ID, fmt.Sprintf("MOVING%d", id), now.Add(-time.Hour), now.Add(time.Hour), now, now).Error; err != nil {
				return err
			}
			return tx.Exec("UPDATE campaigns SET issued = issued + 1 WHERE id = ?", l.spare.ID).Error
		}
		// The walk's end is read past this one; the coupon issued during
		// the walk gets an id below it.
		must(t, db.Transaction(func(tx *gorm.DB) error { return plant(tx, top+100) }))
		vs, err := l.svc.Reconciliation.Check(ctx)
		must(t, err)
		if len(vs) != 0 {
			t.Fatalf("before: %v", vs)
		}
		var once sync.Once
		var issued error
		services.SetTallyHook(func() {
			once.Do(func() { issued = db.Transaction(func(tx *gorm.DB) error { return plant(tx, top+50) }) })
		})
		defer services.SetTallyHook(nil)
		vs, err = services.CheckYielding(ctx, l.svc.Reconciliation, 1)
		must(t, err)
		must(t, issued)
		if len(vs) != 0 {
			t.Fatalf("a counter that moved during the count was judged: %v", vs)
		}
		// The next run counts it whole.
		services.SetTallyHook(nil)
		l.exec("UPDATE campaigns SET issued = issued + 1 WHERE id = ?", l.spare.ID)
		vs, err = services.CheckYielding(ctx, l.svc.Reconciliation, 1)
		must(t, err)
		if len(vs) != 1 || vs[0].Kind != models.FindingIssuedCountMismatch {
			t.Fatalf("next run: %v, want the counter one above its coupons", vs)
		}
	})
}
