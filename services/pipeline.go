package services

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"gorm.io/gorm"

	"coupond/models"
)

// pipeline runs the one-statement redemptions (models.RedeemOnce) of
// concurrent requests on PostgreSQL together, a few at a time: the requests
// that queued up while the database was busy go out as one statement over
// all of them and commit as one transaction (models.RedeemOnceAll).
//
// PostgreSQL spends much of a one-statement transaction outside the
// statement: the round trip, the transaction's start and its commit record,
// and the wait for the WAL flush. In pgbench on a 2-core machine, the
// application's statement ran about twice as many redemptions a second in
// pipelines of 8 from 2 connections as one per transaction from 8. Nothing
// is given up for it:
//   - the batch's statement is RedeemOnce's over the requests' values, with
//     its conditional update row by row, and requests of one coupon go into
//     statements of their own, one after the other, each seeing the work of
//     those before it, as transactions one after the other would;
//   - no request is answered before the commit that holds its work returned,
//     so an answered redemption is as durable as one committed alone;
//   - a batch is all or nothing: when it fails (a repeated request id, a
//     deadlock with another replica's batch, a lost connection), every
//     request of it runs alone, as it would have without the pipeline, and a
//     request id the batch did commit is then a repeated one.
//
// Requests of one coupon do not meet in a batch: couponLines runs them one
// after the other before they get here.
//
// There is no background goroutine. At most lanes batches are in flight; a
// request that finds a lane free leads a batch at once (alone when nobody is
// waiting, so a quiet server answers as before), the others queue. A leader
// that finishes hands the next batch to the oldest request waiting, so no
// request serves others for longer than one batch.
type pipeline struct {
	db    *gorm.DB
	gate  *gate
	tills *tills
	// lanes bounds the batches in flight, max the statements in one.
	lanes, max int

	mu    sync.Mutex
	queue []*onceReq
	busy  int
}

// onceReq is one request's redemption, waiting for or running in a batch.
type onceReq struct {
	ctx  context.Context
	call models.OnceCall
	err  error
	// wake tells a queued request what to do: read its answer, run alone,
	// or lead batch.
	wake  chan wakeUp
	batch []*onceReq
}

type wakeUp int

const (
	wakeAnswered wakeUp = iota
	wakeAlone
	wakeLead
)

// Pipeline sizes, measured on 2 cores (docs/TUNING.md): in pgbench, 2
// connections with 8 statements each ran the most redemptions a second; in
// the server, batches of up to 16 held higher rates than of up to 8 (at
// overload the lanes, not the CPU, ran out), 32 no higher, and 4 lanes cost
// PostgreSQL more CPU per redemption than 2.
const (
	pipelineLanes = 2
	pipelineMax   = 16
)

func newPipeline(db *gorm.DB, g *gate, t *tills) *pipeline {
	return &pipeline{db: db, gate: g, tills: t, lanes: pipelineLanes, max: pipelineMax}
}

// redeem runs models.RedeemOnce for the call, in a batch with concurrent
// callers when they queue up, and returns what RedeemOnce would have. It
// returns only after the commit that holds the call's work.
func (p *pipeline) redeem(ctx context.Context, a models.ReserveArgs, flow *models.RedemptionFlow, actor string) (bool, error) {
	r := &onceReq{ctx: ctx, call: models.OnceCall{Args: a, Flow: flow, Actor: actor}, wake: make(chan wakeUp, 1)}
	p.mu.Lock()
	if p.busy < p.lanes {
		// A lane is free, so nobody is queued: lead alone.
		p.busy++
		p.mu.Unlock()
		p.lead([]*onceReq{r})
		return r.call.Taken, r.err
	}
	behind := len(p.queue) >= p.max
	p.queue = append(p.queue, r)
	p.mu.Unlock()
	if behind {
		// More wait than the next batch takes: the requests come faster
		// than the lanes serve them.
		p.tills.waited()
	}
	var w wakeUp
	select {
	case w = <-r.wake:
	case <-ctx.Done():
		if p.leave(r) {
			return false, ctx.Err()
		}
		w = <-r.wake
	}
	switch w {
	case wakeLead:
		p.lead(r.batch)
	case wakeAlone:
		r.err = p.alone(r)
	}
	return r.call.Taken, r.err
}

