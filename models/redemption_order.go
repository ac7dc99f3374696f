package models

import (
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// RedemptionOrder is one multi-code redemption request (redeemCoupons):
// several coupons taken for one order, all or none. Its request id is the
// idempotency anchor of the request (unique per merchant), and its status is
// the one decision for all its flows: each flow keeps its own redemption
// number and its own use of its coupon, and moves only in the transaction
// that moves the order. OrderNo, the redemption number of the order's first
// flow, is the key of the one business order the fulfillment adapter makes
// for the whole set.
type RedemptionOrder struct {
	ID          int64
	MerchantID  int64
	RequestID   string
	Fingerprint string
	OrderNo     string
	StoreID     int64
	OperatorID  *int64
	CustomerRef *string
	// Status is PROCESSING (every coupon held, the order being made),
	// SUCCEEDED, RELEASED (every coupon given back) or REJECTED (none taken;
	// Verdicts says why).
	Status FlowStatus
	// Codes are the request's codes, normalised, in the order given, as a
	// JSON array.
	Codes     string
	CodeCount int64
	// Refunded counts the order's flows refunded so far.
	Refunded       int64
	OrderAmount    int64
	DiscountAmount int64
	OrderRef       *string
	// Verdicts is a rejection's answer, every code's reasons (JSON), so a
	// replay gives the first answer.
	Verdicts   string
	FencedAt   *time.Time
	Version    int64
	CreatedAt  time.Time
	UpdatedAt  time.Time
	FinishedAt *time.Time
}

// InsertRedemptionOrder inserts o and sets its ID; a request id the merchant
// used before is gorm.ErrDuplicatedKey.
func InsertRedemptionOrder(tx *gorm.DB, o *RedemptionOrder) error {
	return tx.Create(o).Error
}

// RedemptionOrderByRequest returns the merchant's multi-code order made under
// requestID, or nil.
func RedemptionOrderByRequest(db *gorm.DB, merchantID int64, requestID string) (*RedemptionOrder, error) {
	var out []RedemptionOrder
	if err := db.Where("merchant_id = ? AND request_id = ?", merchantID, requestID).Limit(1).Find(&out).Error; err != nil {
		return nil, fmt.Errorf("find order request %s: %w", requestID, err)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return &out[0], nil
}

// RedemptionOrderByID returns the merchant's multi-code order with id, or
// gorm.ErrRecordNotFound.
func RedemptionOrderByID(db *gorm.DB, merchantID, id int64) (*RedemptionOrder, error) {
	var o RedemptionOrder
	if err := db.Where("merchant_id = ? AND id = ?", merchantID, id).Take(&o).Error; err != nil {
		return nil, err
	}
	return &o, nil
}

// FlowsOfOrder returns the flows of a multi-code order in the order of its
// codes (the order they were written in).
func FlowsOfOrder(db *gorm.DB, merchantID, orderID int64) ([]*RedemptionFlow, error) {
	var out []*RedemptionFlow
	err := db.Where("merchant_id = ? AND order_id = ?", merchantID, orderID).Order("id").Find(&out).Error
	return out, err
}

// FinishRedemptionOrder moves a PROCESSING multi-code order to its final
// status (SUCCEEDED with orderRef, or RELEASED): the one conditional update
// that decides the outcome of all its flows. It reports false when the order
// had left PROCESSING, or, for SUCCEEDED, when compensation has fenced it
// (FenceRedemptionOrder).
func FinishRedemptionOrder(tx *gorm.DB, merchantID, id int64, to FlowStatus, orderRef *string, now time.Time) (bool, error) {
	where := "merchant_id = ? AND id = ? AND status = 'PROCESSING'"
	if to == FlowSucceeded {
		where += " AND fenced_at IS NULL"
	}
	res := tx.Exec(`UPDATE redemption_orders SET status = ?, order_ref = COALESCE(?, order_ref), finished_at = ?,
  updated_at = ?, version = version + 1 WHERE `+where, string(to), orderRef, now, now, merchantID, id)
	return res.RowsAffected == 1, res.Error
}

// FenceRedemptionOrder marks a PROCESSING multi-code order as being released
// by compensation: from then on it can no longer succeed. Fencing a fenced
// order again succeeds; false means it has left PROCESSING.
func FenceRedemptionOrder(tx *gorm.DB, merchantID, id int64, now time.Time) (bool, error) {
	res := tx.Exec(`UPDATE redemption_orders SET fenced_at = COALESCE(fenced_at, ?), updated_at = ?
WHERE merchant_id = ? AND id = ? AND status = 'PROCESSING'`, now, now, merchantID, id)
	return res.RowsAffected == 1, res.Error
}

// CountOrderRefund counts one more refunded flow of a SUCCEEDED multi-code
// order and reports whether it was the last: the refund that leaves no use
// of the order standing cancels the business order. The update locks the
// order's row, so concurrent refunds of its flows count one after the other.
func CountOrderRefund(tx *gorm.DB, merchantID, id int64, now time.Time) (last bool, err error) {
	var rows []struct{ Refunded, CodeCount int64 }
	err = scanRaw(tx, &rows, `UPDATE redemption_orders SET refunded = refunded + 1, updated_at = ?
WHERE merchant_id = ? AND id = ? AND status = 'SUCCEEDED' AND refunded < code_count
RETURNING refunded, code_count`, now, merchantID, id).Error
	if err != nil {
		return false, err
	}
	if len(rows) != 1 {
		return false, errors.New("count refund: the order is not SUCCEEDED or has every flow refunded")
	}
	return rows[0].Refunded == rows[0].CodeCount, nil
}

// SetRedemptionOrderDiscount records the discount the flows of a multi-code
// order take off, on tx, the transaction that takes them.
func SetRedemptionOrderDiscount(tx *gorm.DB, merchantID, id, discount int64) error {
	return tx.Exec("UPDATE redemption_orders SET discount_amount = ? WHERE merchant_id = ? AND id = ?",
		discount, merchantID, id).Error
}
