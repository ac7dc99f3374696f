package models

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"time"

	"gorm.io/gorm"
)

// Event types a merchant can subscribe to. Each is written in the
// transaction (or statement) of the change it describes.
const (
	EventRedemptionSucceeded = "redemption.succeeded"
	EventRedemptionReleased  = "redemption.released"
	EventRedemptionRefunded  = "redemption.refunded"
	EventCouponReissued      = "coupon.reissued"
	EventCouponIssued        = "coupon.issued"
	EventCouponExpired       = "coupon.expired"
	EventCouponVoided        = "coupon.voided"
	EventFindingOpened       = "finding.opened"
)

// EventTypes lists every event type, in the order the documentation shows them.
var EventTypes = []string{EventRedemptionSucceeded, EventRedemptionReleased, EventRedemptionRefunded,
	EventCouponReissued, EventCouponIssued, EventCouponExpired, EventCouponVoided, EventFindingOpened}

// OutboxEvent is one row of outbox_events: an event as it will be delivered.
// UID is its public id (evt_...), the webhook-id of every delivery; Data is
// the payload's data object as JSON; CouponID (0 for none) orders the events
// of one coupon.
type OutboxEvent struct {
	MerchantID int64
	ID         int64
	UID        string
	Type       string
	CouponID   int64
	Data       string
	TxID       int64 `gorm:"column:txid"`
	CreatedAt  time.Time
}

// TableName is outbox_events.
func (OutboxEvent) TableName() string { return "outbox_events" }

var uidEncoding = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

// NewEventUID returns a fresh public event id: evt_ and 26 symbols of 128
// bits, the first 48 the Unix millisecond it was made and the rest random
// (the layout of a ULID or a UUIDv7). Ids made later sort after, so the
// unique index on them grows at its right edge, as the ledger's does,
// instead of dirtying a random page of it for every event.
func NewEventUID() string { return eventUIDAt(time.Now()) }

// eventUIDAt is NewEventUID for an id made at t.
func eventUIDAt(t time.Time) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(t.UnixMilli())<<16)
	_, _ = rand.Read(b[6:])
	return "evt_" + uidEncoding.EncodeToString(b[:])
}

// jsonObject is the dialect's function that builds a JSON object from
// alternating keys and values; both take the same arguments.
func jsonObject(d Dialect) string {
	if d == Postgres {
		return "json_build_object"
	}
	return "json_object"
}

// jsonText renders a JSON object expression as text on d.
func jsonText(d Dialect, obj string) string {
	if d == Postgres {
		return obj + "::text"
	}
	return obj
}

// redemptionData is the data of redemption.succeeded and
// redemption.released, the one list of their keys: the statement of a
// one-shot redemption (redeemOnceSQL) and InsertRedemptionEvent fill it from
// different rows, and TestEventDataSame holds them to the same result.
type redemptionData struct {
	redeemNo, requestID, operation, code, storeID, storeCode, orderAmount, discountAmount, orderRef,
	releaseReason, operator string
}

func (r redemptionData) sql(d Dialect) string {
	return jsonText(d, jsonObject(d)+"('redeemNo', "+r.redeemNo+", 'requestId', "+r.requestID+
		", 'operation', "+r.operation+", 'code', "+r.code+", 'storeId', "+r.storeID+", 'storeCode', "+r.storeCode+
		", 'orderAmount', "+r.orderAmount+", 'discountAmount', "+r.discountAmount+", 'orderRef', "+r.orderRef+
		", 'releaseReason', "+r.releaseReason+", 'operator', "+r.operator+")")
}

// eventID is the expression that gives a new event its id: PostgreSQL's
// sequence, or on SQLite, whose writers take turns, the next number (so ids
// are in commit order there).
func eventIDColumn(d Dialect) (column, value string) {
	if d == Postgres {
		return "", ""
	}
	return "id, ", "(SELECT COALESCE(MAX(id), 0) + 1 FROM outbox_events), "
}

// typed is a parameter of a SELECT list with its type, which PostgreSQL
// cannot infer there; SQLite takes the value as bound.
func typed(d Dialect, typ string) string {
	if d == Postgres {
		return "?::" + typ
	}
	return "?"
}

// deliveriesSQL fans an event out to the merchant's enabled endpoints
// subscribed to its type: one webhook_deliveries row each, due at once.
// Parameters: event id, coupon id, now, now, merchant, type pattern.
func deliveriesSQL(d Dialect) string {
	return `INSERT INTO webhook_deliveries (merchant_id, endpoint_id, event_id, coupon_id, status, next_attempt_at, created_at)
SELECT w.merchant_id, w.id, ` + typed(d, "bigint") + `, ` + typed(d, "bigint") + `, 'PENDING', ` + typed(d, "timestamptz") +
		`, ` + typed(d, "timestamptz") + ` FROM webhook_endpoints w
WHERE w.merchant_id = ? AND w.enabled AND (',' || w.events || ',') LIKE ?`
}

// subscribedPattern is the LIKE pattern of an endpoint's events list that
// holds typ (event types have no LIKE wildcards).
func subscribedPattern(typ string) string { return "%," + typ + ",%" }

