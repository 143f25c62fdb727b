// Package observability holds what every service shares for being watched:
// the JSON zap logger, the Prometheus registry, and the small health/metrics
// HTTP server of the worker services (ingest serves the same endpoints on its
// API listener).
package observability

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// NewLogger returns a JSON logger at level (debug, info, warn, error) writing
// to stderr, with RFC 3339 timestamps and the service name on every line.
func NewLogger(level, service string) (*zap.Logger, error) {
	lvl, err := zapcore.ParseLevel(level)
	if err != nil {
		return nil, fmt.Errorf("log level: %w", err)
	}
	cfg := zap.NewProductionConfig()
	cfg.Level = zap.NewAtomicLevelAt(lvl)
	cfg.EncoderConfig.TimeKey = "time"
	cfg.EncoderConfig.EncodeTime = zapcore.RFC3339NanoTimeEncoder
	cfg.Sampling = nil // every error line matters when tracing one document
	l, err := cfg.Build()
	if err != nil {
		return nil, fmt.Errorf("build logger: %w", err)
	}
	return l.With(zap.String("service", service)), nil
}

// NewRegistry returns a registry with the Go runtime and process collectors.
func NewRegistry() *prometheus.Registry {
	r := prometheus.NewRegistry()
	r.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return r
}

// Check is a readiness probe of one dependency.
type Check struct {
	Name string
	Func func(ctx context.Context) error
}

// Health answers /healthz (the process is up) and /readyz (every check
// passes, and the process is not draining).
type Health struct {
	checks   []Check
	draining atomic.Bool
}

// NewHealth returns a Health with the given readiness checks.
func NewHealth(checks ...Check) *Health { return &Health{checks: checks} }

// SetDraining makes /readyz answer 503 so load balancers stop sending work
// while the process shuts down.
func (h *Health) SetDraining() { h.draining.Store(true) }

// Ready runs every check with a short deadline and returns the failures by
// name (empty when ready).
func (h *Health) Ready(ctx context.Context) map[string]string {
	failed := map[string]string{}
	if h.draining.Load() {
		failed["process"] = "draining"
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	for _, c := range h.checks {
		if err := c.Func(ctx); err != nil {
			failed[c.Name] = err.Error()
		}
	}
	return failed
}

// Serve runs a health and metrics server on addr until ctx is done. The
// listener is bound before Serve returns control to the caller's goroutine
// so a port conflict fails start-up at once; ready, if not nil, receives the
// bound address.
func Serve(ctx context.Context, addr string, h *Health, reg *prometheus.Registry, ready chan<- string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", addr, err)
	}
	if ready != nil {
		ready <- ln.Addr().String()
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok"}`))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if failed := h.Ready(r.Context()); len(failed) > 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = fmt.Fprintf(w, `{"status":"unavailable","failed":%d}`, len(failed))
			return
		}
		_, _ = w.Write([]byte(`{"status":"ok"}`))
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("metrics server: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("metrics server shutdown: %w", err)
	}
	return nil
}

// ServePprof serves Go's runtime profiles (net/http/pprof under
// /debug/pprof/) on addr until ctx is done; with addr "" it returns nil at
// once. The profiles are on their own listener, never on the client API, so
// they stay off unless an operator asks for them (INTAKE_PPROF_ADDR).
func ServePprof(ctx context.Context, addr string) error {
	if addr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("pprof listen %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	// No write timeout: a CPU profile streams for its whole ?seconds=.
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("pprof server: %w", err)
	case <-ctx.Done():
	}
	return srv.Close()
}

// Register registers c with reg, or returns the collector registered there
// already under the same name: components that run more than once in one
// process (two processors or relays on one registry, in tests and in
// standalone) share one metric instead of failing.
// Any other registration error is a programming error (a descriptor that
// clashes with another metric's) and panics, as MustRegister does, instead
// of leaving a metric silently unexported.
func Register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
		panic(fmt.Sprintf("observability: register metric: %v", err))
	}
	return c
}
