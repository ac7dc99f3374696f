package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
	"gorm.io/gorm"
	"gorm.io/plugin/opentelemetry/tracing"
)

// startTracing installs an OpenTelemetry tracer provider that samples ratio of
// the traces started here (and follows the caller's decision for a request
// that carries a W3C traceparent) and sends them in batches to the OTLP/HTTP
// collector at endpoint, and traces every SQL statement of db. The returned
// function flushes what is buffered and uninstalls the provider.
func startTracing(ctx context.Context, endpoint string, ratio float64, db *gorm.DB, log *slog.Logger) (trace.TracerProvider, func(context.Context), error) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, nil, fmt.Errorf("--otlp-endpoint %q: want an http:// or https:// URL of an OTLP/HTTP collector, e.g. http://127.0.0.1:4318", endpoint)
	}
	if ratio < 0 || ratio > 1 {
		return nil, nil, fmt.Errorf("--otlp-sample-ratio %v: want 0 to 1", ratio)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/traces"
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(u.String()))
	if err != nil {
		return nil, nil, fmt.Errorf("--otlp-endpoint: %w", err)
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(semconv.ServiceName("coupond")))
	if err != nil {
		return nil, nil, err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio))))
	otel.SetTextMapPropagator(propagation.TraceContext{})
	if err := db.Use(tracing.NewPlugin(tracing.WithTracerProvider(tp), tracing.WithoutQueryVariables(), tracing.WithoutMetrics())); err != nil {
		return nil, nil, fmt.Errorf("trace SQL: %w", err)
	}
	log.Info("tracing", "otlp_endpoint", u.String(), "sample_ratio", ratio)
	return tp, func(ctx context.Context) {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if err := tp.Shutdown(ctx); err != nil {
			log.Warn("flush traces", "err", err)
		}
	}, nil
}

// withTraceContext continues the trace of a request that carries a W3C
// traceparent header; without tracing the propagator does nothing.
func withTraceContext(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := otel.GetTextMapPropagator().Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		if ctx != r.Context() { // with tracing off, or no trace in the headers, it is the same
			r = r.WithContext(ctx)
		}
		next.ServeHTTP(w, r)
	})
}

// traceLogHandler adds the trace and span ids of a sampled span in the
// context to every log record, so a log line leads to its trace.
type traceLogHandler struct{ slog.Handler }

func (h traceLogHandler) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() && sc.IsSampled() {
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return h.Handler.Handle(ctx, r)
}

func (h traceLogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return traceLogHandler{h.Handler.WithAttrs(attrs)}
}

func (h traceLogHandler) WithGroup(name string) slog.Handler {
	return traceLogHandler{h.Handler.WithGroup(name)}
}