func fanOut(tx *gorm.DB, merchantID, eventID, couponID int64, typ string, now time.Time) error {
	return tx.Exec(deliveriesSQL(DialectOfDB(tx)), eventID, couponID, now, now, merchantID, subscribedPattern(typ)).Error
}

// InsertEvent writes ev on tx, the transaction of its change, with a
// delivery for each endpoint subscribed to it, and sets ev.ID.
func InsertEvent(tx *gorm.DB, ev *OutboxEvent) error {
	d := DialectOfDB(tx)
	col, val := eventIDColumn(d)
	var ids []int64
	err := scanRaw(tx, &ids, "INSERT INTO outbox_events (merchant_id, "+col+"uid, type, coupon_id, data, created_at) VALUES (?, "+val+
		"?, ?, ?, ?, ?) RETURNING id", ev.MerchantID, ev.UID, ev.Type, ev.CouponID, ev.Data, ev.CreatedAt).Error
	if err != nil {
		return translate(tx, err)
	}
	if len(ids) != 1 {
		return fmt.Errorf("insert event %s: %d rows returned", ev.Type, len(ids))
	}
	ev.ID = ids[0]
	return fanOut(tx, ev.MerchantID, ev.ID, ev.CouponID, ev.Type, ev.CreatedAt)
}

// insertEventFrom writes one event whose data a query renders: from and
// where select the one row it describes; couponID is the ordering column.
func insertEventFrom(tx *gorm.DB, merchantID int64, typ, couponID, data, from string, now time.Time, args ...any) error {
	d := DialectOfDB(tx)
	col, val := eventIDColumn(d)
	q := "INSERT INTO outbox_events (merchant_id, " + col + "uid, type, coupon_id, data, created_at) SELECT " +
		typed(d, "bigint") + ", " + val + typed(d, "text") + ", " + typed(d, "text") + ", " + couponID + ", " + data + ", " +
		typed(d, "timestamptz") + " " + from + " RETURNING id, coupon_id"
	var rows []struct {
		ID       int64
		CouponID int64
	}
	all := append([]any{merchantID, NewEventUID(), typ, now}, args...)
	if err := scanRaw(tx, &rows, q, all...).Error; err != nil {
		return translate(tx, err)
	}
	if len(rows) != 1 {
		return fmt.Errorf("insert event %s: %d rows returned", typ, len(rows))
	}
	return fanOut(tx, merchantID, rows[0].ID, rows[0].CouponID, typ, now)
}

// InsertRedemptionEvent writes redemption.succeeded or redemption.released
// for the flow flowID as it stands on tx, the transaction that finished it.
func InsertRedemptionEvent(tx *gorm.DB, typ string, merchantID, flowID int64, now time.Time) error {
	d := DialectOfDB(tx)
	data := redemptionData{redeemNo: "f.redeem_no", requestID: "f.request_id", operation: "f.operation", code: "c.code",
		storeID: "f.store_id", storeCode: "s.code", orderAmount: "f.order_amount", discountAmount: "f.discount_amount",
		orderRef: "f.order_ref", releaseReason: "f.release_reason", operator: "t.name"}.sql(d)
	return insertEventFrom(tx, merchantID, typ, "f.coupon_id", data, `FROM redemption_flows f
JOIN coupons c ON c.merchant_id = f.merchant_id AND c.id = f.coupon_id
LEFT JOIN stores s ON s.merchant_id = f.merchant_id AND s.id = f.store_id
LEFT JOIN api_tokens t ON t.merchant_id = f.merchant_id AND t.id = f.operator_id
WHERE f.merchant_id = ? AND f.id = ?`, now, merchantID, flowID)
}

// InsertRefundEvents writes redemption.refunded for the refund refundNo, and
// coupon.reissued when it issued a replacement, on tx, the refund's
// transaction.
func InsertRefundEvents(tx *gorm.DB, merchantID int64, refundNo string, reissued bool, now time.Time) error {
	d := DialectOfDB(tx)
	obj := jsonObject(d)
	from := `FROM refund_flows r
JOIN coupons c ON c.merchant_id = r.merchant_id AND c.id = r.coupon_id
LEFT JOIN coupons n ON n.merchant_id = r.merchant_id AND n.id = r.reissued_coupon_id
LEFT JOIN stores s ON s.merchant_id = r.merchant_id AND s.id = r.store_id
LEFT JOIN api_tokens t ON t.merchant_id = r.merchant_id AND t.id = r.operator_id
WHERE r.merchant_id = ? AND r.refund_no = ?`
	refunded := jsonText(d, obj+`('refundNo', r.refund_no, 'requestId', r.request_id, 'redeemNo', r.redeem_no,
  'code', c.code, 'storeId', r.store_id, 'storeCode', s.code, 'amount', r.amount, 'reason', r.reason,
  'reissuedCode', n.code, 'operator', t.name)`)
	if err := insertEventFrom(tx, merchantID, EventRedemptionRefunded, "r.coupon_id", refunded, from, now, merchantID, refundNo); err != nil {
		return err
	}
	if !reissued {
		return nil
	}
	data := jsonText(d, obj+`('refundNo', r.refund_no, 'redeemNo', r.redeem_no, 'code', c.code,
  'reissuedCode', n.code, 'customerRef', n.customer_ref)`)
	return insertEventFrom(tx, merchantID, EventCouponReissued, "r.coupon_id", data, from, now, merchantID, refundNo)
}

