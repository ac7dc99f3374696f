package services

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"coupond/models"
)

// front stands between an admitted redeem or reserve request and the
// database. It is chosen once, in newRedemptions: noFront when coupond runs
// without Redis, redisFront with it. Either way the database decides every
// answer; a front can only spare it work.
type front interface {
	// claim either answers req at once, as a duplicate of a request id that
	// another request is running or has finished (answered), or lets req run;
	// a request that runs calls done with its answer when it has one.
	claim(ctx context.Context, req *request) (answer taken, answered bool, done func(*models.RedemptionFlow, error))
	// take takes req's coupon with t, in the coupon's line of this process.
	take(ctx context.Context, req *request, t taker) taken
	// stats counts what the front did.
	stats() RedisStats
}

// RedisStats counts what the Redis front did since the process started.
type RedisStats struct {
	// Hits: a request answered with the help of Redis: a duplicate request
	// id that read its first flow instead of running, or a scan of a coupon
	// another replica marked taken for good.
	Hits int64
	// Misses: a look-up that found nothing to use (a fresh request id, an
	// unmarked coupon, a duplicate told to ask the database).
	Misses int64
	// Waits: requests that waited for another request: a duplicate for the
	// first request of its id, or a take for another replica's take of the
	// same coupon.
	Waits int64
	// Errors: Redis calls that failed.
	Errors int64
	// Fallbacks: steps of a request that went on as if Redis were off: after
	// an error, a cached answer or marker the database contradicted, or a
	// wait that ran out. With Redis down a request counts several.
	Fallbacks int64
}

// noFront is the front without Redis: every request runs, in its line.
type noFront struct{ lines *couponLines }

func (f noFront) claim(context.Context, *request) (taken, bool, func(*models.RedemptionFlow, error)) {
	return taken{}, false, func(*models.RedemptionFlow, error) {}
}

func (f noFront) take(ctx context.Context, req *request, t taker) taken {
	return f.lines.take(ctx, req, t)
}

func (f noFront) stats() RedisStats { return RedisStats{} }

// The Redis keys, all per merchant under coupond:{merchant}: and all with
// expiries. Nothing in them is needed to answer correctly.
const (
	// Values of a request key: the first request is running, or the
	// duplicates should ask the database (the first ended without a final
	// answer). Otherwise the key holds a cachedAnswer.
	requestRunning = "run"
	requestAskDB   = "db"
	// answerTTL is how long a final answer is kept for replays.
	answerTTL = 10 * time.Minute
	// markerTTL is how long a coupon stays marked taken for good.
	markerTTL = time.Minute
	// takeLockTTL is the per-coupon lock's expiry: one replica at a time
	// sends a take of a coupon to the database, and the others wait at most
	// this long before sending theirs anyway.
	takeLockTTL = 300 * time.Millisecond
)

func requestKey(merchantID int64, op models.Operation, requestID string) string {
	return fmt.Sprintf("coupond:%d:req:%s:%s", merchantID, op, requestID)
}

func takenKey(merchantID int64, code string) string {
	return fmt.Sprintf("coupond:%d:taken:%s", merchantID, code)
}

func takeLockKey(merchantID int64, code string) string {
	return fmt.Sprintf("coupond:%d:take:%s", merchantID, code)
}

// cachedAnswer is the final answer of a request id, enough to recognise its
// flow in the database.
type cachedAnswer struct {
	RedeemNo    string            `json:"redeemNo"`
	Status      models.FlowStatus `json:"status"`
	Fingerprint string            `json:"fp"`
}

// redisFront is the front with Redis, the seed's first layer of
// idempotency, shared by every replica:
//
//   - the first request of a request id sets its key (SET NX, expiring a
//     little after the longest redemption); a duplicate arriving at any
//     replica while it runs waits for it instead of touching the database,
//     and once it has finished reads the first flow by request id: the
//     cached answer only says the flow is there to be read;
//   - a coupon seen taken for good is marked for a minute, so every replica
//     rejects scans of it in a batch (after one read confirming it), and a
//     short per-coupon lock lets one replica at a time send a take of a
//     coupon to the database.
//
// Every Redis error is logged and counted, and the request goes on as if
// Redis were off; no expiry or value in Redis decides an answer.
type redisFront struct {
	s     *Redemptions
	cache Cache
	// lockTTL outlives the longest redemption: hold timeout plus fulfil
	// timeout. maxWait bounds a duplicate's wait for the first request.
	lockTTL, maxWait time.Duration
	n                struct{ hits, misses, waits, errors, fallbacks atomic.Int64 }
}

