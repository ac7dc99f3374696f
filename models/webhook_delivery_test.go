package models_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/internal/testdb"
	"coupond/models"
)

// endpointWithEvents inserts merchant 1, an endpoint of it subscribed to
// coupon.voided, and n such events of coupons 1..n (each with its PENDING
// delivery), and returns the endpoint and the events' uids by id.
func endpointWithEvents(t *testing.T, db *gorm.DB, now time.Time, n int64) (models.WebhookEndpoint, map[int64]string) {
	t.Helper()
	if err := db.Exec("INSERT INTO merchants (id, code, name, timezone, created_at) VALUES (1, 'm1', 'm', 'UTC', ?)", now).Error; err != nil {
		t.Fatal(err)
	}
	ep := models.WebhookEndpoint{MerchantID: 1, URL: "https://example.com/hook", Events: "coupon.voided", Enabled: true,
		Secret: "whsec_c2VjcmV0", CreatedAt: now, UpdatedAt: now}
	if err := models.InsertWebhookEndpoint(db, &ep); err != nil {
		t.Fatal(err)
	}
	uids := map[int64]string{}
	for c := int64(1); c <= n; c++ {
		ev := models.OutboxEvent{MerchantID: 1, UID: models.NewEventUID(), Type: "coupon.voided", CouponID: c,
			Data: `{"n":1}`, CreatedAt: now}
		if err := models.InsertEvent(db, &ev); err != nil {
			t.Fatal(err)
		}
		uids[ev.ID] = ev.UID
	}
	return ep, uids
}

// TestClaimThenFinishAttempts claims three deliveries with their events in
// one call and records their outcomes in one statement: a 2xx, a retry, and
// an outcome whose attempt is no longer the row's (a redelivery or another
// worker moved on), which is left out.
func TestClaimThenFinishAttempts(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		ep, uids := endpointWithEvents(t, db, now, 3)
		lease := now.Add(time.Minute)
		xs, err := models.ClaimDeliveries(db, 1, ep.ID, time.Time{}, now, lease, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(xs) != 3 {
			t.Fatalf("claimed %d deliveries, want 3", len(xs))
		}
		byCoupon := map[int64]*models.ClaimedDelivery{}
		for i := range xs {
			x := &xs[i]
			if x.Attempts != 1 || x.Event.ID != x.EventID || x.Event.UID != uids[x.EventID] || x.Event.Data != `{"n":1}` ||
				x.Event.Type != "coupon.voided" || x.Event.CouponID != x.CouponID {
				t.Fatalf("claimed %+v", *x)
			}
			byCoupon[x.CouponID] = x
		}
		if again, err := models.ClaimDeliveries(db, 1, ep.ID, time.Time{}, now, lease, 10); err != nil || len(again) != 0 {
			t.Fatalf("claimed again under the lease: %d, %v", len(again), err)
		}

		ok, fail := 204, 500
		msg := "answered 500"
		stale := byCoupon[3].WebhookDelivery
		stale.Attempts = 2
		retryAt := now.Add(5 * time.Second)
		n, err := models.FinishAttempts(db, []models.FinishedAttempt{
			{Delivery: &byCoupon[1].WebhookDelivery, Outcome: models.AttemptOutcome{Status: models.DeliveryDelivered,
				StatusCode: &ok, NextAttemptAt: now, Now: now}},
			{Delivery: &byCoupon[2].WebhookDelivery, Outcome: models.AttemptOutcome{Status: models.DeliveryPending,
				StatusCode: &fail, Error: &msg, NextAttemptAt: retryAt, Now: now}},
			{Delivery: &stale, Outcome: models.AttemptOutcome{Status: models.DeliveryDelivered, StatusCode: &ok,
				NextAttemptAt: now, Now: now}},
		})
		if err != nil || n != 2 {
			t.Fatalf("FinishAttempts = %d, %v; want 2 recorded", n, err)
		}
		var rows []models.WebhookDelivery
		if err := db.Order("coupon_id").Find(&rows).Error; err != nil {
			t.Fatal(err)
		}
		want := []struct {
			status    models.DeliveryStatus
			code      *int
			leased    bool
			delivered bool
		}{
			{models.DeliveryDelivered, &ok, false, true},
			{models.DeliveryPending, &fail, false, false},
			{models.DeliveryPending, nil, true, false},
		}
		for i, r := range rows {
			w := want[i]
			if r.Status != w.status || (r.LastStatusCode == nil) != (w.code == nil) ||
				(w.code != nil && *r.LastStatusCode != *w.code) || (r.LeaseUntil != nil) != w.leased ||
				(r.DeliveredAt != nil) != w.delivered || r.Attempts != 1 {
				t.Errorf("coupon %d's delivery: %+v", r.CouponID, r)
			}
		}
		if !rows[1].NextAttemptAt.Equal(retryAt) || rows[1].LastError == nil || *rows[1].LastError != msg {
			t.Errorf("retried delivery: next %v, error %v", rows[1].NextAttemptAt, rows[1].LastError)
		}
	})
}

