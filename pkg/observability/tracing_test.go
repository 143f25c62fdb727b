package observability_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/docintake/docintake/pkg/observability"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

func env(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

// SetupTracing installs process-global providers, so these tests do not run
// in parallel.
func TestSetupTracingIsOffByDefault(t *testing.T) {
	before := otel.GetTracerProvider()
	for _, e := range []map[string]string{
		{},
		{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"},
		{"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"},
	} {
		shutdown, err := observability.SetupTracing(t.Context(), "test", env(e))
		require.NoError(t, err, e)
		require.NoError(t, shutdown(t.Context()))
		require.Equal(t, before, otel.GetTracerProvider(), "no tracer provider installed for %v", e)
	}
}

func TestSetupTracingRejectsWhatItCannotDo(t *testing.T) {
	for _, e := range []map[string]string{
		{"OTEL_TRACES_EXPORTER": "zipkin"},
		{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
	} {
		_, err := observability.SetupTracing(t.Context(), "test", env(e))
		require.Error(t, err, e)
	}
}

func TestSetupTracingOTLPFromEndpoint(t *testing.T) {
	before := otel.GetTracerProvider()
	t.Cleanup(func() { otel.SetTracerProvider(before) })
	// The exporter connects lazily; nothing listens here and nothing is sent.
	shutdown, err := observability.SetupTracing(t.Context(), "test",
		env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}))
	require.NoError(t, err)
	_, ok := otel.GetTracerProvider().(*sdktrace.TracerProvider)
	require.True(t, ok, "an OTLP endpoint alone turns tracing on")
	ctx, cancel := context.WithCancel(t.Context())
	cancel() // do not wait for the unreachable collector
	_ = shutdown(ctx)
}

func TestTraceContextThroughNATSHeaders(t *testing.T) {
	before := otel.GetTracerProvider()
	t.Cleanup(func() { otel.SetTracerProvider(before) })
	rec := tracetest.NewSpanRecorder()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))

	// An HTTP request's trace context, as ingest receives it.
	h := http.Header{}
	h.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	ctx := observability.ExtractHTTP(t.Context(), h)
	parent := trace.SpanContextFromContext(ctx)
	require.True(t, parent.IsValid())

	// ingest → outbox row headers → relay → NATS headers → worker.
	hdrs := observability.TraceHeaders(ctx)
	require.Equal(t, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", hdrs["traceparent"])
	msg := nats.NewMsg("intake.process.acme")
	for k, v := range hdrs {
		msg.Header.Set(k, v)
	}
	wctx, span := observability.StartJobSpan(t.Context(), msg.Header, "processor", "processor process")
	span.End()
	got := trace.SpanContextFromContext(wctx)
	require.Equal(t, parent.TraceID(), got.TraceID(), "the worker's span is in the upload's trace")
	require.NotEqual(t, parent.SpanID(), got.SpanID())
	ended := rec.Ended()
	require.Len(t, ended, 1)
	require.Equal(t, parent.SpanID(), ended[0].Parent().SpanID())
	require.Equal(t, trace.SpanKindConsumer, ended[0].SpanKind())

	// And InjectNATS writes the same header a publisher needs.
	out := nats.Header{}
	observability.InjectNATS(wctx, out)
	require.Contains(t, out.Get("traceparent"), parent.TraceID().String())

	require.Nil(t, observability.TraceHeaders(t.Context()), "no trace, no headers")
	require.Equal(t, t.Context(), observability.ExtractNATS(t.Context(), nil))
}
