package services

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"coupond/models"
)

// rejectTaken answers a batch of requests for a coupon that is taken for
// good with a REJECTED flow each, written with one statement. It delivers the
// answers of batch[1:] and returns batch[0]'s. The work does not stop when the
// first request's client goes away, since it answers the others too; it is
// bounded by the fulfil timeout instead.
func (s *Redemptions) rejectTaken(batch []*lineRequest, c takenCoupon) taken {
	answers := make([]taken, len(batch))
	for i := range answers {
		answers[i].err = errBatchUnanswered
	}
	// Every request of the batch gets an answer, even if this one panics.
	defer func() {
		for i := 1; i < len(batch); i++ {
			batch[i].turn <- lineTurn{answer: answers[i]}
		}
	}()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(batch[0].ctx), s.adapter.timeout)
	defer cancel()
	db := s.db.WithContext(ctx)
	merchantID := batch[0].req.actor.MerchantID
	reason := RejectNotAvailable
	if c.status == models.CouponExpired {
		reason = RejectExpired
	}

	// Stores of clerks were checked when their tokens were made; anyone
	// else's store must exist, as on the one-by-one path.
	var unchecked []int64
	for _, w := range batch {
		if r := w.req; r.actor.Role != models.RoleClerk && !slices.Contains(unchecked, r.in.StoreID) {
			unchecked = append(unchecked, r.in.StoreID)
		}
	}
	var known []int64
	if len(unchecked) > 0 {
		var err error
		if known, err = models.ExistingStores(db, merchantID, unchecked); err != nil {
			for i := range answers {
				answers[i] = taken{err: fmt.Errorf("reserve coupon: check stores: %w", err)}
			}
			return answers[0]
		}
	}

	now := s.now()
	var flows []*models.RedemptionFlow
	var writes []int
	for i, w := range batch {
		r := w.req
		if r.actor.Role != models.RoleClerk && !slices.Contains(known, r.in.StoreID) {
			answers[i] = taken{err: notFoundf("store %d not found", r.in.StoreID)}
			continue
		}
		why := reason
		flows = append(flows, &models.RedemptionFlow{MerchantID: merchantID, RedeemNo: newFlowNo("RD", now),
			Operation: r.op, RequestID: r.in.RequestID, Fingerprint: r.fp, CouponID: c.id, StoreID: r.in.StoreID,
			OperatorID: r.actor.operatorID(), Status: models.FlowRejected, RejectReason: &why,
			OrderAmount: r.in.OrderAmount, CreatedAt: now, UpdatedAt: now, FinishedAt: &now})
		writes = append(writes, i)
	}
	var err error
	if len(flows) > 0 {
		err = s.gate.run(ctx, func() error { return models.InsertRejectedFlows(db, flows) })
	}
	for j, i := range writes {
		r, f := batch[i].req, flows[j]
		switch {
		case err != nil:
			answers[i] = taken{err: fmt.Errorf("reserve coupon: %w", err)}
		case f.ID != 0:
			answers[i] = taken{flow: f, fresh: true}
		default:
			// The request id was used before: answer with the first flow.
			prior, ferr := models.FlowByRequest(db, merchantID, r.op, r.in.RequestID)
			switch {
			case ferr != nil:
				answers[i] = taken{err: ferr}
			case prior == nil:
				answers[i] = taken{err: fmt.Errorf("reserve coupon: request %s conflicted but is not found", r.in.RequestID)}
			default:
				answers[i] = replay(prior, r.fp)
			}
		}
	}
	return answers[0]
}

// errBatchUnanswered answers a request of a rejection batch whose writer
// failed before reaching it.
var errBatchUnanswered = errors.New("reserve coupon: the batch rejecting this request did not finish")

// Coalesced reports how many reserve requests this process answered in a
// batch behind another request for the same coupon (see couponLines) since
// it started, instead of each asking the database on its own.
func (s *Redemptions) Coalesced() int64 {
	if s.lines == nil {
		return 0
	}
	return s.lines.batched.Load()
}
