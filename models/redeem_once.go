package models

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"gorm.io/gorm"
)

// redeemOnceSQL is a whole one-shot redemption with the builtin adapter in one
// statement: the conditional update takes the coupon from UNUSED straight to
// REDEEMED, or for a multi-use card with uses left back to UNUSED (version
// + 2, both edges recorded, exactly what the reserve and confirm updates of
// one transaction leave behind, ConfirmUse's accounting of uses included), and the order, the
// SUCCEEDED flow and the two transitions are inserted from its result, so
// nothing is written when the coupon is not taken. The update's WHERE is the
// reserve's (eligibleSQL), and the discount is
// Campaign.Discount's (discountSQL). Parameters: $1 redemption number, $2 now,
// $3 merchant, $4 code, $5 order amount, $6 store, $7 request id,
// $8 fingerprint, $9 operator, $10 hold deadline, $11 actor, $12 customer
// (an empty string for none), $13-$15 the merchant's clock (LocalClock: today's
// and yesterday's weekday bits, the minute of the day), $16 the
// redemption.succeeded event's public id. It takes only a coupon whose use
// counts against no limit (noAllowancesSQL): counting one needs its own
// conditional upserts, which one statement cannot undo when they fail
// (services takes those in a transaction). The event and its deliveries (one
// per subscribed endpoint) are two more parts of the statement, so the outbox
// costs the hot path no commit.
var redeemOnceSQL = `WITH c AS (
  UPDATE coupons SET status = CASE WHEN uses_left = 1 THEN 'REDEEMED' ELSE 'UNUSED' END,
    redeem_no = CASE WHEN uses_left = 1 THEN $1 END, uses_left = uses_left - 1,
    version = version + 2, updated_at = $2
  WHERE merchant_id = $3 AND code = $4 AND ` + eligibleSQL("$2", "$5::bigint", "$6::bigint", "$12::text", clockSQL("$13", "$14", "$15")) + `
    AND EXISTS (SELECT 1 FROM campaigns k WHERE k.id = coupons.campaign_id AND ` + noAllowancesSQL("k", "$12::text") + `)
  RETURNING id, campaign_id, version, status, uses_total - uses_left AS use_no, customer_ref
), o AS (
  INSERT INTO orders (merchant_id, redeem_no, coupon_id, store_id, amount, status, created_at)
  SELECT $3::bigint, $1::text, c.id, $6::bigint, $5::bigint, 'CREATED', $2::timestamptz FROM c
  RETURNING id
), f AS (
  INSERT INTO redemption_flows (` + flowColumns + `)
  SELECT $3::bigint, $1::text, 'REDEEM', $7::text, $8::text, c.id, $6::bigint,
    $9::bigint, 'SUCCEEDED', NULL, NULL, $5::bigint, ` + discountSQL("k", "$5::bigint") + `, '` + OrderRefPrefix + `' || o.id,
    $10::timestamptz, 0, 1, $2::timestamptz, $2::timestamptz, $2::timestamptz, c.use_no,
    COALESCE(c.customer_ref, NULLIF($12::text, '')), ''
  FROM c JOIN campaigns k ON k.id = c.campaign_id, o
  RETURNING id, discount_amount, order_ref, customer_ref
), t AS (
  ` + insertTransitionsSQL(`
  SELECT $3::bigint, c.id, 'UNUSED', 'REDEEMING', c.version - 1, $1::text, $11::text, $6::bigint,
    $2::timestamptz FROM c
  UNION ALL
  SELECT $3::bigint, c.id, 'REDEEMING', c.status, c.version, $1::text, $11::text, $6::bigint,
    $2::timestamptz FROM c`) + `
), ev AS (
  INSERT INTO outbox_events (merchant_id, uid, type, coupon_id, data, created_at)
  SELECT $3::bigint, $16::text, '` + EventRedemptionSucceeded + `', c.id, ` + redemptionData{redeemNo: "$1::text",
	requestID: "$7::text", operation: "'" + string(OpRedeem) + "'", code: "$4::text", storeID: "$6::bigint", storeCode: "s.code",
	orderAmount: "$5::bigint", discountAmount: "f.discount_amount", orderRef: "f.order_ref", releaseReason: "NULL::text",
	operator: "tk.name"}.sql(Postgres) + `, $2::timestamptz
  FROM c CROSS JOIN f
  LEFT JOIN stores s ON s.merchant_id = $3::bigint AND s.id = $6::bigint
  LEFT JOIN api_tokens tk ON tk.merchant_id = $3::bigint AND tk.id = $9::bigint
  RETURNING id, coupon_id
), wd AS (
  INSERT INTO webhook_deliveries (merchant_id, endpoint_id, event_id, coupon_id, status, next_attempt_at, created_at)
  SELECT w.merchant_id, w.id, ev.id, ev.coupon_id, 'PENDING', $2::timestamptz, $2::timestamptz
  FROM ev, webhook_endpoints w
  WHERE w.merchant_id = $3::bigint AND w.enabled AND (',' || w.events || ',') LIKE '` + "%," + EventRedemptionSucceeded + ",%" + `'
)
SELECT c.id AS coupon_id, c.campaign_id, f.id AS flow_id, f.discount_amount, f.order_ref, c.status, c.use_no,
  f.customer_ref FROM c, f`

