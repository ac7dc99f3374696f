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
// (TestClaimPlanAfterAnalyze in models shows the plan it replaces). While no
// endpoint has a PENDING delivery there is no claim to plan, and events
// that no endpoint takes are not worth an ANALYZE.
func TestDelivererAnalyzesStaleStatistics(t *testing.T) {
	db := testdb.Postgres(t)
	h := newHookSetup(t, db)
	ctx := context.Background()
	analyzed := func() map[string]int {
		var rows []struct {
			Relname string
			N       int
		}
		must(t, db.Raw(`SELECT relname, analyze_count AS n FROM pg_stat_user_tables
WHERE schemaname = current_schema() AND relname IN ('webhook_deliveries', 'outbox_events')`).Scan(&rows).Error)
		out := map[string]int{}
		for _, r := range rows {
			out[r.Relname] = r.N
		}
		return out
	}
	d := h.deliverer(4)
	run := func() {
		t.Helper()
		if _, err := d.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		d.Wait()
	}
	run()
	if a := analyzed(); a["webhook_deliveries"] != 0 || a["outbox_events"] != 0 {
		t.Fatalf("analyzed with nothing changed: %v", a)
	}
	ep := h.endpoint.Endpoint
	events := func(from, to int) {
		t.Helper()
		must(t, db.Exec(`INSERT INTO outbox_events (merchant_id, uid, type, coupon_id, data, created_at)
SELECT ?, 'evt_stats' || g, 'coupon.voided', g, '{}', ? FROM generate_series(CAST(? AS int), CAST(? AS int)) g`, ep.MerchantID, h.now(), from, to).Error)
		must(t, db.Exec("SELECT pg_stat_force_next_flush()").Error)
	}
	// Their deliveries, due in a day: nothing to send yet.
	deliveries := func(from, to int) {
		t.Helper()
		must(t, db.Exec(`INSERT INTO webhook_deliveries (merchant_id, endpoint_id, event_id, coupon_id, status, next_attempt_at, created_at)
SELECT e.merchant_id, ?, e.id, e.coupon_id, 'PENDING', ?, ? FROM outbox_events e
WHERE e.uid IN (SELECT 'evt_stats' || g FROM generate_series(CAST(? AS int), CAST(? AS int)) g)`,
			ep.ID, h.now().Add(24*time.Hour), h.now(), from, to).Error)
		must(t, db.Exec("SELECT pg_stat_force_next_flush()").Error)
	}
	// 3,000 events that no endpoint takes: stale statistics, and no claim.
	events(1, 3000)
	h.clock.Advance(3 * time.Second)
	run()
	if a := analyzed(); a["webhook_deliveries"] != 0 || a["outbox_events"] != 0 {
		t.Fatalf("analyzed with no PENDING delivery to claim: %v", a)
	}
	// Their deliveries: the next round analyzes both before it claims.
	deliveries(1, 3000)
	h.clock.Advance(3 * time.Second)
	run()
	if a := analyzed(); a["webhook_deliveries"] != 1 || a["outbox_events"] != 1 {
		t.Fatalf("a round with PENDING deliveries left stale tables unanalyzed: %v", a)
	}
	// 4,000 more: the round right after has just checked, the next check
	// waits its turn.
	events(3001, 7000)
	deliveries(3001, 7000)
	run()
	if a := analyzed(); a["webhook_deliveries"] != 1 || a["outbox_events"] != 1 {
		t.Fatalf("analyzed again within the check's interval: %v", a)
	}
	// Past the interval the next round checks, and analyzes both.
	h.clock.Advance(3 * time.Second)
	run()
	if a := analyzed(); a["webhook_deliveries"] != 2 || a["outbox_events"] != 2 {
		t.Fatalf("a round past the interval left stale tables unanalyzed: %v", a)
	}
}

// TestDelivererClaimsWhileItAnalyzes: the worker's ANALYZE runs beside its
// rounds, not in them. A round over stale tables claims its due deliveries
// and returns while the analysis it started still waits for a lock that
// another transaction holds.
func TestDelivererClaimsWhileItAnalyzes(t *testing.T) {
	db := testdb.Postgres(t)
	h := newHookSetup(t, db)
	ctx := context.Background()
	ep := h.endpoint.Endpoint
	must(t, db.Exec(`INSERT INTO outbox_events (merchant_id, uid, type, coupon_id, data, created_at)
SELECT ?, 'evt_busy' || g, 'coupon.voided', g, '{}', ? FROM generate_series(1, 1500) g`, ep.MerchantID, h.now()).Error)
	// Ten of their deliveries are due now, the rest in a day.
	must(t, db.Exec(`INSERT INTO webhook_deliveries (merchant_id, endpoint_id, event_id, coupon_id, status, next_attempt_at, created_at)
SELECT e.merchant_id, ?, e.id, e.coupon_id, 'PENDING', CASE WHEN e.coupon_id <= 10 THEN CAST(? AS timestamptz) ELSE CAST(? AS timestamptz) END, ? FROM outbox_events e
WHERE e.uid LIKE 'evt_busy%'`, ep.ID, h.now(), h.now().Add(24*time.Hour), h.now()).Error)
	must(t, db.Exec("SELECT pg_stat_force_next_flush()").Error)

	// ANALYZE takes this lock; models.AnalyzeStale waits 2 s for it.
	tx := db.Begin()
	must(t, tx.Error)
	defer tx.Rollback()
	var holder int
	must(t, tx.Raw("SELECT pg_backend_pid()").Scan(&holder).Error)
	must(t, tx.Exec("LOCK TABLE outbox_events IN SHARE UPDATE EXCLUSIVE MODE").Error)

	d := h.deliverer(4)
	n, err := d.RunOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("the round claimed none of the due deliveries")
	}
	// The round has returned; its analysis waits behind the lock (for up
	// to 2 s, analyzeLockWait). Had the round waited for it, none would.
	waiting := false
	for end := time.Now().Add(5 * time.Second); !waiting && time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		must(t, db.Raw(`SELECT EXISTS (SELECT 1 FROM pg_stat_activity
WHERE query LIKE 'ANALYZE%' AND ? = ANY (pg_blocking_pids(pid)))`, holder).Scan(&waiting).Error)
	}
	if !waiting {
		t.Fatal("the round returned only once its analysis had ended")
	}
	must(t, tx.Rollback().Error)
	d.Wait()
	waitFor(t, "the due deliveries", func() bool { return len(h.rcv.Accepted()) >= 10 })
}
