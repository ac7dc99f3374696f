package services

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"gorm.io/gorm"

	"coupond/models"
)

// Audit appends audit events: who did what to which row, and from which request.
type Audit struct {
	db *gorm.DB
	// read serves List: a read replica when there are any, else db.
	read *gorm.DB
	now  func() time.Time

	throttleOnce sync.Once
	refusals     *limiter[int64]
	rateLimited  *limiter[int64]
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
	a.refusals = newLimiter[int64](RateLimit{PerSecond: 2, Burst: 10}, a.now)
	a.rateLimited = newLimiter[int64](RateLimit{PerSecond: 2, Burst: 10}, a.now)
}

func (a *Audit) throttled(ctx context.Context, l *limiter[int64], actor Actor, action, code, operation string) bool {
	if l.take(actor.TokenID) != nil {
		return false
	}
	err := a.record(a.db.WithContext(context.WithoutCancel(ctx)), actor, action, operation, code, nil)
	return err == nil
}

// record appends an event on tx, so it commits with the change it describes.
// The event names the actor's token (none for the system) and, when the caller
// passes no request id, the HTTP request id carried by tx's context.
func (a *Audit) record(tx *gorm.DB, actor Actor, action, target, detail string, requestID *string) error {
	if requestID == nil && tx.Statement != nil && tx.Statement.Context != nil {
		if id := RequestIDFrom(tx.Statement.Context); id != "" {
			requestID = &id
		}
	}
	return models.InsertAuditEvent(tx, &models.AuditEvent{MerchantID: actor.MerchantID, Actor: actor.Label(),
		ActorID: actor.operatorID(), Action: action, Target: target, Detail: detail, RequestID: requestID,
		CreatedAt: a.now()})
}

// AuditFilter narrows List; empty fields do not filter.
type AuditFilter struct {
	// Action keeps events of this action only, e.g. "finding.resolve".
	Action string
	// ActorID keeps events of this API token only.
	ActorID int64
	// From keeps events at or after it: an RFC 3339 time, or a date
	// YYYY-MM-DD meaning the start of that day in the merchant's time zone.
	From string
	// To keeps events before it: an RFC 3339 time, or a date YYYY-MM-DD
	// meaning through the end of that day in the merchant's time zone.
	To string
}

// List returns the actor's merchant's audit events that match f, newest
// first; administrators and finance staff only. A from or to that is neither
// an RFC 3339 time nor a date is BAD_USER_INPUT.
func (a *Audit) List(ctx context.Context, actor Actor, f AuditFilter, p PageArgs) (Page[models.AuditEvent], error) {
	if err := actor.require(models.RoleAdmin, models.RoleFinance); err != nil {
		return Page[models.AuditEvent]{}, err
	}
	db := a.read.WithContext(ctx)
	mf := models.AuditEventFilter{Action: strings.TrimSpace(f.Action), ActorID: f.ActorID}
	var err error
	if mf.From, mf.To, err = merchantRange(db, actor.MerchantID, f.From, f.To); err != nil {
		return Page[models.AuditEvent]{}, err
	}
	page, err := paginate[models.AuditEvent](models.MerchantAuditEvents(db, actor.MerchantID, mf), "audit_events", p)
	if err != nil {
		return page, fmt.Errorf("list audit events: %w", err)
	}
	return page, nil
}
