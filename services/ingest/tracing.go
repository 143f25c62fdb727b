package ingest

import (
	"strconv"

	"github.com/docintake/docintake/pkg/observability"
	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// tracing starts a server span per request, as a child of the caller's
// trace when the request carries a traceparent. The span's context is what
// the upload writes into the outbox row, so the processor and dispatcher
// continue the same trace. With tracing off (the default) the span records
// nothing, but an incoming trace context still flows through.
func (s *Server) tracing() echo.MiddlewareFunc {
	tracer := otel.Tracer("github.com/docintake/docintake/services/ingest")
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			route := c.Path()
			if route == "" {
				route = "unmatched"
			}
			ctx := observability.ExtractHTTP(r.Context(), r.Header)
			ctx, span := tracer.Start(ctx, r.Method+" "+route, trace.WithSpanKind(trace.SpanKindServer),
				trace.WithAttributes(attribute.String("http.request.method", r.Method), attribute.String("http.route", route)))
			defer span.End()
			c.SetRequest(r.WithContext(ctx))
			err := next(c)
			if err != nil {
				c.Error(err) // write the response now, so its status is known
			}
			status := c.Response().Status
			span.SetAttributes(attribute.Int("http.response.status_code", status))
			if v, ok := c.Get("log_id").(string); ok {
				span.SetAttributes(attribute.String("docintake.log_id", v))
			}
			if status >= 500 {
				span.SetStatus(codes.Error, strconv.Itoa(status))
			}
			return nil
		}
	}
}
