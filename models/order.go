package models

import (
	"strconv"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// OrderStatus is the state of an order of the builtin fulfillment adapter.
type OrderStatus string

// Order states. A CANCELLED row written before any order existed fences the
// redemption number: a later Fulfil for it is refused.
const (
	OrderCreated   OrderStatus = "CREATED"
	OrderCancelled OrderStatus = "CANCELLED"
)

// Order is the business result of a one-shot redemption in the builtin
// fulfillment adapter, keyed by redemption number.
type Order struct {
	ID          int64
	MerchantID  int64
	RedeemNo    string
	CouponID    *int64
	StoreID     *int64
	Amount      int64
	Status      OrderStatus
	CreatedAt   time.Time
	CancelledAt *time.Time
}

// OrderRefPrefix starts the reference of every order of the builtin
// fulfillment adapter: "ORD" followed by the order's id.
const OrderRefPrefix = "ORD"

// OrderRef is the reference of a builtin order.
func OrderRef(orderID int64) string { return OrderRefPrefix + strconv.FormatInt(orderID, 10) }

// InsertOrder inserts a fresh order and sets its ID; an order that exists
// for the redemption number is gorm.ErrDuplicatedKey.
func InsertOrder(tx *gorm.DB, o *Order) error { return tx.Create(o).Error }

// EnsureOrder inserts o unless an order (live or cancelled) exists for its
// redemption number, and returns the order that stands.
func EnsureOrder(db *gorm.DB, o *Order) (*Order, error) {
	if err := db.Clauses(clause.OnConflict{DoNothing: true}).Create(o).Error; err != nil {
		return nil, err
	}
	var got Order
	if err := db.Where("merchant_id = ? AND redeem_no = ?", o.MerchantID, o.RedeemNo).Take(&got).Error; err != nil {
		return nil, err
	}
	return &got, nil
}

// OrderOf returns the merchant's order of the redemption number, or nil.
func OrderOf(db *gorm.DB, merchantID int64, redeemNo string) (*Order, error) {
	var got []Order
	if err := db.Where("merchant_id = ? AND redeem_no = ?", merchantID, redeemNo).Limit(1).Find(&got).Error; err != nil {
		return nil, err
	}
	if len(got) == 0 {
		return nil, nil
	}
	return &got[0], nil
}

// CancelOrder marks the order of the redemption number cancelled, writing a
// cancelled row first when none exists, which fences the number against a
// late order.
func CancelOrder(db *gorm.DB, merchantID int64, redeemNo string, now time.Time) error {
	o := Order{MerchantID: merchantID, RedeemNo: redeemNo, Status: OrderCancelled, CreatedAt: now, CancelledAt: &now}
	return db.Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "merchant_id"}, {Name: "redeem_no"}},
		DoUpdates: clause.Assignments(map[string]any{"status": OrderCancelled, "cancelled_at": now}),
		Where:     clause.Where{Exprs: []clause.Expression{clause.Eq{Column: clause.Column{Table: "orders", Name: "status"}, Value: OrderCreated}}},
	}).Create(&o).Error
}