// redeemOnceParams names redeemOnceSQL's parameters in order ($1 first), as
// RedeemOnce passes them.
var redeemOnceParams = []string{"redeemNo", "now", "merchantId", "code", "orderAmount", "storeId", "requestId",
	"fingerprint", "operatorId", "holdUntil", "actor", "customerRef", "clockDay", "clockPrevDay", "clockMinute", "eventId"}

// RedeemOnceStatement returns the statement RedeemOnce sends and the names of
// its parameters in order. `coupond debug redeem-sql` prints them, so the
// benchmark can run the application's own statement in pgbench and measure
// what the server adds to it.
func RedeemOnceStatement() (string, []string) {
	return redeemOnceSQL, append([]string(nil), redeemOnceParams...)
}

// RedeemedOnce is what RedeemOnce returns of a redemption it made.
type RedeemedOnce struct {
	CouponID       int64
	CampaignID     int64
	FlowID         int64
	DiscountAmount int64
	OrderRef       string
	Status         CouponStatus
	UseNo          int64
	CustomerRef    *string
}

// RedeemOnce runs a one-shot redemption with the builtin adapter as one
// PostgreSQL statement (see redeemOnceSQL), so it commits with one round trip
// and one WAL flush. flow carries the request (merchant, redemption number,
// request id, fingerprint, store, operator, amounts, times, hold); actor
// labels the transitions. It reports false, having written nothing, when the
// reserve's conditions do not hold (unknown code, coupon taken, expired, not
// valid at the store, minimum spend not met); a unique violation (a repeated
// request id) is gorm.ErrDuplicatedKey. On true, flow is filled in as stored:
// SUCCEEDED with its id, coupon, discount and order reference.
func RedeemOnce(db *gorm.DB, a ReserveArgs, flow *RedemptionFlow, actor string) (bool, error) {
	// The statement runs on the pool directly, without GORM's builder and
	// reflection: on the hottest path they cost as much as the round trip.
	var r RedeemedOnce
	err := db.Statement.ConnPool.QueryRowContext(db.Statement.Context, redeemOnceSQL,
		redeemOnceArgs(a, flow, actor)...).Scan(r.dest()...)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, translate(db, err)
	}
	r.fill(a.Now, flow)
	return true, nil
}

// redeemOnceArgs are redeemOnceSQL's parameters for one redemption, in the
// order of redeemOnceParams.
func redeemOnceArgs(a ReserveArgs, flow *RedemptionFlow, actor string) []any {
	return []any{flow.RedeemNo, a.Now, a.MerchantID, a.Code, a.OrderAmount, a.StoreID, flow.RequestID, flow.Fingerprint,
		flow.OperatorID, flow.HoldUntil, actor, a.CustomerRef, a.Clock.Day, a.Clock.PrevDay, a.Clock.Minute, NewEventUID()}
}

