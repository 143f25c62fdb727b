package observability

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// propagator is W3C trace context plus baggage: what OTEL_PROPAGATORS
// defaults to, and what the NATS headers and outbox rows carry.
var propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// SetupTracing configures OpenTelemetry tracing from the standard OTEL_*
// variables and returns a shutdown function that flushes pending spans.
//
// Tracing is off by default: spans are exported only when
// OTEL_TRACES_EXPORTER is "otlp" or "console", or when it is unset and
// OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set.
// OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none turn it off. The OTLP
// exporter speaks http/protobuf (the OTLP default) and reads the other
// OTEL_EXPORTER_OTLP_* variables (headers, timeout, TLS) itself; "grpc" is
// refused rather than silently ignored. OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES override service (the default service.name), and
// OTEL_TRACES_SAMPLER / _ARG choose the sampler.
//
// The W3C propagator is installed in every case, so a trace started by a
// caller passes through the upload, the outbox and NATS to the workers even
// when this process exports nothing.
func SetupTracing(ctx context.Context, service string, getenv func(string) string) (shutdown func(context.Context) error, err error) {
	otel.SetTextMapPropagator(propagator)
	noop := func(context.Context) error { return nil }
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") {
		return noop, nil
	}
	exporter := strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")))
	if exporter == "" && (getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "") {
		exporter = "otlp"
	}
	var exp sdktrace.SpanExporter
	switch exporter {
	case "", "none":
		return noop, nil
	case "console":
		exp, err = stdouttrace.New(stdouttrace.WithWriter(os.Stderr))
	case "otlp":
		proto := getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
		if proto == "" {
			proto = getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
		}
		if proto != "" && proto != "http/protobuf" {
			return noop, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL %q: only http/protobuf is supported", proto)
		}
		exp, err = otlptracehttp.New(ctx)
	default:
		return noop, fmt.Errorf("OTEL_TRACES_EXPORTER %q: want otlp, console or none", exporter)
	}
	if err != nil {
		return noop, fmt.Errorf("trace exporter %s: %w", exporter, err)
	}
	// Later options win: the environment overrides the built-in name.
	res, err := resource.New(ctx, resource.WithAttributes(attribute.String("service.name", service)),
		resource.WithFromEnv(), resource.WithTelemetrySDK(), resource.WithHost())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return noop, fmt.Errorf("trace resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	otel.SetTracerProvider(tp)
	return tp.Shutdown, nil
}

// natsCarrier adapts NATS headers to the propagator. NATS header names are
// case-sensitive; the propagator uses lower-case names (traceparent,
// tracestate, baggage) on both ends.
type natsCarrier nats.Header

func (c natsCarrier) Get(key string) string { return nats.Header(c).Get(key) }
func (c natsCarrier) Set(key, value string) { nats.Header(c).Set(key, value) }
func (c natsCarrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}

// InjectNATS writes ctx's trace context into h (publishers).
func InjectNATS(ctx context.Context, h nats.Header) {
	propagator.Inject(ctx, natsCarrier(h))
}

// ExtractNATS returns ctx carrying the trace context found in h (consumers:
// msg.Headers() of a jetstream.Msg). Without one, ctx is returned as is.
func ExtractNATS(ctx context.Context, h nats.Header) context.Context {
	if h == nil {
		return ctx
	}
	return propagator.Extract(ctx, natsCarrier(h))
}

// ExtractHTTP returns ctx carrying the trace context of an incoming HTTP
// request's headers (traceparent, tracestate, baggage).
func ExtractHTTP(ctx context.Context, h http.Header) context.Context {
	return propagator.Extract(ctx, propagation.HeaderCarrier(h))
}

// TraceHeaders returns ctx's trace context as header name → value (nil when
// ctx carries none), for an outbox row whose job is published later by the
// relay, outside the request.
func TraceHeaders(ctx context.Context) map[string]string {
	c := propagation.MapCarrier{}
	propagator.Inject(ctx, c)
	if len(c) == 0 {
		return nil
	}
	return c
}

// StartJobSpan starts the consumer span of a job message: a child of the
// trace in its headers (the upload's), named like "processor process".
// End it when the job is settled.
func StartJobSpan(ctx context.Context, h nats.Header, tracer, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	ctx = ExtractNATS(ctx, h)
	return otel.Tracer(tracer).Start(ctx, name, trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(attrs...))
}
