package ingest

import (
	"context"
	"fmt"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
)

// codeRateLimited is the 429 answer's error code.
const codeRateLimited = "rate_limited"

// UploadLimiter counts a client's uploads (implemented by *store.Store in
// PostgreSQL, so the limit holds across ingest replicas).
type UploadLimiter interface {
	TakeUpload(ctx context.Context, clientID string, limit int, per time.Duration) (ok bool, retryAfter time.Duration, err error)
}

// clientLimit is one per-client limit: at most limit requests per fixed
// window, counted by limiter under the client's id with prefix in front.
type clientLimit struct {
	limiter UploadLimiter
	// prefix tells the template changes' counter from the uploads' (which
	// use the bare client id). Client ids are [a-z0-9_-], so a prefix
	// ending in ':' never meets a client's own counter.
	prefix  string
	limit   int
	per     time.Duration
	what    string // "uploads" in the 429's message
	refused prometheus.Counter
}

// templateChangesPrefix keys the template change counter.
const templateChangesPrefix = "template-changes:"

func newClientLimit(limit int, per time.Duration, l UploadLimiter, reg prometheus.Registerer, opts prometheus.CounterOpts) *clientLimit {
	if limit <= 0 {
		return nil
	}
	if l == nil || reg == nil || per <= 0 {
		panic("ingest: rate limit " + opts.Name + ": nil limiter or registry, or no window")
	}
	refused := prometheus.NewCounter(opts)
	reg.MustRegister(refused)
	return &clientLimit{limiter: l, limit: limit, per: per, refused: refused}
}

// EnableUploadRateLimit lets each client make at most limit uploads per
// window (INTAKE_UPLOAD_RATE_LIMIT, INTAKE_UPLOAD_RATE_WINDOW); more get 429
// rate_limited with Retry-After, before the body is read. A client's
// reprocess request and each PDF sample of its template changes count as
// an upload: they cost an extraction as an upload does. limit 0 leaves
// uploads unlimited. Call it once, before Run.
func (s *Server) EnableUploadRateLimit(limit int, per time.Duration, l UploadLimiter, reg prometheus.Registerer) {
	s.uploadLimit = newClientLimit(limit, per, l, reg, prometheus.CounterOpts{Name: "docintake_ingest_rate_limited_total",
		Help: "Uploads, reprocess requests and template sample runs refused with 429 because their client exceeded INTAKE_UPLOAD_RATE_LIMIT."})
	if s.uploadLimit != nil {
		s.uploadLimit.what = "uploads (reprocess requests and PDF samples included)"
	}
}

// EnableTemplateChangeRateLimit lets each client make at most limit
// template changes (PUT and DELETE /templates/{name}, refused ones too) per
// window (INTAKE_TEMPLATE_CHANGE_RATE_LIMIT, _WINDOW): every change
// compiles regexes and runs samples on every replica's catalogue. More get
// 429 rate_limited with Retry-After, before the body is read. limit 0
// leaves changes unlimited. Call it once, before Run.
func (s *Server) EnableTemplateChangeRateLimit(limit int, per time.Duration, l UploadLimiter, reg prometheus.Registerer) {
	s.templateChangeLimit = newClientLimit(limit, per, l, reg, prometheus.CounterOpts{Name: "docintake_ingest_template_changes_rate_limited_total",
		Help: "Template changes refused with 429 because their client exceeded INTAKE_TEMPLATE_CHANGE_RATE_LIMIT."})
	if s.templateChangeLimit != nil {
		s.templateChangeLimit.prefix, s.templateChangeLimit.what = templateChangesPrefix, "template changes"
	}
}

// take counts one request of clientID; a refusal is a rate-limit error
// carrying the wait. A nil limit takes nothing.
func (l *clientLimit) take(ctx context.Context, clientID string) error {
	if l == nil {
		return nil
	}
	ok, retry, err := l.limiter.TakeUpload(ctx, l.prefix+clientID, l.limit, l.per)
	if err != nil || ok {
		return err
	}
	l.refused.Inc()
	return &rateLimitedError{limit: l, retry: retry}
}

// rateLimitedError is a refusal of take: the error handler answers it
// with 429 rate_limited and Retry-After.
type rateLimitedError struct {
	limit *clientLimit
	retry time.Duration
}

func (e *rateLimitedError) Error() string {
	return fmt.Sprintf("more than %d %s in %s; retry after %d s", e.limit.limit, e.limit.what, e.limit.per, e.seconds())
}

func (e *rateLimitedError) seconds() int { return int(e.retry / time.Second) }

// limitedBy runs after authenticate and before the body is read: each
// request takes one of its client's limit that get returns when the request
// arrives (the Enable calls may come after the routes are built). A refusal
// closes the connection like any other answer given before the body.
func limitedBy(get func() *clientLimit) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if err := get().take(c.Request().Context(), clientFrom(c).ID); err != nil {
				closeUnread(c)
				return err
			}
			return next(c)
		}
	}
}

// rateLimit takes one of the client's uploads (EnableUploadRateLimit).
func (s *Server) rateLimit() echo.MiddlewareFunc {
	return limitedBy(func() *clientLimit { return s.uploadLimit })
}

// templateChangeRate takes one of the client's template changes
// (EnableTemplateChangeRateLimit).
func (s *Server) templateChangeRate() echo.MiddlewareFunc {
	return limitedBy(func() *clientLimit { return s.templateChangeLimit })
}
