package models

import (
	"time"

	"gorm.io/gorm"
)

// Role is what an API token may do.
type Role string

// Roles.
const (
	RoleAdmin   Role = "ADMIN"
	RoleClerk   Role = "CLERK"
	RoleFinance Role = "FINANCE"
	// RoleApp is a mini-program back end that relays many customers through
	// one token: it quotes, reserves, confirms, cancels and redeems at any
	// store of its merchant, always naming the customer, and reads one
	// customer's coupons; nothing else.
	RoleApp Role = "APP"
)

// APIToken is an opaque bearer token, stored only as its SHA-256 hash. Tokens
// are never deleted: revoking one sets RevokedAt.
type APIToken struct {
	ID         int64
	MerchantID int64
	Name       string
	Role       Role
	TokenHash  string
	CreatedAt  time.Time
	RevokedAt  *time.Time
	// ExpiresAt, when set, is when the token stops authenticating.
	ExpiresAt *time.Time
	// LastUsedAt is when the token last authenticated a request, recorded at
	// most about once a minute.
	LastUsedAt *time.Time
	// RequestID is the client's id of the request that created the token,
	// unique per merchant; nil for tokens made without one (the CLI).
	RequestID *string
	// Fingerprint hashes the parameters of that request, to tell a repeat
	// from a reuse of the request id for another token.
	Fingerprint *string
}

// APITokenStore binds a clerk token to a store.
type APITokenStore struct {
	MerchantID int64 `gorm:"primaryKey;autoIncrement:false"`
	TokenID    int64 `gorm:"primaryKey;autoIncrement:false"`
	StoreID    int64 `gorm:"primaryKey;autoIncrement:false"`
}

// InsertToken inserts a token bound to the given stores, and sets its ID. A
// request id the merchant already used is gorm.ErrDuplicatedKey.
func InsertToken(tx *gorm.DB, tok *APIToken, storeIDs []int64) error {
	if err := tx.Create(tok).Error; err != nil {
		return err
	}
	for _, id := range storeIDs {
		if err := tx.Create(&APITokenStore{MerchantID: tok.MerchantID, TokenID: tok.ID, StoreID: id}).Error; err != nil {
			return err
		}
	}
	return nil
}

// RevokeToken marks a live token of the merchant revoked; it reports false
// when there is no such live token.
func RevokeToken(tx *gorm.DB, merchantID, tokenID int64, now time.Time) (bool, error) {
	res := tx.Exec("UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND merchant_id = ? AND revoked_at IS NULL",
		now, tokenID, merchantID)
	return res.RowsAffected == 1, res.Error
}

// LiveTokenByHash returns the token with the hash when it is neither revoked
// nor expired at now, or gorm.ErrRecordNotFound.
func LiveTokenByHash(db *gorm.DB, hash string, now time.Time) (*APIToken, error) {
	var tok APIToken
	err := db.Where("token_hash = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)", hash, now).
		Take(&tok).Error
	if err != nil {
		return nil, err
	}
	return &tok, nil
}

// TokenByID returns the merchant's token with the id, or
// gorm.ErrRecordNotFound (also for another merchant's token).
func TokenByID(db *gorm.DB, merchantID, id int64) (*APIToken, error) {
	var tok APIToken
	if err := db.Where("merchant_id = ? AND id = ?", merchantID, id).Take(&tok).Error; err != nil {
		return nil, err
	}
	return &tok, nil
}

// TokenByRequest returns the merchant's token created under requestID, or nil.
func TokenByRequest(db *gorm.DB, merchantID int64, requestID string) (*APIToken, error) {
	var toks []APIToken
	if err := db.Where("merchant_id = ? AND request_id = ?", merchantID, requestID).Limit(1).Find(&toks).Error; err != nil {
		return nil, err
	}
	if len(toks) == 0 {
		return nil, nil
	}
	return &toks[0], nil
}

// TokensOf is the query of a merchant's tokens, for pagination.
func TokensOf(db *gorm.DB, merchantID int64) *gorm.DB {
	return db.Model(&APIToken{}).Where("merchant_id = ?", merchantID)
}

// TokenOperators returns id, name and role of the merchant's tokens among
// ids: what a ledger row shows of the token it was made with. Hashes are
// not read.
func TokenOperators(db *gorm.DB, merchantID int64, ids []int64) ([]APIToken, error) {
	var toks []APIToken
	err := db.Select("id", "merchant_id", "name", "role").Where("merchant_id = ? AND id IN ?", merchantID, ids).
		Order("id").Find(&toks).Error
	return toks, err
}

// TokenStoreIDs returns the stores each of the merchant's tokens among
// tokenIDs is bound to, keyed by token id; a token bound to none has no entry.
func TokenStoreIDs(db *gorm.DB, merchantID int64, tokenIDs []int64) (map[int64][]int64, error) {
	var rows []APITokenStore
	err := db.Table("api_token_stores").Select("api_token_stores.token_id, api_token_stores.store_id").
		Joins("JOIN api_tokens ON api_tokens.id = api_token_stores.token_id").
		Where("api_tokens.merchant_id = ? AND api_token_stores.token_id IN ?", merchantID, tokenIDs).
		Order("api_token_stores.token_id, api_token_stores.store_id").Find(&rows).Error
	if err != nil {
		return nil, err
	}
	out := make(map[int64][]int64)
	for _, r := range rows {
		out[r.TokenID] = append(out[r.TokenID], r.StoreID)
	}
	return out, nil
}

// TouchToken records that a token was used at now, unless a use at or after
// since is already recorded; it reports whether it wrote.
func TouchToken(db *gorm.DB, tokenID int64, now, since time.Time) (bool, error) {
	res := db.Exec("UPDATE api_tokens SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)",
		now, tokenID, since)
	return res.RowsAffected == 1, res.Error
}
