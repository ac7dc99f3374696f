package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"coupond/errcode"
	"coupond/services"
)

// Codes only the GraphQL endpoint or the middleware in front of it answer; an
// export never meets them.
var notFromExports = map[string]bool{
	errcode.QueryTooComplex: true, errcode.Overloaded: true, errcode.Unavailable: true,
	errcode.GraphQLParseFailed: true, errcode.GraphQLValidationFailed: true, errcode.ComplexityLimitExceeded: true,
	errcode.PersistedQueryNotFound: true,
}

// Every code an export can fail with is answered with the HTTP status
// errcode's table declares for it, RATE_LIMITED with Retry-After.
func TestFailAnswersTheTableStatus(t *testing.T) {
	tests := []struct {
		name       string
		give       error
		wantCode   string
		wantStatus int
		wantRetry  string
	}{
		{"no token", fmt.Errorf("list: %w", services.ErrUnauthenticated), errcode.Unauthenticated, 401, ""},
		{"role", fmt.Errorf("export: %w", services.ErrForbidden), errcode.Forbidden, 403, ""},
		{"input", services.ErrUnknownJob, errcode.BadUserInput, 400, ""},
		{"coupon", services.ErrCouponNotFound, errcode.CouponNotFound, 404, ""},
		{"campaign", fmt.Errorf("campaign 9: %w", services.ErrNotFound), errcode.NotFound, 404, ""},
		{"request id", services.ErrIdempotencyKeyReused, errcode.IdempotencyKeyReused, 409, ""},
		{"state", services.ErrInvalidState, errcode.InvalidState, 409, ""},
		{"refund window", services.ErrRefundWindowClosed, errcode.RefundWindowClosed, 403, ""},
		{"quota", services.ErrIssueQuotaExceeded, errcode.QuotaExceeded, 409, ""},
		{"customer limit", services.ErrCustomerLimitExceeded, errcode.CustomerLimitExceeded, 409, ""},
		{"conflict", fmt.Errorf("store S1: %w", services.ErrConflict), errcode.Conflict, 409, ""},
		{"rate limited", &services.Error{Code: errcode.RateLimited, Message: "slow down", Kind: services.ErrRateLimited,
			RetryAfter: 3 * time.Second}, errcode.RateLimited, 429, "3"},
		{"rate limited without a delay", fmt.Errorf("redeem: %w", services.ErrRateLimited), errcode.RateLimited, 429, "1"},
		{"cancelled", fmt.Errorf("page: %w", context.Canceled), errcode.Cancelled, errcode.StatusClientClosedRequest, "1"},
		{"unexpected", errors.New("disk on fire"), errcode.Internal, 500, ""},
	}
	e := &exporter{log: slog.New(slog.DiscardHandler)}
	covered := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			e.fail(w, httptest.NewRequest(http.MethodGet, "/export/x.csv", nil), tt.give)
			var body struct {
				Errors []struct {
					Message    string
					Extensions map[string]any
				}
			}
			if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
				t.Fatal(err)
			}
			if len(body.Errors) != 1 || body.Errors[0].Extensions["code"] != tt.wantCode {
				t.Fatalf("body %s, want code %s", w.Body.String(), tt.wantCode)
			}
			if w.Code != tt.wantStatus || w.Code != errcode.Status(tt.wantCode) {
				t.Fatalf("status %d, want %d (table: %d)", w.Code, tt.wantStatus, errcode.Status(tt.wantCode))
			}
			if got := w.Header().Get("Retry-After"); got != tt.wantRetry {
				t.Fatalf("Retry-After %q, want %q", got, tt.wantRetry)
			}
			if tt.wantCode == errcode.Internal && body.Errors[0].Message != errcode.InternalMessage {
				t.Fatalf("internal error not masked: %q", body.Errors[0].Message)
			}
		})
		covered[tt.wantCode] = true
	}
	for _, s := range errcode.All() {
		if !covered[s.Code] && !notFromExports[s.Code] {
			t.Errorf("no export error tested with %s", s.Code)
		}
	}
}
