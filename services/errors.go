package services

import (
	"context"
	"errors"
	"fmt"
	"time"

	"coupond/errcode"
)

// Category errors. Every error a service returns to a client wraps one of them,
// directly or through an *Error. Each carries the code, from errcode's table,
// that an error wrapping it without a code of its own is shown with.
var (
	ErrNotFound        error = &category{"not found", errcode.NotFound}
	ErrInvalidInput    error = &category{"invalid input", errcode.BadUserInput}
	ErrForbidden       error = &category{"forbidden", errcode.Forbidden}
	ErrUnauthenticated error = &category{"unauthenticated", errcode.Unauthenticated}
	ErrConflict        error = &category{"conflict", errcode.Conflict}
	// ErrRateLimited is the category of RATE_LIMITED errors: a request refused
	// because its token or store sent too much, not because it is not allowed.
	ErrRateLimited error = &category{"too many requests; retry later", errcode.RateLimited}
)

// category is a category sentinel and the code it is shown with.
type category struct{ msg, code string }

func (c *category) Error() string { return c.msg }

// Error is a domain error with a stable machine code for clients and a message
// for people. It wraps its category, so errors.Is(err, ErrNotFound) holds for a
// COUPON_NOT_FOUND error.
type Error struct {
	Code    string
	Message string
	Kind    error
	// RetryAfter, when set, tells the client when a retry may succeed.
	RetryAfter time.Duration
	// CurrentVersion, when set, is the version a CONFLICT of optimistic
	// locking lost against: the client reloads and retries from it.
	CurrentVersion *int64
}

func (e *Error) Error() string { return e.Message }

// Unwrap returns the error's category.
func (e *Error) Unwrap() error { return e.Kind }

// Domain errors with fixed codes.
var (
	// ErrCouponNotFound is returned for an unknown code, and for a code of
	// another merchant, which must be indistinguishable from an unknown one.
	ErrCouponNotFound = &Error{Code: errcode.CouponNotFound, Message: "coupon not found", Kind: ErrNotFound}
	// ErrIdempotencyKeyReused is returned when a request id is repeated with
	// other parameters than its first use; nothing is written.
	ErrIdempotencyKeyReused = &Error{Code: errcode.IdempotencyKeyReused,
		Message: "this request id was already used with different parameters", Kind: ErrConflict}
	// ErrInvalidState is returned when a redemption or refund is not in a state
	// that allows the operation, such as confirming a cancelled redemption.
	ErrInvalidState = &Error{Code: errcode.InvalidState, Message: "the redemption is not in a state that allows this", Kind: ErrConflict}
	// ErrRefundWindowClosed is returned when a clerk refunds after the
	// campaign's refund window.
	ErrRefundWindowClosed = &Error{Code: errcode.RefundWindowClosed, Message: "the refund window of this coupon has closed", Kind: ErrForbidden}
	// ErrIssueQuotaExceeded is returned when issuing would pass a campaign's
	// total quantity; nothing is issued.
	ErrIssueQuotaExceeded = &Error{Code: errcode.QuotaExceeded, Message: "the campaign does not have that many coupons left", Kind: ErrConflict}
	// ErrCustomerLimitExceeded is returned when issuing would give a customer
	// more coupons of a campaign than its per-customer limit.
	ErrCustomerLimitExceeded = &Error{Code: errcode.CustomerLimitExceeded, Message: "a customer would exceed the campaign's per-customer limit", Kind: ErrConflict}
	errForbidden             = &Error{Code: errcode.Forbidden, Message: "your role does not allow this", Kind: ErrForbidden}
	errStoreForbidden        = &Error{Code: errcode.Forbidden, Message: "you are not allowed to operate at this store", Kind: ErrForbidden}
	errUnauthenticated       = &Error{Code: errcode.Unauthenticated, Message: "a valid API token is required", Kind: ErrUnauthenticated}
)

// CodeOf returns the machine code and the message for people of an error a
// client may see: an *Error's own, the code of the category it wraps, or
// CANCELLED when the request's context was cancelled. ok is false for any
// other error, which transports log and show as INTERNAL.
func CodeOf(err error) (code, message string, ok bool) {
	var se *Error
	var c *category
	switch {
	case errors.As(err, &se):
		return se.Code, se.Message, true
	case errors.As(err, &c):
		return c.code, err.Error(), true
	case errors.Is(err, context.Canceled):
		return errcode.Cancelled, "the request was cancelled", true
	}
	return "", "", false
}

// RetryAfterOf returns when a retry of the request that failed with err may
// succeed, or 0 when err does not say.
func RetryAfterOf(err error) time.Duration {
	var se *Error
	if errors.As(err, &se) {
		return se.RetryAfter
	}
	return 0
}

// CurrentVersionOf returns the version a stale update lost against, if err
// says.
func CurrentVersionOf(err error) (int64, bool) {
	var se *Error
	if errors.As(err, &se) && se.CurrentVersion != nil {
		return *se.CurrentVersion, true
	}
	return 0, false
}

// invalidf returns a BAD_USER_INPUT error with a message for people.
func invalidf(format string, args ...any) error {
	return &Error{Code: errcode.BadUserInput, Message: fmt.Sprintf(format, args...), Kind: ErrInvalidInput}
}

// notFoundf returns a NOT_FOUND error naming what was not found.
func notFoundf(format string, args ...any) error {
	return &Error{Code: errcode.NotFound, Message: fmt.Sprintf(format, args...), Kind: ErrNotFound}
}

// conflictf returns a CONFLICT error, such as a duplicate store code.
func conflictf(format string, args ...any) error {
	return &Error{Code: errcode.Conflict, Message: fmt.Sprintf(format, args...), Kind: ErrConflict}
}
