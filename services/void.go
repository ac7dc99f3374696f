package services

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"

	"coupond/errcode"
	"coupond/models"
)

// VoidInput kills one unused coupon.
type VoidInput struct {
	Code   string
	Reason string
	// RequestID, optional, makes the call idempotent (see adminRequest).
	RequestID string
}

// ErrNotVoidable is returned for a coupon that is not UNUSED: a held,
// redeemed, refunded, expired or already voided coupon cannot be voided.
var ErrNotVoidable = &Error{Code: errcode.InvalidState, Message: "only an unused coupon can be voided", Kind: ErrConflict}

// Void moves an UNUSED coupon to VOIDED, terminal, with one conditional
// update, its transition and an audit record with the reason, in one
// transaction; administrators only. A redemption racing it either takes the
// coupon first (then Void is INVALID_STATE) or is rejected with
// COUPON_NOT_AVAILABLE. Another merchant's code is COUPON_NOT_FOUND.
func (c *Coupons) Void(ctx context.Context, actor Actor, in VoidInput) (*models.Coupon, error) {
	if err := actor.require(models.RoleAdmin); err != nil {
		return nil, err
	}
	key, err := lookupCode(in.Code)
	if err != nil {
		return nil, err
	}
	code := key.code
	if in.Reason == "" {
		return nil, invalidf("reason is required")
	}
	if err := checkText("reason", in.Reason, 500, true); err != nil {
		return nil, err
	}
	req, err := newAdminRequest(actor, "voidCoupon", in.RequestID, code, in.Reason)
	if err != nil {
		return nil, err
	}
	db := c.db.WithContext(ctx)
	var prior models.Coupon
	if ok, err := req.replayed(db, &prior); err != nil {
		return nil, err
	} else if ok {
		return &prior, nil
	}
	now := c.now()
	voidNo := newFlowNo("VD", now)
	var voided *models.Coupon
	err = db.Transaction(func(tx *gorm.DB) error {
		var ok bool
		var err error
		if voided, ok, err = models.VoidCoupon(tx, actor.MerchantID, code, now); err != nil {
			return err
		}
		if !ok {
			if _, err := models.CouponByCode(tx, actor.MerchantID, code); errors.Is(err, gorm.ErrRecordNotFound) {
				return key.notFound()
			}
			return ErrNotVoidable
		}
		if err := models.RecordTransitions(tx, models.CouponTransition{MerchantID: actor.MerchantID, CouponID: voided.ID,
			FromStatus: models.CouponUnused, ToStatus: models.CouponVoided, VersionAfter: voided.Version, FlowNo: voidNo,
			Actor: actor.Label(), CreatedAt: now}); err != nil {
			return err
		}
		operator, err := operatorName(tx, actor)
		if err != nil {
			return err
		}
		if err := recordEvent(tx, actor.MerchantID, models.EventCouponVoided, 0, now, map[string]any{
			"voidNo": voidNo, "count": 1, "codes": []string{code}, "reason": in.Reason, "operator": operator}); err != nil {
			return err
		}
		if err := c.audit.record(tx, actor, "coupon.void", "coupon:"+code, fmt.Sprintf("%s reason=%q", voidNo, in.Reason),
			nilIfEmpty(in.RequestID)); err != nil {
			return err
		}
		return req.record(tx, voided, now)
	})
	if err != nil && req != nil {
		// A concurrent copy of the request may have voided it first.
		if ok, rerr := req.replayed(db, &prior); rerr != nil {
			return nil, rerr
		} else if ok {
			return &prior, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("void coupon: %w", err)
	}
	return voided, nil
}

func nilIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
