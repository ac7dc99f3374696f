package models

import (
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// DeliveryStatus is where a delivery of one event to one endpoint stands.
type DeliveryStatus string

// Delivery states: PENDING until an attempt gets a 2xx (DELIVERED) or the
// delivery is given up (FAILED: 410 Gone, the endpoint disabled, or retries
// exhausted).
const (
	DeliveryPending   DeliveryStatus = "PENDING"
	DeliveryDelivered DeliveryStatus = "DELIVERED"
	DeliveryFailed    DeliveryStatus = "FAILED"
)

// WebhookDelivery is one event's delivery to one endpoint. Attempts counts
// the attempts claimed so far; an attempt in flight holds LeaseUntil.
type WebhookDelivery struct {
	MerchantID     int64
	EndpointID     int64
	EventID        int64
	CouponID       int64
	Status         DeliveryStatus
	Attempts       int
	NextAttemptAt  time.Time
	LeaseUntil     *time.Time
	LastAttemptAt  *time.Time
	LastStatusCode *int
	LastError      *string
	LastResponse   *string
	DeliveredAt    *time.Time
	CreatedAt      time.Time
}

// TableName is webhook_deliveries.
func (WebhookDelivery) TableName() string { return "webhook_deliveries" }

// DueEndpoints returns the keys (merchant, endpoint) of the enabled
// endpoints that have a PENDING delivery due by now and out of flight: the
// endpoints the worker claims for (ClaimDeliveries). An endpoint in floors
// is searched from its floor on (PendingFloors), any other from its first
// delivery.
func DueEndpoints(db *gorm.DB, now time.Time, floors map[[2]int64]time.Time) ([][2]int64, error) {
	var rows []struct {
		MerchantID int64
		ID         int64
	}
	with, args := floorsSQL(DialectOfDB(db), floors)
	args = append(args, time.Time{}, now, now)
	err := scanRaw(db, &rows, with+`SELECT w.merchant_id, w.id FROM webhook_endpoints w
LEFT JOIN f ON f.m = w.merchant_id AND f.e = w.id
WHERE w.enabled AND EXISTS (SELECT 1 FROM webhook_deliveries d
  WHERE d.merchant_id = w.merchant_id AND d.endpoint_id = w.id AND d.status = 'PENDING'
  AND d.next_attempt_at >= COALESCE(f.t, ?) AND d.next_attempt_at <= ?
  AND (d.lease_until IS NULL OR d.lease_until <= ?))
ORDER BY w.merchant_id, w.id`, args...).Error
	out := make([][2]int64, len(rows))
	for i, r := range rows {
		out[i] = [2]int64{r.MerchantID, r.ID}
	}
	return out, err
}

// floorsSQL is a WITH clause naming floors as the table f (m, e, t): one
// row per endpoint, or one row that matches none when floors is empty.
func floorsSQL(d Dialect, floors map[[2]int64]time.Time) (string, []any) {
	var b strings.Builder
	b.WriteString("WITH f (m, e, t) AS (VALUES ")
	args := make([]any, 0, 3*max(len(floors), 1))
	row := "(" + typed(d, "bigint") + ", " + typed(d, "bigint") + ", " + typed(d, "timestamptz") + ")"
	if len(floors) == 0 {
		b.WriteString(row)
		args = append(args, int64(0), int64(0), time.Time{})
	}
	i := 0
	for k, t := range floors {
		if i > 0 {
			b.WriteString(", ")
		}
		i++
		b.WriteString(row)
		args = append(args, k[0], k[1], t)
	}
	b.WriteString(") ")
	return b.String(), args
}

// PendingFloors returns, for every enabled endpoint, the time before which
// it has no PENDING delivery: the earliest next attempt of its PENDING
// deliveries, looked for from its time in from on (from its first delivery
// when it has none), or nil when it has none. The readers of due deliveries
// (DueEndpoints, ClaimDeliveries) start there.
//
// Why it matters on PostgreSQL: a delivery that leaves PENDING leaves its
// entry in the partial indexes of PENDING deliveries behind, dead, until
// the table is vacuumed, and a scan of due deliveries oldest first reads
// through every such entry before it reaches a live one: after a few
// hundred thousand deliveries each claim read thousands of index pages. The
// entries of delivered events lie before the earliest PENDING delivery, so
// a scan that starts at the floor skips them. Each call reads only the
// entries between from and the floor.
func PendingFloors(db *gorm.DB, from map[[2]int64]time.Time) (map[[2]int64]*time.Time, error) {
	with, args := floorsSQL(DialectOfDB(db), from)
	args = append(args, time.Time{})
	var rows []struct {
		MerchantID int64
		ID         int64
		Floor      *time.Time
	}
	err := scanRaw(db, &rows, with+`SELECT w.merchant_id, w.id, (SELECT d.next_attempt_at FROM webhook_deliveries d
  WHERE d.merchant_id = w.merchant_id AND d.endpoint_id = w.id AND d.status = 'PENDING'
  AND d.next_attempt_at >= COALESCE(f.t, ?)
  ORDER BY d.next_attempt_at LIMIT 1) AS floor
FROM webhook_endpoints w LEFT JOIN f ON f.m = w.merchant_id AND f.e = w.id
WHERE w.enabled`, args...).Error
	out := make(map[[2]int64]*time.Time, len(rows))
	for _, r := range rows {
		out[[2]int64{r.MerchantID, r.ID}] = r.Floor
	}
	return out, err
}

// claimSQL is ClaimDeliveries' statement. The inner SELECT picks the
// endpoint's due deliveries out of flight that wait for no earlier PENDING
// event of the same coupon at the endpoint, oldest due first; on PostgreSQL
// it locks them FOR UPDATE SKIP LOCKED, so workers of several replicas
// claiming at once take different rows instead of queueing on each other,
// and a row changed meanwhile is judged again on its new version. SQLite has
// one writer at a time and no row locks (the clause is left out there).
// The test for an earlier PENDING event of the coupon states the predicate
// of webhook_deliveries_coupon_order ("not DELIVERED or FAILED", which the
// CHECK on status makes the same as PENDING), so that it reads that index
// and never webhook_deliveries_endpoint_due (migration 00022 says why).
// Parameters: lease until, now, merchant, endpoint, from, now, now,
// merchant, endpoint, limit.
func claimSQL(d Dialect) string {
	lock := ""
	if d == Postgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	return `UPDATE webhook_deliveries AS d SET attempts = d.attempts + 1, lease_until = ?, last_attempt_at = ?
FROM (SELECT x.merchant_id AS cm, x.endpoint_id AS ce, x.event_id AS cv FROM webhook_deliveries x
  WHERE x.merchant_id = ? AND x.endpoint_id = ? AND x.status = 'PENDING' AND x.next_attempt_at >= ? AND x.next_attempt_at <= ?
  AND (x.lease_until IS NULL OR x.lease_until <= ?)
  AND (x.coupon_id = 0 OR NOT EXISTS (SELECT 1 FROM webhook_deliveries p
    WHERE p.merchant_id = x.merchant_id AND p.endpoint_id = x.endpoint_id AND p.coupon_id = x.coupon_id
    AND p.status NOT IN ('DELIVERED', 'FAILED') AND p.event_id < x.event_id))
  AND EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.merchant_id = ? AND w.id = ? AND w.enabled)
  ORDER BY x.next_attempt_at, x.event_id LIMIT ?` + lock + `) AS c
WHERE d.merchant_id = c.cm AND d.endpoint_id = c.ce AND d.event_id = c.cv
RETURNING merchant_id, endpoint_id, event_id, coupon_id, status, attempts, next_attempt_at, lease_until, created_at`
}

// ClaimedDelivery is a claimed attempt and the event it delivers.
type ClaimedDelivery struct {
	WebhookDelivery
	Event OutboxEvent
}

// ClaimDeliveries takes the next attempt of up to limit of the endpoint's
// due deliveries in one statement and returns them with their events, each
// with Attempts the claimed attempt and a lease until leaseUntil. A delivery
// is due when it is PENDING, its next attempt is due by now, no attempt
// holds a lease on it, the endpoint is enabled and no earlier event of the
// same coupon is still PENDING at the endpoint (so events of one coupon go
// out in order). Only deliveries due from from on are looked at: the
// endpoint's floor (PendingFloors), or the zero time for all. Of any number
// of workers on any number of replicas exactly one claims each attempt: the
// claim is one conditional update (with SKIP LOCKED on PostgreSQL), and an
// attempt in flight holds its lease until FinishAttempts or until the lease
// runs out (the worker died).
//
// On PostgreSQL the events are read in the claim's statement. On SQLite,
// where an UPDATE cannot be a part of a WITH and its RETURNING cannot name
// another table, they are read after it; there an UPDATE also takes the
// database's one write lock even when it changes nothing, so a read (which
// takes no lock in WAL mode) first checks that something is due, and an idle
// worker leaves the lock to the tills.
func ClaimDeliveries(db *gorm.DB, merchantID, endpointID int64, from, now, leaseUntil time.Time, limit int) ([]ClaimedDelivery, error) {
	d := DialectOfDB(db)
	args := []any{leaseUntil, now, merchantID, endpointID, from, now, now, merchantID, endpointID, limit}
	if d == Postgres {
		rows, err := db.Raw(`WITH c AS (`+claimSQL(d)+`)
SELECT c.merchant_id, c.endpoint_id, c.event_id, c.coupon_id, c.status, c.attempts, c.next_attempt_at, c.lease_until,
  c.created_at, e.uid, e.type, e.data, e.txid, e.created_at
FROM c JOIN outbox_events e ON e.merchant_id = c.merchant_id AND e.id = c.event_id`, args...).Rows()
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out []ClaimedDelivery
		for rows.Next() {
			var x ClaimedDelivery
			if err := rows.Scan(&x.MerchantID, &x.EndpointID, &x.EventID, &x.CouponID, &x.Status, &x.Attempts,
				&x.NextAttemptAt, &x.LeaseUntil, &x.CreatedAt, &x.Event.UID, &x.Event.Type, &x.Event.Data, &x.Event.TxID,
				&x.Event.CreatedAt); err != nil {
				return nil, err
			}
			x.Event.MerchantID, x.Event.ID, x.Event.CouponID = x.MerchantID, x.EventID, x.CouponID
			out = append(out, x)
		}
		return out, rows.Err()
	}
	var due []int64
	err := scanRaw(db, &due, `SELECT x.event_id FROM webhook_deliveries x
WHERE x.merchant_id = ? AND x.endpoint_id = ? AND x.status = 'PENDING' AND x.next_attempt_at >= ? AND x.next_attempt_at <= ?
AND (x.lease_until IS NULL OR x.lease_until <= ?)
AND (x.coupon_id = 0 OR NOT EXISTS (SELECT 1 FROM webhook_deliveries p
  WHERE p.merchant_id = x.merchant_id AND p.endpoint_id = x.endpoint_id AND p.coupon_id = x.coupon_id
  AND p.status NOT IN ('DELIVERED', 'FAILED') AND p.event_id < x.event_id))
LIMIT 1`, merchantID, endpointID, from, now, now).Error
	if err != nil || len(due) == 0 {
		return nil, err
	}
	var xs []WebhookDelivery
	if err := scanRaw(db, &xs, claimSQL(d), args...).Error; err != nil || len(xs) == 0 {
		return nil, err
	}
	ids := make([]int64, len(xs))
	for i, x := range xs {
		ids[i] = x.EventID
	}
	evs, err := EventsByID(db, merchantID, ids)
	if err != nil {
		return nil, err
	}
	byID := make(map[int64]*OutboxEvent, len(evs))
	for i := range evs {
		byID[evs[i].ID] = &evs[i]
	}
	out := make([]ClaimedDelivery, 0, len(xs))
	for _, x := range xs {
		// An event always outlives its deliveries (a foreign key), so
		// every claimed attempt has one.
		if ev := byID[x.EventID]; ev != nil {
			out = append(out, ClaimedDelivery{WebhookDelivery: x, Event: *ev})
		}
	}
	return out, nil
}

// AttemptOutcome is what one attempt ended with.
type AttemptOutcome struct {
	Status     DeliveryStatus
	StatusCode *int
	Error      *string
	Response   *string
	// NextAttemptAt is when a PENDING delivery is tried again.
	NextAttemptAt time.Time
	Now           time.Time
}

// FinishedAttempt is the outcome of one claimed attempt, for
// FinishAttempts.
type FinishedAttempt struct {
	Delivery *WebhookDelivery
	Outcome  AttemptOutcome
}

// FinishAttempts records the outcomes of claimed attempts in one statement
// and releases their leases, and returns how many it recorded. An outcome
// is recorded only while its attempt (Delivery.Attempts) is still the row's
// and the row PENDING: a redelivery, or another worker after the lease ran
// out, moved it on, and that attempt's outcome is the one to keep.
//
// The PENDING each row must still be in comes from the materialized list
// of outcomes, not from the statement's text: the planner, unable to prove
// the predicate of the partial indexes of PENDING deliveries, finds each
// row by its key. Given the literal, it read webhook_deliveries_endpoint_due
// whenever the statistics said few deliveries were PENDING (a table not yet
// analyzed, or between backlogs), and then each outcome read every entry of
// its endpoint, dead ones included: 90 ms an outcome after 300,000
// deliveries.
//
// On PostgreSQL the statement turns synchronous_commit off for its
// transaction (set_config with is_local, read when the transaction
// commits): its own when it runs alone, tx's when it runs in one. That
// commit does not wait for its WAL flush. An outcome lost to a database
// crash leaves its delivery PENDING under the attempt's lease, and the
// attempt is sent again with the same webhook-id once the lease runs out,
// which at-least-once delivery allows; the claims that start attempts
// commit durably, so an attempt never has two senders.
func FinishAttempts(tx *gorm.DB, xs []FinishedAttempt) (int64, error) {
	if len(xs) == 0 {
		return 0, nil
	}
	d := DialectOfDB(tx)
	row := "(" + strings.Join([]string{typed(d, "bigint"), typed(d, "bigint"), typed(d, "bigint"), typed(d, "int"),
		"'PENDING'", typed(d, "text"), typed(d, "timestamptz"), typed(d, "int"), typed(d, "text"), typed(d, "text"),
		typed(d, "timestamptz")}, ", ") + ")"
	var b strings.Builder
	from := "v"
	b.WriteString("WITH ")
	if d == Postgres {
		b.WriteString("nosync AS (SELECT set_config('synchronous_commit', 'off', true) AS s), ")
		from = "v, nosync"
	}
	b.WriteString("v (m, e, ev, a, was, status, next_at, code, err, resp, delivered) AS MATERIALIZED (VALUES ")
	args := make([]any, 0, len(xs)*10)
	for i, x := range xs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(row)
		o := x.Outcome
		var delivered *time.Time
		if o.Status == DeliveryDelivered {
			delivered = &o.Now
		}
		args = append(args, x.Delivery.MerchantID, x.Delivery.EndpointID, x.Delivery.EventID, x.Delivery.Attempts,
			string(o.Status), o.NextAttemptAt, o.StatusCode, o.Error, o.Response, delivered)
	}
	b.WriteString(`)
UPDATE webhook_deliveries SET status = v.status, next_attempt_at = v.next_at, lease_until = NULL,
  last_status_code = v.code, last_error = v.err, last_response = v.resp, delivered_at = v.delivered
FROM ` + from + ` WHERE webhook_deliveries.merchant_id = v.m AND webhook_deliveries.endpoint_id = v.e
  AND webhook_deliveries.event_id = v.ev AND webhook_deliveries.attempts = v.a AND webhook_deliveries.status = v.was`)
	res := tx.Exec(b.String(), args...)
	return res.RowsAffected, res.Error
}

