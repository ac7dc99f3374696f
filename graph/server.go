package graph

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"go.opentelemetry.io/otel/trace"

	"coupond/authn"
	"coupond/errcode"
	"coupond/graph/generated"
	"coupond/services"
)

// Options configures the GraphQL handler.
type Options struct {
	// Introspection enables schema introspection (off in production).
	Introspection bool
	// MaxBodyBytes caps a request body; 0 means 1 MiB.
	MaxBodyBytes int64
	// ComplexityLimit caps a query's complexity (lists cost their page size
	// times their rows' fields); 0 means 3000: a full page of 100 coupons with
	// their campaign and redemptions fits, a list nested in a list does not.
	ComplexityLimit int
	Logger          *slog.Logger
	// JobRunner, when set, runs the runJob mutation's jobs (see Resolver.JobRunner).
	JobRunner func(ctx context.Context, job string) (*services.JobRun, error)
	// TracerProvider makes a span per operation and per root field; nil
	// traces nothing.
	TracerProvider trace.TracerProvider
}

// parserTokenLimit caps the tokens of a query document; the console's largest
// query has a few hundred.
const parserTokenLimit = 3000

// NewHandler returns the GraphQL-over-HTTP handler for /graphql: POST with a
// JSON body for queries and mutations, GET for queries only, answered as
// application/json or application/graphql-response+json as the Accept header
// asks (see overHTTP). It authenticates the bearer token of every request and
// gives each request its own loaders.
func NewHandler(svc *services.Services, o Options) http.Handler {
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = 1 << 20
	}
	if o.ComplexityLimit == 0 {
		o.ComplexityLimit = 3000
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	cfg := generated.Config{Resolvers: &Resolver{Svc: svc, Log: o.Logger, JobRunner: o.JobRunner}}
	setComplexity(&cfg.Complexity)
	srv := handler.New(generated.NewExecutableSchema(cfg))
	srv.AddTransport(transport.Options{})
	srv.AddTransport(overHTTP{})
	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	// Automatic persisted queries: the store mini-program sends a query's
	// sha256 instead of its text once the server knows it, which saves
	// bytes on slow phone networks; an unknown hash is answered
	// PERSISTED_QUERY_NOT_FOUND and the client sends the text with it.
	srv.Use(extension.AutomaticPersistedQuery{Cache: lru.New[string](1000)})
	srv.SetParserTokenLimit(parserTokenLimit)
	srv.SetDisableSuggestion(true)
	srv.Use(operationLimits{maxDepth: 8, maxAliases: 10, maxFields: 200})
	if o.Introspection {
		srv.Use(extension.Introspection{})
	} else {
		srv.Use(noIntrospection{})
	}
	srv.Use(extension.FixedComplexityLimit(o.ComplexityLimit))
	srv.AroundFields(markResolverErrors)
	// The span wraps the log line, which then carries its trace id.
	if o.TracerProvider != nil {
		srv.Use(traceOperations{tracer: o.TracerProvider.Tracer("coupond/graph")})
	}
	srv.AroundResponses(logResponses(o.Logger))
	srv.SetErrorPresenter(presentError(o.Logger, func(ctx context.Context, code, operation string) {
		switch errcode.AuditOf(code) {
		case errcode.AuditRefusal:
			svc.Audit.Refusal(ctx, services.ActorFrom(ctx), code, operation)
		case errcode.AuditRateLimit:
			svc.Audit.RateLimit(ctx, services.ActorFrom(ctx), code, operation)
		}
	}))
	srv.SetRecoverFunc(recoverPanic(o.Logger))

	var h http.Handler = srv
	h = withLoaders(svc, h)
	h = authn.Middleware(svc.Tokens, o.Logger, h)
	return guardRequest(o.MaxBodyBytes, h)
}

// guardRequest refuses, before the token is checked and before anything is
// parsed, the requests coupond will not serve: an Accept header that allows
// neither JSON type (406), a method other than GET, POST, OPTIONS and HEAD
// (405), a POST body that is not UTF-8 application/json (415) or is larger
// than max (413), and a batch (400). It caps the body it lets through at max.
func guardRequest(max int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		media, ok := negotiate(r.Header.Get("Accept"))
		switch {
		case !ok:
			refuse(w, media, http.StatusNotAcceptable, errcode.BadUserInput,
				"coupond answers application/graphql-response+json or application/json; the Accept header allows neither")
			return
		case r.Method == http.MethodGet, r.Method == http.MethodOptions, r.Method == http.MethodHead:
		case r.Method == http.MethodPost:
			mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
			if cs, ok := params["charset"]; mt != mediaJSON || ok && !strings.EqualFold(cs, "utf-8") {
				refuse(w, media, http.StatusUnsupportedMediaType, errcode.BadUserInput, "POST bodies must be application/json in UTF-8")
				return
			}
			if r.ContentLength > max {
				refuse(w, media, http.StatusRequestEntityTooLarge, errcode.BadUserInput, "request body too large")
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, max)
			// A buffer of bufio's least size is enough to peek at the
			// first bytes; reads larger than it then go straight to the
			// body (bufio's default 4 KiB per request was an eighth of
			// what a redemption allocated).
			br := bufio.NewReaderSize(r.Body, peekBuffer)
			if first, err := peekNonSpace(br); err == nil && first == '[' {
				refuse(w, media, http.StatusBadRequest, errcode.BadUserInput, "batched requests are not supported: send one operation per request")
				return
			}
			r.Body = readCloser{br, r.Body}
		default:
			w.Header().Set("Allow", "OPTIONS, GET, POST") // as transport.Options answers OPTIONS
			refuse(w, media, http.StatusMethodNotAllowed, errcode.BadUserInput, "use POST, or GET for queries")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// peekBuffer is the buffer guardRequest peeks at a POST body through.
const peekBuffer = 16

type readCloser struct {
	io.Reader
	io.Closer
}

// peekNonSpace returns the first byte of the body that is not white space,
// without consuming it.
func peekNonSpace(br *bufio.Reader) (byte, error) {
	for {
		b, err := br.Peek(1)
		if err != nil {
			return 0, err
		}
		switch b[0] {
		case ' ', '\t', '\r', '\n':
			_, _ = br.ReadByte()
		default:
			return b[0], nil
		}
	}
}

// logResponses logs one line per GraphQL response with the request id, the
// merchant, the operation, the error codes and the duration.
func logResponses(log *slog.Logger) graphql.ResponseMiddleware {
	return func(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
		if !log.Enabled(ctx, slog.LevelInfo) {
			return next(ctx)
		}
		start := time.Now()
		resp := next(ctx)
		if resp == nil {
			return resp
		}
		attrs := []any{"request_id", services.RequestIDFrom(ctx), "took", time.Since(start)}
		if graphql.HasOperationContext(ctx) {
			oc := graphql.GetOperationContext(ctx)
			name := oc.OperationName
			if name == "" && oc.Operation != nil && len(oc.Operation.SelectionSet) > 0 {
				if f, ok := oc.Operation.SelectionSet[0].(*ast.Field); ok {
					name = f.Name
				}
			}
			attrs = append(attrs, "operation", name)
		}
		if a := services.ActorFrom(ctx); a.MerchantID != 0 {
			attrs = append(attrs, "merchant", a.MerchantID, "token", a.TokenID)
		}
		if len(resp.Errors) > 0 {
			codes := make([]any, 0, len(resp.Errors))
			for _, e := range resp.Errors {
				codes = append(codes, e.Extensions["code"])
			}
			attrs = append(attrs, "errors", codes)
		}
		log.InfoContext(ctx, "graphql", attrs...)
		return resp
	}
}
