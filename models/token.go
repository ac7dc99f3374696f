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
)

// APIToken is an opaque bearer token, stored only as its SHA-256 hash.
type APIToken struct {
	ID         int64
	MerchantID int64
	Name       string
	Role       Role
	TokenHash  string
	CreatedAt  time.Time
	RevokedAt  *time.Time
}

// APITokenStore binds a clerk token to a store.
type APITokenStore struct {
	TokenID int64 `gorm:"primaryKey;autoIncrement:false"`
	StoreID int64 `gorm:"primaryKey;autoIncrement:false"`
}

// InsertToken inserts a token bound to the given stores, and sets its ID.
func InsertToken(tx *gorm.DB, tok *APIToken, storeIDs []int64) error {
	if err := tx.Create(tok).Error; err != nil {
		return err
	}
	for _, id := range storeIDs {
		if err := tx.Create(&APITokenStore{TokenID: tok.ID, StoreID: id}).Error; err != nil {
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
