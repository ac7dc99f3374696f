package models

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// Migration 00010 rebuilds SQLite's coupons table to let it hold VOIDED: the
// rows, their references from the ledger, the indexes and the constraints
// all survive, and the new status is accepted; going down restores the old
// check.
func TestSQLiteCouponsRebuild(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, t.TempDir()+"/old.db", OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer Close(db)
	p, err := migrationProvider(db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, 9); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	exec := func(q string, args ...any) {
		t.Helper()
		if err := db.Exec(q, args...).Error; err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec("INSERT INTO merchants (id, code, name, timezone, created_at) VALUES (1, 'm', 'M', 'UTC', ?)", now)
	exec("INSERT INTO stores (id, merchant_id, code, name, created_at) VALUES (1, 1, 'S', 'S', ?)", now)
	exec(`INSERT INTO campaigns (id, merchant_id, name, type, value, valid_from, valid_to, all_stores, total_quantity,
  issued, refund_window_minutes, created_at) VALUES (1, 1, 'c', 'CASH', 100, ?, ?, 1, 10, 2, 0, ?)`, now, now.Add(time.Hour), now)
	for i, st := range []string{"UNUSED", "REDEEMED"} {
		exec(`INSERT INTO coupons (id, merchant_id, campaign_id, code, status, version, valid_from, valid_to, redeem_no, created_at, updated_at)
  VALUES (?, 1, 1, ?, ?, 0, ?, ?, ?, ?, ?)`, i+1, "CODE"+st, st, now, now.Add(time.Hour), "RD"+st, now, now)
	}
	exec(`INSERT INTO redemption_flows (merchant_id, redeem_no, operation, request_id, fingerprint, coupon_id, store_id,
  status, order_amount, discount_amount, version, created_at, updated_at) VALUES (1, 'RDREDEEMED', 'REDEEM', 'r1', 'fp', 2, 1,
  'SUCCEEDED', 500, 100, 1, ?, ?)`, now, now)
	if err := db.Exec("UPDATE coupons SET status = 'VOIDED' WHERE id = 1").Error; err == nil {
		t.Fatal("VOIDED accepted before migration 10")
	}
	var indexesBefore int64
	db.Raw("SELECT COUNT(*) FROM sqlite_schema WHERE tbl_name = 'coupons' AND type = 'index'").Scan(&indexesBefore)

	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
	exec("UPDATE coupons SET status = 'VOIDED' WHERE id = 1")
	var n, indexesAfter int64
	db.Raw("SELECT COUNT(*) FROM coupons").Scan(&n)
	db.Raw("SELECT COUNT(*) FROM sqlite_schema WHERE tbl_name = 'coupons' AND type = 'index'").Scan(&indexesAfter)
	if n != 2 || indexesAfter != indexesBefore {
		t.Fatalf("after the rebuild: %d coupons (want 2), %d indexes (want %d)", n, indexesAfter, indexesBefore)
	}
	if err := db.Exec("UPDATE coupons SET status = 'LOST' WHERE id = 2").Error; err == nil {
		t.Fatal("the rebuilt table accepts any status")
	}
	if err := db.Exec(`INSERT INTO coupons (merchant_id, campaign_id, code, status, version, valid_from, valid_to, created_at, updated_at)
  VALUES (1, 1, 'CODEUNUSED', 'UNUSED', 0, ?, ?, ?, ?)`, now, now, now, now).Error; err == nil {
		t.Fatal("the rebuilt table lost its unique code")
	}
	if err := db.Exec(`INSERT INTO redemption_flows (merchant_id, redeem_no, operation, request_id, fingerprint, coupon_id,
  store_id, status, order_amount, discount_amount, version, created_at, updated_at) VALUES (1, 'RDX', 'REDEEM', 'r2', 'fp',
  999, 1, 'REJECTED', 0, 0, 0, ?, ?)`, now, now).Error; err == nil {
		t.Fatal("the ledger may reference a coupon that does not exist after the rebuild")
	}

	exec("UPDATE coupons SET status = 'UNUSED' WHERE id = 1")
	if _, err := p.DownTo(ctx, 9); err != nil {
		t.Fatal(err)
	}
	if err := db.Exec("UPDATE coupons SET status = 'VOIDED' WHERE id = 1").Error; err == nil {
		t.Fatal("VOIDED accepted after migration 10 went down")
	}
}

// Migration 00015 rebuilds SQLite's api_tokens table to let it hold the APP
// role, and adds campaigns.code_source in the same transaction: tokens and
// their store bindings survive, APP is accepted, existing campaigns are
// GENERATED; going down restores the old check and drops the column.
func TestSQLiteTokensRebuild(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, t.TempDir()+"/old.db", OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer Close(db)
	p, err := migrationProvider(db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, 11); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	exec := func(q string, args ...any) {
		t.Helper()
		if err := db.Exec(q, args...).Error; err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec("INSERT INTO merchants (id, code, name, timezone, created_at) VALUES (1, 'm', 'M', 'UTC', ?)", now)
	exec("INSERT INTO stores (id, merchant_id, code, name, created_at) VALUES (1, 1, 'S', 'S', ?)", now)
	exec(`INSERT INTO campaigns (id, merchant_id, name, type, value, valid_from, valid_to, all_stores, total_quantity,
  issued, refund_window_minutes, created_at) VALUES (1, 1, 'c', 'CASH', 100, ?, ?, 1, 10, 0, 0, ?)`, now, now.Add(time.Hour), now)
	exec("INSERT INTO api_tokens (id, merchant_id, name, role, token_hash, created_at) VALUES (1, 1, 'till', 'CLERK', 'h1', ?)", now)
	exec("INSERT INTO api_token_stores (token_id, store_id) VALUES (1, 1)")
	app := func(id int) error {
		return db.Exec("INSERT INTO api_tokens (id, merchant_id, name, role, token_hash, created_at) VALUES (?, 1, 'mp', 'APP', ?, ?)",
			id, fmt.Sprint("h", id), now).Error
	}
	if app(2) == nil {
		t.Fatal("APP accepted before migration 15")
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
	if err := app(2); err != nil {
		t.Fatalf("APP refused after migration 15: %v", err)
	}
	var bound, tokens int64
	var source string
	db.Raw("SELECT COUNT(*) FROM api_token_stores WHERE token_id = 1").Scan(&bound)
	db.Raw("SELECT COUNT(*) FROM api_tokens").Scan(&tokens)
	db.Raw("SELECT code_source FROM campaigns WHERE id = 1").Scan(&source)
	if bound != 1 || tokens != 2 || source != "GENERATED" {
		t.Fatalf("after the rebuild: %d bindings, %d tokens, source %q", bound, tokens, source)
	}
	if db.Exec("INSERT INTO api_tokens (merchant_id, name, role, token_hash, created_at) VALUES (1, 'x', 'ROOT', 'h9', ?)", now).Error == nil {
		t.Fatal("the rebuilt table accepts any role")
	}
	if db.Exec("INSERT INTO api_tokens (merchant_id, name, role, token_hash, created_at) VALUES (1, 'x', 'ADMIN', 'h1', ?)", now).Error == nil {
		t.Fatal("the rebuilt table lost its unique hash")
	}
	if db.Exec("UPDATE campaigns SET code_source = 'FOUND' WHERE id = 1").Error == nil {
		t.Fatal("code_source accepts any source")
	}
	exec("DELETE FROM api_tokens WHERE id = 2")
	if _, err := p.DownTo(ctx, 11); err != nil {
		t.Fatal(err)
	}
	if app(3) == nil {
		t.Fatal("APP accepted after migration 15 went down")
	}
}
