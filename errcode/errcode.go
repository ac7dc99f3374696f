// Package errcode is coupond's one table of machine error codes: every code a
// client can find in errors[].extensions.code is declared here once, with the
// HTTP status of an answer that carries it alone, whether a retry may succeed
// and whether a refusal with it is audited. Services build their errors from
// these codes; the transports (GraphQL, exports, the HTTP middleware in cmd)
// map from the table and never spell a code themselves.
//
// The package imports nothing of coupond, so every layer may depend on it.
package errcode

import (
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"time"
)

// The codes. README.md ("Use the API") lists the same set; a test keeps the two
// equal.
const (
	// Unauthenticated: no valid API token.
	Unauthenticated = "UNAUTHENTICATED"
	// Forbidden: the token's role or stores do not allow the operation.
	Forbidden = "FORBIDDEN"
	// BadUserInput: an argument is malformed or out of range.
	BadUserInput = "BAD_USER_INPUT"
	// CouponNotFound: an unknown code, or a code of another merchant.
	CouponNotFound = "COUPON_NOT_FOUND"
	// NotFound: any other unknown id or number.
	NotFound = "NOT_FOUND"
	// IdempotencyKeyReused: a request id repeated with other parameters.
	IdempotencyKeyReused = "IDEMPOTENCY_KEY_REUSED"
	// InvalidState: the row is not in a state that allows the operation.
	InvalidState = "INVALID_STATE"
	// RefundWindowClosed: a clerk refunds after the campaign's refund window.
	RefundWindowClosed = "REFUND_WINDOW_CLOSED"
	// QuotaExceeded: issuing would pass a campaign's total quantity.
	QuotaExceeded = "QUOTA_EXCEEDED"
	// CustomerLimitExceeded: issuing would pass a campaign's per-customer limit.
	CustomerLimitExceeded = "CUSTOMER_LIMIT_EXCEEDED"
	// Conflict: any other conflict with existing rows, such as a duplicate code.
	Conflict = "CONFLICT"
	// RateLimited: the token or the store sent too much; retry after the delay
	// the error carries.
	RateLimited = "RATE_LIMITED"
	// QueryTooComplex: the operation is deeper, wider or more aliased than
	// coupond allows, or a mutation with more than one field.
	QueryTooComplex = "QUERY_TOO_COMPLEX"
	// Overloaded: the server is at its in-flight limit and did nothing.
	Overloaded = "OVERLOADED"
	// Unavailable: the database could not be reached to check the token, and
	// nothing ran.
	Unavailable = "UNAVAILABLE"
	// Cancelled: the client went away before the answer was ready.
	Cancelled = "CANCELLED"
	// Internal: anything unexpected; the message is masked and the details are
	// in the server log.
	Internal = "INTERNAL"

	// GraphQLParseFailed is gqlgen's code for a document it cannot parse.
	GraphQLParseFailed = "GRAPHQL_PARSE_FAILED"
	// GraphQLValidationFailed is gqlgen's code for a document that does not
	// validate against the schema; coupond also answers it to introspection
	// when introspection is off.
	GraphQLValidationFailed = "GRAPHQL_VALIDATION_FAILED"
	// ComplexityLimitExceeded is gqlgen's code for a query over the
	// complexity limit.
	ComplexityLimitExceeded = "COMPLEXITY_LIMIT_EXCEEDED"
	// PersistedQueryNotFound is gqlgen's code for an automatic persisted
	// query whose hash the server does not know (yet): the client sends the
	// query's text with the hash.
	PersistedQueryNotFound = "PERSISTED_QUERY_NOT_FOUND"
)

// InternalMessage is all a client learns of an INTERNAL error.
const InternalMessage = "internal error; the server logged the details"

// Audit says how a request refused with a code is audited.
type Audit uint8

// Audit kinds.
const (
	// NotAudited: the error is the client's business, or nobody is known.
	NotAudited Audit = iota
	// AuditRefusal: written as a refused request (request.refused).
	AuditRefusal
	// AuditRateLimit: written as a rate-limited request (request.rate_limited).
	AuditRateLimit
)

// StatusClientClosedRequest is the status of an answer nobody reads because
// the client went away (nginx's 499).
const StatusClientClosedRequest = 499

