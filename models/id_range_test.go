package models_test

import (
	"fmt"
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/internal/testdb"
	"coupond/models"
)

// TestIDAfterCountsTheMerchantsRows walks one merchant's campaigns, whose ids
// interleave with another merchant's, in batches of n rows: each batch holds
// exactly n of the merchant's rows whatever lies between them.
func TestIDAfterCountsTheMerchantsRows(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
		for _, m := range []int64{1, 2} {
			if err := db.Exec("INSERT INTO merchants (id, code, name, timezone, created_at) VALUES (?, ?, 'm', 'UTC', ?)",
				m, fmt.Sprint("m", m), now).Error; err != nil {
				t.Fatal(err)
			}
		}
		// Merchant 1 has ids 1, 2, 3, 10, 20; merchant 2 every id between.
		mine := map[int64]bool{1: true, 2: true, 3: true, 10: true, 20: true}
		for id := int64(1); id <= 20; id++ {
			m := int64(2)
			if mine[id] {
				m = 1
			}
			if err := db.Exec(`INSERT INTO campaigns (id, merchant_id, name, type, value, valid_from, valid_to, all_stores,
  total_quantity, refund_window_minutes, created_at) VALUES (?, ?, 'c', 'CASH', 100, ?, ?, true, 10, 60, ?)`, id, m, now, now.AddDate(0, 1, 0), now).Error; err != nil {
				t.Fatal(err)
			}
		}
		tests := []struct {
			from   int64
			n      int
			want   int64
			wantOK bool
		}{
			{from: 1, n: 1, want: 2, wantOK: true},
			{from: 1, n: 3, want: 10, wantOK: true},
			{from: 3, n: 1, want: 10, wantOK: true},
			{from: 4, n: 1, want: 20, wantOK: true},
			{from: 1, n: 4, want: 20, wantOK: true},
			{from: 1, n: 5},
			{from: 20, n: 1},
		}
		for _, tt := range tests {
			got, ok, err := models.IDAfter(db, "campaigns", 1, tt.from, tt.n)
			if err != nil {
				t.Fatal(err)
			}
			if ok != tt.wantOK || (ok && got != tt.want) {
				t.Errorf("IDAfter(from %d, n %d) = %d, %t; want %d, %t", tt.from, tt.n, got, ok, tt.want, tt.wantOK)
			}
		}
		if _, _, err := models.IDAfter(db, "merchants", 1, 1, 1); err == nil {
			t.Error("IDAfter on a table that is not a merchant table succeeded")
		}
	})
}

// TestAnalyzeStale analyzes the tables whose changes since the last ANALYZE
// pass the share, and leaves the others alone.
func TestAnalyzeStale(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		if models.DialectOfDB(db) != models.Postgres {
			t.Skip("PostgreSQL's statistics")
		}
		now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
		if err := db.Exec("INSERT INTO merchants (id, code, name, timezone, created_at) VALUES (1, 'm', 'm', 'UTC', ?)", now).Error; err != nil {
			t.Fatal(err)
		}
		// 1,500 new campaigns, 1 store: only campaigns is past 1,000 changes.
		if err := db.Exec(`INSERT INTO campaigns (merchant_id, name, type, value, valid_from, valid_to, all_stores, total_quantity,
  refund_window_minutes, created_at) SELECT 1, 'c', 'CASH', 100, ?, ?, true, 10, 60, ? FROM generate_series(1, 1500)`,
			now, now.AddDate(0, 1, 0), now).Error; err != nil {
			t.Fatal(err)
		}
		if err := db.Exec("INSERT INTO stores (merchant_id, code, name, created_at) VALUES (1, 's', 's', ?)", now).Error; err != nil {
			t.Fatal(err)
		}
		if err := db.Exec("SELECT pg_stat_force_next_flush()").Error; err != nil {
			t.Fatal(err)
		}
		analyzed := func(table string) bool {
			var n int
			if err := db.Raw(`SELECT COUNT(*) FROM pg_stat_user_tables WHERE schemaname = current_schema() AND relname = ?
  AND last_analyze IS NOT NULL`, table).Scan(&n).Error; err != nil {
				t.Fatal(err)
			}
			return n == 1
		}
		if analyzed("campaigns") {
			t.Fatal("campaigns analyzed before AnalyzeStale")
		}
		// A vacuum's lock on the table: skipped after the wait, not waited for.
		hold := db.Begin()
		if err := hold.Exec("LOCK TABLE campaigns IN SHARE UPDATE EXCLUSIVE MODE").Error; err != nil {
			t.Fatal(err)
		}
		skipped, err := models.AnalyzeStale(db, []string{"campaigns", "stores"}, 0.01)
		hold.Rollback()
		if err != nil || len(skipped) != 1 || skipped[0] != "campaigns" || analyzed("campaigns") {
			t.Fatalf("AnalyzeStale beside a lock skipped %v (err %v), want campaigns skipped", skipped, err)
		}
		if skipped, err := models.AnalyzeStale(db, []string{"campaigns", "stores"}, 0.01); err != nil || len(skipped) > 0 {
			t.Fatal(skipped, err)
		}
		if !analyzed("campaigns") {
			t.Error("campaigns, 1,500 rows changed, was not analyzed")
		}
		if analyzed("stores") {
			t.Error("stores, 1 row changed, was analyzed")
		}
		// The share is a share: 1,500 of 4,500 rows changed is past 1,000
		// and under half.
		if err := db.Exec(`INSERT INTO stores (merchant_id, code, name, created_at)
  SELECT 1, 's' || g, 's', ? FROM generate_series(1, 4499) g`, now).Error; err != nil {
			t.Fatal(err)
		}
		// The inserts' counts reach the statistics before the ANALYZE that
		// resets them.
		if err := db.Exec("SELECT pg_stat_force_next_flush()").Error; err != nil {
			t.Fatal(err)
		}
		if err := db.Exec("ANALYZE stores").Error; err != nil {
			t.Fatal(err)
		}
		if err := db.Exec("UPDATE stores SET name = 'changed' WHERE id IN (SELECT id FROM stores ORDER BY id LIMIT 1500)").Error; err != nil {
			t.Fatal(err)
		}
		if err := db.Exec("SELECT pg_stat_force_next_flush()").Error; err != nil {
			t.Fatal(err)
		}
		analyzes := func() int {
			var n int
			if err := db.Raw(`SELECT analyze_count FROM pg_stat_user_tables WHERE schemaname = current_schema()
  AND relname = 'stores'`).Scan(&n).Error; err != nil {
				t.Fatal(err)
			}
			return n
		}
		before := analyzes()
		if _, err := models.AnalyzeStale(db, []string{"stores"}, 0.5); err != nil {
			t.Fatal(err)
		}
		if analyzes() != before {
			t.Error("stores, 1,500 of 4,500 rows changed, was analyzed at a share of a half")
		}
		if _, err := models.AnalyzeStale(db, []string{"stores"}, 0.25); err != nil {
			t.Fatal(err)
		}
		if analyzes() != before+1 {
			t.Error("stores, 1,500 of 4,500 rows changed, was not analyzed at a share of a quarter")
		}
	})
}