// take removes the next batch's requests (after a leader's own) from the
// queue. p.mu is held.
func (p *pipeline) take() []*onceReq {
	n := min(len(p.queue), p.max-1)
	next := append([]*onceReq(nil), p.queue[:n]...)
	p.queue = append(p.queue[:0], p.queue[n:]...)
	return next
}

// leave removes r from the queue, reporting false when a leader had already
// taken it.
func (p *pipeline) leave(r *onceReq) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, q := range p.queue {
		if q == r {
			p.queue = append(p.queue[:i], p.queue[i+1:]...)
			return true
		}
	}
	return false
}

// lead runs batch, whose first request is the caller's own, answers the
// others, and hands the lane on: to the oldest request waiting, with the
// next batch, or back when nobody waits.
func (p *pipeline) lead(batch []*onceReq) {
	p.run(batch)
	p.mu.Lock()
	if len(p.queue) == 0 {
		p.busy--
		p.mu.Unlock()
		return
	}
	next := p.queue[0]
	p.queue = p.queue[1:]
	next.batch = append([]*onceReq{next}, p.take()...)
	p.mu.Unlock()
	next.wake <- wakeLead
}

// run runs batch behind the gate and settles every request of it: answered,
// or, when the batch failed, woken to run alone. The leader (batch[0]) runs
// alone itself.
func (p *pipeline) run(batch []*onceReq) {
	leader := batch[0]
	live := batch[:0:0]
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			// Like a statement whose request ended before it was sent.
			r.err = err
			if r != leader {
				r.wake <- wakeAnswered
			}
			continue
		}
		live = append(live, r)
	}
	if len(live) == 0 {
		return
	}
	if len(live) == 1 {
		r := live[0]
		r.err = p.alone(r)
		if r != leader {
			r.wake <- wakeAnswered
		}
		return
	}
	// The statements lock their coupons in one order, whoever leads, so two
	// batches (of two replicas) never wait for each other in a cycle.
	slices.SortFunc(live, func(a, b *onceReq) int {
		return cmp.Or(cmp.Compare(a.call.Args.MerchantID, b.call.Args.MerchantID), strings.Compare(a.call.Args.Code, b.call.Args.Code))
	})
	calls := make([]*models.OnceCall, len(live))
	for i, r := range live {
		calls[i] = &r.call
	}
	ctx, cancel := batchContext(live)
	defer cancel()
	err := p.gate.run(ctx, func() error { return models.RedeemOnceAll(p.db.WithContext(ctx), calls) })
	for _, r := range live {
		switch {
		case err == nil && r != leader:
			r.wake <- wakeAnswered
		case err != nil && r != leader:
			r.wake <- wakeAlone
		case err != nil:
			r.err = p.alone(r)
		}
	}
}

// alone runs r's statement by itself behind the gate, as RedeemOnce.
func (p *pipeline) alone(r *onceReq) error {
	return p.gate.run(r.ctx, func() error {
		var err error
		r.call.Taken, err = models.RedeemOnce(p.db.WithContext(r.ctx), r.call.Args, r.call.Flow, r.call.Actor)
		return err
	})
}

// batchContext is the context a batch runs in: no request's cancellation
// ends it (the others' work is in it too), but it ends when the last of
// the requests' deadlines passes.
func batchContext(batch []*onceReq) (context.Context, context.CancelFunc) {
	ctx := context.WithoutCancel(batch[0].ctx)
	var last time.Time
	for _, r := range batch {
		d, ok := r.ctx.Deadline()
		if !ok {
			return context.WithCancel(ctx)
		}
		if d.After(last) {
			last = d
		}
	}
	return context.WithDeadline(ctx, last)
}
