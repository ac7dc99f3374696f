package services

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"coupond/models"
)

// Authenticate resolves a bearer token to its actor. An unknown, revoked or
// expired token is UNAUTHENTICATED; a revocation on another replica is seen
// within the cache TTL, an expiry on time. Each use is recorded in the
// background, at most once per UsageInterval per token.
//
// Requests that miss the cache at once share one database lookup of the
// token; and a cached token is looked up again in the background once four
// fifths of its TTL have passed, while the cache still answers. Without
// them, every request of a busy till that came while the entry had just run
// out looked the token up itself, each with two queries queued behind the
// tills' statements, and waited for them.
func (t *Tokens) Authenticate(ctx context.Context, token string) (Actor, error) {
	if !strings.HasPrefix(token, TokenPrefix) || len(token) > 100 {
		return Actor{}, errUnauthenticated
	}
	hash := hashToken(token)
	now := t.now()
	if a, stale, ok := t.cached(hash, now); ok {
		if stale {
			t.lookups.DoChan(hash, func() (any, error) { return t.lookup(ctx, hash) })
		}
		t.noteUse(a.TokenID, now)
		return a, nil
	}
	ch := t.lookups.DoChan(hash, func() (any, error) { return t.lookup(ctx, hash) })
	select {
	case r := <-ch:
		if r.Err != nil {
			return Actor{}, r.Err
		}
		a := r.Val.(Actor)
		t.noteUse(a.TokenID, now)
		return a, nil
	case <-ctx.Done():
		return Actor{}, ctx.Err()
	}
}

// tokenLookupTimeout bounds a token's lookup, which outlives the request
// that started it when others share it.
const tokenLookupTimeout = 10 * time.Second

// lookup reads the token's actor from the database and caches it; a token
// no longer live leaves the cache.
func (t *Tokens) lookup(ctx context.Context, hash string) (Actor, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), tokenLookupTimeout)
	defer cancel()
	now := t.now()
	db := t.db.WithContext(ctx)
	tok, err := models.LiveTokenByHash(db, hash, now)
	if errors.Is(err, gorm.ErrRecordNotFound) {
		t.drop(hash)
		return Actor{}, errUnauthenticated
	}
	if err != nil {
		return Actor{}, fmt.Errorf("authenticate: %w", err)
	}
	a := Actor{MerchantID: tok.MerchantID, TokenID: tok.ID, Role: tok.Role}
	if tok.Role == models.RoleClerk {
		stores, err := models.TokenStoreIDs(db, tok.MerchantID, []int64{tok.ID})
		if err != nil {
			return Actor{}, fmt.Errorf("authenticate: %w", err)
		}
		a.StoreIDs = stores[tok.ID]
	}
	t.remember(hash, a, tok.ExpiresAt, now)
	return a, nil
}

// cached returns the token's cached actor, and whether it is due for a
// lookup ahead of its expiry.
func (t *Tokens) cached(hash string, now time.Time) (a Actor, stale, ok bool) {
	if t.ttl <= 0 {
		return Actor{}, false, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	c, ok := t.cache[hash]
	if !ok || !now.Before(c.expires) {
		return Actor{}, false, false
	}
	return c.actor, !c.refresh.IsZero() && !now.Before(c.refresh), true
}

// remember caches an actor for the TTL, or until its token expires if that
// is sooner. An entry that lasts the whole TTL is due for a lookup ahead of
// its expiry after four fifths of it; one that ends with its token is not.
func (t *Tokens) remember(hash string, a Actor, tokenExpires *time.Time, now time.Time) {
	if t.ttl <= 0 {
		return
	}
	until := now.Add(t.ttl)
	refresh := now.Add(t.ttl * 4 / 5)
	if tokenExpires != nil && tokenExpires.Before(until) {
		until, refresh = *tokenExpires, time.Time{}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cache == nil || len(t.cache) >= maxCachedTokens {
		t.cache = make(map[string]cachedActor)
	}
	t.cache[hash] = cachedActor{actor: a, expires: until, refresh: refresh}
}

// drop removes a token's entry from the cache.
func (t *Tokens) drop(hash string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.cache, hash)
}

func (t *Tokens) forget(tokenID int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for h, c := range t.cache {
		if c.actor.TokenID == tokenID {
			delete(t.cache, h)
		}
	}
}

// noteUse records a token's use at now in the background, unless this
// process recorded one less than UsageInterval ago: authentication never
// waits for the write, and a token used a thousand times a second costs one
// small UPDATE a minute per replica (the UPDATE's own condition skips it when
// another replica wrote within the interval).
func (t *Tokens) noteUse(tokenID int64, now time.Time) {
	t.mu.Lock()
	if last, ok := t.used[tokenID]; ok && now.Sub(last) < UsageInterval && !now.Before(last) {
		t.mu.Unlock()
		return
	}
	select {
	case t.usageWriters <- struct{}{}:
	default:
		t.mu.Unlock()
		return
	}
	if t.used == nil || len(t.used) >= maxCachedTokens {
		t.used = make(map[int64]time.Time)
	}
	t.used[tokenID] = now
	t.mu.Unlock()
	go func() {
		defer func() { <-t.usageWriters }()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := models.TouchToken(t.db.WithContext(ctx), tokenID, now, now.Add(-UsageInterval)); err != nil {
			t.log.Warn("record token use", "token", tokenID, "err", err)
		}
	}()
}
