package services

import (
	"context"
	"time"

	"coupond/models"
)

// LiabilityValuation says how DISCOUNT coupons, whose worth depends on the
// order, enter a liability's face value.
type LiabilityValuation string

// DiscountAtCap: a DISCOUNT coupon is counted at its cap (max discount), the
// most it can take off; one without a cap adds nothing to the face value and
// is counted in UncappedDiscountCount.
const DiscountAtCap LiabilityValuation = "CAP"

// Liability is what a merchant owes on coupons that may still be redeemed.
type Liability struct {
	// At is when it was computed.
	At time.Time
	// UnusedCount is how many UNUSED coupons have not reached the end of
	// their validity (and whose campaign has not ended).
	UnusedCount int64
	// FaceValue is their face value in fen: CASH and EXCHANGE coupons at
	// their value, DISCOUNT coupons as DiscountCouponsAt says.
	FaceValue int64
	// DiscountCouponsAt is how DISCOUNT coupons are valued: DiscountAtCap.
	DiscountCouponsAt LiabilityValuation
	// UncappedDiscountCount is how many of the unused coupons are DISCOUNT
	// coupons without a cap, which add nothing to FaceValue.
	UncappedDiscountCount int64
}

// Liability returns the outstanding liability of the actor's merchant now.
// Finance staff and administrators only.
func (s *Statements) Liability(ctx context.Context, actor Actor) (*Liability, error) {
	if err := actor.require(models.RoleAdmin, models.RoleFinance); err != nil {
		return nil, err
	}
	now := s.now()
	l, err := models.LiabilityOf(s.read.WithContext(ctx), actor.MerchantID, now)
	if err != nil {
		return nil, err
	}
	return &Liability{At: now, UnusedCount: l.UnusedCount, FaceValue: l.FaceValue, DiscountCouponsAt: DiscountAtCap,
		UncappedDiscountCount: l.UncappedDiscountCount}, nil
}
