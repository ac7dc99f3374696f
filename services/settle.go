package services

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"

	"coupond/models"
)

// settle confirms a PROCESSING flow with its order: flow SUCCEEDED and its
// use of the coupon confirmed (REDEEMED, or UNUSED when a multi-use card has
// uses left: models.ConfirmUse) in one transaction. won is false when someone else (compensation or a
// concurrent confirm or cancel) finished the flow first; the flow returned is
// then the stored final one.
// seen, when not 0, is the coupon version the caller decided on (see
// models.MoveCouponAt).
func (s *Redemptions) settle(ctx context.Context, actor Actor, flow *models.RedemptionFlow, orderRef string, seen int64) (*models.RedemptionFlow, bool, error) {
	return s.finish(ctx, actor, flow, models.FlowOutcome{Status: models.FlowSucceeded, OrderRef: &orderRef},
		models.CouponRedeemed, seen)
}

// release gives the coupon of a PROCESSING flow back: flow RELEASED and coupon
// UNUSED in one transaction, with the same race rules as settle.
func (s *Redemptions) release(ctx context.Context, actor Actor, flow *models.RedemptionFlow, reason string, seen int64) (*models.RedemptionFlow, bool, error) {
	return s.finish(ctx, actor, flow, models.FlowOutcome{Status: models.FlowReleased, ReleaseReason: &reason},
		models.CouponUnused, seen)
}

var errLostRace = errors.New("flow already finished")

// finish moves a PROCESSING flow to out and its coupon from REDEEMING to to,
// in one transaction of conditional updates: of everyone finishing the flow
// at once (the request, a confirm or cancel, compensation), exactly one
// wins, and the others learn it from the rows affected.
func (s *Redemptions) finish(ctx context.Context, actor Actor, flow *models.RedemptionFlow, out models.FlowOutcome, to models.CouponStatus, seen int64) (*models.RedemptionFlow, bool, error) {
	out.Now = s.now()
	db := s.db.WithContext(ctx)
	var couponAfter models.CouponStatus
	err := s.gate.run(ctx, func() error {
		return db.Transaction(func(tx *gorm.DB) error {
			var err error
			couponAfter, err = s.finishTx(tx, actor, flow, out, to, seen)
			return err
		})
	})
	if errors.Is(err, errLostRace) {
		final, err := flowByRedeemNo(db, flow.MerchantID, flow.RedeemNo)
		return final, false, err
	}
	if err != nil {
		return nil, false, fmt.Errorf("finish redemption %s as %s: %w", flow.RedeemNo, out.Status, err)
	}
	final := *flow
	final.Status, final.FinishedAt, final.UpdatedAt, final.Version = out.Status, &out.Now, out.Now, flow.Version+1
	if out.OrderRef != nil {
		final.OrderRef = out.OrderRef
	}
	final.ReleaseReason = out.ReleaseReason
	final.CouponAfter = couponAfter
	return &final, true, nil
}

// finishTx is finish's transaction on tx: the flow's conditional move, its
// coupon's, the allowances given back on a release, the transition and the
// event. It returns errLostRace when the flow had left PROCESSING, and the
// coupon's status after the move. A multi-code order finishes each of its
// flows with it inside the one transaction that moves the order.
func (s *Redemptions) finishTx(tx *gorm.DB, actor Actor, flow *models.RedemptionFlow, out models.FlowOutcome, to models.CouponStatus, seen int64) (models.CouponStatus, error) {
	ok, err := models.FinishFlow(tx, flow.ID, out)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", errLostRace
	}
	var version int64
	after := to
	if to == models.CouponRedeemed {
		version, after, ok, err = models.ConfirmUse(tx, flow.CouponID, flow.RedeemNo, seen, out.Now)
	} else {
		version, ok, err = models.MoveCouponAt(tx, flow.CouponID, flow.RedeemNo, models.CouponRedeeming, to, seen, out.Now)
	}
	if err != nil {
		return "", err
	}
	if !ok {
		// The flow was PROCESSING, so its coupon must be REDEEMING and held
		// by it; anything else is a broken invariant, never papered over.
		return "", fmt.Errorf("coupon %d is not held by processing flow %s", flow.CouponID, flow.RedeemNo)
	}
	if to == models.CouponUnused {
		// A use given back no longer counts against the limits.
		if err := s.returnAllowances(tx, flow); err != nil {
			return "", err
		}
	}
	if err := models.RecordTransitions(tx, flow.Transition(models.CouponRedeeming, after, version, actor.Label(), out.Now)); err != nil {
		return "", err
	}
	event := models.EventRedemptionSucceeded
	if to == models.CouponUnused {
		event = models.EventRedemptionReleased
	}
	return after, models.InsertRedemptionEvent(tx, event, flow.MerchantID, flow.ID, out.Now)
}

// gate admits redemption transactions first come, first served, as many at
// once as the pool has connections. database/sql hands a freed connection to
// a random waiter, so under overload without the gate some requests wait far
// longer than others; with it the queue is fair and forms in front of the
// database rather than inside it. A nil gate admits everyone at once. A
// request that has to wait tells the tills (tills.waited), for the
// background work that gives way to them.
type gate struct {
	slots chan struct{}
	tills *tills
}

// newGate sizes the gate to db's connection pool.
func newGate(db *gorm.DB, t *tills) *gate {
	sqlDB, err := db.DB()
	if err != nil || sqlDB.Stats().MaxOpenConnections <= 0 {
		return nil
	}
	return &gate{slots: make(chan struct{}, sqlDB.Stats().MaxOpenConnections), tills: t}
}

// run runs fn once the gate admits it, or fails when ctx ends first.
func (g *gate) run(ctx context.Context, fn func() error) error {
	if g == nil {
		return fn()
	}
	select {
	case g.slots <- struct{}{}:
	default:
		g.tills.waited()
		select {
		case g.slots <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	defer func() { <-g.slots }()
	return fn()
}
