package services_test

import (
	"context"
	"testing"
	"time"

	"coupond/internal/testdb"
)

// TestDelivererAnalyzesStaleStatistics: on PostgreSQL a search round of the
// delivery worker analyzes webhook_deliveries and outbox_events once their
// rows have changed well past their statistics (a host with autovacuum off,
// or behind), at most every few seconds, so that the plans PostgreSQL keeps
// for the worker's statements are made again from the table's size
// (TestClaimPlanAfterAnalyze in models shows the plan it replaces).
func TestDelivererAnalyzesStaleStatistics(t *testing.T) {
	db := testdb.Postgres(t)
	h := newHookSetup(t, db)
	ctx := context.Background()
	analyzed := func() map[string]bool {
		var rows []struct {
			Relname  string
			Analyzed bool
		}
		must(t, db.Raw(`SELECT relname, last_analyze IS NOT NULL AS analyzed FROM pg_stat_user_tables
WHERE schemaname = current_schema() AND relname IN ('webhook_deliveries', 'outbox_events')`).Scan(&rows).Error)
		out := map[string]bool{}
		for _, r := range rows {
			out[r.Relname] = r.Analyzed
		}
		return out
	}
	d := h.deliverer(4)
	if _, err := d.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if a := analyzed(); a["webhook_deliveries"] || a["outbox_events"] {
		t.Fatalf("analyzed with nothing changed: %v", a)
	}
	// 3,000 events and their deliveries, due in a day: stale statistics,
	// and nothing more to send.
	ep := h.endpoint.Endpoint
	later := h.now().Add(24 * time.Hour)
	must(t, db.Exec(`INSERT INTO outbox_events (merchant_id, uid, type, coupon_id, data, created_at)
SELECT ?, 'evt_stats' || g, 'coupon.voided', g, '{}', ? FROM generate_series(1, 3000) g`, ep.MerchantID, h.now()).Error)
	must(t, db.Exec(`INSERT INTO webhook_deliveries (merchant_id, endpoint_id, event_id, coupon_id, status, next_attempt_at, created_at)
SELECT e.merchant_id, ?, e.id, e.coupon_id, 'PENDING', ?, ? FROM outbox_events e WHERE e.uid LIKE 'evt_stats%'`,
		ep.ID, later, h.now()).Error)
	must(t, db.Exec("SELECT pg_stat_force_next_flush()").Error)
	// The round before has just checked: the next check waits its turn.
	if _, err := d.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if a := analyzed(); a["webhook_deliveries"] {
		t.Fatalf("analyzed again within the check's interval: %v", a)
	}
	// Past the interval the next round checks, and analyzes both.
	h.clock.Advance(3 * time.Second)
	if _, err := d.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if a := analyzed(); !a["webhook_deliveries"] || !a["outbox_events"] {
		t.Fatalf("a round past the interval left stale tables unanalyzed: %v", a)
	}
}
