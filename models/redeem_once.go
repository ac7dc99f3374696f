package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"gorm.io/gorm"
)

// redeemOnceFrom is a whole one-shot redemption with the builtin adapter in
// one statement, for every request of the relation r that src gives (one row
// per request, with the columns of redeemColumns): the conditional update
// takes each request's coupon from UNUSED straight to REDEEMED, or for a
// multi-use card with uses left back to UNUSED (version + 2, both edges
// recorded, exactly what the reserve and confirm updates of one transaction
// leave behind, ConfirmUse's accounting of uses included), and the order, the
// SUCCEEDED flow and the two transitions are inserted from its result, so
// nothing is written for a request whose coupon is not taken. The update's
// WHERE is the reserve's (eligibleSQL), and the discount is
// Campaign.Discount's (discountSQL). It takes only a coupon whose use counts
// against no limit (noAllowancesSQL): counting one needs its own conditional
// upserts, which one statement cannot undo when they fail (services takes
// those in a transaction). The event and its deliveries (one per subscribed
// endpoint) are two more parts of the statement, so the outbox costs the hot
// path no commit. It returns one row per request whose coupon it took, with
// the request's ord.
//
// The requests of one statement must name different coupons: a coupon two
// rows of r match is updated once, for one of them, and the other is not
// taken.
func redeemOnceFrom(src string) string {
	return `WITH c AS (
  UPDATE coupons SET status = CASE WHEN coupons.uses_left = 1 THEN 'REDEEMED' ELSE 'UNUSED' END,
    redeem_no = CASE WHEN coupons.uses_left = 1 THEN r.redeem_no END, uses_left = coupons.uses_left - 1,
    version = coupons.version + 2, updated_at = r.at
  FROM ` + src + `
  WHERE coupons.merchant_id = r.mid AND coupons.code = r.code AND ` + eligibleSQL("r.at", "r.amount", "r.store", "r.customer", clockSQL("r.clk_d", "r.clk_p", "r.clk_m")) + `
    AND EXISTS (SELECT 1 FROM campaigns k WHERE k.id = coupons.campaign_id AND ` + noAllowancesSQL("k", "r.customer") + `)
  RETURNING coupons.id, coupons.campaign_id, coupons.version, coupons.status, coupons.uses_total - coupons.uses_left AS use_no,
    coupons.customer_ref, r.*
), o AS (
  INSERT INTO orders (merchant_id, redeem_no, coupon_id, store_id, amount, status, created_at)
  SELECT c.mid, c.redeem_no, c.id, c.store, c.amount, 'CREATED', c.at FROM c
  RETURNING id, redeem_no
), f AS (
  INSERT INTO redemption_flows (` + flowColumns + `)
  SELECT c.mid, c.redeem_no, 'REDEEM', c.request_id, c.fingerprint, c.id, c.store,
    c.operator, 'SUCCEEDED', NULL, NULL, c.amount, ` + discountSQL("k", "c.amount") + `, '` + OrderRefPrefix + `' || o.id,
    c.hold_until, 0, 1, c.at, c.at, c.at, c.use_no,
    COALESCE(c.customer_ref, NULLIF(c.customer, '')), ''
  FROM c JOIN campaigns k ON k.id = c.campaign_id JOIN o ON o.redeem_no = c.redeem_no
  RETURNING id, redeem_no, discount_amount, order_ref, customer_ref
), t AS (
  ` + insertTransitionsSQL(`
  SELECT c.mid, c.id, 'UNUSED', 'REDEEMING', c.version - 1, c.redeem_no, c.actor, c.store, c.at FROM c
  UNION ALL
  SELECT c.mid, c.id, 'REDEEMING', c.status, c.version, c.redeem_no, c.actor, c.store, c.at FROM c`) + `
), ev AS (
  INSERT INTO outbox_events (merchant_id, uid, type, coupon_id, data, created_at)
  SELECT c.mid, c.event_uid, '` + EventRedemptionSucceeded + `', c.id, ` + redemptionData{redeemNo: "c.redeem_no",
		requestID: "c.request_id", operation: "'" + string(OpRedeem) + "'", code: "c.code", storeID: "c.store", storeCode: "s.code",
		orderAmount: "c.amount", discountAmount: "f.discount_amount", orderRef: "f.order_ref", releaseReason: "NULL::text",
		operator: "tk.name"}.sql(Postgres) + `, c.at
  FROM c JOIN f ON f.redeem_no = c.redeem_no
  LEFT JOIN stores s ON s.merchant_id = c.mid AND s.id = c.store
  LEFT JOIN api_tokens tk ON tk.merchant_id = c.mid AND tk.id = c.operator
  RETURNING id, merchant_id, coupon_id, created_at
), wd AS (
  INSERT INTO webhook_deliveries (merchant_id, endpoint_id, event_id, coupon_id, status, next_attempt_at, created_at)
  SELECT w.merchant_id, w.id, ev.id, ev.coupon_id, 'PENDING', ev.created_at, ev.created_at
  FROM ev JOIN webhook_endpoints w ON w.merchant_id = ev.merchant_id
  WHERE w.enabled AND (',' || w.events || ',') LIKE '` + "%," + EventRedemptionSucceeded + ",%" + `'
)
SELECT c.ord, c.id AS coupon_id, c.campaign_id, f.id AS flow_id, f.discount_amount, f.order_ref, c.status, c.use_no,
  f.customer_ref FROM c JOIN f ON f.redeem_no = c.redeem_no`
}

