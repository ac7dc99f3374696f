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
func (t *Tokens) Authenticate(ctx context.Context, token string) (Actor, error) {
	if !strings.HasPrefix(token, TokenPrefix) || len(token) > 100 {
		return Actor{}, errUnauthenticated
	}
	hash := hashToken(token)
	now := t.now()
	if a, ok := t.cached(hash, now); ok {
		t.noteUse(a.TokenID, now)
		return a, nil
	}
	db := t.db.WithContext(ctx)
	tok, err := models.LiveTokenByHash(db, hash, now)
	if errors.Is(err, gorm.ErrRecordNotFound) {
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
	t.noteUse(a.TokenID, now)
	return a, nil
}

func (t *Tokens) cached(hash string, now time.Time) (Actor, bool) {
	if t.ttl <= 0 {
		return Actor{}, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	c, ok := t.cache[hash]
	if !ok || !now.Before(c.expires) {
		return Actor{}, false
	}
	return c.actor, true
}

// remember caches an actor for the TTL, or until its token expires if that
// is sooner.
func (t *Tokens) remember(hash string, a Actor, tokenExpires *time.Time, now time.Time) {
	if t.ttl <= 0 {
		return
	}
	until := now.Add(t.ttl)
	if tokenExpires != nil && tokenExpires.Before(until) {
		until = *tokenExpires
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cache == nil || len(t.cache) >= maxCachedTokens {
		t.cache = make(map[string]cachedActor)
	}
	t.cache[hash] = cachedActor{actor: a, expires: until}
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
