package services

import (
	"errors"
	"fmt"
	"time"
)

// Category errors. Every error a service returns to a client wraps one of them,
// directly or through an *Error.
var (
	ErrNotFound        = errors.New("not found")
	ErrInvalidInput    = errors.New("invalid input")
	ErrForbidden       = errors.New("forbidden")
	ErrUnauthenticated = errors.New("unauthenticated")
	ErrConflict        = errors.New("conflict")
)

// Error is a domain error with a stable machine code for clients and a message
// for people. It wraps its category, so errors.Is(err, ErrNotFound) holds for a
// COUPON_NOT_FOUND error.
type Error struct {
	Code    string
	Message string
	Kind    error
	// RetryAfter, when set, tells the client when a retry may succeed.
	RetryAfter time.Duration
}

func (e *Error) Error() string { return e.Message }

// Unwrap returns the error's category.
func (e *Error) Unwrap() error { return e.Kind }

// Domain errors with fixed codes.
var (
	// ErrCouponNotFound is returned for an unknown code, and for a code of
	// another merchant, which must be indistinguishable from an unknown one.
	ErrCouponNotFound = &Error{Code: "COUPON_NOT_FOUND", Message: "coupon not found", Kind: ErrNotFound}
	// ErrIdempotencyKeyReused is returned when a request id is repeated with
	// other parameters than its first use; nothing is written.
	ErrIdempotencyKeyReused = &Error{Code: "IDEMPOTENCY_KEY_REUSED",
		Message: "this request id was already used with different parameters", Kind: ErrConflict}
	// ErrInvalidState is returned when a redemption or refund is not in a state
	// that allows the operation, such as confirming a cancelled redemption.
	ErrInvalidState = &Error{Code: "INVALID_STATE", Message: "the redemption is not in a state that allows this", Kind: ErrConflict}
	// ErrRefundWindowClosed is returned when a clerk refunds after the
	// campaign's refund window.
	ErrRefundWindowClosed = &Error{Code: "REFUND_WINDOW_CLOSED", Message: "the refund window of this coupon has closed", Kind: ErrForbidden}
	// ErrIssueQuotaExceeded is returned when issuing would pass a campaign's
	// total quantity; nothing is issued.
	ErrIssueQuotaExceeded = &Error{Code: "QUOTA_EXCEEDED", Message: "the campaign does not have that many coupons left", Kind: ErrConflict}
	// ErrCustomerLimitExceeded is returned when issuing would give a customer
	// more coupons of a campaign than its per-customer limit.
	ErrCustomerLimitExceeded = &Error{Code: "CUSTOMER_LIMIT_EXCEEDED", Message: "a customer would exceed the campaign's per-customer limit", Kind: ErrConflict}
	errForbidden             = &Error{Code: "FORBIDDEN", Message: "your role does not allow this", Kind: ErrForbidden}
	errStoreForbidden        = &Error{Code: "FORBIDDEN", Message: "you are not allowed to operate at this store", Kind: ErrForbidden}
	errUnauthenticated       = &Error{Code: "UNAUTHENTICATED", Message: "a valid API token is required", Kind: ErrUnauthenticated}
)

// invalidf returns a BAD_USER_INPUT error with a message for people.
func invalidf(format string, args ...any) error {
	return &Error{Code: "BAD_USER_INPUT", Message: fmt.Sprintf(format, args...), Kind: ErrInvalidInput}
}

// notFoundf returns a NOT_FOUND error naming what was not found.
func notFoundf(format string, args ...any) error {
	return &Error{Code: "NOT_FOUND", Message: fmt.Sprintf(format, args...), Kind: ErrNotFound}
}

// conflictf returns a CONFLICT error, such as a duplicate store code.
func conflictf(format string, args ...any) error {
	return &Error{Code: "CONFLICT", Message: fmt.Sprintf(format, args...), Kind: ErrConflict}
}