// redeemColumns are the columns of the relation redeemOnceFrom takes, one row
// per request, with their types: the parameters of redeemOnceSQL in order
// ($1 first), and the arrays of redeemBatchSQL. ord numbers the requests.
var redeemColumns = []struct{ name, typ string }{
	{"redeem_no", "text"}, {"at", "timestamptz"}, {"mid", "bigint"}, {"code", "text"}, {"amount", "bigint"},
	{"store", "bigint"}, {"request_id", "text"}, {"fingerprint", "text"}, {"operator", "bigint"},
	{"hold_until", "timestamptz"}, {"actor", "text"}, {"customer", "text"}, {"clk_d", "bigint"}, {"clk_p", "bigint"},
	{"clk_m", "bigint"}, {"event_uid", "text"},
}

// redeemOnceSQL is redeemOnceFrom for one request, whose values are its
// parameters: $1 redemption number, $2 now, $3 merchant, $4 code, $5 order
// amount, $6 store, $7 request id, $8 fingerprint, $9 operator, $10 hold
// deadline, $11 actor, $12 customer (an empty string for none), $13-$15 the
// merchant's clock (LocalClock: today's and yesterday's weekday bits, the
// minute of the day), $16 the redemption.succeeded event's public id.
// PostgreSQL's planner folds the one-row subquery into the statement, so
// each value is the parameter itself.
var redeemOnceSQL = func() string {
	cols := make([]string, len(redeemColumns))
	for i, c := range redeemColumns {
		cols[i] = "$" + strconv.Itoa(i+1) + "::" + c.typ + " AS " + c.name
	}
	return redeemOnceFrom("(SELECT " + strings.Join(cols, ", ") + ", 1::bigint AS ord) r")
}()

// redeemBatchSQL is redeemOnceFrom for a batch of requests: parameter $n is
// the array of every request's value of redeemColumns[n-1], in the order of
// the requests, whose ord is their position (1 first).
var redeemBatchSQL = func() string {
	params, names := make([]string, len(redeemColumns)), make([]string, len(redeemColumns))
	for i, c := range redeemColumns {
		params[i] = "$" + strconv.Itoa(i+1) + "::" + c.typ + "[]"
		names[i] = c.name
	}
	return redeemOnceFrom("unnest(" + strings.Join(params, ", ") + ") WITH ORDINALITY AS r(" + strings.Join(names, ", ") + ", ord)")
}()

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
	// ord is the request's position in the statement's requests (1 first).
	ord int64
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
	return []any{&r.ord, &r.CouponID, &r.CampaignID, &r.FlowID, &r.DiscountAmount, &r.OrderRef, &r.Status, &r.UseNo, &r.CustomerRef}
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

