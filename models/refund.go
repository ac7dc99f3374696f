package models

import (
	"fmt"
	"time"

	"gorm.io/gorm"
)

// RefundFlow is the ledger row of one refund of a redemption.
type RefundFlow struct {
	ID               int64
	MerchantID       int64
	RefundNo         string
	RequestID        string
	Fingerprint      string
	RedemptionID     int64
	RedeemNo         string
	CouponID         int64
	StoreID          int64
	OperatorID       *int64
	Status           FlowStatus
	Reason           string
	Amount           int64
	Reissue          bool
	ReissuedCouponID *int64
	CreatedAt        time.Time
	FinishedAt       *time.Time
}

// InsertRefund inserts a refund flow and sets its ID; a repeated request id
// is gorm.ErrDuplicatedKey.
func InsertRefund(tx *gorm.DB, r *RefundFlow) error { return tx.Create(r).Error }

// RefundByRequest returns the merchant's refund made under requestID, or nil.
func RefundByRequest(db *gorm.DB, merchantID int64, requestID string) (*RefundFlow, error) {
	var refunds []RefundFlow
	if err := db.Where("merchant_id = ? AND request_id = ?", merchantID, requestID).Limit(1).Find(&refunds).Error; err != nil {
		return nil, fmt.Errorf("find refund request %s: %w", requestID, err)
	}
	if len(refunds) == 0 {
		return nil, nil
	}
	return &refunds[0], nil
}

// RefundsOf returns the merchant's refunds of the given redemption ids.
func RefundsOf(db *gorm.DB, merchantID int64, redemptionIDs []int64) ([]RefundFlow, error) {
	var refunds []RefundFlow
	err := db.Where("merchant_id = ? AND redemption_id IN ?", merchantID, redemptionIDs).Order("id").Find(&refunds).Error
	return refunds, err
}

// RefundsOfCoupons returns the merchant's refunds of the coupons among
// couponIDs, oldest first.
func RefundsOfCoupons(db *gorm.DB, merchantID int64, couponIDs []int64) ([]RefundFlow, error) {
	var out []RefundFlow
	return out, db.Where("merchant_id = ? AND coupon_id IN ?", merchantID, couponIDs).Order("id").Find(&out).Error
}