// ReleaseClaim hands back a claimed attempt that was never sent: the
// attempt is uncounted and its lease dropped, so it is due again at once.
// It changes nothing when the attempt is no longer the row's or the row is
// no longer PENDING (a redelivery or another worker after the lease ran out
// moved it on).
func ReleaseClaim(db *gorm.DB, x *WebhookDelivery) error {
	return db.Exec(`UPDATE webhook_deliveries SET attempts = attempts - 1, lease_until = NULL
WHERE merchant_id = ? AND endpoint_id = ? AND event_id = ? AND attempts = ? AND status = 'PENDING'`,
		x.MerchantID, x.EndpointID, x.EventID, x.Attempts).Error
}

// Redeliver makes the event due again at the endpoint now, with the same
// event id: the delivery row goes back to PENDING (an attempt in flight keeps
// its lease and its outcome), or is created if the endpoint never had it.
func Redeliver(tx *gorm.DB, merchantID, endpointID int64, ev *OutboxEvent, now time.Time) error {
	return tx.Clauses(clause.OnConflict{
		Columns: []clause.Column{{Name: "merchant_id"}, {Name: "endpoint_id"}, {Name: "event_id"}},
		DoUpdates: clause.Assignments(map[string]any{"status": DeliveryPending, "next_attempt_at": now,
			"delivered_at": nil}),
	}).Create(&WebhookDelivery{MerchantID: merchantID, EndpointID: endpointID, EventID: ev.ID, CouponID: ev.CouponID,
		Status: DeliveryPending, NextAttemptAt: now, CreatedAt: now}).Error
}

