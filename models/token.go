package models

import "time"

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