// RedeemOnceAll runs RedeemOnce's redemption for every call in one
// transaction that commits once, so the batch pays one round trip and one
// WAL flush instead of one each: the calls go out as one statement
// (redeemBatchSQL, the same statement as RedeemOnce's over the calls'
// values), which PostgreSQL plans, starts and ends once for all of them.
// Calls for the same coupon go into statements of their own, one after the
// other in the same transaction (a pipeline), so a call whose coupon an
// earlier call of the batch took finds it taken, or, on a multi-use card,
// takes the next use, exactly as if it had run after it alone.
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
	rounds := couponRounds(calls)
	rows := make([]RedeemedOnce, len(calls))
	taken := make([]bool, len(calls))
	err = conn.Raw(func(driverConn any) error {
		pc, ok := driverConn.(*stdlib.Conn)
		if !ok {
			return ErrNoPipeline
		}
		b := &pgx.Batch{}
		b.Queue(batchPlanSQL)
		for _, round := range rounds {
			b.Queue(redeemBatchSQL, redeemBatchArgs(calls, round)...)
		}
		br := pc.Conn().SendBatch(ctx, b)
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			return err
		}
		for _, round := range rounds {
			if err := scanRound(br, round, rows, taken); err != nil {
				_ = br.Close()
				return err
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

// batchPlanSQL is the first statement of RedeemOnceAll's transaction: it
// makes PostgreSQL run redeemBatchSQL on the plan it prepared once instead
// of planning it again for every batch, until the commit. The planner's
// cost of a custom plan falls with the arrays' length, so it keeps choosing
// one, and planning that statement took more of PostgreSQL's CPU at half
// the knee than running it: in probes at 1,300 redemptions a second the
// generic plan cut PostgreSQL's CPU by a fifth and halved the p50 and the
// p99 (docs/TUNING.md). The generic plan looks each request's coupon up by
// its key, as the custom ones do; PostgreSQL makes it again when the
// statistics of its tables change.
const batchPlanSQL = `SELECT set_config('plan_cache_mode', 'force_generic_plan', true)`

// couponRounds splits the positions of calls into rounds in which no coupon
// is named twice: a call goes into the round after the last one that holds
// a call for its coupon, so the calls of one coupon run in their order.
func couponRounds(calls []*OnceCall) [][]int {
	type key struct {
		merchant int64
		code     string
	}
	next := make(map[key]int, len(calls))
	var rounds [][]int
	for i, c := range calls {
		k := key{c.Args.MerchantID, c.Args.Code}
		r := next[k]
		next[k] = r + 1
		if r == len(rounds) {
			rounds = append(rounds, nil)
		}
		rounds[r] = append(rounds[r], i)
	}
	return rounds
}

// redeemBatchArgs are redeemBatchSQL's arrays for the calls at the positions
// of round, in that order.
func redeemBatchArgs(calls []*OnceCall, round []int) []any {
	n := len(round)
	var (
		redeemNo, code, requestID, fingerprint, actor, customer, eventUID = make([]string, n), make([]string, n),
			make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		at                                            = make([]time.Time, n)
		merchant, amount, store, day, prevDay, minute = make([]int64, n), make([]int64, n), make([]int64, n),
			make([]int64, n), make([]int64, n), make([]int64, n)
		operator = make([]*int64, n)
		hold     = make([]*time.Time, n)
	)
	for j, i := range round {
		a, f := calls[i].Args, calls[i].Flow
		redeemNo[j], at[j], merchant[j], code[j], amount[j] = f.RedeemNo, a.Now, a.MerchantID, a.Code, a.OrderAmount
		store[j], requestID[j], fingerprint[j], operator[j], hold[j] = a.StoreID, f.RequestID, f.Fingerprint, f.OperatorID, f.HoldUntil
		actor[j], customer[j], day[j], prevDay[j], minute[j] = calls[i].Actor, a.CustomerRef, a.Clock.Day, a.Clock.PrevDay, a.Clock.Minute
		eventUID[j] = NewEventUID()
	}
	return []any{redeemNo, at, merchant, code, amount, store, requestID, fingerprint, operator, hold, actor, customer,
		day, prevDay, minute, eventUID}
}

// scanRound reads the rows of one round's statement: each is a call the
// statement took, named by its ord within round.
func scanRound(br pgx.BatchResults, round []int, rows []RedeemedOnce, taken []bool) error {
	rs, err := br.Query()
	if err != nil {
		return err
	}
	defer rs.Close()
	for rs.Next() {
		var r RedeemedOnce
		if err := rs.Scan(r.dest()...); err != nil {
			return err
		}
		if r.ord < 1 || int(r.ord) > len(round) {
			return fmt.Errorf("redemption batch returned request %d of %d", r.ord, len(round))
		}
		i := round[r.ord-1]
		rows[i], taken[i] = r, true
	}
	return rs.Err()
}

// RedeemOnceSupported reports whether db can run RedeemOnce: PostgreSQL
// only, since SQLite has no data-modifying WITH.
func RedeemOnceSupported(db *gorm.DB) bool { return DialectOfDB(db) == Postgres }