// TestFinishAttemptsCommitsWithoutWaitingForTheFlush checks on PostgreSQL
// that FinishAttempts, recording an outcome, turns synchronous_commit off
// for the transaction it runs in, and for that transaction only: the
// connection's next transaction, and the one after a FinishAttempts run
// alone, wait for their flush again.
func TestFinishAttemptsCommitsWithoutWaitingForTheFlush(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		if models.DialectOfDB(db) != models.Postgres {
			t.Skip("synchronous_commit is PostgreSQL's")
		}
		now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		ep, _ := endpointWithEvents(t, db, now, 2)
		xs, err := models.ClaimDeliveries(db, 1, ep.ID, time.Time{}, now, now.Add(time.Minute), 10)
		if err != nil || len(xs) != 2 {
			t.Fatalf("claimed %d, %v; want 2", len(xs), err)
		}
		finish := func(c *gorm.DB, x *models.ClaimedDelivery) {
			n, err := models.FinishAttempts(c, []models.FinishedAttempt{{Delivery: &x.WebhookDelivery,
				Outcome: models.AttemptOutcome{Status: models.DeliveryDelivered, NextAttemptAt: now, Now: now}}})
			if err != nil || n != 1 {
				t.Fatalf("FinishAttempts = %d, %v; want 1", n, err)
			}
		}
		show := func(c *gorm.DB) string {
			var v string
			if err := c.Raw("SHOW synchronous_commit").Scan(&v).Error; err != nil {
				t.Fatal(err)
			}
			return v
		}
		err = db.Connection(func(c *gorm.DB) error {
			if got := show(c); got != "on" {
				t.Fatalf("synchronous_commit %q before, want on", got)
			}
			err := c.Transaction(func(tx *gorm.DB) error {
				finish(tx, &xs[0])
				if got := show(tx); got != "off" {
					t.Errorf("synchronous_commit %q in FinishAttempts' transaction, want off", got)
				}
				return nil
			})
			if err != nil {
				return err
			}
			if got := show(c); got != "on" {
				t.Errorf("synchronous_commit %q after that transaction, want on", got)
			}
			finish(c, &xs[1])
			if got := show(c); got != "on" {
				t.Errorf("synchronous_commit %q after FinishAttempts alone, want on", got)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

// TestPendingFloors reads each enabled endpoint's floor, the earliest next
// attempt of its PENDING deliveries from a given time on, and holds the
// readers of due deliveries to it: what lies before an endpoint's floor is
// neither searched nor claimed, and a floor read from an earlier one finds
// the same deliveries a reading from the start does.
func TestPendingFloors(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		ep, _ := endpointWithEvents(t, db, now, 3)
		k := [2]int64{1, ep.ID}
		set := func(coupon int64, status string, at time.Time) {
			t.Helper()
			if err := db.Exec("UPDATE webhook_deliveries SET status = ?, next_attempt_at = ? WHERE coupon_id = ?", status, at, coupon).Error; err != nil {
				t.Fatal(err)
			}
		}
		set(1, "DELIVERED", now.Add(-2*time.Hour))
		set(2, "PENDING", now.Add(-time.Hour))
		set(3, "PENDING", now)
		floorOf := func(from map[[2]int64]time.Time) *time.Time {
			t.Helper()
			got, err := models.PendingFloors(db, from)
			if err != nil {
				t.Fatal(err)
			}
			f, ok := got[k]
			if !ok || len(got) != 1 {
				t.Fatalf("floors %v, want one for endpoint %v", got, k)
			}
			return f
		}
		tests := []struct {
			name string
			from map[[2]int64]time.Time
			want time.Time
		}{
			{"from the start", nil, now.Add(-time.Hour)},
			{"from before the earliest", map[[2]int64]time.Time{k: now.Add(-90 * time.Minute)}, now.Add(-time.Hour)},
			{"from past the earliest", map[[2]int64]time.Time{k: now.Add(-30 * time.Minute)}, now},
			{"another endpoint's floor", map[[2]int64]time.Time{{1, ep.ID + 1}: now}, now.Add(-time.Hour)},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if f := floorOf(tt.from); f == nil || !f.Equal(tt.want) {
					t.Fatalf("floor %v, want %v", f, tt.want)
				}
			})
		}

		due, err := models.DueEndpoints(db, now, map[[2]int64]time.Time{k: now.Add(time.Minute)})
		if err != nil || len(due) != 0 {
			t.Fatalf("due past the floor: %v, %v; want none", due, err)
		}
		due, err = models.DueEndpoints(db, now, map[[2]int64]time.Time{k: now.Add(-time.Hour)})
		if err != nil || len(due) != 1 || due[0] != k {
			t.Fatalf("due from the floor: %v, %v; want %v", due, err, k)
		}
		xs, err := models.ClaimDeliveries(db, 1, ep.ID, now.Add(-30*time.Minute), now, now.Add(time.Minute), 10)
		if err != nil || len(xs) != 1 || xs[0].CouponID != 3 {
			t.Fatalf("claimed from past coupon 2's delivery: %+v, %v; want coupon 3's alone", xs, err)
		}
		xs, err = models.ClaimDeliveries(db, 1, ep.ID, time.Time{}, now, now.Add(time.Minute), 10)
		if err != nil || len(xs) != 1 || xs[0].CouponID != 2 {
			t.Fatalf("claimed from the start: %+v, %v; want coupon 2's", xs, err)
		}

		set(2, "DELIVERED", now.Add(-time.Hour))
		set(3, "FAILED", now)
		if f := floorOf(nil); f != nil {
			t.Fatalf("floor %v with nothing PENDING, want none", *f)
		}
		if err := db.Exec("UPDATE webhook_endpoints SET enabled = ? WHERE id = ?", false, ep.ID).Error; err != nil {
			t.Fatal(err)
		}
		if got, err := models.PendingFloors(db, nil); err != nil || len(got) != 0 {
			t.Fatalf("floors of a disabled endpoint: %v, %v; want none", got, err)
		}
	})
}

