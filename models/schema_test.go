package models_test

import (
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/internal/testdb"
	"coupond/models"
)

// transitionColumns are the coupon columns a state transition writes. While no
// index covers any of them, PostgreSQL updates the coupon in place on its page
// (a HOT update) and writes no index entry; an index on one of them would make
// every redemption write one entry per index of coupons.
var transitionColumns = []string{"status", "redeem_no", "version", "updated_at"}

func TestCouponTransitionsTouchNoIndex(t *testing.T) {
	db := testdb.Postgres(t)
	// Key columns, and columns named in an index's expressions or predicate
	// (a partial index's WHERE blocks in-place updates too).
	var cols []struct{ Index, Column string }
	err := db.Raw(`SELECT c.relname AS index, a.attname AS column FROM pg_index i
  JOIN pg_class c ON c.oid = i.indexrelid
  JOIN pg_attribute a ON a.attrelid = i.indrelid
  WHERE i.indrelid = 'coupons'::regclass AND (a.attnum = ANY (i.indkey)
    OR pg_get_expr(i.indexprs, i.indrelid) LIKE '%' || a.attname || '%'
    OR pg_get_expr(i.indpred, i.indrelid) LIKE '%' || a.attname || '%')`).Scan(&cols).Error
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, c := range cols {
		seen[c.Column] = true
		for _, tc := range transitionColumns {
			if c.Column == tc {
				t.Errorf("index %s covers coupons.%s, which every transition writes: redemptions would no longer update coupons in place", c.Index, tc)
			}
		}
	}
	if !seen["code"] || !seen["campaign_id"] {
		t.Fatalf("indexed columns of coupons %v miss code and campaign_id: the catalog query is wrong", seen)
	}
	var opts []string
	if err := db.Raw(`SELECT unnest(reloptions) FROM pg_class WHERE oid = 'coupons'::regclass`).Scan(&opts).Error; err != nil {
		t.Fatal(err)
	}
	if len(opts) != 1 || opts[0] != "fillfactor=90" {
		t.Errorf("coupons reloptions = %v, want [fillfactor=90]: without free space on the page the new row version moves to another page", opts)
	}
}

func TestCouponUpdateIsInPlace(t *testing.T) {
	db := testdb.Postgres(t)
	m, c := seedCoupon(t, db)
	// pg_stat_xact_user_tables counts the current transaction's own updates.
	err := db.Transaction(func(tx *gorm.DB) error {
		now := time.Now().UTC()
		got, ok, err := models.ReserveCoupon(tx, models.ReserveArgs{MerchantID: m, Code: c, RedeemNo: "RD1",
			StoreID: 1, OrderAmount: 100, Now: now})
		if err != nil || !ok {
			t.Fatalf("reserve: %v %v", ok, err)
		}
		if _, ok, err := models.MoveCoupon(tx, got.ID, "RD1", models.CouponRedeeming, models.CouponRedeemed, now); err != nil || !ok {
			t.Fatalf("confirm: %v %v", ok, err)
		}
		var st struct{ Upd, Hot int64 }
		if err := tx.Raw(`SELECT n_tup_upd AS upd, n_tup_hot_upd AS hot FROM pg_stat_xact_user_tables
  WHERE relid = 'coupons'::regclass`).Scan(&st).Error; err != nil {
			return err
		}
		if st.Upd != 2 || st.Hot != 2 {
			t.Errorf("coupon updates: %d, of them in place (HOT): %d; want 2 and 2", st.Upd, st.Hot)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// seedCoupon inserts a merchant, a store, a campaign valid at every store and
// one coupon, and returns the merchant's id and the coupon's code.
func seedCoupon(t *testing.T, db *gorm.DB) (merchantID int64, code string) {
	t.Helper()
	now := time.Now().UTC()
	steps := []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO merchants (id, code, name, timezone, created_at) VALUES (1, 'm1', 'M1', 'Asia/Shanghai', ?)`, []any{now}},
		{`INSERT INTO merchants (id, code, name, timezone, created_at) VALUES (2, 'm2', 'M2', 'Asia/Shanghai', ?)`, []any{now}},
		{`INSERT INTO stores (id, merchant_id, code, name, created_at) VALUES (1, 1, 'S1', 'S1', ?)`, []any{now}},
		{`INSERT INTO stores (id, merchant_id, code, name, created_at) VALUES (2, 2, 'S2', 'S2', ?)`, []any{now}},
		{`INSERT INTO campaigns (id, merchant_id, name, type, value, min_spend, max_discount, valid_from, valid_to,
  all_stores, total_quantity, issued, per_customer_limit, refund_window_minutes, created_at)
  VALUES (1, 1, 'C', 'CASH', 100, 0, 0, ?, ?, true, 10, 1, 0, 60, ?)`, []any{now.Add(-time.Hour), now.Add(time.Hour), now}},
		{`INSERT INTO coupons (id, merchant_id, campaign_id, code, status, version, valid_from, valid_to, created_at, updated_at)
  VALUES (1, 1, 1, 'CODE1', 'UNUSED', 0, ?, ?, ?, ?)`, []any{now.Add(-time.Hour), now.Add(time.Hour), now, now}},
	}
	for _, s := range steps {
		if err := db.Exec(s.sql, s.args...).Error; err != nil {
			t.Fatalf("%s: %v", s.sql, err)
		}
	}
	return 1, "CODE1"
}

func TestLedgerReferencesStayInsideTheMerchant(t *testing.T) {
	db := testdb.Postgres(t)
	seedCoupon(t, db)
	now := time.Now().UTC()
	flow := func(merchant, coupon, store int64, no string) error {
		return db.Exec(`INSERT INTO redemption_flows (merchant_id, redeem_no, operation, request_id, fingerprint,
  coupon_id, store_id, status, order_amount, discount_amount, created_at, updated_at)
  VALUES (?, ?, 'REDEEM', ?, 'fp', ?, ?, 'REJECTED', 0, 0, ?, ?)`, merchant, no, no, coupon, store, now, now).Error
	}
	tests := []struct {
		name                   string
		merchant, coupon, shop int64
		wantErr                bool
	}{
		{"own coupon at own store", 1, 1, 1, false},
		{"another merchant's coupon", 2, 1, 2, true},
		{"another merchant's store", 1, 1, 2, true},
		{"unknown coupon", 1, 99, 1, true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := flow(tt.merchant, tt.coupon, tt.shop, "RD-"+string(rune('a'+i)))
			if (err != nil) != tt.wantErr {
				t.Fatalf("insert flow: err = %v, want error %v", err, tt.wantErr)
			}
		})
	}
	err := db.Exec(`INSERT INTO coupon_transitions (merchant_id, coupon_id, from_status, to_status, version_after,
  flow_no, actor, created_at) VALUES (2, 1, 'UNUSED', 'REDEEMING', 1, 'RD-x', 'test', ?)`, now).Error
	if err == nil {
		t.Error("a transition of merchant 2 naming merchant 1's coupon was accepted")
	}
}
