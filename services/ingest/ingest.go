// Package ingest is docintake's client-facing API: uploads (multipart and
// JSON), document details, bearer authentication, health, readiness, metrics
// and the OpenAPI description. An accepted upload is stored in the object
// store, recorded in PostgreSQL together with its processing job (outbox) in
// one transaction, and only then answered with 202.
package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/docintake/docintake/pkg/config"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/observability"
	"github.com/docintake/docintake/pkg/store"
	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
)

// Config is what the API needs of the system configuration.
type Config struct {
	BasePath        string        // prefix of the client API ("" = root)
	MaxUploadBytes  int64         // larger request bodies get 413
	ShutdownTimeout time.Duration // grace for in-flight requests
	SubjectPrefix   string        // jobs go to <prefix>.process.<client>
	// ReadHeaderTimeout bounds the time a client may take to send the
	// request headers (slowloris); 0 means config's
	// Tuning.ReadHeaderTimeout.
	ReadHeaderTimeout time.Duration
	// TemplateLimits bound a client's templates (PUT /templates); a zero
	// field means its default. The change rate is
	// EnableTemplateChangeRateLimit's.
	TemplateLimits config.TemplateLimits
	// TemplateBudget bounds each sample's template run of PUT /templates
	// (INTAKE_TEMPLATE_BUDGET); 0 means template.DefaultBudget.
	TemplateBudget time.Duration
}

// Store is what the API needs of PostgreSQL (implemented by *store.Store).
type Store interface {
	ClientByToken(ctx context.Context, token string) (document.Client, error)
	DocumentByMessageID(ctx context.Context, clientID, messageID string) (document.Document, error)
	DocumentByLogID(ctx context.Context, clientID, logID string) (document.Document, error)
	CreateDocument(ctx context.Context, d document.Document, job store.OutboxRow) (document.Document, bool, error)
}

// Objects is what the API needs of the object store.
type Objects interface {
	Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) error
	Delete(ctx context.Context, key string) error
	URI(key string) string
}

// Templates resolves the upload's template or party_id to a template name.
type Templates interface {
	// Resolve returns the template's name for an explicit name, or the
	// template that claims partyID, among those clientID may use (its own
	// and the global ones, enabled); ok is false when there is none.
	Resolve(clientID, name, partyID string) (template string, ok bool)
}

// Server is the ingest HTTP API.
type Server struct {
	cfg       Config
	store     Store
	objects   Objects
	templates Templates
	logger    *zap.Logger
	health    *observability.Health
	metrics   *httpMetrics
	echo      *echo.Echo
	now       func() time.Time
	// uploadLimit is nil unless EnableUploadRateLimit set a limit;
	// templateChangeLimit unless EnableTemplateChangeRateLimit did.
	uploadLimit, templateChangeLimit *clientLimit
	tokens                           *tokenCache
}

// New builds the API. The jobs of accepted uploads are published by the
// relay that st's *store.Store hands its outbox rows to (system.NewRelay).
func New(cfg Config, st Store, objects Objects, templates Templates, logger *zap.Logger,
	reg prometheus.Registerer, health *observability.Health) *Server {
	if st == nil || objects == nil || templates == nil || logger == nil || reg == nil || health == nil {
		panic("ingest.New: nil dependency")
	}
	if cfg.MaxUploadBytes <= 0 {
		cfg.MaxUploadBytes = config.Defaults().MaxUploadBytes
	}
	if cfg.SubjectPrefix == "" {
		cfg.SubjectPrefix = config.Defaults().SubjectPrefix
	}
	cfg.TemplateLimits = templateLimits(cfg.TemplateLimits)
	s := &Server{cfg: cfg, store: st, objects: objects, templates: templates, logger: logger,
		health: health, metrics: newHTTPMetrics(reg), now: time.Now}
	s.tokens = newTokenCache(tokenCacheTTL, func() time.Time { return s.now() })
	s.echo = s.routes()
	return s
}

// Handler returns the HTTP handler (for tests with httptest).
func (s *Server) Handler() http.Handler { return s.echo }

// Run serves on addr until ctx is done, then stops taking requests, marks
// itself not ready and lets in-flight requests finish within the shutdown
// timeout. The listener is bound before serving so a port conflict fails at
// once; bound, if not nil, receives the address (for ":0" in tests).
func (s *Server) Run(ctx context.Context, addr string, bound chan<- string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", addr, err)
	}
	if bound != nil {
		bound <- ln.Addr().String()
	}
	headerTimeout := s.cfg.ReadHeaderTimeout
	if headerTimeout <= 0 {
		headerTimeout = config.Defaults().Tuning.ReadHeaderTimeout
	}
	srv := &http.Server{
		Handler: s.echo,
		// Slowloris: a client must send its headers promptly; the body of a
		// large upload may take longer, but not forever.
		ReadHeaderTimeout: headerTimeout,
		ReadTimeout:       5 * time.Minute,
		WriteTimeout:      5 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          zap.NewStdLog(s.logger.Named("http")),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	s.logger.Info("ingest listening", zap.String("addr", ln.Addr().String()))
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	s.health.SetDraining()
	grace := s.cfg.ShutdownTimeout
	if grace <= 0 {
		grace = config.Defaults().ShutdownTimeout
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}
