package services

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
	"gorm.io/gorm"

	"coupond/models"
)

// Tokens issues, lists, revokes and checks API tokens.
type Tokens struct {
	db    *gorm.DB
	now   func() time.Time
	audit *Audit
	log   *slog.Logger
	// ttl is how long an authenticated token is trusted without asking the
	// database again; a revocation takes effect on other replicas within it.
	// An expiry takes effect on time: no cache entry outlives its token.
	ttl   time.Duration
	mu    sync.Mutex
	cache map[string]cachedActor
	// lookups shares one lookup of a token among the requests that need
	// it at once (Authenticate).
	lookups singleflight.Group
	// used is when this process last had a token's use recorded, by token id.
	used map[int64]time.Time
	// usageWriters bounds the background writes of last_used_at in flight.
	usageWriters chan struct{}
}

func newTokens(db *gorm.DB, o Options, audit *Audit) *Tokens {
	return &Tokens{db: db, now: o.Now, audit: audit, log: o.Logger, ttl: o.TokenCacheTTL,
		usageWriters: make(chan struct{}, maxUsageWriters)}
}

type cachedActor struct {
	actor   Actor
	expires time.Time
	// refresh is when the token is looked up again ahead of expires (zero:
	// never, the entry ends with its token).
	refresh time.Time
}

// maxCachedTokens bounds the token cache and the record of recent uses; past
// it they start over.
const maxCachedTokens = 10_000

// UsageInterval is how often, at most, a token's last use is written: a
// token's lastUsedAt is exact to about this much. Writing it on every request
// would add a write to every redemption; once a minute per token is noise.
const UsageInterval = time.Minute

// maxUsageWriters bounds the last-use writes in flight; a use that finds them
// all busy is not recorded, and the token's next request tries again.
const maxUsageWriters = 4

// TokenPrefix starts every API token, so leaked tokens are easy to grep for.
const TokenPrefix = "cpd_"

// CreateTokenInput describes a new API token.
type CreateTokenInput struct {
	// MerchantID is the token's merchant for Create; CreateAs takes the
	// actor's.
	MerchantID int64
	Role       models.Role
	// StoreCodes or StoreIDs bind a CLERK token to stores of the merchant;
	// one of them is required for clerks and refused for other roles.
	StoreCodes []string
	StoreIDs   []int64
	// Name labels the token; empty means the role's name.
	Name string
	// ExpiresAt, when set, must be in the future; the token stops
	// authenticating then.
	ExpiresAt *time.Time
	// RequestID, when set, makes the creation idempotent: a repeat with the
	// same parameters returns the token it created, without its secret.
	RequestID string
}

// CreatedToken is the answer to a token creation.
type CreatedToken struct {
	// Secret is the token in plain text, set only in the answer that created
	// it: only its hash is stored, so a repeat of the request cannot show it.
	Secret string
	Token  *models.APIToken
}

// Create makes a token for the CLI and the demo seeder (no actor) and returns
// it in plain text, the only time it is ever visible.
func (t *Tokens) Create(ctx context.Context, in CreateTokenInput) (string, *models.APIToken, error) {
	ct, err := t.create(ctx, SystemActor(in.MerchantID), in)
	if err != nil {
		return "", nil, err
	}
	return ct.Secret, ct.Token, nil
}

// CreateAs makes a token of the actor's merchant; administrators only. It
// fails with BAD_USER_INPUT for an invalid role, store binding, name, request
// id or an expiry not in the future, NOT_FOUND for a store of another
// merchant, and IDEMPOTENCY_KEY_REUSED when the request id was used for
// another token; a repeat of a request id with the same parameters returns
// the first token with an empty Secret and writes nothing.
func (t *Tokens) CreateAs(ctx context.Context, actor Actor, in CreateTokenInput) (CreatedToken, error) {
	if err := actor.require(models.RoleAdmin); err != nil {
		return CreatedToken{}, err
	}
	in.MerchantID = actor.MerchantID
	return t.create(ctx, actor, in)
}

