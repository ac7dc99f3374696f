package services

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"coupond/errcode"
	"coupond/models"
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
	// RedeemsPerCustomer and FailedLookupsPerCustomer limit the requests an
	// APP token relays for one customerRef, before the token's own limits
	// are charged: set below the token's, one abusive customer cannot use up
	// the token that serves every other customer.
	RedeemsPerCustomer       RateLimit
	FailedLookupsPerCustomer RateLimit
}

// customerKey is the key of a customer's buckets: customer references are
// the mini-program's, so they are scoped by its token.
type customerKey struct {
	tokenID     int64
	customerRef string
}

// maxLimiterKeys bounds a limiter's map. Token and store ids are bounded by
// their tables; customer references are not, so past this many keys the
// buckets that are full again (their owner has been quiet for a while) are
// dropped, and if that is not enough, all of them.
const maxLimiterKeys = 100_000

// limiter keeps one token bucket per key.
type limiter[K comparable] struct {
	limit RateLimit
	now   func() time.Time
	mu    sync.Mutex
	byKey map[K]*rate.Limiter
}

func newLimiter[K comparable](l RateLimit, now func() time.Time) *limiter[K] {
	return &limiter[K]{limit: l, now: now, byKey: make(map[K]*rate.Limiter)}
}

func (l *limiter[K]) bucket(key K) *rate.Limiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.byKey[key]
	if !ok {
		if len(l.byKey) >= maxLimiterKeys {
			l.sweep()
		}
		b = rate.NewLimiter(rate.Limit(l.limit.PerSecond), max(l.limit.Burst, 1))
		l.byKey[key] = b
	}
	return b
}

// sweep drops the buckets that are full, which a new bucket would equal,
// and clears the map if they are still too many.
func (l *limiter[K]) sweep() {
	now := l.now()
	for k, b := range l.byKey {
		if b.TokensAt(now) >= float64(b.Burst()) {
			delete(l.byKey, k)
		}
	}
	if len(l.byKey) >= maxLimiterKeys {
		clear(l.byKey)
	}
}

// take spends one token of key's bucket, or returns a RATE_LIMITED error
// saying when to retry.
func (l *limiter[K]) take(key K) error {
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
func (l *limiter[K]) allowed(key K) error {
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
	perToken, perStore, failedLookups     *limiter[int64]
	perCustomer, failedLookupsPerCustomer *limiter[customerKey]
}

func newRateLimits(l Limits, now func() time.Time) *rateLimits {
	return &rateLimits{perToken: newLimiter[int64](l.RedeemsPerToken, now), perStore: newLimiter[int64](l.RedeemsPerStore, now),
		failedLookups: newLimiter[int64](l.FailedLookupsPerToken, now),
		perCustomer:   newLimiter[customerKey](l.RedeemsPerCustomer, now), failedLookupsPerCustomer: newLimiter[customerKey](l.FailedLookupsPerCustomer, now)}
}

// redeem charges one redemption request of actor at storeID for customerRef.
// The system actor (CLI, demo seeding, jobs) is not limited. A request an
// APP token relays is charged to its customer first, so a customer over its
// limit is refused without spending the token's.
func (r *rateLimits) redeem(actor Actor, storeID int64, customerRef string) error {
	if actor.TokenID == 0 {
		return nil
	}
	if err := r.lookupsAllowed(actor, customerRef); err != nil {
		return err
	}
	if actor.Role == models.RoleApp {
		if err := r.perCustomer.take(customerKey{actor.TokenID, customerRef}); err != nil {
			return err
		}
	}
	if err := r.perToken.take(actor.TokenID); err != nil {
		return err
	}
	if storeID != 0 {
		return r.perStore.take(storeID)
	}
	return nil
}

// lookupsAllowed fails with RATE_LIMITED when actor, or for an APP token the
// customer it relays, has had too many unknown codes lately.
func (r *rateLimits) lookupsAllowed(actor Actor, customerRef string) error {
	if actor.TokenID == 0 {
		return nil
	}
	if actor.Role == models.RoleApp {
		if err := r.failedLookupsPerCustomer.allowed(customerKey{actor.TokenID, customerRef}); err != nil {
			return err
		}
	}
	return r.failedLookups.allowed(actor.TokenID)
}

// failedLookup charges an unknown-code answer to actor and, for an APP
// token, to the customer it relays.
func (r *rateLimits) failedLookup(actor Actor, customerRef string) {
	if actor.Role == models.RoleApp {
		_ = r.failedLookupsPerCustomer.take(customerKey{actor.TokenID, customerRef})
	}
	_ = r.failedLookups.take(actor.TokenID)
}
