package ingest

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
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

type uploadLimit struct {
	limiter UploadLimiter
	limit   int
	per     time.Duration
	refused prometheus.Counter
}

// EnableUploadRateLimit lets each client make at most limit uploads per
// window (INTAKE_UPLOAD_RATE_LIMIT, INTAKE_UPLOAD_RATE_WINDOW); more get 429
// rate_limited with Retry-After, before the body is read. limit 0 leaves
// uploads unlimited. Call it once, before Run.
func (s *Server) EnableUploadRateLimit(limit int, per time.Duration, l UploadLimiter, reg prometheus.Registerer) {
	if limit <= 0 {
		return
	}
	if l == nil || reg == nil || per <= 0 {
		panic("ingest.EnableUploadRateLimit: nil limiter or registry, or no window")
	}
	refused := prometheus.NewCounter(prometheus.CounterOpts{Name: "docintake_ingest_rate_limited_total",
		Help: "Uploads refused with 429 because their client exceeded INTAKE_UPLOAD_RATE_LIMIT."})
	reg.MustRegister(refused)
	s.uploadLimit = &uploadLimit{limiter: l, limit: limit, per: per, refused: refused}
}

// rateLimit runs after authenticate and before the body is read. A refusal
// closes the connection like any other answer given before the body.
func (s *Server) rateLimit() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			ul := s.uploadLimit
			if ul == nil {
				return next(c)
			}
			ok, retry, err := ul.limiter.TakeUpload(c.Request().Context(), clientFrom(c).ID, ul.limit, ul.per)
			if err != nil {
				return err
			}
			if ok {
				return next(c)
			}
			ul.refused.Inc()
			closeUnread(c)
			c.Response().Header().Set("Retry-After", strconv.Itoa(int(retry/time.Second)))
			return c.JSON(http.StatusTooManyRequests, errorBody{Code: codeRateLimited,
				Message: fmt.Sprintf("more than %d uploads in %s; retry after %d s", ul.limit, ul.per, int(retry/time.Second))})
		}
	}
}