// ReplayDeliveries makes the merchant's events created in [since, until), of
// the types the endpoint subscribes to, due at the endpoint now, unless the
// endpoint has them already: an event it never got (written while it was
// disabled, or before it existed) gets a new PENDING delivery, a FAILED
// delivery goes back to PENDING, and PENDING or DELIVERED ones are left as
// they are. It returns how many deliveries it queued. Only the merchant's
// own events and endpoint are read: the endpoint is joined on the
// merchant's id.
func ReplayDeliveries(tx *gorm.DB, merchantID, endpointID int64, since, until, now time.Time) (int64, error) {
	d := DialectOfDB(tx)
	res := tx.Exec(`INSERT INTO webhook_deliveries (merchant_id, endpoint_id, event_id, coupon_id, status, next_attempt_at, created_at)
SELECT e.merchant_id, w.id, e.id, e.coupon_id, 'PENDING', `+typed(d, "timestamptz")+`, `+typed(d, "timestamptz")+`
FROM outbox_events e JOIN webhook_endpoints w ON w.merchant_id = e.merchant_id AND w.id = ?
WHERE e.merchant_id = ? AND e.created_at >= ? AND e.created_at < ?
AND (',' || w.events || ',') LIKE ('%,' || e.type || ',%')
ON CONFLICT (merchant_id, endpoint_id, event_id) DO UPDATE SET status = 'PENDING', next_attempt_at = excluded.next_attempt_at,
delivered_at = NULL
WHERE webhook_deliveries.status = 'FAILED'`, now, now, endpointID, merchantID, since, until)
	return res.RowsAffected, res.Error
}

