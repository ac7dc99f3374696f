package services

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"coupond/models"
)

// taken is what the take step answered a request.
type taken struct {
	// flow is the request's flow: written by this request (fresh), or the
	// stored flow of its request id (a replay).
	flow  *models.RedemptionFlow
	fresh bool
	// seen is the coupon as the take's statements found it, for the coupon's
	// line; zero when they did not read it.
	seen models.Coupon
	err  error
}

// taker takes the coupon of a request with a conditional update and writes
// the request's flow: PROCESSING (taken, the business step to come),
// SUCCEEDED (taken and completed in the same commit) or REJECTED (not taken,
// with the reason). A repeated request id gets its first flow. It is one of
// the strategies below, chosen once when the service is built
// (newRedemptions).
type taker interface {
	take(ctx context.Context, req *request) taken
}

// txTake takes the coupon in one transaction: the conditional reserve and
// the flow commit together. With complete set, an adapter whose orders live
// in coupond's database, the order and the confirmation commit in that same
// transaction and the flow is SUCCEEDED: no call leaves the database, so no
// outcome is unknown. Without, the flow is PROCESSING.
//
// A repeated request id is not looked up first: the flow's unique index
// refuses the repeat's insert, its transaction rolls back with whatever it
// touched, and answerTake finds the first flow. A fresh request, the common
// case, saves a round trip inside its transaction.
type txTake struct {
	s        *Redemptions
	complete TxFulfiller
	// group, on SQLite, shares one transaction and one commit among the
	// takes of concurrent requests (see groupCommit).
	group *groupCommit
}

// inTx runs fn behind the gate in a transaction of its own or, with a group
// commit, in the batch's (the gate still admits requests in arrival order,
// as many at once as the pool has connections, so a batch holds at most that
// many).
func (t txTake) inTx(ctx context.Context, db *gorm.DB, fn func(tx *gorm.DB) error) error {
	return t.s.gate.run(ctx, func() error {
		if t.group != nil {
			return t.group.run(ctx, fn)
		}
		return db.Transaction(fn)
	})
}

func (t txTake) take(ctx context.Context, req *request) taken {
	s := t.s
	db := s.db.WithContext(ctx)
	flow := s.newFlow(req)
	now := flow.CreatedAt
	local, err := s.days.local(ctx, req.actor.MerchantID, now)
	if err != nil {
		return taken{err: fmt.Errorf("reserve coupon: %w", err)}
	}
	var seen models.Coupon
	err = t.inTx(ctx, db, func(tx *gorm.DB) error {
		if err := checkStore(tx, req); err != nil {
			return err
		}
		got, ok, err := models.ReserveCoupon(tx, models.ReserveArgs{MerchantID: req.actor.MerchantID, Code: req.code,
			RedeemNo: flow.RedeemNo, StoreID: req.in.StoreID, OrderAmount: req.in.OrderAmount,
			CustomerRef: req.in.CustomerRef, Clock: models.ClockOf(local), Now: now})
		if err != nil {
			return err
		}
		if !ok {
			c, err := models.CouponByCode(tx, req.actor.MerchantID, req.code)
			if errors.Is(err, gorm.ErrRecordNotFound) {
				return ErrCouponNotFound
			}
			if err != nil {
				return err
			}
			seen = *c
			return s.reject(tx, flow, c, req.in.CustomerRef, local)
		}
		campaign, err := s.campaigns.cached(tx, got.CampaignID)
		if err != nil {
			return err
		}
		hold := now.Add(s.holdTimeout)
		flow.CouponID, flow.Status, flow.HoldUntil, flow.UseNo = got.ID, models.FlowProcessing, &hold, got.UseNo
		if customer := customerOf(got.CustomerRef, req.in.CustomerRef); customer != "" {
			flow.CustomerRef = &customer
		}
		// The limits count in the transaction that takes the coupon: a
		// limit reached rolls the take back, and the rejection is
		// recorded afterwards.
		if reason, err := takeAllowances(tx, campaign, flow, deref(flow.CustomerRef), dayOf(local)); err != nil || reason != "" {
			if err == nil {
				err = &limitReached{reason: reason}
			}
			return err
		}
		flow.DiscountAmount = campaign.Discount(req.in.OrderAmount)
		reserved := flow.Transition(models.CouponUnused, models.CouponRedeeming, got.Version, req.actor.Label(), now)
		if t.complete == nil {
			seen = models.Coupon{ID: got.ID, Status: models.CouponRedeeming}
			return models.InsertFlow(tx, flow, reserved)
		}
		if err := completeInTx(tx, t.complete, flow, reserved, req.actor, now); err != nil {
			return err
		}
		seen = models.Coupon{ID: got.ID, Status: flow.CouponAfter}
		return nil
	})
	var limit *limitReached
	if errors.As(err, &limit) {
		var rejected *models.RedemptionFlow
		if rejected, err = s.rejectOverLimit(ctx, req, limit.reason, now); err == nil {
			return taken{flow: rejected, fresh: true}
		}
	}
	if err != nil {
		return s.answerTake(db, req, err)
	}
	return taken{flow: flow, fresh: true, seen: seen}
}

