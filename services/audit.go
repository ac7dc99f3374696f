package services

import (
	"context"
	"sync"
	"time"

	"gorm.io/gorm"

	"coupond/models"
)

// Audit appends audit events: who did what to which row, and from which request.
type Audit struct {
	db  *gorm.DB
	now func() time.Time

	throttleOnce sync.Once
	refusals     *limiter
	rateLimited  *limiter
}

// Audit actions of refused requests; errcode's table says which codes are
// audited as which.
const (
	ActionRefused     = "request.refused"
	ActionRateLimited = "request.rate_limited"
)

// Refusal records that actor was refused (FORBIDDEN, REFUND_WINDOW_CLOSED, ...)
// when calling operation. At most a few refusals per token and second are
// written, so a flood of refused requests cannot become a flood of writes; it
// reports whether this one was.
func (a *Audit) Refusal(ctx context.Context, actor Actor, code, operation string) bool {
	a.throttleOnce.Do(a.newThrottles)
	return a.throttled(ctx, a.refusals, actor, ActionRefused, code, operation)
}

// RateLimit records that actor's call of operation was refused with
// RATE_LIMITED. It is throttled like Refusal, on a budget of its own, so a
// client hammering the limit does not crowd the refusals out of the log.
func (a *Audit) RateLimit(ctx context.Context, actor Actor, code, operation string) bool {
	a.throttleOnce.Do(a.newThrottles)
	return a.throttled(ctx, a.rateLimited, actor, ActionRateLimited, code, operation)
}

func (a *Audit) newThrottles() {
	a.refusals = newLimiter(RateLimit{PerSecond: 2, Burst: 10}, a.now)
	a.rateLimited = newLimiter(RateLimit{PerSecond: 2, Burst: 10}, a.now)
}

func (a *Audit) throttled(ctx context.Context, l *limiter, actor Actor, action, code, operation string) bool {
	if l.take(actor.TokenID) != nil {
		return false
	}
	err := a.record(a.db.WithContext(context.WithoutCancel(ctx)), actor, action, operation, code, nil)
	return err == nil
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