// TestClaimPlanAfterAnalyze shows why the delivery worker keeps its tables'
// statistics fresh: a plan PostgreSQL keeps for the claim's statement,
// made while webhook_deliveries held a page of rows after an ANALYZE of
// the empty table, reads the whole table for every due delivery (a
// sequential scan in the test for an earlier event of its coupon), and
// stays after the table has grown until its statistics are refreshed.
// AnalyzeStale, as the worker calls it, replaces it with one that reads
// the indexes.
func TestClaimPlanAfterAnalyze(t *testing.T) {
	db := testdb.Postgres(t)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	if err := db.Exec("VACUUM ANALYZE webhook_deliveries").Error; err != nil {
		t.Fatal(err)
	}
	ep, _ := endpointWithEvents(t, db, now, 20)
	q := models.ClaimSQL(models.Postgres)
	for i := 1; strings.Contains(q, "?"); i++ {
		q = strings.Replace(q, "?", "$"+strconv.Itoa(i), 1)
	}
	err := db.Connection(func(c *gorm.DB) error {
		if err := c.Exec("SET plan_cache_mode = force_generic_plan").Error; err != nil {
			return err
		}
		if err := c.Exec(`PREPARE claim (timestamptz, timestamptz, bigint, bigint, timestamptz, timestamptz, timestamptz,
  bigint, bigint, int) AS ` + q).Error; err != nil {
			return err
		}
		defer c.Exec("DEALLOCATE claim")
		plan := func() string {
			var lines []string
			// Literals: EXPLAIN takes no parameters of its own.
			at := "'" + now.Format(time.RFC3339) + "'"
			if err := c.Raw(fmt.Sprintf("EXPLAIN EXECUTE claim (%[1]s, %[1]s, 1, %[2]d, '-infinity', %[1]s, %[1]s, 1, %[2]d, 10)",
				at, ep.ID)).Scan(&lines).Error; err != nil {
				t.Fatal(err)
			}
			return strings.Join(lines, "\n")
		}
		if p := plan(); !strings.Contains(p, "Seq Scan on webhook_deliveries p") {
			t.Fatalf("the plan made from a table of a page does not scan it for each delivery; the test shows nothing:\n%s", p)
		}
		// 5,000 more deliveries, past AnalyzeStale's least count of changes.
		if err := db.Exec(`INSERT INTO outbox_events (merchant_id, uid, type, coupon_id, data, created_at)
SELECT 1, 'evt_plan' || g, 'coupon.voided', 100 + g, '{}', ? FROM generate_series(1, 5000) g`, now).Error; err != nil {
			return err
		}
		if err := db.Exec(`INSERT INTO webhook_deliveries (merchant_id, endpoint_id, event_id, coupon_id, status, next_attempt_at, created_at)
SELECT 1, ?, e.id, e.coupon_id, 'PENDING', ?, ? FROM outbox_events e WHERE e.uid LIKE 'evt_plan%'`, ep.ID, now, now).Error; err != nil {
			return err
		}
		if err := db.Exec("SELECT pg_stat_force_next_flush()").Error; err != nil {
			return err
		}
		if p := plan(); !strings.Contains(p, "Seq Scan on webhook_deliveries p") {
			t.Fatalf("the kept plan changed before the statistics did:\n%s", p)
		}
		if _, err := models.AnalyzeStale(db, []string{"webhook_deliveries", "outbox_events"}, 0.5); err != nil {
			return err
		}
		if p := plan(); strings.Contains(p, "Seq Scan on webhook_deliveries") {
			t.Errorf("after AnalyzeStale the claim still scans webhook_deliveries:\n%s", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
