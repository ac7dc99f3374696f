package graph

import (
	"context"
	"fmt"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"coupond/services"
)

// traceOperations is gqlgen's tracer interface for OpenTelemetry: a span per
// operation, with the request id, the merchant and the error codes as
// attributes, and a span per root field, which is one service call (resolvers
// are thin). Unlike otelgqlgen it makes no span per field of the result and
// records no variables, which hold coupon codes.
type traceOperations struct{ tracer trace.Tracer }

var (
	_ graphql.HandlerExtension     = traceOperations{}
	_ graphql.ResponseInterceptor  = traceOperations{}
	_ graphql.RootFieldInterceptor = traceOperations{}
)

func (traceOperations) ExtensionName() string { return "OpenTelemetry" }

func (traceOperations) Validate(graphql.ExecutableSchema) error { return nil }

func (t traceOperations) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	if !graphql.HasOperationContext(ctx) {
		return next(ctx)
	}
	oc := graphql.GetOperationContext(ctx)
	kind, name := "query", oc.OperationName
	if oc.Operation != nil {
		kind = string(oc.Operation.Operation)
		if name == "" && len(oc.Operation.SelectionSet) > 0 {
			if f, ok := oc.Operation.SelectionSet[0].(*ast.Field); ok {
				name = f.Name
			}
		}
	}
	ctx, span := t.tracer.Start(ctx, "graphql "+kind+" "+name, trace.WithSpanKind(trace.SpanKindServer))
	defer span.End()
	if !span.IsRecording() {
		return next(ctx)
	}
	actor := services.ActorFrom(ctx)
	span.SetAttributes(attribute.String("graphql.operation.type", kind), attribute.String("graphql.operation.name", name),
		attribute.String("coupond.request_id", services.RequestIDFrom(ctx)), attribute.Int64("coupond.merchant_id", actor.MerchantID))
	resp := next(ctx)
	if resp != nil && len(resp.Errors) > 0 {
		codes := make([]string, 0, len(resp.Errors))
		for _, e := range resp.Errors {
			codes = append(codes, fmt.Sprint(e.Extensions["code"]))
		}
		span.SetAttributes(attribute.StringSlice("coupond.error_codes", codes))
		span.SetStatus(otelError, strings.Join(codes, ","))
	}
	return resp
}

func (t traceOperations) InterceptRootField(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
	fc := graphql.GetRootFieldContext(ctx)
	if fc == nil {
		return next(ctx)
	}
	object := fc.Object
	if fc.Field.ObjectDefinition != nil {
		object = fc.Field.ObjectDefinition.Name
	}
	ctx, span := t.tracer.Start(ctx, object+"."+fc.Field.Name, trace.WithSpanKind(trace.SpanKindInternal))
	defer span.End()
	return next(ctx)
}

const otelError = codes.Error