func newRedisFront(s *Redemptions, c Cache, holdTimeout, fulfilTimeout time.Duration) *redisFront {
	return &redisFront{s: s, cache: c, lockTTL: holdTimeout + fulfilTimeout + 5*time.Second, maxWait: fulfilTimeout + 5*time.Second}
}

func (f *redisFront) stats() RedisStats {
	return RedisStats{Hits: f.n.hits.Load(), Misses: f.n.misses.Load(), Waits: f.n.waits.Load(),
		Errors: f.n.errors.Load(), Fallbacks: f.n.fallbacks.Load()}
}

// failed logs and counts a Redis error; the caller goes on without Redis.
// An error in a step that decides how the request goes on (claim, wait,
// marker, lock) is also a fallback; failing to publish what a finished
// request learned is not.
func (f *redisFront) failed(ctx context.Context, what string, err error, fallback bool) {
	f.n.errors.Add(1)
	if fallback {
		f.n.fallbacks.Add(1)
	}
	f.s.hooks.log.WarnContext(ctx, "redis: "+what+", going on without it", "err", err)
}

func runs() (taken, bool, func(*models.RedemptionFlow, error)) {
	return taken{}, false, func(*models.RedemptionFlow, error) {}
}

func (f *redisFront) claim(ctx context.Context, req *request) (taken, bool, func(*models.RedemptionFlow, error)) {
	key := requestKey(req.actor.MerchantID, req.op, req.in.RequestID)
	first, err := f.cache.SetNX(ctx, key, requestRunning, f.lockTTL)
	if err != nil {
		f.failed(ctx, "claim request id", err, true)
		return runs()
	}
	if first {
		f.n.misses.Add(1)
		return taken{}, false, func(flow *models.RedemptionFlow, err error) { f.finish(ctx, req, key, flow, err) }
	}
	return f.await(ctx, req, key)
}