// rejectOverLimit records the REJECTED flow of req, whose take a limit
// rolled back, in a transaction of its own: the coupon (unchanged, read
// again) and the reason. A concurrent copy of the request that committed
// first makes the insert fail on the unique index, and answerTake replays it.
func (s *Redemptions) rejectOverLimit(ctx context.Context, req *request, reason string, now time.Time) (*models.RedemptionFlow, error) {
	db := s.db.WithContext(ctx)
	flow := s.newFlow(req)
	return flow, s.gate.run(ctx, func() error {
		c, err := models.CouponByCode(db, req.actor.MerchantID, req.code)
		if err != nil {
			return err
		}
		flow.CreatedAt, flow.UpdatedAt = now, now
		flow.CouponID, flow.Status, flow.RejectReason, flow.FinishedAt = c.ID, models.FlowRejected, &reason, &now
		if customer := customerOf(c.CustomerRef, req.in.CustomerRef); customer != "" {
			flow.CustomerRef = &customer
		}
		return models.InsertFlow(db, flow)
	})
}

// completeInTx completes a one-shot redemption inside its reserve
// transaction: the order is created, the use is confirmed (the coupon moves
// on to REDEEMED, or back to UNUSED when a multi-use card has uses left) and
// the flow is written SUCCEEDED, all in one commit. Both edges are recorded, so
// the history is the same as on the two-transaction path.
func completeInTx(tx *gorm.DB, f TxFulfiller, flow *models.RedemptionFlow, reserved models.CouponTransition, actor Actor, now time.Time) error {
	ref, err := f.FulfilTx(tx, fulfilRequest(flow), now)
	if err != nil {
		return err
	}
	version, after, ok, err := models.ConfirmUse(tx, flow.CouponID, flow.RedeemNo, 0, now)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("coupon %d is not held by %s inside its own transaction", flow.CouponID, flow.RedeemNo)
	}
	flow.Status, flow.OrderRef, flow.FinishedAt, flow.Version = models.FlowSucceeded, &ref, &now, 1
	flow.CouponAfter = after
	if err := models.InsertFlow(tx, flow, reserved,
		flow.Transition(models.CouponRedeeming, after, version, actor.Label(), now)); err != nil {
		return err
	}
	return models.InsertRedemptionEvent(tx, models.EventRedemptionSucceeded, flow.MerchantID, flow.ID, now)
}

// statementTake is the one-shot redemption with the builtin adapter on
// PostgreSQL: one statement reserves, orders and confirms (models.RedeemOnce),
// so a redemption commits with one round trip; the statements of concurrent
// requests share theirs, and their commit (pipeline). When the statement
// does not take the coupon, one read tells a repeated request id (answered
// with its flow, nothing written) from a rejection, which is recorded with
// one insert. No explicit transaction is needed: each write is one
// statement.
type statementTake struct {
	s *Redemptions
	// pipeline runs the statements of concurrent requests together.
	pipeline *pipeline
	// counting takes the coupons whose use counts against a limit, which
	// the statement leaves alone (see models.RedeemOnce): in a transaction
	// with the order inside.
	counting taker
}

