package models

import (
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// FlowStatus is the state of a redemption flow.
type FlowStatus string

// Redemption flow states. Only PROCESSING moves; the others are final.
const (
	FlowProcessing FlowStatus = "PROCESSING"
	FlowSucceeded  FlowStatus = "SUCCEEDED"
	FlowRejected   FlowStatus = "REJECTED"
	FlowReleased   FlowStatus = "RELEASED"
)

// Operation distinguishes the requests that create a redemption flow; request
// ids are unique per merchant and operation.
type Operation string

// Operations that create redemption flows.
const (
	OpRedeem  Operation = "REDEEM"
	OpReserve Operation = "RESERVE"
)

// RedemptionFlow is the ledger row of one redemption attempt: the idempotency
// anchor and what finance reconciles against. It is never deleted.
type RedemptionFlow struct {
	ID             int64
	MerchantID     int64
	RedeemNo       string
	Operation      Operation
	RequestID      string
	Fingerprint    string
	CouponID       int64
	StoreID        int64
	OperatorID     *int64
	Status         FlowStatus
	RejectReason   *string
	ReleaseReason  *string
	OrderAmount    int64
	DiscountAmount int64
	OrderRef       *string
	HoldUntil      *time.Time
	Attempts       int64
	Version        int64
	// UseNo is the use of its coupon the flow took, 1 to the coupon's uses
	// total; 0 when it took none (REJECTED).
	UseNo int64
	// CustomerRef is the customer the use is counted for: the coupon's own
	// when it was issued to one, else the request's; nil for none.
	CustomerRef *string
	// AllowanceDay is the merchant-local day (YYYY-MM-DD) whose limits the
	// use was counted against, "" when it counted against none.
	AllowanceDay string
	// OrderID is the multi-code order (RedemptionOrder) the flow is one code
	// of; nil for a redemption of one code.
	OrderID    *int64
	CreatedAt  time.Time
	UpdatedAt  time.Time
	FinishedAt *time.Time
	// CouponAfter is the coupon's status right after this process's last
	// write of the flow (REDEEMED after a card's last use, UNUSED after an
	// earlier one); empty when the flow was read back. Not stored.
	CouponAfter CouponStatus `gorm:"-"`
}

// Transition is the history row of flow's coupon taking the edge from -> to,
// reaching version, by actor at now.
func (f *RedemptionFlow) Transition(from, to CouponStatus, version int64, actor string, now time.Time) CouponTransition {
	storeID := f.StoreID
	return CouponTransition{MerchantID: f.MerchantID, CouponID: f.CouponID, FromStatus: from, ToStatus: to,
		VersionAfter: version, FlowNo: f.RedeemNo, Actor: actor, StoreID: &storeID, CreatedAt: now}
}

const flowColumns = `merchant_id, redeem_no, operation, request_id, fingerprint, coupon_id, store_id, operator_id,
  status, reject_reason, release_reason, order_amount, discount_amount, order_ref, hold_until, attempts, version,
  created_at, updated_at, finished_at, use_no, customer_ref, allowance_day`

func flowValues(f *RedemptionFlow) []any {
	return []any{f.MerchantID, f.RedeemNo, string(f.Operation), f.RequestID, f.Fingerprint, f.CouponID, f.StoreID,
		f.OperatorID, string(f.Status), f.RejectReason, f.ReleaseReason, f.OrderAmount, f.DiscountAmount, f.OrderRef,
		f.HoldUntil, f.Attempts, f.Version, f.CreatedAt, f.UpdatedAt, f.FinishedAt, f.UseNo, f.CustomerRef,
		f.AllowanceDay}
}

// InsertFlow inserts a redemption flow together with the coupon transitions
// its transaction took, and sets flow.ID. On PostgreSQL the rows go in with
// one statement (one round trip inside the redemption transaction); on SQLite,
// which has no data-modifying WITH, with one statement each. A unique
// violation (the request id or the coupon's live redemption) is
// gorm.ErrDuplicatedKey.
func InsertFlow(tx *gorm.DB, flow *RedemptionFlow, transitions ...CouponTransition) error {
	insertFlow := "INSERT INTO redemption_flows (" + flowColumns + ") VALUES " + placeholders(23) + " RETURNING id"
	args := flowValues(flow)
	if flow.OrderID != nil {
		insertFlow = "INSERT INTO redemption_flows (" + flowColumns + ", order_id) VALUES " + placeholders(24) + " RETURNING id"
		args = append(args, *flow.OrderID)
	}
	var rows []struct{ ID int64 }
	if DialectOfDB(tx) == Postgres && len(transitions) > 0 {
		vals, targs := transitionValues(transitions)
		q := "WITH f AS (" + insertFlow + "), t AS (" + insertTransitionsSQL(vals) + ") SELECT id FROM f"
		if err := scanRaw(tx, &rows, q, append(args, targs...)...).Error; err != nil {
			return translate(tx, err)
		}
		transitions = nil
	} else if err := scanRaw(tx, &rows, insertFlow, args...).Error; err != nil {
		return translate(tx, err)
	}
	if len(rows) != 1 {
		return fmt.Errorf("insert flow %s: %d rows returned", flow.RedeemNo, len(rows))
	}
	flow.ID = rows[0].ID
	return RecordTransitions(tx, transitions...)
}

// InsertRejectedFlows inserts REJECTED flows, which record no transition, with
// one statement, and sets the ID of each it inserted. A flow whose request id
// the merchant already used for the operation is skipped, not an error: its
// ID stays 0 and the caller answers it with the stored flow.
func InsertRejectedFlows(tx *gorm.DB, flows []*RedemptionFlow) error {
	if len(flows) == 0 {
		return nil
	}
	byNo := make(map[string]*RedemptionFlow, len(flows))
	for _, f := range flows {
		if f.Status != FlowRejected {
			return fmt.Errorf("insert rejected flow %s: status %s", f.RedeemNo, f.Status)
		}
		byNo[f.RedeemNo] = f
	}
	var q string
	var args []any
	if DialectOfDB(tx) == Postgres {
		q, args = insertRejectedFlowsPG, flowArrays(flows)
	} else {
		vals := make([]string, len(flows))
		args = make([]any, 0, 23*len(flows))
		for i, f := range flows {
			vals[i] = placeholders(23)
			args = append(args, flowValues(f)...)
		}
		q = "INSERT INTO redemption_flows (" + flowColumns + ") VALUES " + strings.Join(vals, ", ") +
			" ON CONFLICT (merchant_id, operation, request_id) DO NOTHING RETURNING id, redeem_no"
	}
	var rows []struct {
		ID       int64
		RedeemNo string
	}
	if err := scanRaw(tx, &rows, q, args...).Error; err != nil {
		return translate(tx, err)
	}
	for _, r := range rows {
		if f := byNo[r.RedeemNo]; f != nil {
			f.ID = r.ID
		}
	}
	return nil
}

// insertRejectedFlowsPG is InsertRejectedFlows on PostgreSQL: the flows go in
// as one array per column (flowArrays), so the statement has the same text
// and 23 parameters for any number of flows. pgx prepares it once and
// PostgreSQL plans it once, where a VALUES list of n rows is a statement of
// its own for each n, with 23 parameters a row to bind and encode one by one
// (a batch of the hot coupon's losers is up to 200 rows).
const insertRejectedFlowsPG = "INSERT INTO redemption_flows (" + flowColumns + `)
SELECT * FROM unnest(?::bigint[], ?::text[], ?::text[], ?::text[], ?::text[], ?::bigint[], ?::bigint[], ?::bigint[],
  ?::text[], ?::text[], ?::text[], ?::bigint[], ?::bigint[], ?::text[], ?::timestamptz[], ?::bigint[], ?::bigint[],
  ?::timestamptz[], ?::timestamptz[], ?::timestamptz[], ?::bigint[], ?::text[], ?::text[])
ON CONFLICT (merchant_id, operation, request_id) DO NOTHING RETURNING id, redeem_no`

// flowArrays returns flows' values as insertRejectedFlowsPG's arrays, one per
// column of flowColumns, in its order. Each is a pgtype.Array, a struct, so
// GORM passes it to pgx whole instead of spreading a slice into a list.
func flowArrays(flows []*RedemptionFlow) []any {
	var (
		merchant, coupon, store, orderAmt, discount, attempts, version, useNo []int64
		redeemNo, op, requestID, fingerprint, status, day                     []string
		operator                                                              []*int64
		reject, release, orderRef, customer                                   []*string
		hold, finished                                                        []*time.Time
		created, updated                                                      []time.Time
	)
	for _, f := range flows {
		merchant, redeemNo, op = append(merchant, f.MerchantID), append(redeemNo, f.RedeemNo), append(op, string(f.Operation))
		requestID, fingerprint = append(requestID, f.RequestID), append(fingerprint, f.Fingerprint)
		coupon, store, operator = append(coupon, f.CouponID), append(store, f.StoreID), append(operator, f.OperatorID)
		status, reject, release = append(status, string(f.Status)), append(reject, f.RejectReason), append(release, f.ReleaseReason)
		orderAmt, discount, orderRef = append(orderAmt, f.OrderAmount), append(discount, f.DiscountAmount), append(orderRef, f.OrderRef)
		hold, attempts, version = append(hold, f.HoldUntil), append(attempts, f.Attempts), append(version, f.Version)
		created, updated, finished = append(created, f.CreatedAt), append(updated, f.UpdatedAt), append(finished, f.FinishedAt)
		useNo, customer, day = append(useNo, f.UseNo), append(customer, f.CustomerRef), append(day, f.AllowanceDay)
	}
	return []any{pgArray(merchant), pgArray(redeemNo), pgArray(op), pgArray(requestID), pgArray(fingerprint),
		pgArray(coupon), pgArray(store), pgArray(operator), pgArray(status), pgArray(reject), pgArray(release),
		pgArray(orderAmt), pgArray(discount), pgArray(orderRef), pgArray(hold), pgArray(attempts), pgArray(version),
		pgArray(created), pgArray(updated), pgArray(finished), pgArray(useNo), pgArray(customer), pgArray(day)}
}

// pgArray returns xs as a one-dimensional PostgreSQL array.
func pgArray[T any](xs []T) pgtype.Array[T] {
	return pgtype.Array[T]{Elements: xs, Dims: []pgtype.ArrayDimension{{Length: int32(len(xs)), LowerBound: 1}}, Valid: true}
}

// FlowByRequest returns the merchant's flow made by operation op under
// requestID, or nil when there is none.
func FlowByRequest(db *gorm.DB, merchantID int64, op Operation, requestID string) (*RedemptionFlow, error) {
	var flows []RedemptionFlow
	err := db.Where("merchant_id = ? AND operation = ? AND request_id = ?", merchantID, op, requestID).Limit(1).Find(&flows).Error
	if err != nil {
		return nil, fmt.Errorf("find request %s: %w", requestID, err)
	}
	if len(flows) == 0 {
		return nil, nil
	}
	return &flows[0], nil
}

// FlowByRedeemNo returns the merchant's flow with the redemption number, or
// gorm.ErrRecordNotFound.
func FlowByRedeemNo(db *gorm.DB, merchantID int64, redeemNo string) (*RedemptionFlow, error) {
	var flow RedemptionFlow
	if err := db.Where("merchant_id = ? AND redeem_no = ?", merchantID, redeemNo).Take(&flow).Error; err != nil {
		return nil, err
	}
	return &flow, nil
}

// FlowOutcome is what a PROCESSING flow becomes when it finishes.
type FlowOutcome struct {
	Status        FlowStatus
	OrderRef      *string
	ReleaseReason *string
	Now           time.Time
}

// FinishFlow moves a redemption flow from PROCESSING to its final status. It
// reports false when the flow had already left PROCESSING (another actor, such
// as the compensation job, finished it first), and for SUCCEEDED also when
// compensation has fenced the flow (see FenceFlow): a fenced flow can only be
// released.
func FinishFlow(tx *gorm.DB, flowID int64, o FlowOutcome) (bool, error) {
	where := "id = ? AND status = 'PROCESSING'"
	if o.Status == FlowSucceeded {
		where += " AND fenced_at IS NULL"
	}
	res := tx.Exec(`UPDATE redemption_flows SET status = ?, order_ref = COALESCE(?, order_ref), release_reason = ?,
  finished_at = ?, updated_at = ?, version = version + 1 WHERE `+where,
		string(o.Status), o.OrderRef, o.ReleaseReason, o.Now, o.Now, flowID)
	return res.RowsAffected == 1, res.Error
}

// FenceFlow marks a PROCESSING redemption as being released by compensation:
// from then on FinishFlow refuses to make it SUCCEEDED. It reports false when the
// flow has left PROCESSING, or when its coupon is no longer held by it at
// couponVersion, the version compensation decided on. Marking an already
// fenced flow again succeeds, so a compensation run that died after fencing
// can be finished by the next.
func FenceFlow(tx *gorm.DB, flowID, couponVersion int64, now time.Time) (bool, error) {
	res := tx.Exec(`UPDATE redemption_flows SET fenced_at = COALESCE(fenced_at, ?), updated_at = ?
WHERE id = ? AND status = 'PROCESSING' AND EXISTS (SELECT 1 FROM coupons c WHERE c.id = redemption_flows.coupon_id
  AND c.status = 'REDEEMING' AND c.redeem_no = redemption_flows.redeem_no AND c.version = ?)`,
		now, now, flowID, couponVersion)
	return res.RowsAffected == 1, res.Error
}

// CountLookupFailure adds one to the failed compensation attempts of a
// PROCESSING redemption, gives up its claim so the next run retries it, and
// returns the new count; false when the flow has left PROCESSING.
func CountLookupFailure(tx *gorm.DB, flowID int64, now time.Time) (int64, bool, error) {
	var attempts []int64
	err := scanRaw(tx, &attempts, `UPDATE redemption_flows SET attempts = attempts + 1, claimed_until = NULL, updated_at = ?
WHERE id = ? AND status = 'PROCESSING' RETURNING attempts`, now, flowID).Error
	if err != nil || len(attempts) != 1 {
		return 0, false, err
	}
	return attempts[0], true, nil
}

// StuckFlow is a PROCESSING redemption past its hold deadline, as
// compensation claims it, with the version its coupon had then.
type StuckFlow struct {
	RedemptionFlow
	FencedAt      *time.Time
	CouponVersion int64
}

// ClaimStuckFlows leases to the caller, until leaseUntil, up to limit
// PROCESSING redemptions past their hold deadline at now, with ids above
// afterID, in id order, that nobody else holds a lease on. On PostgreSQL the
// rows another worker is claiming are skipped rather than waited for (FOR
// UPDATE SKIP LOCKED); on SQLite the clause is dropped and the single writer
// serialises claims. A merchantID other than 0 claims only that merchant's
// flows. tx must be a transaction.
func ClaimStuckFlows(tx *gorm.DB, merchantID int64, now, leaseUntil time.Time, afterID int64, limit int) ([]StuckFlow, error) {
	var flows []StuckFlow
	q := tx.Table("redemption_flows").
		Select("redemption_flows.*, (SELECT c.version FROM coupons c WHERE c.id = redemption_flows.coupon_id) AS coupon_version").
		Clauses(clause.Locking{Strength: "UPDATE", Options: "SKIP LOCKED"}).
		Where("status = ? AND hold_until <= ? AND (claimed_until IS NULL OR claimed_until <= ?) AND id > ?",
			FlowProcessing, now, now, afterID)
	if merchantID != 0 {
		q = q.Where("merchant_id = ?", merchantID)
	}
	err := q.Order("id").Limit(limit).Find(&flows).Error
	if err != nil || len(flows) == 0 {
		return nil, err
	}
	ids := make([]int64, len(flows))
	for i, f := range flows {
		ids[i] = f.ID
	}
	err = tx.Exec("UPDATE redemption_flows SET claimed_until = ? WHERE id IN ? AND status = 'PROCESSING'",
		leaseUntil, ids).Error
	return flows, err
}

// FlowFilter narrows MerchantFlows; zero fields do not filter.
type FlowFilter struct {
	// StoreIDs keeps flows of these stores only (a clerk's); nil does not
	// filter, an empty non-nil slice keeps none.
	StoreIDs []int64
	StoreID  int64
	CouponID int64
	Status   FlowStatus
	// From and To bound the creation time: From <= created_at < To.
	From, To time.Time
}

// MerchantFlows returns a query of one merchant's redemption flows that match
// f, for the caller to order and page. Its columns are qualified, so the
// caller may join other tables.
func MerchantFlows(db *gorm.DB, merchantID int64, f FlowFilter) *gorm.DB {
	q := db.Model(&RedemptionFlow{}).Where("redemption_flows.merchant_id = ?", merchantID)
	if f.StoreIDs != nil {
		q = q.Where("redemption_flows.store_id IN ?", f.StoreIDs)
	}
	if f.StoreID != 0 {
		q = q.Where("redemption_flows.store_id = ?", f.StoreID)
	}
	if f.CouponID != 0 {
		q = q.Where("redemption_flows.coupon_id = ?", f.CouponID)
	}
	if f.Status != "" {
		q = q.Where("redemption_flows.status = ?", string(f.Status))
	}
	if !f.From.IsZero() {
		q = q.Where("redemption_flows.created_at >= ?", f.From.UTC())
	}
	if !f.To.IsZero() {
		q = q.Where("redemption_flows.created_at < ?", f.To.UTC())
	}
	return q
}

// FlowExportRow is a redemption flow as the ledger export shows it, with the
// code of its store and coupon and the name of the token it was made with
// (empty for coupond itself).
type FlowExportRow struct {
	ID             int64
	RedeemNo       string
	RequestID      string
	Operation      Operation
	Status         FlowStatus
	RejectReason   *string
	ReleaseReason  *string
	StoreCode      string
	CouponCode     string
	OrderAmount    int64
	DiscountAmount int64
	OrderRef       *string
	CreatedAt      time.Time
	FinishedAt     *time.Time
	OperatorName   string
	// UseNo is the use of its coupon the flow took (1 to the coupon's uses
	// total; 0 for a REJECTED one); CustomerRef the customer the use counts
	// for, nil for none.
	UseNo       int64
	CustomerRef *string
}

// EachFlowForExport calls fn with the merchant's redemption flows that match
// f, newest first, names joined in SQL: one query per batch rows, each
// continuing below the last id of the one before, so memory stays at one
// batch whatever the ledger's size. It stops at fn's first error.
//
// A batch is read whole before fn sees its first row, so no query stays open
// while a slow client downloads. The rows are scanned into their fields
// directly, not through GORM's reflection, and the batch's slice is reused:
// at a million rows GORM's scan was a third of the export's CPU.
func EachFlowForExport(db *gorm.DB, merchantID int64, f FlowFilter, batch BatchSize, fn func(FlowExportRow) error) error {
	before := int64(-1)
	var rows []FlowExportRow
	for {
		n := batch()
		err := ReadSerial(db, func(tx *gorm.DB) (err error) {
			rows, err = scanFlowExport(flowExportQuery(tx, merchantID, f, before).Limit(n), rows[:0])
			return err
		})
		if err != nil {
			return fmt.Errorf("export redemptions: %w", err)
		}
		for _, r := range rows {
			if err := fn(r); err != nil {
				return err
			}
		}
		if len(rows) < n {
			return nil
		}
		before = rows[len(rows)-1].ID
	}
}

// flowExportQuery is EachFlowForExport's batch after the id before (none
// when negative), without its limit.
func flowExportQuery(db *gorm.DB, merchantID int64, f FlowFilter, before int64) *gorm.DB {
	q := MerchantFlows(db, merchantID, f).
		Select(`redemption_flows.id, redemption_flows.redeem_no, redemption_flows.request_id, redemption_flows.operation,
  redemption_flows.status, redemption_flows.reject_reason, redemption_flows.release_reason,
  COALESCE(s.code, '') AS store_code, COALESCE(c.code, '') AS coupon_code, redemption_flows.order_amount,
  redemption_flows.discount_amount, redemption_flows.order_ref, redemption_flows.created_at, redemption_flows.finished_at,
  COALESCE(t.name, '') AS operator_name, redemption_flows.use_no, redemption_flows.customer_ref`).
		Joins("LEFT JOIN stores s ON s.id = redemption_flows.store_id AND s.merchant_id = redemption_flows.merchant_id").
		Joins("LEFT JOIN coupons c ON c.id = redemption_flows.coupon_id AND c.merchant_id = redemption_flows.merchant_id").
		Joins("LEFT JOIN api_tokens t ON t.id = redemption_flows.operator_id AND t.merchant_id = redemption_flows.merchant_id")
	if before >= 0 {
		q = q.Where("redemption_flows.id < ?", before)
	}
	return q.Order("redemption_flows.id DESC")
}

// scanFlowExport runs q, EachFlowForExport's batch, and appends its rows to
// out.
func scanFlowExport(q *gorm.DB, out []FlowExportRow) ([]FlowExportRow, error) {
	rs, err := q.Rows()
	if err != nil {
		return out, err
	}
	defer rs.Close()
	for rs.Next() {
		var r FlowExportRow
		if err := rs.Scan(&r.ID, &r.RedeemNo, &r.RequestID, &r.Operation, &r.Status, &r.RejectReason, &r.ReleaseReason,
			&r.StoreCode, &r.CouponCode, &r.OrderAmount, &r.DiscountAmount, &r.OrderRef, &r.CreatedAt, &r.FinishedAt,
			&r.OperatorName, &r.UseNo, &r.CustomerRef); err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, rs.Err()
}

// FlowsOfCoupons returns the merchant's redemption flows of the coupons
// among couponIDs, oldest first.
func FlowsOfCoupons(db *gorm.DB, merchantID int64, couponIDs []int64) ([]RedemptionFlow, error) {
	var out []RedemptionFlow
	return out, db.Where("merchant_id = ? AND coupon_id IN ?", merchantID, couponIDs).Order("id").Find(&out).Error
}

// HoldStats counts, across all merchants, the PROCESSING flows and returns
// when the oldest was created (nil when none is).
func HoldStats(db *gorm.DB) (int64, *time.Time, error) {
	var row struct {
		N      int64
		Oldest *time.Time
	}
	err := db.Raw(`SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM redemption_flows WHERE status = 'PROCESSING'`).
		Scan(&row).Error
	return row.N, row.Oldest, err
}

// HourCount is the succeeded redemptions of one UTC hour, the hour as
// "YYYY-MM-DD HH:00:00" (or RFC 3339, as the SQLite driver may give it).
type HourCount struct {
	Hour     string
	Redeemed int64
	Discount int64
}

// SucceededByHour counts the merchant's flows that succeeded in [from, to)
// per UTC hour, with one grouped query; storeIDs, when not nil, keeps those
// stores; storeID, when not 0, one store.
func SucceededByHour(db *gorm.DB, merchantID int64, from, to time.Time, storeIDs []int64, storeID int64) ([]HourCount, error) {
	bucket := "strftime('%Y-%m-%d %H:00:00', finished_at)"
	if DialectOfDB(db) == Postgres {
		bucket = "to_char(finished_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:00:00')"
	}
	q := db.Table("redemption_flows").
		Select(bucket+" AS hour, COUNT(*) AS redeemed, COALESCE(SUM(discount_amount), 0) AS discount").
		Where("merchant_id = ? AND status = 'SUCCEEDED' AND finished_at >= ? AND finished_at < ?", merchantID, from.UTC(), to.UTC())
	if storeIDs != nil {
		q = q.Where("store_id IN ?", storeIDs)
	}
	if storeID != 0 {
		q = q.Where("store_id = ?", storeID)
	}
	var rows []HourCount
	return rows, scanRows(q.Group("hour").Order("hour"), &rows).Error
}