func (t *Tokens) create(ctx context.Context, actor Actor, in CreateTokenInput) (CreatedToken, error) {
	now := t.now()
	switch in.Role {
	case models.RoleAdmin, models.RoleFinance, models.RoleApp:
		if len(in.StoreCodes) > 0 || len(in.StoreIDs) > 0 {
			return CreatedToken{}, invalidf("only CLERK tokens are bound to stores")
		}
	case models.RoleClerk:
		if len(in.StoreCodes) == 0 && len(in.StoreIDs) == 0 {
			return CreatedToken{}, invalidf("a CLERK token needs at least one store")
		}
	default:
		return CreatedToken{}, invalidf("role must be ADMIN, CLERK, FINANCE or APP")
	}
	in.Name = strings.TrimSpace(in.Name)
	if in.Name == "" {
		in.Name = strings.ToLower(string(in.Role))
	}
	if err := checkText("name", in.Name, 100, false); err != nil {
		return CreatedToken{}, err
	}
	if in.ExpiresAt != nil {
		exp := in.ExpiresAt.UTC().Truncate(time.Microsecond)
		if !exp.After(now) {
			return CreatedToken{}, invalidf("expiresAt must be in the future")
		}
		in.ExpiresAt = &exp
	}
	if in.RequestID != "" {
		if err := validateRequestID(in.RequestID); err != nil {
			return CreatedToken{}, err
		}
	}
	db := t.db.WithContext(ctx)
	storeIDs, err := t.resolveStores(db, in)
	if err != nil {
		return CreatedToken{}, err
	}
	fp := tokenFingerprint(in, storeIDs)
	if in.RequestID != "" {
		if ct, done, err := t.replay(db, in, fp); done {
			return ct, err
		}
	}
	raw := make([]byte, 20)
	_, _ = rand.Read(raw)
	plain := TokenPrefix + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(raw))
	tok := &models.APIToken{MerchantID: in.MerchantID, Name: in.Name, Role: in.Role, TokenHash: hashToken(plain),
		CreatedAt: now, ExpiresAt: in.ExpiresAt}
	var reqID *string
	if in.RequestID != "" {
		reqID = &in.RequestID
		tok.RequestID, tok.Fingerprint = reqID, &fp
	}
	err = db.Transaction(func(tx *gorm.DB) error {
		if err := models.InsertToken(tx, tok, storeIDs); err != nil {
			return err
		}
		detail := fmt.Sprintf("role=%s stores=%v", in.Role, storeIDs)
		if in.ExpiresAt != nil {
			detail += " expires=" + in.ExpiresAt.Format(time.RFC3339)
		}
		return t.audit.record(tx, actor, "token.create", fmt.Sprintf("token:%d", tok.ID), detail, reqID)
	})
	if errors.Is(err, gorm.ErrDuplicatedKey) && in.RequestID != "" {
		// A concurrent copy of this request committed first.
		if ct, done, err := t.replay(db, in, fp); done {
			return ct, err
		}
	}
	if err != nil {
		return CreatedToken{}, fmt.Errorf("create token: %w", err)
	}
	return CreatedToken{Secret: plain, Token: tok}, nil
}

// replay answers a repeated request id with its token, or with
// IDEMPOTENCY_KEY_REUSED when the parameters differ; done is false when the
// request id is new.
func (t *Tokens) replay(db *gorm.DB, in CreateTokenInput, fp string) (CreatedToken, bool, error) {
	prior, err := models.TokenByRequest(db, in.MerchantID, in.RequestID)
	switch {
	case err != nil:
		return CreatedToken{}, true, fmt.Errorf("create token: find request %s: %w", in.RequestID, err)
	case prior == nil:
		return CreatedToken{}, false, nil
	case prior.Fingerprint == nil || *prior.Fingerprint != fp:
		return CreatedToken{}, true, ErrIdempotencyKeyReused
	}
	return CreatedToken{Token: prior}, true, nil
}