// DeliveryRow is a delivery with its event's public id and type.
type DeliveryRow struct {
	WebhookDelivery
	EventUID  string
	EventType string
}

// DeliveryFilter narrows a list of deliveries; zero values do not filter.
type DeliveryFilter struct {
	EndpointID int64
	EventType  string
	Status     DeliveryStatus
	From, To   time.Time
}

// MerchantDeliveries returns up to limit of the merchant's deliveries
// matching f, newest event first, after the cursor afterEventID (0: from the
// newest) and afterEndpointID.
func MerchantDeliveries(db *gorm.DB, merchantID int64, f DeliveryFilter, afterEventID, afterEndpointID int64, limit int) ([]DeliveryRow, error) {
	q := db.Table("webhook_deliveries d").
		Select("d.*, e.uid AS event_uid, e.type AS event_type").
		Joins("JOIN outbox_events e ON e.merchant_id = d.merchant_id AND e.id = d.event_id").
		Where("d.merchant_id = ?", merchantID)
	if afterEventID != 0 {
		q = q.Where("(d.event_id < ? OR (d.event_id = ? AND d.endpoint_id > ?))", afterEventID, afterEventID, afterEndpointID)
	}
	if f.EndpointID != 0 {
		q = q.Where("d.endpoint_id = ?", f.EndpointID)
	}
	if f.EventType != "" {
		q = q.Where("e.type = ?", f.EventType)
	}
	if f.Status != "" {
		q = q.Where("d.status = ?", f.Status)
	}
	if !f.From.IsZero() {
		q = q.Where("d.created_at >= ?", f.From)
	}
	if !f.To.IsZero() {
		q = q.Where("d.created_at < ?", f.To)
	}
	var out []DeliveryRow
	err := scanRows(q.Order("d.event_id DESC, d.endpoint_id").Limit(limit), &out).Error
	return out, err
}