// await waits while the first request of req's id runs, polling its key:
// a final answer there sends req to read its flow from the database; a key
// that expired or says to ask the database lets req run, and so does a wait
// past maxWait (the first request's replica may have died).
func (f *redisFront) await(ctx context.Context, req *request, key string) (taken, bool, func(*models.RedemptionFlow, error)) {
	deadline := time.Now().Add(f.maxWait)
	pause := 2 * time.Millisecond
	for waited := false; ; waited = true {
		v, ok, err := f.cache.Get(ctx, key)
		switch {
		case err != nil:
			f.failed(ctx, "read request id", err, true)
			return runs()
		case !ok || v == requestAskDB:
			f.n.misses.Add(1)
			return runs()
		case v != requestRunning:
			return f.replay(ctx, req, v)
		}
		if !waited {
			f.n.waits.Add(1)
		}
		if time.Now().After(deadline) {
			f.n.fallbacks.Add(1)
			return runs()
		}
		select {
		case <-ctx.Done():
			return taken{err: fmt.Errorf("wait for request %s: %w", req.in.RequestID, ctx.Err())}, true, nil
		case <-time.After(pause):
		}
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// replay answers a duplicate from the database, told by the cached answer
// v that its request id has a final flow. The database's flow is the
// answer; a cached answer it does not confirm is logged, and when the
// database has no flow for the id the request runs.
func (f *redisFront) replay(ctx context.Context, req *request, v string) (taken, bool, func(*models.RedemptionFlow, error)) {
	var a cachedAnswer
	if err := json.Unmarshal([]byte(v), &a); err != nil {
		f.n.fallbacks.Add(1)
		f.s.hooks.log.WarnContext(ctx, "redis: unreadable cached answer, asking the database", "request_id", req.in.RequestID)
		return runs()
	}
	prior, err := models.FlowByRequest(f.s.db.WithContext(ctx), req.actor.MerchantID, req.op, req.in.RequestID)
	switch {
	case err != nil:
		return taken{err: err}, true, nil
	case prior == nil:
		f.n.fallbacks.Add(1)
		f.s.hooks.log.WarnContext(ctx, "redis: cached answer of an unknown request, running it", "request_id", req.in.RequestID, "redeem_no", a.RedeemNo)
		return runs()
	case prior.RedeemNo != a.RedeemNo || prior.Status != a.Status || prior.Fingerprint != a.Fingerprint:
		f.n.fallbacks.Add(1)
		f.s.hooks.log.WarnContext(ctx, "redis: cached answer contradicted by the database, which wins", "request_id", req.in.RequestID,
			"cached_redeem_no", a.RedeemNo, "cached_status", a.Status, "redeem_no", prior.RedeemNo, "status", prior.Status)
	default:
		f.n.hits.Add(1)
	}
	return replay(prior, req.fp), true, nil
}

// finish publishes the first request's answer under its key: a final flow
// for replays, anything else (PROCESSING, an error) as "ask the database".
// A success that confirmed a coupon's last use also marks it taken for good:
// on the two-transaction path the take itself saw it only REDEEMING. The client may be gone; the
// answer is published all the same.
func (f *redisFront) finish(ctx context.Context, req *request, key string, flow *models.RedemptionFlow, err error) {
	ctx = context.WithoutCancel(ctx)
	v, ttl := requestAskDB, f.lockTTL
	if err == nil && flow != nil && final(flow.Status) {
		b, _ := json.Marshal(cachedAnswer{RedeemNo: flow.RedeemNo, Status: flow.Status, Fingerprint: flow.Fingerprint})
		v, ttl = string(b), answerTTL
	}
	if err := f.cache.Set(ctx, key, v, ttl); err != nil {
		f.failed(ctx, "publish answer", err, false)
	}
	if err == nil && flow != nil && flow.Status == models.FlowSucceeded && models.TakenForGood(flow.CouponAfter) {
		f.mark(ctx, req, flow.CouponAfter)
	}
}

// mark marks req's coupon taken for good, seen in status st.
func (f *redisFront) mark(ctx context.Context, req *request, st models.CouponStatus) {
	if err := f.cache.Set(ctx, takenKey(req.actor.MerchantID, req.code), string(st), markerTTL); err != nil {
		f.failed(ctx, "mark coupon taken", err, false)
	}
}

// final reports whether a flow in status s never changes again.
func final(s models.FlowStatus) bool {
	return s == models.FlowSucceeded || s == models.FlowRejected || s == models.FlowReleased
}

func (f *redisFront) take(ctx context.Context, req *request, t taker) taken {
	return f.s.lines.take(ctx, req, hotTake{f: f, inner: t})
}

// hotTake is the take of the head of a coupon's line with Redis: a coupon
// marked taken for good is rejected without a take, and takes of one coupon
// from several replicas go to the database one at a time.
type hotTake struct {
	f     *redisFront
	inner taker
}

func (h hotTake) take(ctx context.Context, req *request) taken {
	f := h.f
	if f.marked(ctx, req) {
		return h.rejectMarked(ctx, req)
	}
	lock := takeLockKey(req.actor.MerchantID, req.code)
	token := lockToken()
	won, err := f.cache.SetNX(ctx, lock, token, takeLockTTL)
	if err != nil {
		f.failed(ctx, "lock coupon", err, true)
	}
	if err == nil && !won {
		// Another replica is taking this coupon: wait for the marker it may
		// leave, or the lock, or its expiry, then take anyway.
		f.n.waits.Add(1)
		until := time.Now().Add(takeLockTTL)
		for !won {
			if time.Now().After(until) {
				f.n.fallbacks.Add(1)
				break
			}
			select {
			case <-ctx.Done():
				return taken{err: ctx.Err()}
			case <-time.After(5 * time.Millisecond):
			}
			if f.marked(ctx, req) {
				return h.rejectMarked(ctx, req)
			}
			if won, err = f.cache.SetNX(ctx, lock, token, takeLockTTL); err != nil {
				f.failed(ctx, "lock coupon", err, true)
				break
			}
		}
	}
	out := h.inner.take(ctx, req)
	if news := newsOf(out); news.taken != nil {
		f.mark(context.WithoutCancel(ctx), req, news.taken.status)
	}
	if won {
		if err := f.cache.DelIf(context.WithoutCancel(ctx), lock, token); err != nil {
			f.failed(ctx, "unlock coupon", err, false)
		}
	}
	return out
}

// marked reports whether req's coupon is marked taken for good.
func (f *redisFront) marked(ctx context.Context, req *request) bool {
	_, ok, err := f.cache.Get(ctx, takenKey(req.actor.MerchantID, req.code))
	if err != nil {
		f.failed(ctx, "read coupon marker", err, true)
		return false
	}
	return ok
}

// rejectMarked rejects req for a coupon marked taken for good, once one read
// of the coupon confirms it, as a batch of one of its line: the coupon as
// seen tells the line, which rejects the requests behind req in batches. A
// marker the database does not confirm is ignored and req takes as usual.
func (h hotTake) rejectMarked(ctx context.Context, req *request) taken {
	f := h.f
	c, err := models.CouponByCode(f.s.db.WithContext(ctx), req.actor.MerchantID, req.code)
	if err != nil || !models.TakenForGood(c.Status) {
		f.n.fallbacks.Add(1)
		return h.inner.take(ctx, req)
	}
	f.n.hits.Add(1)
	out := f.s.rejectTaken([]*lineRequest{{ctx: ctx, req: req}}, takenCoupon{id: c.ID, status: c.Status})
	out.seen = *c
	if f.s.lines != nil {
		f.s.lines.batched.Add(1)
	}
	return out
}

func lockToken() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
