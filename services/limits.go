package services

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"coupond/errcode"
)

// RateLimit is a token bucket: PerSecond steady rate, Burst at once. The zero
// value means no limit.
type RateLimit struct {
	PerSecond float64
	Burst     int
}

// Limits bounds what one caller can do, against scripts and stolen tokens.
// Zero fields impose no limit.
type Limits struct {
	// RedeemsPerToken limits redemption requests (redeem, reserve, confirm,
	// cancel, refund) of one token.
	RedeemsPerToken RateLimit
	// RedeemsPerStore limits redemption requests at one store, whoever sends them.
	RedeemsPerStore RateLimit
	// FailedLookupsPerToken limits unknown-code answers to one token, so codes
	// cannot be guessed by trying them.
	FailedLookupsPerToken RateLimit
}

// limiter keeps one token bucket per key. Keys are token and store ids, so the
// map is bounded by the rows of those tables.
type limiter struct {
	limit RateLimit
	now   func() time.Time
	mu    sync.Mutex
	byKey map[int64]*rate.Limiter
}

func newLimiter(l RateLimit, now func() time.Time) *limiter {
	return &limiter{limit: l, now: now, byKey: make(map[int64]*rate.Limiter)}
}

func (l *limiter) bucket(key int64) *rate.Limiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.byKey[key]
	if !ok {
		b = rate.NewLimiter(rate.Limit(l.limit.PerSecond), max(l.limit.Burst, 1))
		l.byKey[key] = b
	}
	return b
}

// take spends one token of key's bucket, or returns a RATE_LIMITED error
// saying when to retry.
func (l *limiter) take(key int64) error {
	if l == nil || l.limit.PerSecond <= 0 {
		return nil
	}
	now := l.now()
	r := l.bucket(key).ReserveN(now, 1)
	if !r.OK() {
		return &Error{Code: errcode.RateLimited, Message: ErrRateLimited.Error(), Kind: ErrRateLimited}
	}
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return &Error{Code: errcode.RateLimited, Message: ErrRateLimited.Error(), Kind: ErrRateLimited,
			RetryAfter: time.Duration(math.Ceil(d.Seconds())) * time.Second}
	}
	return nil
}

// allowed reports whether key's bucket has a token without spending it.
func (l *limiter) allowed(key int64) error {
	if l == nil || l.limit.PerSecond <= 0 {
		return nil
	}
	now := l.now()
	if l.bucket(key).TokensAt(now) >= 1 {
		return nil
	}
	wait := time.Duration(float64(time.Second) / l.limit.PerSecond)
	return &Error{Code: errcode.RateLimited, Message: "too many unknown coupon codes; retry later", Kind: ErrRateLimited,
		RetryAfter: time.Duration(math.Ceil(wait.Seconds())) * time.Second}
}

// rateLimits applies Limits to an actor's redemption requests.
type rateLimits struct {
	perToken, perStore, failedLookups *limiter
}

func newRateLimits(l Limits, now func() time.Time) *rateLimits {
	return &rateLimits{perToken: newLimiter(l.RedeemsPerToken, now), perStore: newLimiter(l.RedeemsPerStore, now),
		failedLookups: newLimiter(l.FailedLookupsPerToken, now)}
}

// redeem charges one redemption request of actor at storeID. The system actor
// (CLI, demo seeding, jobs) is not limited.
func (r *rateLimits) redeem(actor Actor, storeID int64) error {
	if actor.TokenID == 0 {
		return nil
	}
	if err := r.failedLookups.allowed(actor.TokenID); err != nil {
		return err
	}
	if err := r.perToken.take(actor.TokenID); err != nil {
		return err
	}
	if storeID != 0 {
		return r.perStore.take(storeID)
	}
	return nil
}

// failedLookup charges an unknown-code answer to actor.
func (r *rateLimits) failedLookup(actor Actor) { _ = r.failedLookups.take(actor.TokenID) }