// DeliveryCount is a count of deliveries in one status.
type DeliveryCount struct {
	Status DeliveryStatus
	N      int64
}

// CountUndelivered counts the deliveries waiting (PENDING) and those given
// up (FAILED), for metrics. Each count reads a partial index of its status
// (webhook_deliveries_endpoint_due, webhook_deliveries_failed),
// so its cost follows the deliveries in that status, not all that were ever
// made.
func CountUndelivered(db *gorm.DB) ([]DeliveryCount, error) {
	var r struct{ Pending, Failed int64 }
	err := scanRaw(db, &r, `SELECT (SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'PENDING') AS pending,
  (SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'FAILED') AS failed`).Error
	return []DeliveryCount{{Status: DeliveryPending, N: r.Pending}, {Status: DeliveryFailed, N: r.Failed}}, err
}

// OldestPending is the creation time of an endpoint's oldest PENDING
// delivery.
type OldestPending struct {
	MerchantID int64
	EndpointID int64
	Oldest     time.Time
}

// OldestPendingDeliveries returns, per endpoint with PENDING deliveries, the
// creation time of the delivery of its oldest undelivered event, for metrics.
func OldestPendingDeliveries(db *gorm.DB) ([]OldestPending, error) {
	var heads []WebhookDelivery
	if err := scanRaw(db, &heads, `SELECT merchant_id, endpoint_id, MIN(event_id) AS event_id FROM webhook_deliveries
WHERE status = 'PENDING' GROUP BY merchant_id, endpoint_id`).Error; err != nil {
		return nil, err
	}
	out := make([]OldestPending, 0, len(heads))
	for _, h := range heads {
		var d WebhookDelivery
		err := db.Where("merchant_id = ? AND endpoint_id = ? AND event_id = ?", h.MerchantID, h.EndpointID, h.EventID).Take(&d).Error
		if err != nil {
			continue
		}
		out = append(out, OldestPending{MerchantID: d.MerchantID, EndpointID: d.EndpointID, Oldest: d.CreatedAt})
	}
	return out, nil
}
