package graph

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"coupond/services"
)

// Error codes that do not come from a service error.
const (
	codeBadUserInput = "BAD_USER_INPUT"
	// codeUnavailable answers a request that could not start because a
	// dependency (the database) is unreachable; nothing of it ran.
	codeUnavailable = "UNAVAILABLE"
	codeInternal    = "INTERNAL"
	codeNotFound    = "NOT_FOUND"
)

// categoryCodes maps a service error category to its code when an error carries
// no code of its own. This is the one table of service errors to client codes;
// *services.Error values bring their own code.
var categoryCodes = []struct {
	err  error
	code string
}{
	{services.ErrUnauthenticated, "UNAUTHENTICATED"},
	{services.ErrForbidden, "FORBIDDEN"},
	{services.ErrInvalidInput, codeBadUserInput},
	{services.ErrNotFound, codeNotFound},
	{services.ErrConflict, "CONFLICT"},
}

// internalMessage is all a client learns of an unexpected error.
const internalMessage = "internal error; the server logged the details"

// presentError turns every error of a resolver into a client error with a
// stable code in extensions.code. Service errors keep their code and message;
// errors of gqlgen's own input coercion are BAD_USER_INPUT; anything else is
// logged once and shown as INTERNAL with a masked message.
func presentError(log *slog.Logger, refused func(ctx context.Context, code, operation string)) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		out := &gqlerror.Error{Path: graphql.GetPath(ctx), Extensions: map[string]any{}}
		var se *services.Error
		var re *resolverError
		var ge *gqlerror.Error
		switch {
		case errors.As(err, &se):
			out.Message, out.Extensions["code"] = se.Message, se.Code
			if se.RetryAfter > 0 {
				out.Extensions["retryAfter"] = int(se.RetryAfter.Seconds())
			}
			if errors.Is(se, services.ErrForbidden) {
				refused(ctx, se.Code, out.Path.String())
			}
		case codeOfCategory(err) != "":
			out.Message, out.Extensions["code"] = err.Error(), codeOfCategory(err)
		case errors.Is(err, context.Canceled):
			out.Message, out.Extensions["code"] = "the request was cancelled", "CANCELLED"
		case errors.As(err, &re):
			op := ""
			if graphql.HasOperationContext(ctx) {
				oc := graphql.GetOperationContext(ctx)
				op = oc.OperationName
			}
			log.ErrorContext(ctx, "internal error", "err", re.err, "path", out.Path.String(), "operation", op)
			out.Message, out.Extensions["code"] = internalMessage, codeInternal
		case errors.As(err, &ge):
			// Not from a resolver: gqlgen's coercion of arguments and variables.
			out.Message, out.Locations, out.Rule = ge.Message, ge.Locations, ge.Rule
			if len(ge.Path) > 0 {
				out.Path = ge.Path
			}
			out.Extensions["code"] = codeBadUserInput
			for k, v := range ge.Extensions {
				out.Extensions[k] = v
			}
		default:
			log.ErrorContext(ctx, "internal error", "err", err, "path", out.Path.String())
			out.Message, out.Extensions["code"] = internalMessage, codeInternal
		}
		return out
	}
}

func codeOfCategory(err error) string {
	for _, c := range categoryCodes {
		if errors.Is(err, c.err) {
			return c.code
		}
	}
	return ""
}

// resolverError marks an error returned by a resolver, so the presenter can tell
// it from gqlgen's own input errors: gqlgen wraps both in the same type.
type resolverError struct{ err error }

func (e *resolverError) Error() string { return e.err.Error() }
func (e *resolverError) Unwrap() error { return e.err }

// markResolverErrors is a field middleware that tags what resolvers return.
func markResolverErrors(ctx context.Context, next graphql.Resolver) (any, error) {
	res, err := next(ctx)
	if err != nil {
		return res, &resolverError{err: err}
	}
	return res, nil
}

// recoverPanic turns a resolver panic into an INTERNAL error and logs it with
// its stack.
func recoverPanic(log *slog.Logger) graphql.RecoverFunc {
	return func(ctx context.Context, p any) error {
		log.ErrorContext(ctx, "panic in resolver", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
		return &resolverError{err: fmt.Errorf("panic: %v", p)}
	}
}
