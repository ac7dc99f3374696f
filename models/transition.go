package models

import (
	"strings"
	"time"

	"gorm.io/gorm"
)

// CouponTransition records one edge taken by a coupon; it is append-only, and a
// coupon's version equals the number of its transitions.
type CouponTransition struct {
	ID           int64
	MerchantID   int64
	CouponID     int64
	FromStatus   CouponStatus
	ToStatus     CouponStatus
	VersionAfter int64
	FlowNo       string
	Actor        string
	StoreID      *int64
	CreatedAt    time.Time
}

const transitionColumns = `merchant_id, coupon_id, from_status, to_status, version_after, flow_no, actor, store_id, created_at`

// insertTransitionsSQL is the one statement that writes coupon_transitions:
// rows is a VALUES list or a SELECT giving transitionColumns in order. Every
// write of the table goes through it, alone (RecordTransitions) or as a part
// of a larger statement (InsertFlow, RedeemOnce).
func insertTransitionsSQL(rows string) string {
	return "INSERT INTO coupon_transitions (" + transitionColumns + ") " + rows
}

// transitionValues is the VALUES list of ts and its arguments.
func transitionValues(ts []CouponTransition) (string, []any) {
	vals := make([]string, len(ts))
	args := make([]any, 0, 9*len(ts))
	for i, t := range ts {
		vals[i] = placeholders(9)
		args = append(args, t.MerchantID, t.CouponID, string(t.FromStatus), string(t.ToStatus), t.VersionAfter,
			t.FlowNo, t.Actor, t.StoreID, t.CreatedAt)
	}
	return "VALUES " + strings.Join(vals, ", "), args
}

// RecordTransitions appends the history rows of edges coupons took in tx's
// transaction, with one statement.
func RecordTransitions(tx *gorm.DB, ts ...CouponTransition) error {
	if len(ts) == 0 {
		return nil
	}
	vals, args := transitionValues(ts)
	return tx.Exec(insertTransitionsSQL(vals), args...).Error
}

// TransitionsOf returns the transitions of the merchant's coupons among
// couponIDs, per coupon in the order they happened.
func TransitionsOf(db *gorm.DB, merchantID int64, couponIDs []int64) ([]CouponTransition, error) {
	var out []CouponTransition
	return out, db.Where("merchant_id = ? AND coupon_id IN ?", merchantID, couponIDs).
		Order("coupon_id, version_after").Find(&out).Error
}
