package models

import (
	"time"

	"gorm.io/gorm"
)

// AdminRequest is the first result of an idempotent admin call (create a
// store or a campaign, issue coupons, void a coupon), kept under its request
// id: a repeat gets it back instead of running again.
type AdminRequest struct {
	ID          int64
	MerchantID  int64
	Operation   string
	RequestID   string
	Fingerprint string
	// Result is the call's answer as JSON.
	Result    string
	CreatedAt time.Time
}

// InsertAdminRequest records a call's result in the transaction of its
// change; a request id the merchant already used for the operation is
// gorm.ErrDuplicatedKey, and the transaction must roll back.
func InsertAdminRequest(tx *gorm.DB, r *AdminRequest) error { return tx.Create(r).Error }

// AdminRequestOf returns the merchant's recorded call of operation under
// requestID, or nil.
func AdminRequestOf(db *gorm.DB, merchantID int64, operation, requestID string) (*AdminRequest, error) {
	var rs []AdminRequest
	err := db.Where("merchant_id = ? AND operation = ? AND request_id = ?", merchantID, operation, requestID).
		Limit(1).Find(&rs).Error
	if err != nil || len(rs) == 0 {
		return nil, err
	}
	return &rs[0], nil
}
