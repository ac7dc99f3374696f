package services

import (
	"context"
	"time"

	"gorm.io/gorm"

	"coupond/models"
)

// Audit appends audit events: who did what to which row, and from which request.
type Audit struct {
	db  *gorm.DB
	now func() time.Time
}

// record appends an event on tx, so it commits with the change it describes.
func (a *Audit) record(tx *gorm.DB, actor Actor, action, target, detail string, requestID *string) error {
	return tx.Create(&models.AuditEvent{MerchantID: actor.MerchantID, Actor: actor.Label(), Action: action,
		Target: target, Detail: detail, RequestID: requestID, CreatedAt: a.now()}).Error
}

// List returns a merchant's audit events, newest first; administrators and
// finance staff only.
func (a *Audit) List(ctx context.Context, actor Actor, p PageArgs) (Page[models.AuditEvent], error) {
	if err := actor.require(models.RoleAdmin, models.RoleFinance); err != nil {
		return Page[models.AuditEvent]{}, err
	}
	q := a.db.WithContext(ctx).Where("merchant_id = ?", actor.MerchantID)
	return paginate[models.AuditEvent](q, "audit_events", p)
}
