// Package authn authenticates the HTTP requests of coupond's transports, the
// GraphQL endpoint and the exports, with the same bearer tokens.
package authn

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"coupond/errcode"
	"coupond/services"
)

// Tokens checks an API token; *services.Tokens is the implementation.
type Tokens interface {
	Authenticate(ctx context.Context, token string) (services.Actor, error)
}

// Middleware resolves the bearer token into the request's actor
// (services.WithActor). A request without a valid token runs with no actor,
// and every service refuses it with UNAUTHENTICATED, so the answer carries a
// code rather than being a bare HTTP status.
//
// A token that could not be checked at all (the database is unreachable) is
// not an invalid token: the request is answered HTTP 503 UNAVAILABLE with
// Retry-After, before anything ran, so the client retries it with the same
// request id instead of giving up on its credentials.
func Middleware(tokens Tokens, log *slog.Logger, next http.Handler) http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if token, ok := BearerToken(r); ok {
			actor, err := tokens.Authenticate(r.Context(), token)
			switch {
			case err == nil:
				r = r.WithContext(services.WithActor(r.Context(), actor))
			case !errors.Is(err, services.ErrUnauthenticated):
				log.ErrorContext(r.Context(), "authenticate", "err", err, "request_id", services.RequestIDFrom(r.Context()))
				errcode.Write(w, errcode.Unavailable,
					"the service cannot check credentials right now and did nothing; retry with the same request id", time.Second)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// BearerToken returns the token of an "Authorization: Bearer <token>" header.
func BearerToken(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "", false
	}
	return strings.TrimSpace(token), true
}
