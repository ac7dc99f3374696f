package services

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"coupond/models"
)

// startSpan starts the span of a service call, named after it, with the
// request id and the actor's merchant as attributes.
func startSpan(ctx context.Context, tracer trace.Tracer, name string, actor Actor) (context.Context, trace.Span) {
	ctx, span := tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindInternal))
	if span.IsRecording() {
		span.SetAttributes(attribute.String("coupond.request_id", RequestIDFrom(ctx)),
			attribute.Int64("coupond.merchant_id", actor.MerchantID))
	}
	return ctx, span
}

// endFlowSpan ends a redemption's span with its outcome.
func endFlowSpan(span trace.Span, flow *models.RedemptionFlow, err error) {
	if span.IsRecording() {
		if flow != nil {
			span.SetAttributes(attribute.String("coupond.redeem_no", flow.RedeemNo), attribute.String("coupond.flow_status", string(flow.Status)))
		}
		endErr(span, err)
	}
	span.End()
}

// endErr marks span failed with err's code, when there is an error.
func endErr(span trace.Span, err error) {
	if err == nil {
		return
	}
	if code, _, ok := CodeOf(err); ok {
		span.SetAttributes(attribute.String("coupond.error_code", code))
	}
	span.SetStatus(codes.Error, err.Error())
}
