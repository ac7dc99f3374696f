package services

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
	now := s.now()
	refund, err := s.newRefund(db, actor, flow, in, fp, now)
	if err != nil {
		return nil, err
	}
	var cancelKey string
	err = db.Transaction(func(tx *gorm.DB) error {
		var err error
		cancelKey, err = s.refundTx(tx, actor, flow, refund, in, now)
		return err
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
	s.cancelRefunded(ctx, flow.MerchantID, cancelKey)
	return refund, nil
}

// newRefund is the refund flow that would reverse flow, once the rules allow
// it: flow SUCCEEDED (else INVALID_STATE), and for a clerk inside the
// campaign's refund window (else REFUND_WINDOW_CLOSED).
func (s *Redemptions) newRefund(db *gorm.DB, actor Actor, flow *models.RedemptionFlow, in RefundInput, fp string, now time.Time) (*models.RefundFlow, error) {
	if flow.Status != models.FlowSucceeded {
		return nil, fmt.Errorf("refund %s (%s): %w", flow.RedeemNo, flow.Status, ErrInvalidState)
	}
	campaign, err := s.campaigns.ofCoupon(db, flow.CouponID)
	if err != nil {
		return nil, err
	}
	if actor.Role == models.RoleClerk && flow.FinishedAt != nil &&
		now.After(flow.FinishedAt.Add(time.Duration(campaign.RefundWindowMinutes)*time.Minute)) {
		return nil, ErrRefundWindowClosed
	}
	return &models.RefundFlow{MerchantID: actor.MerchantID, RefundNo: newFlowNo("RF", now), RequestID: in.RequestID,
		Fingerprint: fp, RedemptionID: flow.ID, RedeemNo: flow.RedeemNo, CouponID: flow.CouponID, StoreID: flow.StoreID,
		OperatorID: actor.operatorID(), Status: models.FlowSucceeded, Reason: in.Reason, Amount: flow.DiscountAmount,
		Reissue: in.Reissue, CreatedAt: now, FinishedAt: &now}, nil
}

// refundTx writes refund of flow on tx: the coupon's move, the replacement,
// the refund row, the allowances given back, the history, the events and the
// audit. It returns the key of the business order to cancel once tx commits:
// a one-shot redemption's own number; for a flow of a multi-code order, the
// order's key when this refund leaves none of its uses standing, else "";
// "" for a reservation, whose order is the client's.
func (s *Redemptions) refundTx(tx *gorm.DB, actor Actor, flow *models.RedemptionFlow, refund *models.RefundFlow, in RefundInput, now time.Time) (string, error) {
	coupon, err := models.CouponByID(tx, flow.CouponID)
	if err != nil {
		return "", err
	}
	// A single-use coupon moves REDEEMED -> REFUNDED, its code dead. A
	// multi-use card's refunded use is dead for good the same way, but its
	// other uses are the customer's: the card stays as it is, and the
	// refund row (one per redemption, by its unique index) records the use.
	var transitions []models.CouponTransition
	if coupon.UsesTotal == 1 {
		version, ok, err := models.MoveCoupon(tx, flow.CouponID, flow.RedeemNo, models.CouponRedeemed, models.CouponRefunded, now)
		if err != nil {
			return "", err
		}
		if !ok {
			return "", ErrInvalidState
		}
		refunded := flow.Transition(models.CouponRedeemed, models.CouponRefunded, version, actor.Label(), now)
		refunded.FlowNo = refund.RefundNo
		transitions = append(transitions, refunded)
	}
	if in.Reissue {
		replacement, err := s.campaigns.reissue(tx, flow.CouponID, now)
		if err != nil {
			return "", err
		}
		refund.ReissuedCouponID = &replacement.ID
	}
	if err := models.InsertRefund(tx, refund); err != nil {
		return "", err
	}
	// A refunded use gives its allowance back to the limits it counted against.
	if err := s.returnAllowances(tx, flow); err != nil {
		return "", err
	}
	if err := models.RecordTransitions(tx, transitions...); err != nil {
		return "", err
	}
	if err := models.InsertRefundEvents(tx, actor.MerchantID, refund.RefundNo, in.Reissue, now); err != nil {
		return "", err
	}
	if err := s.campaigns.audit.record(tx, actor, "redemption.refund", flow.RedeemNo,
		fmt.Sprintf("refund %s reissue=%t reason=%q", refund.RefundNo, in.Reissue, in.Reason), &in.RequestID); err != nil {
		return "", err
	}
	switch {
	case flow.Operation != models.OpRedeem:
		return "", nil
	case flow.OrderID == nil:
		return flow.RedeemNo, nil
	}
	// The order of a multi-code order is one for all its flows: it stands
	// while any of them does. The count's row lock orders concurrent refunds
	// of the same order, so exactly one of them is the last.
	last, err := models.CountOrderRefund(tx, flow.MerchantID, *flow.OrderID, now)
	if err != nil || !last {
		return "", err
	}
	order, err := models.RedemptionOrderByID(tx, flow.MerchantID, *flow.OrderID)
	if err != nil {
		return "", err
	}
	return order.OrderNo, nil
}

// cancelRefunded tells the adapter to cancel the business order of a
// refund (key, "" for none). The coupon is refunded whatever the order system
// says; a failed cancel leaves a live order that reconciliation reports.
func (s *Redemptions) cancelRefunded(ctx context.Context, merchantID int64, key string) {
	if key == "" {
		return
	}
	if err := s.adapter.Cancel(context.WithoutCancel(ctx), merchantID, key); err != nil {
		s.hooks.log.ErrorContext(ctx, "cancel order of refunded redemption", "order_no", key, "err", err)
	}
}

// RefundManyInput reverses several succeeded redemptions together, such as
// the redemptions of one multi-code order.
type RefundManyInput struct {
	// RedeemNos are 1 to MaxCodesPerOrder redemption numbers, each once.
	RedeemNos []string
	RequestID string
	Reason    string
	// Reissue issues a replacement for each refunded coupon (see RefundInput).
	Reissue bool
}

// RefundMany refunds several redemptions all or nothing, by the rules of
// Refund: one transaction writes every refund, so when one of them may not
// be refunded (not SUCCEEDED, refunded already, out of the clerk's refund
// window) none is, and the error names it. Each refund is its own refund
// flow, with request id "<requestId>#<n>" (n its position), so the unique
// index of the first decides between concurrent copies of the request; a
// repeat with the same parameters returns the first refunds, with others
// IDEMPOTENCY_KEY_REUSED. The business order of a multi-code order is
// cancelled when its last redemption is refunded.
func (s *Redemptions) RefundMany(ctx context.Context, actor Actor, in RefundManyInput) ([]*models.RefundFlow, error) {
	if err := validateRequestID(in.RequestID); err != nil {
		return nil, err
	}
	if err := checkText("reason", in.Reason, 500, true); err != nil {
		return nil, err
	}
	if len(in.RedeemNos) == 0 || len(in.RedeemNos) > MaxCodesPerOrder {
		return nil, invalidf("redeemNos must hold 1 to %d redemption numbers, not %d", MaxCodesPerOrder, len(in.RedeemNos))
	}
	for i, no := range in.RedeemNos {
		if slices.Contains(in.RedeemNos[:i], no) {
			return nil, invalidf("redeemNos: %s is given twice", no)
		}
	}
	if err := actor.require(models.RoleAdmin, models.RoleClerk); err != nil {
		return nil, err
	}
	db := s.db.WithContext(ctx)
	fp := fingerprint(append([]string{"REFUND_MANY", strconv.FormatBool(in.Reissue)}, in.RedeemNos...)...)
	requestID := func(i int) string { return in.RequestID + "#" + strconv.Itoa(i+1) }
	if prior, err := models.RefundByRequest(db, actor.MerchantID, requestID(0)); err != nil || prior != nil {
		if err != nil {
			return nil, err
		}
		return s.replayRefunds(db, actor, prior, fp, len(in.RedeemNos), requestID)
	}
	flows := make([]*models.RedemptionFlow, len(in.RedeemNos))
	for i, no := range in.RedeemNos {
		flow, err := flowByRedeemNo(db, actor.MerchantID, no)
		if err != nil {
			return nil, err
		}
		if err := actor.requireStore(flow.StoreID); err != nil {
			return nil, err
		}
		flows[i] = flow
	}
	if err := s.limits.redeem(actor, flows[0].StoreID, ""); err != nil {
		return nil, err
	}
	now := s.now()
	refunds := make([]*models.RefundFlow, len(flows))
	ins := make([]RefundInput, len(flows))
	for i, flow := range flows {
		ins[i] = RefundInput{RedeemNo: flow.RedeemNo, RequestID: requestID(i), Reason: in.Reason, Reissue: in.Reissue}
		r, err := s.newRefund(db, actor, flow, ins[i], fp, now)
		if err != nil {
			return nil, err
		}
		refunds[i] = r
	}
	var cancelKeys []string
	var failed string
	err := db.Transaction(func(tx *gorm.DB) error {
		for i, flow := range flows {
			key, err := s.refundTx(tx, actor, flow, refunds[i], ins[i], now)
			if err != nil {
				failed = flow.RedeemNo
				return err
			}
			if key != "" {
				cancelKeys = append(cancelKeys, key)
			}
		}
		return nil
	})
	switch {
	case errors.Is(err, gorm.ErrDuplicatedKey):
		prior, ferr := models.RefundByRequest(db, actor.MerchantID, requestID(0))
		if ferr == nil && prior != nil {
			return s.replayRefunds(db, actor, prior, fp, len(in.RedeemNos), requestID)
		}
		return nil, fmt.Errorf("refund %s: %w", failed, ErrInvalidState)
	case errors.Is(err, ErrInvalidState):
		return nil, fmt.Errorf("refund %s: %w", failed, ErrInvalidState)
	case err != nil:
		return nil, fmt.Errorf("refund %s: %w", failed, err)
	}
	for _, key := range cancelKeys {
		s.cancelRefunded(ctx, actor.MerchantID, key)
	}
	return refunds, nil
}

// replayRefunds answers a RefundMany request id whose first refund is
// first: the n refunds it wrote, or IDEMPOTENCY_KEY_REUSED when fp differs.
func (s *Redemptions) replayRefunds(db *gorm.DB, actor Actor, first *models.RefundFlow, fp string, n int, requestID func(int) string) ([]*models.RefundFlow, error) {
	if first.Fingerprint != fp {
		return nil, ErrIdempotencyKeyReused
	}
	out := []*models.RefundFlow{first}
	for i := 1; i < n; i++ {
		r, err := models.RefundByRequest(db, actor.MerchantID, requestID(i))
		if err != nil {
			return nil, err
		}
		if r == nil {
			return nil, fmt.Errorf("refund request %s: refund %d of %d is missing", first.RequestID, i+1, n)
		}
		out = append(out, r)
	}
	return out, nil
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
