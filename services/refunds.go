package services

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"gorm.io/gorm"

	"coupond/models"
)

// RefundInput reverses a succeeded redemption (撤销).
type RefundInput struct {
	RedeemNo  string
	RequestID string
	Reason    string
	// Reissue issues a replacement coupon of the same campaign, linked to the
	// refunded one, whose code stays dead; it gives one use, the one refunded,
	// also when the refunded use was one of a multi-use card's.
	Reissue bool
}

// Refund moves a REDEEMED coupon to REFUNDED, a terminal state, and records a
// refund flow (of a multi-use card, only the one use is refunded, for good:
// the card keeps its status and its other uses); the fulfillment adapter is then told to cancel the order. Clerks
// may refund at their stores inside the campaign's refund window, administrators
// at any time. A repeated request id returns the first refund; a redemption that
// is not SUCCEEDED or already refunded is INVALID_STATE.
func (s *Redemptions) Refund(ctx context.Context, actor Actor, in RefundInput) (*models.RefundFlow, error) {
	if err := validateRequestID(in.RequestID); err != nil {
		return nil, err
	}
	if err := checkText("reason", in.Reason, 500, true); err != nil {
		return nil, err
	}
	flow, err := s.actionableFlow(ctx, actor, in.RedeemNo, "", models.RoleAdmin, models.RoleClerk)
	if err != nil {
		return nil, err
	}
	db := s.db.WithContext(ctx)
	fp := fingerprint("REFUND", in.RedeemNo, strconv.FormatBool(in.Reissue))
	if prior, err := models.RefundByRequest(db, actor.MerchantID, in.RequestID); err != nil || prior != nil {
		return replayRefund(prior, fp, err)
	}
	if flow.Status != models.FlowSucceeded {
		return nil, fmt.Errorf("refund %s (%s): %w", in.RedeemNo, flow.Status, ErrInvalidState)
	}
	campaign, err := s.campaigns.ofCoupon(db, flow.CouponID)
	if err != nil {
		return nil, err
	}
	now := s.now()
	if actor.Role == models.RoleClerk && flow.FinishedAt != nil &&
		now.After(flow.FinishedAt.Add(time.Duration(campaign.RefundWindowMinutes)*time.Minute)) {
		return nil, ErrRefundWindowClosed
	}
	coupon, err := models.CouponByID(db, flow.CouponID)
	if err != nil {
		return nil, fmt.Errorf("refund %s: %w", in.RedeemNo, err)
	}
	refund := &models.RefundFlow{MerchantID: actor.MerchantID, RefundNo: newFlowNo("RF", now), RequestID: in.RequestID,
		Fingerprint: fp, RedemptionID: flow.ID, RedeemNo: flow.RedeemNo, CouponID: flow.CouponID, StoreID: flow.StoreID,
		OperatorID: actor.operatorID(), Status: models.FlowSucceeded, Reason: in.Reason, Amount: flow.DiscountAmount,
		Reissue: in.Reissue, CreatedAt: now, FinishedAt: &now}
	err = db.Transaction(func(tx *gorm.DB) error {
		// A single-use coupon moves REDEEMED -> REFUNDED, its code dead. A
		// multi-use card's refunded use is dead for good the same way, but its
		// other uses are the customer's: the card stays as it is, and the
		// refund row (one per redemption, by its unique index) records the use.
		var transitions []models.CouponTransition
		if coupon.UsesTotal == 1 {
			version, ok, err := models.MoveCoupon(tx, flow.CouponID, flow.RedeemNo, models.CouponRedeemed, models.CouponRefunded, now)
			if err != nil {
				return err
			}
			if !ok {
				return ErrInvalidState
			}
			refunded := flow.Transition(models.CouponRedeemed, models.CouponRefunded, version, actor.Label(), now)
			refunded.FlowNo = refund.RefundNo
			transitions = append(transitions, refunded)
		}
		if in.Reissue {
			replacement, err := s.campaigns.reissue(tx, flow.CouponID, now)
			if err != nil {
				return err
			}
			refund.ReissuedCouponID = &replacement.ID
		}
		if err := models.InsertRefund(tx, refund); err != nil {
			return err
		}
		// A refunded use gives its allowance back to the limits it counted against.
		if err := s.returnAllowances(tx, flow); err != nil {
			return err
		}
		if err := models.RecordTransitions(tx, transitions...); err != nil {
			return err
		}
		if err := models.InsertRefundEvents(tx, actor.MerchantID, refund.RefundNo, in.Reissue, now); err != nil {
			return err
		}
		return s.campaigns.audit.record(tx, actor, "redemption.refund", flow.RedeemNo,
			fmt.Sprintf("refund %s reissue=%t reason=%q", refund.RefundNo, in.Reissue, in.Reason), &in.RequestID)
	})
	switch {
	case errors.Is(err, gorm.ErrDuplicatedKey):
		prior, ferr := models.RefundByRequest(db, actor.MerchantID, in.RequestID)
		if ferr == nil && prior != nil {
			return replayRefund(prior, fp, nil)
		}
		return nil, fmt.Errorf("refund %s: %w", in.RedeemNo, ErrInvalidState)
	case errors.Is(err, ErrInvalidState):
		return nil, fmt.Errorf("refund %s: %w", in.RedeemNo, ErrInvalidState)
	case err != nil:
		return nil, fmt.Errorf("refund %s: %w", in.RedeemNo, err)
	}
	if flow.Operation == models.OpRedeem {
		// The coupon is refunded whatever the order system says; a failed cancel
		// leaves a live order that reconciliation reports.
		if err := s.adapter.Cancel(context.WithoutCancel(ctx), flow.MerchantID, flow.RedeemNo); err != nil {
			s.hooks.log.ErrorContext(ctx, "cancel order of refunded redemption", "redeem_no", flow.RedeemNo, "err", err)
		}
	}
	return refund, nil
}

func replayRefund(prior *models.RefundFlow, fp string, err error) (*models.RefundFlow, error) {
	if err != nil {
		return nil, err
	}
	if prior.Fingerprint != fp {
		return nil, ErrIdempotencyKeyReused
	}
	return prior, nil
}

// RefundsOf returns the refunds of the given redemption ids, for the API's
// batch loaders.
func (s *Redemptions) RefundsOf(ctx context.Context, actor Actor, redemptionIDs []int64) ([]models.RefundFlow, error) {
	if err := actor.require(models.RoleAdmin, models.RoleClerk, models.RoleFinance); err != nil {
		return nil, err
	}
	return models.RefundsOf(s.db.WithContext(ctx), actor.MerchantID, redemptionIDs)
}
