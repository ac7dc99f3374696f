package graph

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"coupond/errcode"
	"coupond/services"
)

// presentError turns every error of a resolver into a client error with a
// stable code in extensions.code. Errors services know (services.CodeOf) keep
// their code and message, and the refusals errcode's table audits are passed
// to audit; errors of gqlgen's own input coercion are BAD_USER_INPUT; anything
// else is logged once and shown as INTERNAL with a masked message.
func presentError(log *slog.Logger, audit func(ctx context.Context, code, operation string)) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		out := &gqlerror.Error{Path: graphql.GetPath(ctx), Extensions: map[string]any{}}
		var re *resolverError
		var ge *gqlerror.Error
		if code, msg, ok := services.CodeOf(err); ok {
			out.Message, out.Extensions["code"] = msg, code
			if d := services.RetryAfterOf(err); d > 0 {
				out.Extensions["retryAfter"] = int(d.Seconds())
			}
			if v, ok := services.CurrentVersionOf(err); ok {
				out.Extensions["currentVersion"] = v
			}
			if errcode.AuditOf(code) != errcode.NotAudited {
				audit(ctx, code, out.Path.String())
			}
			return out
		}
		switch {
		case errors.As(err, &re):
			op := ""
			if graphql.HasOperationContext(ctx) {
				oc := graphql.GetOperationContext(ctx)
				op = oc.OperationName
			}
			log.ErrorContext(ctx, "internal error", "err", re.err, "path", out.Path.String(), "operation", op)
			out.Message, out.Extensions["code"] = errcode.InternalMessage, errcode.Internal
		case errors.As(err, &ge):
			// Not from a resolver: gqlgen's coercion of arguments and variables.
			out.Message, out.Locations, out.Rule = nameInputField(ctx, ge), ge.Locations, ge.Rule
			if len(ge.Path) > 0 {
				out.Path = ge.Path
			}
			out.Extensions["code"] = errcode.BadUserInput
			for k, v := range ge.Extensions {
				out.Extensions[k] = v
			}
		default:
			log.ErrorContext(ctx, "internal error", "err", err, "path", out.Path.String())
			out.Message, out.Extensions["code"] = errcode.InternalMessage, errcode.Internal
		}
		return out
	}
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
