package models_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/internal/testdb"
	"coupond/models"
)

// TestInsertRejectedFlows writes a batch of REJECTED flows, with every
// nullable column set in one and empty in another, and reads back the same
// rows; a request id used before is skipped and keeps ID 0. On PostgreSQL the
// batch goes in as one array per column, so it runs under every pgx query
// mode coupond can be configured with (pgbouncer's need no prepared
// statements).
func TestInsertRejectedFlows(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { checkRejectedFlows(t, testdb.SQLite(t)) })
	for _, mode := range models.QueryExecModes {
		t.Run("postgres/"+mode, func(t *testing.T) {
			u, _ := testdb.PostgresURL(t)
			ctx := context.Background()
			db, err := models.Open(ctx, u, models.OpenOptions{MaxOpenConns: 2, QueryExecMode: mode})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = models.Close(db) })
			if _, err := models.Migrate(ctx, db); err != nil {
				t.Fatal(err)
			}
			checkRejectedFlows(t, db)
		})
	}
}

func checkRejectedFlows(t *testing.T, db *gorm.DB) {
	now := time.Date(2026, 3, 1, 8, 30, 15, 123456000, time.UTC)
	exec := func(q string, args ...any) {
		t.Helper()
		if err := db.Exec(q, args...).Error; err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec("INSERT INTO merchants (id, code, name, timezone, created_at) VALUES (1, 'm', 'M', 'UTC', ?)", now)
	exec("INSERT INTO stores (id, merchant_id, code, name, created_at) VALUES (1, 1, 'S1', 'S', ?), (2, 1, 'S2', 'S', ?)", now, now)
	exec(`INSERT INTO campaigns (id, merchant_id, name, type, value, valid_from, valid_to, all_stores, total_quantity,
  issued, refund_window_minutes, created_at) VALUES (1, 1, 'c', 'CASH', 100, ?, ?, TRUE, 10, 1, 0, ?)`, now, now.Add(time.Hour), now)
	exec(`INSERT INTO coupons (id, merchant_id, campaign_id, code, status, version, valid_from, valid_to, created_at, updated_at)
  VALUES (1, 1, 1, 'CODE', 'REDEEMED', 2, ?, ?, ?, ?)`, now, now.Add(time.Hour), now, now)

	notAvailable, released, ref, customer := "COUPON_NOT_AVAILABLE", "TIMEOUT", "ORDER-1", "cust-1"
	operator := int64(7)
	later := now.Add(time.Minute)
	flow := func(n int, rid string) *models.RedemptionFlow {
		return &models.RedemptionFlow{MerchantID: 1, RedeemNo: fmt.Sprintf("RD%d", n), Operation: models.OpRedeem,
			RequestID: rid, Fingerprint: "fp" + rid, CouponID: 1, StoreID: 1, Status: models.FlowRejected,
			OrderAmount: int64(100 * n), CreatedAt: now, UpdatedAt: now}
	}
	full := flow(1, "r1")
	full.Operation, full.StoreID, full.OperatorID, full.RejectReason = models.OpReserve, 2, &operator, &notAvailable
	full.ReleaseReason, full.DiscountAmount, full.OrderRef, full.HoldUntil = &released, 30, &ref, &later
	full.Attempts, full.Version, full.UpdatedAt, full.FinishedAt = 2, 3, later, &later
	full.UseNo, full.CustomerRef, full.AllowanceDay = 1, &customer, "2026-03-01"
	bare := flow(2, "r2")
	if err := models.InsertRejectedFlows(db, []*models.RedemptionFlow{full, bare}); err != nil {
		t.Fatal(err)
	}
	if full.ID == 0 || bare.ID == 0 || full.ID == bare.ID {
		t.Fatalf("ids %d and %d", full.ID, bare.ID)
	}
	// r2 again (skipped) beside a fresh r3.
	again, fresh := flow(3, "r2"), flow(4, "r3")
	if err := models.InsertRejectedFlows(db, []*models.RedemptionFlow{again, fresh}); err != nil {
		t.Fatal(err)
	}
	if again.ID != 0 || fresh.ID == 0 {
		t.Fatalf("a used request id got id %d, a fresh one %d", again.ID, fresh.ID)
	}
	for _, want := range []*models.RedemptionFlow{full, bare, fresh} {
		got, err := models.FlowByRedeemNo(db, 1, want.RedeemNo)
		if err != nil {
			t.Fatalf("read %s: %v", want.RedeemNo, err)
		}
		for _, p := range []*time.Time{&got.CreatedAt, &got.UpdatedAt, got.HoldUntil, got.FinishedAt} {
			if p != nil {
				*p = p.UTC()
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("flow %s:\n got %+v\nwant %+v", want.RedeemNo, *got, *want)
		}
	}
	var n int64
	if err := db.Model(&models.RedemptionFlow{}).Where("request_id = 'r2'").Count(&n).Error; err != nil || n != 1 {
		t.Fatalf("flows of r2: %d (%v)", n, err)
	}
	if err := models.InsertRejectedFlows(db, []*models.RedemptionFlow{{RedeemNo: "RD9", Status: models.FlowProcessing}}); err == nil {
		t.Fatal("a PROCESSING flow was accepted")
	}
}
