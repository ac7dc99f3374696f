package models

import (
	"time"

	"gorm.io/gorm"
)

// AuditEvent records who did what to which row; it is append-only.
type AuditEvent struct {
	ID         int64
	MerchantID int64
	// Actor labels who acted: "token:<id>" or "system".
	Actor string
	// ActorID is the API token that acted; nil for the system (CLI, jobs) and
	// for events written before tokens were recorded.
	ActorID   *int64
	Action    string
	Target    string
	Detail    string
	RequestID *string
	CreatedAt time.Time
}

// InsertAuditEvent appends ev on tx and sets its ID. The table refuses any
// UPDATE or DELETE, so this is the only write it takes.
func InsertAuditEvent(tx *gorm.DB, ev *AuditEvent) error { return tx.Create(ev).Error }

// AuditEventFilter narrows MerchantAuditEvents; zero fields do not filter.
type AuditEventFilter struct {
	Action  string
	ActorID int64
	// From and To bound the time: From <= created_at < To.
	From, To time.Time
}

// MerchantAuditEvents returns a query of one merchant's audit events that
// match f, for the caller to order and page.
func MerchantAuditEvents(db *gorm.DB, merchantID int64, f AuditEventFilter) *gorm.DB {
	q := db.Model(&AuditEvent{}).Where("merchant_id = ?", merchantID)
	if f.Action != "" {
		q = q.Where("action = ?", f.Action)
	}
	if f.ActorID != 0 {
		q = q.Where("actor_id = ?", f.ActorID)
	}
	if !f.From.IsZero() {
		q = q.Where("created_at >= ?", f.From.UTC())
	}
	if !f.To.IsZero() {
		q = q.Where("created_at < ?", f.To.UTC())
	}
	return q
}
