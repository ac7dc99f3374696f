// Package models holds coupond's GORM row types, their statuses, the embedded SQL
// migrations for SQLite and PostgreSQL, and the row-level functions that services
// compose into transactions. Every function takes the *gorm.DB it runs on, so it
// works inside or outside a transaction.
package models