// resolveStores returns the sorted, distinct ids of the stores a clerk token
// names, checking they are the merchant's: NOT_FOUND otherwise.
func (t *Tokens) resolveStores(db *gorm.DB, in CreateTokenInput) ([]int64, error) {
	ids := slices.Clone(in.StoreIDs)
	for _, code := range in.StoreCodes {
		st, err := models.StoreByCode(db, in.MerchantID, code)
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return nil, notFoundf("store %s not found", code)
		}
		if err != nil {
			return nil, fmt.Errorf("create token: find store %s: %w", code, err)
		}
		ids = append(ids, st.ID)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	if len(ids) == 0 {
		return nil, nil
	}
	known, err := models.ExistingStores(db, in.MerchantID, ids)
	if err != nil {
		return nil, fmt.Errorf("create token: check stores: %w", err)
	}
	for _, id := range ids {
		if !slices.Contains(known, id) {
			return nil, notFoundf("store %d not found", id)
		}
	}
	return ids, nil
}

// tokenFingerprint hashes what a createToken request asks for.
func tokenFingerprint(in CreateTokenInput, storeIDs []int64) string {
	parts := []string{"token", string(in.Role), in.Name, ""}
	if in.ExpiresAt != nil {
		parts[3] = in.ExpiresAt.Format(time.RFC3339Nano)
	}
	for _, id := range storeIDs {
		parts = append(parts, strconv.FormatInt(id, 10))
	}
	return fingerprint(parts...)
}

// List returns the merchant's tokens, newest first; administrators only.
func (t *Tokens) List(ctx context.Context, actor Actor, p PageArgs) (Page[models.APIToken], error) {
	if err := actor.require(models.RoleAdmin); err != nil {
		return Page[models.APIToken]{}, err
	}
	return paginate[models.APIToken](models.TokensOf(t.db.WithContext(ctx), actor.MerchantID), "api_tokens", p)
}

// StoreIDs returns the stores each of the merchant's tokens among tokenIDs is
// bound to, keyed by token id; administrators only.
func (t *Tokens) StoreIDs(ctx context.Context, actor Actor, tokenIDs []int64) (map[int64][]int64, error) {
	if err := actor.require(models.RoleAdmin); err != nil {
		return nil, err
	}
	return models.TokenStoreIDs(t.db.WithContext(ctx), actor.MerchantID, tokenIDs)
}

// Operators returns id, name and role of the merchant's tokens among ids, for
// showing who made a redemption or refund; any role of the merchant may ask.
func (t *Tokens) Operators(ctx context.Context, actor Actor, ids []int64) ([]models.APIToken, error) {
	if err := actor.require(models.RoleAdmin, models.RoleFinance, models.RoleClerk); err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, nil
	}
	return models.TokenOperators(t.db.WithContext(ctx), actor.MerchantID, ids)
}

// Revoke revokes a token of the actor's merchant and returns it;
// administrators only. An unknown id, or another merchant's token, is
// NOT_FOUND; revoking a revoked token returns it unchanged. This process
// forgets the token at once; other replicas within their token cache TTL.
func (t *Tokens) Revoke(ctx context.Context, actor Actor, tokenID int64) (*models.APIToken, error) {
	if err := actor.require(models.RoleAdmin); err != nil {
		return nil, err
	}
	var tok *models.APIToken
	err := t.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		revoked, err := models.RevokeToken(tx, actor.MerchantID, tokenID, t.now())
		if err != nil {
			return err
		}
		if tok, err = models.TokenByID(tx, actor.MerchantID, tokenID); err != nil {
			return err
		}
		if !revoked {
			return nil
		}
		return t.audit.record(tx, actor, "token.revoke", fmt.Sprintf("token:%d", tokenID), "", nil)
	})
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, notFoundf("token %d not found", tokenID)
	}
	if err != nil {
		return nil, fmt.Errorf("revoke token %d: %w", tokenID, err)
	}
	t.forget(tokenID)
	return tok, nil
}
