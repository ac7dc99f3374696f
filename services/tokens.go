package services

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"gorm.io/gorm"

	"coupond/models"
)

// Merchants manages tenants. It has no actor: merchants are created from the CLI.
type Merchants struct {
	db  *gorm.DB
	now func() time.Time
}

var merchantCodePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`)

// DefaultTimezone is the time zone of a merchant created without one.
const DefaultTimezone = "Asia/Shanghai"

// Create adds a merchant. The code is 1 to 32 lower-case letters, digits, _ or -;
// timezone is an IANA name (default Asia/Shanghai). A taken code is a CONFLICT.
func (m *Merchants) Create(ctx context.Context, code, name, timezone string) (*models.Merchant, error) {
	if !merchantCodePattern.MatchString(code) {
		return nil, invalidf("merchant code must be 1 to 32 lower-case letters, digits, _ or -")
	}
	if strings.TrimSpace(name) == "" {
		name = code
	}
	if err := checkText("name", name, 100, false); err != nil {
		return nil, err
	}
	if timezone == "" {
		timezone = DefaultTimezone
	}
	if _, err := time.LoadLocation(timezone); err != nil {
		return nil, invalidf("unknown time zone %q", timezone)
	}
	mc := &models.Merchant{Code: code, Name: strings.TrimSpace(name), Timezone: timezone, CreatedAt: m.now()}
	err := models.InsertMerchant(m.db.WithContext(ctx), mc)
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return nil, conflictf("merchant %s already exists", code)
	}
	if err != nil {
		return nil, fmt.Errorf("create merchant: %w", err)
	}
	return mc, nil
}

// ByCode returns a merchant by code, or NOT_FOUND.
func (m *Merchants) ByCode(ctx context.Context, code string) (*models.Merchant, error) {
	var mc models.Merchant
	err := m.db.WithContext(ctx).Where("code = ?", code).Take(&mc).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, notFoundf("merchant %s not found", code)
	}
	return &mc, err
}

// Current returns the actor's merchant.
func (m *Merchants) Current(ctx context.Context, actor Actor) (*models.Merchant, error) {
	if actor.MerchantID == 0 {
		return nil, errUnauthenticated
	}
	var mc models.Merchant
	err := m.db.WithContext(ctx).Take(&mc, actor.MerchantID).Error
	return &mc, err
}

// Tokens issues and checks API tokens.
type Tokens struct {
	db    *gorm.DB
	now   func() time.Time
	audit *Audit
	// ttl is how long an authenticated token is trusted without asking the
	// database again; a revocation takes effect on other replicas within it.
	ttl   time.Duration
	mu    sync.Mutex
	cache map[string]cachedActor
}

type cachedActor struct {
	actor   Actor
	expires time.Time
}

// maxCachedTokens bounds the token cache; past it the cache starts over.
const maxCachedTokens = 10_000

// TokenPrefix starts every API token, so leaked tokens are easy to grep for.
const TokenPrefix = "cpd_"

// CreateTokenInput describes a new API token.
type CreateTokenInput struct {
	MerchantID int64
	Role       models.Role
	// StoreCodes binds a CLERK token to stores; required for clerks and
	// refused for other roles.
	StoreCodes []string
	Name       string
}

// Create makes a token and returns it in plain text, the only time it is ever
// visible: only its SHA-256 hash is stored.
func (t *Tokens) Create(ctx context.Context, in CreateTokenInput) (string, *models.APIToken, error) {
	switch in.Role {
	case models.RoleAdmin, models.RoleFinance:
		if len(in.StoreCodes) > 0 {
			return "", nil, invalidf("only CLERK tokens are bound to stores")
		}
	case models.RoleClerk:
		if len(in.StoreCodes) == 0 {
			return "", nil, invalidf("a CLERK token needs at least one store")
		}
	default:
		return "", nil, invalidf("role must be ADMIN, CLERK or FINANCE")
	}
	raw := make([]byte, 20)
	_, _ = rand.Read(raw)
	plain := TokenPrefix + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(raw))
	if in.Name == "" {
		in.Name = strings.ToLower(string(in.Role))
	}
	if err := checkText("name", in.Name, 100, false); err != nil {
		return "", nil, err
	}
	tok := &models.APIToken{MerchantID: in.MerchantID, Name: in.Name, Role: in.Role, TokenHash: hashToken(plain), CreatedAt: t.now()}
	err := t.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		storeIDs := make([]int64, 0, len(in.StoreCodes))
		for _, code := range in.StoreCodes {
			st, err := models.StoreByCode(tx, in.MerchantID, code)
			if errors.Is(err, gorm.ErrRecordNotFound) {
				return notFoundf("store %s not found", code)
			}
			if err != nil {
				return err
			}
			storeIDs = append(storeIDs, st.ID)
		}
		if err := models.InsertToken(tx, tok, storeIDs); err != nil {
			return err
		}
		return t.audit.record(tx, SystemActor(in.MerchantID), "token.create", fmt.Sprintf("token:%d", tok.ID),
			fmt.Sprintf("role=%s stores=%v", in.Role, in.StoreCodes), nil)
	})
	if err != nil {
		return "", nil, fmt.Errorf("create token: %w", err)
	}
	return plain, tok, nil
}

// Authenticate resolves a bearer token to its actor. An unknown or revoked
// token is UNAUTHENTICATED.
func (t *Tokens) Authenticate(ctx context.Context, token string) (Actor, error) {
	if !strings.HasPrefix(token, TokenPrefix) || len(token) > 100 {
		return Actor{}, errUnauthenticated
	}
	hash := hashToken(token)
	now := t.now()
	if a, ok := t.cached(hash, now); ok {
		return a, nil
	}
	db := t.db.WithContext(ctx)
	var tok models.APIToken
	err := db.Where("token_hash = ? AND revoked_at IS NULL", hash).Take(&tok).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return Actor{}, errUnauthenticated
	}
	if err != nil {
		return Actor{}, fmt.Errorf("authenticate: %w", err)
	}
	a := Actor{MerchantID: tok.MerchantID, TokenID: tok.ID, Role: tok.Role}
	if tok.Role == models.RoleClerk {
		if err := db.Model(&models.APITokenStore{}).Where("token_id = ?", tok.ID).Order("store_id").
			Pluck("store_id", &a.StoreIDs).Error; err != nil {
			return Actor{}, fmt.Errorf("authenticate: %w", err)
		}
	}
	t.remember(hash, a, now)
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

func (t *Tokens) remember(hash string, a Actor, now time.Time) {
	if t.ttl <= 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cache == nil || len(t.cache) >= maxCachedTokens {
		t.cache = make(map[string]cachedActor)
	}
	t.cache[hash] = cachedActor{actor: a, expires: now.Add(t.ttl)}
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

// Revoke revokes a token of the actor's merchant; administrators only.
func (t *Tokens) Revoke(ctx context.Context, actor Actor, tokenID int64) error {
	if err := actor.require(models.RoleAdmin); err != nil {
		return err
	}
	return t.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		ok, err := models.RevokeToken(tx, actor.MerchantID, tokenID, t.now())
		if err != nil {
			return err
		}
		if !ok {
			return notFoundf("token %d not found", tokenID)
		}
		t.forget(tokenID)
		return t.audit.record(tx, actor, "token.revoke", fmt.Sprintf("token:%d", tokenID), "", nil)
	})
}
