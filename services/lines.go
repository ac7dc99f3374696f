package services

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"coupond/models"
)

// maxRejectBatch caps the rejected flows written by one statement.
const maxRejectBatch = 200

// couponLines lines up this process's concurrent reserve requests for one
// coupon behind the first. When the first finds the coupon in a state it
// never leaves for UNUSED (REDEEMED, REFUNDED, EXPIRED), no request in the line
// can take it, so the line is rejected in batches: one statement records up
// to maxRejectBatch REJECTED flows, one commit. A thousand scans of a leaked
// giveaway code then cost the database a few statements instead of a
// thousand transactions, and the other stores' redemptions do not queue
// behind them. When the coupon may still become available (the first took it
// for a two-phase hold, or was rejected for its own store or amount), the
// waiting requests run as they would have, at once and each on its own.
// Copies of a request whose final answer the line has seen (a retry storm of
// one request id) get that answer without asking the database again.
//
// This only saves work; it decides nothing. Every request that takes a coupon
// does so with the conditional update, and a batch rejection rests on a
// committed observation of a state no transition leaves for UNUSED, so it is
// the answer the conditional update would have given.
type couponLines struct {
	mu    sync.Mutex
	lines map[lineKey]*couponLine
	// batched counts the requests answered in a line: by a batch rejection
	// or with the known answer of their request id.
	batched atomic.Int64
}

type lineKey struct {
	merchantID int64
	code       string
}

type couponLine struct {
	key     lineKey
	waiters []*lineRequest
	// taken is set once a request of the line saw the coupon taken for good.
	taken *takenCoupon
	// answers are the final flows the line's requests got, which copies of
	// those requests get too.
	answers []*models.RedemptionFlow
}

// takenCoupon is a coupon seen in a state that never returns to UNUSED.
type takenCoupon struct {
	id     int64
	status models.CouponStatus
}

// lineNews is what a request learned for the requests behind it.
type lineNews struct {
	// taken: the coupon, seen in a state it never leaves for UNUSED.
	taken *takenCoupon
	// answer: the request's final flow (SUCCEEDED, REJECTED or RELEASED).
	answer *models.RedemptionFlow
}

// lineRequest is one reserve request, validated and authorized.
type lineRequest struct {
	ctx   context.Context
	actor Actor
	op    models.Operation
	in    RedeemInput
	fp    string
	turn  chan lineTurn
}

// lineTurn tells a request what to do when its turn comes.
type lineTurn struct {
	// run: ask the database. line, when set, is the line this request
	// heads, which it passes on when it has finished (couponLines.pass).
	run  bool
	line *couponLine
	// batch: the coupon is taken; reject these requests (the first is the
	// one told) and pass line on.
	batch []*lineRequest
	taken takenCoupon
	// Otherwise the answer.
	flow  *models.RedemptionFlow
	fresh bool
	err   error
}

// join puts req in the line of its coupon and waits for its turn. The first
// request of a line runs at once and heads it. A request whose context ends
// while it waits leaves the line with the context's error.
func (l *couponLines) join(key lineKey, req *lineRequest) lineTurn {
	l.mu.Lock()
	line := l.lines[key]
	if line == nil {
		line = &couponLine{key: key}
		l.lines[key] = line
		l.mu.Unlock()
		return lineTurn{run: true, line: line}
	}
	req.turn = make(chan lineTurn, 1)
	line.waiters = append(line.waiters, req)
	l.mu.Unlock()
	select {
	case t := <-req.turn:
		return t
	case <-req.ctx.Done():
	}
	l.mu.Lock()
	if i := slices.Index(line.waiters, req); i >= 0 {
		line.waiters = slices.Delete(line.waiters, i, i+1)
		l.mu.Unlock()
		return lineTurn{err: req.ctx.Err()}
	}
	l.mu.Unlock()
	// Its turn was given while the context ended: take it, so the line moves on.
	return <-req.turn
}

// pass hands the line on when its head has finished, with what the head
// learned. Waiting copies of a request whose final flow the line knows get it.
// When the coupon is known taken for good, the next batch of waiters is
// rejected by its first request, which passes the line on again; otherwise
// every waiter runs at once, on its own, and the line closes.
func (l *couponLines) pass(line *couponLine, news lineNews) {
	l.mu.Lock()
	if news.taken != nil && line.taken == nil {
		line.taken = news.taken
	}
	if news.answer != nil {
		line.answers = append(line.answers, news.answer)
	}
	var answered []*lineRequest
	var answers []lineTurn
	if len(line.answers) > 0 {
		rest := line.waiters[:0:0]
		for _, w := range line.waiters {
			if f := answerOf(line.answers, w); f != nil {
				answered = append(answered, w)
				answers = append(answers, answer(replay(f, w.fp, nil)))
			} else {
				rest = append(rest, w)
			}
		}
		line.waiters = rest
	}
	var batch, free []*lineRequest
	switch {
	case len(line.waiters) == 0:
		l.close(line)
	case line.taken != nil:
		n := min(len(line.waiters), maxRejectBatch)
		batch = line.waiters[:n:n]
		line.waiters = slices.Clone(line.waiters[n:])
	default:
		free, line.waiters = line.waiters, nil
		l.close(line)
	}
	var taken takenCoupon
	if line.taken != nil {
		taken = *line.taken
	}
	l.mu.Unlock()
	l.batched.Add(int64(len(answered) + len(batch)))
	for i, w := range answered {
		w.turn <- answers[i]
	}
	if batch != nil {
		batch[0].turn <- lineTurn{batch: batch, taken: taken, line: line}
	}
	for _, w := range free {
		w.turn <- lineTurn{run: true}
	}
}