// ValidEventType reports whether typ is one of EventTypes.
func ValidEventType(typ string) bool {
	for _, t := range EventTypes {
		if t == typ {
			return true
		}
	}
	return false
}

// EventFeedPage reads up to limit events of the merchant after the cursor
// (txid, id), in (txid, id) order. On PostgreSQL it reads only events whose
// transaction is older than the oldest one still running
// (pg_snapshot_xmin): every transaction below that horizon has ended, so no
// event can later appear before the cursor, and a reader paging with it
// skips nothing whatever order transactions commit in. On SQLite writers take
// turns and ids are in commit order (txid is 0 throughout).
func EventFeedPage(db *gorm.DB, merchantID int64, types []string, from, to *time.Time, afterTx, afterID int64, limit int) ([]OutboxEvent, error) {
	q := db.Where("merchant_id = ? AND (txid > ? OR (txid = ? AND id > ?))", merchantID, afterTx, afterTx, afterID)
	if DialectOfDB(db) == Postgres {
		q = q.Where("txid < pg_snapshot_xmin(pg_current_snapshot())::text::bigint")
	}
	if len(types) > 0 {
		q = q.Where("type IN ?", types)
	}
	if from != nil {
		q = q.Where("created_at >= ?", *from)
	}
	if to != nil {
		q = q.Where("created_at < ?", *to)
	}
	var out []OutboxEvent
	err := q.Order("txid, id").Limit(limit).Find(&out).Error
	return out, err
}

// EventByUID returns the merchant's event with public id uid, or
// gorm.ErrRecordNotFound.
func EventByUID(db *gorm.DB, merchantID int64, uid string) (*OutboxEvent, error) {
	var ev OutboxEvent
	if err := db.Where("merchant_id = ? AND uid = ?", merchantID, uid).Take(&ev).Error; err != nil {
		return nil, err
	}
	return &ev, nil
}

// EventsByID returns the merchant's events with the given ids.
func EventsByID(db *gorm.DB, merchantID int64, ids []int64) ([]OutboxEvent, error) {
	var out []OutboxEvent
	if len(ids) == 0 {
		return out, nil
	}
	err := db.Where("merchant_id = ? AND id IN ?", merchantID, ids).Find(&out).Error
	return out, err
}

// EventWatermark returns the watermark below which no event can be added
// any more, for a count of the outbox that stays exact as it grows without
// reading all of it each time (events are never deleted): the events below
// one watermark are counted once (CountEvents) and kept, and the next count
// starts from it. Watermarks only grow; the first is 0.
//
// On PostgreSQL the watermark is a transaction id, the snapshot's xmin:
// events whose txid is below the oldest transaction still running were
// written by transactions that have ended, so no event can join them. On
// SQLite, whose writers take turns so that ids are in commit order, it is
// the id after the last one stored.
func EventWatermark(db *gorm.DB) (int64, error) {
	var mark int64
	q := `SELECT COALESCE(MAX(id), 0) + 1 FROM outbox_events`
	if DialectOfDB(db) == Postgres {
		q = `SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint`
	}
	err := scanRaw(db, &mark, q).Error
	return mark, err
}

// CountEvents counts the stored events whose watermark key (EventWatermark:
// the writing transaction's id on PostgreSQL, the id on SQLite) is at least
// from and, when to is above 0, below to. The events from the latest
// watermark on are those visible now, some of which may still be joined by
// others; the ones between two watermarks are settled. Its cost follows the
// events in the range: on PostgreSQL each merchant's part is a range of
// outbox_events_feed.
func CountEvents(db *gorm.DB, from, to int64) (int64, error) {
	if to <= 0 {
		to = math.MaxInt64
	}
	var n int64
	if DialectOfDB(db) != Postgres {
		err := scanRaw(db, &n, `SELECT COUNT(*) FROM outbox_events WHERE id >= ? AND id < ?`, from, to).Error
		return n, err
	}
	// One index range of outbox_events_feed per merchant: joined plainly,
	// PostgreSQL read the txid range out of the whole index, every
	// merchant's part of it (a bitmap scan on txid alone: 80-140 ms per
	// statement over a few million events, whatever the range), and a
	// generic plan of the plain join scanned the table.
	err := scanRaw(db, &n, `SELECT COALESCE(SUM(x.n), 0) FROM merchants m
CROSS JOIN LATERAL (SELECT COUNT(*) AS n FROM outbox_events e WHERE e.merchant_id = m.id AND e.txid >= ? AND e.txid < ?) x`,
		from, to).Error
	return n, err
}

// joinTypes is the stored form of an endpoint's subscribed types.
func joinTypes(types []string) string { return strings.Join(types, ",") }
