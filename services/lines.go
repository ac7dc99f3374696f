package services

import (
	"context"
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
	// reject answers a batch of requests for a coupon taken for good, and
	// returns the first one's answer (Redemptions.rejectTaken).
	reject func(batch []*lineRequest, c takenCoupon) taken
}

func newCouponLines(reject func(batch []*lineRequest, c takenCoupon) taken) *couponLines {
	return &couponLines{lines: map[lineKey]*couponLine{}, reject: reject}
}

// take runs t's take of req in the line of req's coupon: the first request
// for the coupon takes at once and heads the line; the requests that come
// while it works wait, and when it has finished they get the answer of their
// request id if the line has seen it, are rejected in a batch if the head saw
// the coupon taken for good, or else each take on their own. A nil line
// takes at once.
func (l *couponLines) take(ctx context.Context, req *request, t taker) taken {
	if l == nil {
		return t.take(ctx, req)
	}
	turn := l.join(lineKey{merchantID: req.actor.MerchantID, code: req.code}, &lineRequest{ctx: ctx, req: req})
	switch {
	case turn.batch != nil:
		defer l.pass(turn.line, lineNews{})
		return l.reject(turn.batch, turn.taken)
	case !turn.run:
		return turn.answer
	case turn.line == nil:
		return t.take(ctx, req)
	}
	var news lineNews
	defer func() { l.pass(turn.line, news) }()
	out := t.take(ctx, req)
	news = newsOf(out)
	return out
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

// lineRequest is a request waiting in a line.
type lineRequest struct {
	ctx  context.Context
	req  *request
	turn chan lineTurn
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
	answer taken
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
		return lineTurn{answer: taken{err: req.ctx.Err()}}
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
				answers = append(answers, lineTurn{answer: replay(f, w.req.fp)})
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
	var tc takenCoupon
	if line.taken != nil {
		tc = *line.taken
	}
	l.mu.Unlock()
	l.batched.Add(int64(len(answered) + len(batch)))
	for i, w := range answered {
		w.turn <- answers[i]
	}
	if batch != nil {
		batch[0].turn <- lineTurn{batch: batch, taken: tc, line: line}
	}
	for _, w := range free {
		w.turn <- lineTurn{run: true}
	}
}

// answerOf is a copy of the final flow of req's request id among answers, or
// nil.
func answerOf(answers []*models.RedemptionFlow, req *lineRequest) *models.RedemptionFlow {
	for _, f := range answers {
		if f.Operation == req.req.op && f.RequestID == req.req.in.RequestID {
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

// newsOf is what a take that answered t learned for the requests behind it:
// its final flow, and whether the coupon is taken for good, as the take saw
// it. A SUCCEEDED flow alone does not say so: a multi-use card with uses left
// is UNUSED again after it.
func newsOf(t taken) lineNews {
	var news lineNews
	if t.err != nil || t.flow == nil {
		return news
	}
	switch t.flow.Status {
	case models.FlowSucceeded, models.FlowRejected, models.FlowReleased:
		news.answer = t.flow
	}
	if t.seen.ID != 0 && models.TakenForGood(t.seen.Status) {
		news.taken = &takenCoupon{id: t.seen.ID, status: t.seen.Status}
	}
	return news
}