// answerOf is a copy of the final flow of req's request id among answers, or
// nil.
func answerOf(answers []*models.RedemptionFlow, req *lineRequest) *models.RedemptionFlow {
	for _, f := range answers {
		if f.Operation == req.op && f.RequestID == req.in.RequestID {
			c := *f
			return &c
		}
	}
	return nil
}

// close removes line from the map; l.mu is held.
func (l *couponLines) close(line *couponLine) {
	if l.lines[line.key] == line {
		delete(l.lines, line.key)
	}
}

// rejectTaken answers a batch of requests for a coupon that is taken for
// good with a REJECTED flow each, written with one statement. It delivers the
// answers of batch[1:] and returns batch[0]'s. The work does not stop when the
// first request's client goes away, since it answers the others too; it is
// bounded by the fulfil timeout instead.
func (s *Redemptions) rejectTaken(batch []*lineRequest, taken takenCoupon) lineTurn {
	answers := make([]lineTurn, len(batch))
	for i := range answers {
		answers[i].err = errBatchUnanswered
	}
	// Every request of the batch gets an answer, even if this one panics.
	defer func() {
		for i := 1; i < len(batch); i++ {
			batch[i].turn <- answers[i]
		}
	}()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(batch[0].ctx), s.fulfilTimeout)
	defer cancel()
	db := s.db.WithContext(ctx)
	merchantID := batch[0].actor.MerchantID
	reason := RejectNotAvailable
	if taken.status == models.CouponExpired {
		reason = RejectExpired
	}

	// Stores of clerks were checked when their tokens were made; anyone
	// else's store must exist, as on the one-by-one path.
	var unchecked []int64
	for _, r := range batch {
		if r.actor.Role != models.RoleClerk && !slices.Contains(unchecked, r.in.StoreID) {
			unchecked = append(unchecked, r.in.StoreID)
		}
	}
	var known []int64
	if len(unchecked) > 0 {
		var err error
		if known, err = (&Stores{db: s.db}).existing(db, merchantID, unchecked); err != nil {
			for i := range answers {
				answers[i] = lineTurn{err: fmt.Errorf("reserve coupon: check stores: %w", err)}
			}
			return answers[0]
		}
	}

	now := s.now()
	var flows []*models.RedemptionFlow
	var writes []int
	for i, r := range batch {
		switch {
		case r.actor.Role != models.RoleClerk && !slices.Contains(known, r.in.StoreID):
			answers[i] = lineTurn{err: notFoundf("store %d not found", r.in.StoreID)}
		default:
			why := reason
			flows = append(flows, &models.RedemptionFlow{MerchantID: merchantID, RedeemNo: newFlowNo("RD", now),
				Operation: r.op, RequestID: r.in.RequestID, Fingerprint: r.fp, CouponID: taken.id, StoreID: r.in.StoreID,
				OperatorID: r.actor.operatorID(), Status: models.FlowRejected, RejectReason: &why,
				OrderAmount: r.in.OrderAmount, CreatedAt: now, UpdatedAt: now, FinishedAt: &now})
			writes = append(writes, i)
		}
	}
	var err error
	if len(flows) > 0 {
		err = s.inGate(ctx, func() error { return models.InsertRejectedFlows(db, flows) })
	}
	for j, i := range writes {
		r, f := batch[i], flows[j]
		switch {
		case err != nil:
			answers[i] = lineTurn{err: fmt.Errorf("reserve coupon: %w", err)}
		case f.ID != 0:
			answers[i] = lineTurn{flow: f, fresh: true}
		default:
			// The request id was used before: answer with the first flow.
			prior, ferr := s.byRequest(db, merchantID, r.op, r.in.RequestID)
			switch {
			case ferr != nil:
				answers[i] = lineTurn{err: ferr}
			case prior == nil:
				answers[i] = lineTurn{err: fmt.Errorf("reserve coupon: request %s conflicted but is not found", r.in.RequestID)}
			default:
				answers[i] = answer(replay(prior, r.fp, nil))
			}
		}
	}
	return answers[0]
}

// answer makes a turn of a request's answer.
func answer(flow *models.RedemptionFlow, fresh bool, err error) lineTurn {
	return lineTurn{flow: flow, fresh: fresh, err: err}
}

// errBatchUnanswered answers a request of a rejection batch whose writer
// failed before reaching it.
var errBatchUnanswered = errors.New("reserve coupon: the batch rejecting this request did not finish")

// newsOf is what a request that got flow, fresh or replayed, learned for the
// requests behind it; seen is the coupon as its statements found it (zero
// when they did not read it). A SUCCEEDED flow of this code means its coupon
// was REDEEMED, and a coupon leaves REDEEMED only for REFUNDED.
func newsOf(flow *models.RedemptionFlow, seen models.Coupon) lineNews {
	var news lineNews
	switch flow.Status {
	case models.FlowSucceeded, models.FlowRejected, models.FlowReleased:
		news.answer = flow
	}
	switch {
	case flow.Status == models.FlowSucceeded:
		news.taken = &takenCoupon{id: flow.CouponID, status: models.CouponRedeemed}
	case seen.ID != 0 && (seen.Status == models.CouponRedeemed || seen.Status == models.CouponRefunded ||
		seen.Status == models.CouponExpired):
		news.taken = &takenCoupon{id: seen.ID, status: seen.Status}
	}
	return news
}

// Coalesced reports how many reserve requests this process answered in a
// batch behind another request for the same coupon (see couponLines) since
// it started, instead of each asking the database on its own.
func (s *Redemptions) Coalesced() int64 {
	if s.lines == nil {
		return 0
	}
	return s.lines.batched.Load()
}