// Spec is one row of the table.
type Spec struct {
	// Code is the machine code.
	Code string
	// Status is the HTTP status of an answer that carries only this error: an
	// export's error, or a refusal before GraphQL runs. Inside a GraphQL
	// response, errors of resolvers ride in a 200 answer whatever their code.
	Status int
	// Retryable says whether the same request, repeated later with the same
	// request id, may succeed: nothing was decided against it.
	Retryable bool
	// Audit says how a refusal with this code is audited.
	Audit Audit
}

var table = []Spec{
	{Code: Unauthenticated, Status: http.StatusUnauthorized},
	{Code: Forbidden, Status: http.StatusForbidden, Audit: AuditRefusal},
	{Code: BadUserInput, Status: http.StatusBadRequest},
	{Code: CouponNotFound, Status: http.StatusNotFound},
	{Code: NotFound, Status: http.StatusNotFound},
	{Code: IdempotencyKeyReused, Status: http.StatusConflict},
	{Code: InvalidState, Status: http.StatusConflict},
	{Code: RefundWindowClosed, Status: http.StatusForbidden, Audit: AuditRefusal},
	{Code: QuotaExceeded, Status: http.StatusConflict},
	{Code: CustomerLimitExceeded, Status: http.StatusConflict},
	{Code: Conflict, Status: http.StatusConflict},
	{Code: RateLimited, Status: http.StatusTooManyRequests, Retryable: true, Audit: AuditRateLimit},
	// A document refused before it runs (it does not parse, does not
	// validate, its variables do not coerce, or it passes a limit) is 400
	// for a client that accepts application/graphql-response+json; a client
	// that accepts only application/json gets 200 with the errors in the body
	// and no data, as GraphQL over HTTP asks (graph/transport.go).
	{Code: QueryTooComplex, Status: http.StatusBadRequest},
	{Code: Overloaded, Status: http.StatusServiceUnavailable, Retryable: true},
	{Code: Unavailable, Status: http.StatusServiceUnavailable, Retryable: true},
	{Code: Cancelled, Status: StatusClientClosedRequest, Retryable: true},
	{Code: Internal, Status: http.StatusInternalServerError},
	{Code: GraphQLParseFailed, Status: http.StatusBadRequest},
	{Code: GraphQLValidationFailed, Status: http.StatusBadRequest},
	{Code: ComplexityLimitExceeded, Status: http.StatusBadRequest},
	{Code: PersistedQueryNotFound, Status: http.StatusBadRequest},
}

var byCode = func() map[string]Spec {
	m := make(map[string]Spec, len(table))
	for _, s := range table {
		if _, dup := m[s.Code]; dup {
			panic("errcode: " + s.Code + " declared twice")
		}
		m[s.Code] = s
	}
	return m
}()

// All returns the table, in the order of README.md's list.
func All() []Spec { return append([]Spec(nil), table...) }

// Lookup returns the row of code, or false for a code not in the table.
func Lookup(code string) (Spec, bool) {
	s, ok := byCode[code]
	return s, ok
}

// Status returns the HTTP status of code; a code not in the table is an
// internal error's 500.
func Status(code string) int {
	if s, ok := byCode[code]; ok {
		return s.Status
	}
	return http.StatusInternalServerError
}

// AuditOf returns how a refusal with code is audited.
func AuditOf(code string) Audit { return byCode[code].Audit }

// Write answers w with the JSON error body of the API, with code's status from
// the table. A retryable code gets a Retry-After header and
// extensions.retryAfter of retryAfter rounded up to seconds, at least one.
func Write(w http.ResponseWriter, code, message string, retryAfter time.Duration) {
	WriteStatus(w, Status(code), code, message, retryAfter)
}

// WriteStatus is Write with a status more precise than the table's, such as
// 413 or 415 for a BAD_USER_INPUT body that will not be read.
func WriteStatus(w http.ResponseWriter, status int, code, message string, retryAfter time.Duration) {
	ext := map[string]any{"code": code}
	if s, ok := byCode[code]; ok && s.Retryable {
		secs := max(int(math.Ceil(retryAfter.Seconds())), 1)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		ext["retryAfter"] = secs
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"errors": []any{map[string]any{"message": message, "extensions": ext}},
	})
}