func (t statementTake) take(ctx context.Context, req *request) taken {
	s := t.s
	db := s.db.WithContext(ctx)
	flow := s.newFlow(req)
	now := flow.CreatedAt
	local, err := s.days.local(ctx, req.actor.MerchantID, now)
	if err != nil {
		return taken{err: fmt.Errorf("reserve coupon: %w", err)}
	}
	var seen models.Coupon
	counts := false
	ok, err := t.redeemOnce(ctx, req, flow, local)
	if err != nil {
		return s.answerTake(db, req, err)
	}
	if ok {
		return taken{flow: flow, fresh: true, seen: models.Coupon{ID: flow.CouponID, Status: flow.CouponAfter}}
	}
	flow.HoldUntil = nil
	err = s.gate.run(ctx, func() error {
		c, known, err := models.CouponAndRequest(db, req.actor.MerchantID, req.code, req.op, req.in.RequestID)
		switch {
		case err != nil:
			return err
		case c == nil:
			return ErrCouponNotFound
		case known:
			return errKnownRequest
		}
		campaign, err := s.campaigns.cached(db, c.CampaignID)
		if err != nil {
			return err
		}
		if campaign.CountsAllowances(customerOf(c.CustomerRef, req.in.CustomerRef)) {
			counts = true
			return nil
		}
		seen = *c
		return s.reject(db, flow, c, req.in.CustomerRef, local)
	})
	if counts {
		return t.counting.take(ctx, req)
	}
	if err != nil {
		return s.answerTake(db, req, err)
	}
	return taken{flow: flow, fresh: true, seen: seen}
}

// redeemOnce checks the store and runs the one statement (in the pipeline
// with concurrent requests), reporting whether it took the coupon (see
// models.RedeemOnce).
func (t statementTake) redeemOnce(ctx context.Context, req *request, flow *models.RedemptionFlow, local time.Time) (bool, error) {
	s := t.s
	if !storeChecked(req) {
		if err := s.gate.run(ctx, func() error { return checkStore(s.db.WithContext(ctx), req) }); err != nil {
			return false, err
		}
	}
	hold := flow.CreatedAt.Add(s.holdTimeout)
	flow.HoldUntil = &hold
	return t.pipeline.redeem(ctx, models.ReserveArgs{MerchantID: req.actor.MerchantID, Code: req.code,
		RedeemNo: flow.RedeemNo, StoreID: req.in.StoreID, OrderAmount: req.in.OrderAmount,
		CustomerRef: req.in.CustomerRef, Clock: models.ClockOf(local), Now: flow.CreatedAt}, flow, req.actor.Label())
}

// reject records a REJECTED flow for coupon c, which the take's conditional
// update did not take, with the first rule that keeps it from being taken
// for customer ("" for none) at now, on the merchant's clock.
func (s *Redemptions) reject(db *gorm.DB, flow *models.RedemptionFlow, c *models.Coupon, customer string, now time.Time) error {
	campaign, err := s.campaigns.current(db, c.CampaignID)
	if err != nil {
		return err
	}
	if who := customerOf(c.CustomerRef, customer); who != "" {
		flow.CustomerRef = &who
	}
	reason, err := diagnose(db, campaign, c, flow.StoreID, flow.OrderAmount, customer, now)
	finished := now.UTC()
	if err != nil {
		return err
	}
	if reason == "" {
		// Every rule holds now, yet the update did not match: the coupon changed
		// between the two statements, which for this request means it was taken.
		reason = RejectNotAvailable
	}
	flow.CouponID, flow.Status, flow.RejectReason, flow.FinishedAt = c.ID, models.FlowRejected, &reason, &finished
	return models.InsertFlow(db, flow)
}

// checkStore refuses a store the merchant does not have, unless
// storeChecked.
func checkStore(db *gorm.DB, req *request) error {
	if storeChecked(req) {
		return nil
	}
	return storeMustExist(db, req.actor.MerchantID, req.in.StoreID)
}

// storeChecked reports whether req's store needs no lookup: a clerk's
// stores were checked when its token was made.
func storeChecked(req *request) bool { return req.actor.Role == models.RoleClerk }

// storeMustExist is NOT_FOUND unless id is a store of the merchant.
func storeMustExist(db *gorm.DB, merchantID, id int64) error {
	known, err := models.ExistingStores(db, merchantID, []int64{id})
	if err != nil {
		return err
	}
	if len(known) == 0 {
		return notFoundf("store %d not found", id)
	}
	return nil
}

// fulfilRequest is the business step of flow.
func fulfilRequest(flow *models.RedemptionFlow) FulfilRequest {
	return FulfilRequest{MerchantID: flow.MerchantID, RedeemNo: flow.RedeemNo, CouponID: flow.CouponID,
		StoreID: flow.StoreID, OrderAmount: flow.OrderAmount, DiscountAmount: flow.DiscountAmount}
}
