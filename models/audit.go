package models

import "time"

// AuditEvent records who did what to which row; it is append-only.
type AuditEvent struct {
	ID         int64
	MerchantID int64
	Actor      string
	Action     string
	Target     string
	Detail     string
	RequestID  *string
	CreatedAt  time.Time
}