// dest is where redeemOnceSQL's row is scanned.
func (r *RedeemedOnce) dest() []any {
	return []any{&r.CouponID, &r.CampaignID, &r.FlowID, &r.DiscountAmount, &r.OrderRef, &r.Status, &r.UseNo, &r.CustomerRef}
}

// fill sets flow as stored by the statement that returned r at now:
// SUCCEEDED with its id, coupon, discount and order reference.
func (r *RedeemedOnce) fill(now time.Time, flow *RedemptionFlow) {
	flow.ID, flow.CouponID, flow.DiscountAmount, flow.OrderRef = r.FlowID, r.CouponID, r.DiscountAmount, &r.OrderRef
	flow.Status, flow.Version, flow.FinishedAt = FlowSucceeded, 1, &now
	flow.UseNo, flow.CouponAfter = r.UseNo, r.Status
	flow.CustomerRef = r.CustomerRef
}

// OnceCall is one redemption of a batch that RedeemOnceAll runs: RedeemOnce's
// arguments, and whether the statement took the coupon.
type OnceCall struct {
	Args  ReserveArgs
	Flow  *RedemptionFlow
	Actor string
	// Taken is RedeemOnce's bool, set when RedeemOnceAll returns nil.
	Taken bool
}

// ErrNoPipeline is returned by RedeemOnceAll when db's connections are not
// pgx's, so the statements cannot go out as one pipeline.
var ErrNoPipeline = errors.New("the connection pool cannot pipeline statements")

// RedeemOnceAll runs RedeemOnce's statement for every call on one connection,
// as one pipeline: the statements go out together, run one after the other
// in one implicit transaction and commit once, so the batch pays one round
// trip and one WAL flush instead of one each. Each statement is the one
// RedeemOnce sends, with its own conditional update: a call whose coupon an
// earlier call of the batch took finds it taken, exactly as if it had run
// after it alone.
//
// It is all or nothing. On nil every call's Taken is set and each taken
// call's flow is filled in as RedeemOnce fills it. On an error nothing of the
// batch was written, or, when the connection failed during the commit, it is
// not known whether it was; no flow is changed either way. The caller then
// runs each call alone with RedeemOnce, where a request id the batch did
// commit is a unique violation, as for any repeated request.
func RedeemOnceAll(db *gorm.DB, calls []*OnceCall) error {
	ctx := db.Statement.Context
	pool, ok := db.Statement.ConnPool.(interface {
		Conn(context.Context) (*sql.Conn, error)
	})
	if !ok {
		return ErrNoPipeline
	}
	conn, err := pool.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	rows := make([]RedeemedOnce, len(calls))
	taken := make([]bool, len(calls))
	err = conn.Raw(func(driverConn any) error {
		pc, ok := driverConn.(*stdlib.Conn)
		if !ok {
			return ErrNoPipeline
		}
		b := &pgx.Batch{}
		for _, c := range calls {
			b.Queue(redeemOnceSQL, redeemOnceArgs(c.Args, c.Flow, c.Actor)...)
		}
		br := pc.Conn().SendBatch(ctx, b)
		for i := range calls {
			err := br.QueryRow().Scan(rows[i].dest()...)
			switch {
			case errors.Is(err, pgx.ErrNoRows):
			case err != nil:
				_ = br.Close()
				return err
			default:
				taken[i] = true
			}
		}
		// Close reads up to the end of the pipeline: the commit's answer.
		return br.Close()
	})
	if err != nil {
		return translate(db, err)
	}
	for i, c := range calls {
		c.Taken = taken[i]
		if taken[i] {
			rows[i].fill(c.Args.Now, c.Flow)
		}
	}
	return nil
}

// RedeemOnceSupported reports whether db can run RedeemOnce: PostgreSQL
// only, since SQLite has no data-modifying WITH.
func RedeemOnceSupported(db *gorm.DB) bool { return DialectOfDB(db) == Postgres }
