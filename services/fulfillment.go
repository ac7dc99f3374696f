package services

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"coupond/models"
)

// ErrFulfilmentRejected marks a definite fulfilment failure: the business
// system did not and will not create the order, so the coupon may be released.
// Any other error from Fulfil is an unknown outcome, left to compensation.
var ErrFulfilmentRejected = errors.New("fulfilment rejected")

// ErrFenced is returned by Fulfil for a redemption number that was cancelled
// before any order existed; it wraps ErrFulfilmentRejected.
var ErrFenced = fmt.Errorf("redemption was cancelled before fulfilment: %w", ErrFulfilmentRejected)

// FulfilRequest is the business step of one redemption.
type FulfilRequest struct {
	MerchantID     int64
	RedeemNo       string
	CouponID       int64
	StoreID        int64
	OrderAmount    int64
	DiscountAmount int64
}

// LookupResult says whether the business system holds a live order for a
// redemption number.
type LookupResult struct {
	Exists   bool
	OrderRef string
}

// Fulfiller is the business system behind a one-shot redemption (出餐/下单). All
// methods are keyed by redemption number and idempotent: Fulfil twice creates
// one order; Cancel of an unknown number fences it, so a later Fulfil is refused.
type Fulfiller interface {
	// Fulfil creates the order and returns its reference. An error wrapping
	// ErrFulfilmentRejected is a definite failure; any other error leaves the
	// outcome unknown.
	Fulfil(ctx context.Context, req FulfilRequest) (orderRef string, err error)
	// Lookup reports whether a live order exists for the redemption number.
	Lookup(ctx context.Context, merchantID int64, redeemNo string) (LookupResult, error)
	// Cancel cancels the order of the redemption number, or fences the number
	// when no order exists yet.
	Cancel(ctx context.Context, merchantID int64, redeemNo string) error
}

// TxFulfiller is a Fulfiller whose orders live in coupond's own database, so a
// one-shot redemption can create its order inside the reserve transaction and
// commit once: no call leaves the database, so there is no outcome to be
// unsure of and nothing for compensation to resolve.
type TxFulfiller interface {
	Fulfiller
	// FulfilTx creates the order on tx and returns its reference.
	FulfilTx(tx *gorm.DB, req FulfilRequest, now time.Time) (orderRef string, err error)
}

// orderTable is an adapter whose orders are rows of coupond's orders table
// (the builtin one), so a one-shot redemption can be a single statement that
// inserts the order itself (models.RedeemOnce).
type orderTable interface {
	TxFulfiller
	ordersInTable()
}

// ordersOutside reports whether f says its orders live outside coupond's
// database, where reconciliation cannot see them.
func ordersOutside(f Fulfiller) bool {
	o, ok := f.(interface{ OrdersOutside() bool })
	return ok && o.OrdersOutside()
}

// BuiltinFulfiller keeps orders in coupond's own database, for merchants
// without an order system of their own and for the demo.
type BuiltinFulfiller struct {
	db  *gorm.DB
	now func() time.Time
}

// NewBuiltinFulfiller returns the builtin adapter on db.
func NewBuiltinFulfiller(db *gorm.DB, now func() time.Time) *BuiltinFulfiller {
	return &BuiltinFulfiller{db: db, now: now}
}

func (f *BuiltinFulfiller) ordersInTable() {}

func orderRef(o models.Order) string { return models.OrderRef(o.ID) }

// Fulfil inserts the order unless one exists for the redemption number; a
// fenced (cancelled) number is refused with ErrFenced.
func (f *BuiltinFulfiller) Fulfil(ctx context.Context, req FulfilRequest) (string, error) {
	got, err := models.EnsureOrder(f.db.WithContext(ctx), &models.Order{MerchantID: req.MerchantID, RedeemNo: req.RedeemNo,
		CouponID: &req.CouponID, StoreID: &req.StoreID, Amount: req.OrderAmount, Status: models.OrderCreated, CreatedAt: f.now()})
	if err != nil {
		return "", fmt.Errorf("create order %s: %w", req.RedeemNo, err)
	}
	if got.Status != models.OrderCreated {
		return "", ErrFenced
	}
	return orderRef(*got), nil
}

// FulfilTx inserts the order of a fresh redemption number on tx.
func (f *BuiltinFulfiller) FulfilTx(tx *gorm.DB, req FulfilRequest, now time.Time) (string, error) {
	o := models.Order{MerchantID: req.MerchantID, RedeemNo: req.RedeemNo, CouponID: &req.CouponID,
		StoreID: &req.StoreID, Amount: req.OrderAmount, Status: models.OrderCreated, CreatedAt: now}
	if err := models.InsertOrder(tx, &o); err != nil {
		return "", fmt.Errorf("create order %s: %w", req.RedeemNo, err)
	}
	return orderRef(o), nil
}

// Lookup reports the live order of a redemption number.
func (f *BuiltinFulfiller) Lookup(ctx context.Context, merchantID int64, redeemNo string) (LookupResult, error) {
	got, err := models.OrderOf(f.db.WithContext(ctx), merchantID, redeemNo)
	if err != nil {
		return LookupResult{}, fmt.Errorf("look up order %s: %w", redeemNo, err)
	}
	if got == nil || got.Status != models.OrderCreated {
		return LookupResult{}, nil
	}
	return LookupResult{Exists: true, OrderRef: orderRef(*got)}, nil
}

// Cancel marks the order cancelled, writing a cancelled row first when none
// exists, which fences the redemption number against a late Fulfil.
func (f *BuiltinFulfiller) Cancel(ctx context.Context, merchantID int64, redeemNo string) error {
	if err := models.CancelOrder(f.db.WithContext(ctx), merchantID, redeemNo, f.now()); err != nil {
		return fmt.Errorf("cancel order %s: %w", redeemNo, err)
	}
	return nil
}
