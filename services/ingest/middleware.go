package ingest

import (
	"crypto/subtle"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"
)

// clientFrom returns the authenticated client of the request.
func clientFrom(c echo.Context) document.Client {
	cl, _ := c.Get("client").(document.Client)
	return cl
}

// bearerToken extracts the token of "Authorization: Bearer <token>". The
// scheme is case-insensitive (RFC 7235); tokens in the query string are
// ignored on purpose, since they end up in logs and proxies.
func bearerToken(h string) (string, bool) {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || subtle.ConstantTimeCompare([]byte(strings.ToLower(scheme)), []byte("bearer")) != 1 {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

// authenticate runs before anything reads the body; its refusal is the
// connection's last (closeRefusals).
func (s *Server) authenticate() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			tok, ok := bearerToken(c.Request().Header.Get(echo.HeaderAuthorization))
			if !ok {
				return document.CodedErrorf(document.EUNAUTHENTICATED, codeUnauthorized, "missing bearer token")
			}
			cl, err := s.clientByToken(c.Request().Context(), tok)
			if err != nil {
				if document.ErrorKind(err) == document.EUNAUTHENTICATED {
					return document.CodedErrorf(document.EUNAUTHENTICATED, codeUnauthorized, "invalid bearer token")
				}
				return err
			}
			c.Set("client", cl)
			return next(c)
		}
	}
}

// bodyLimit answers 413 from Content-Length alone when it is declared too
// large, and otherwise caps the body so reading past the limit fails; the
// rest of an oversized body is never read into memory.
func (s *Server) bodyLimit() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			if r.ContentLength > s.cfg.MaxUploadBytes {
				return tooLarge(s.cfg.MaxUploadBytes)
			}
			r.Body = http.MaxBytesReader(c.Response(), r.Body, s.cfg.MaxUploadBytes)
			return next(c)
		}
	}
}

// closeRefusals runs before routing, so for every request: an answer given
// before the body was read to its end (a 404 or 405 of an unknown route, a
// 401, 413, 415, a refused console form...) is the connection's last
// (closeUnread). Without it net/http reads up to 256 KiB of the unread body
// before it sends the answer, so a stranger dribbling a small body to any
// route that does not read it held the connection until ReadTimeout (5 min)
// and got its 404 only then.
func closeRefusals(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
			return next(c)
		}
		orig := r.Body
		b := &eofBody{ReadCloser: orig}
		r.Body = b
		refused := false
		c.Response().Before(func() {
			if !b.eof.Load() {
				refused = true
				closeUnread(c)
			}
		})
		err := next(c)
		if refused && c.Response().Committed && !strings.EqualFold(r.Header.Get("Expect"), "100-continue") {
			lingerUnread(c, b)
		}
		// net/http looks at the request's own body type after the handler
		// (a larger body is then half-closed before the close, not reset).
		r.Body = orig
		return err
	}
}

// lingerUnread sends the refusal and then reads (and throws away) what the
// client is still sending, up to unreadDrainMax and until closeUnread's read
// deadline. A client that sent its whole body then sees an orderly close
// after the answer, not a reset: a reset reaches a client that is still
// writing as "connection reset by peer" on its write, and an ordinary
// client (Go's net/http, curl) then reports that instead of the answer.
// A client that asked to be told before sending (Expect: 100-continue)
// sends nothing more after a refusal, so there is nothing to wait for.
func lingerUnread(c echo.Context, body io.Reader) {
	_ = http.NewResponseController(c.Response()).Flush()
	if c.Request().ContentLength > unreadDrainMax {
		// Declared larger than the drain: it would not end cleanly anyway,
		// and net/http half-closes it; reading a megabyte of a body refused
		// for its size would only be work for nothing.
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(body, unreadDrainMax))
}

// unreadDrainMax bounds what a refused request may still send after the
// answer: a refused upload of up to 1 MiB ends cleanly, a larger one is
// half-closed by net/http and closed 500 ms later.
const unreadDrainMax = 1 << 20

// eofBody records whether the request body was read to its end. net/http
// returns io.EOF with the last bytes of a body of known length, so a
// handler that read everything it was sent has seen it.
type eofBody struct {
	io.ReadCloser
	eof atomic.Bool
}

func (b *eofBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) {
		b.eof.Store(true)
	}
	return n, err
}

// closeUnread makes the answer the connection's last, for a refusal given
// before the body was read. "Connection: close" makes net/http send it at
// once instead of first reading what the client may still be sending.
//
// After the answer the rest of the body is still read (lingerUnread, then
// net/http's up to 256 KiB); the read deadline bounds that by unreadLinger.
// It must not stop it outright: closing a socket with unread data in it
// makes the kernel send a reset, and a client still writing its body then
// sees "broken pipe" or "connection reset" instead of the 413 or 401 already
// sent to it (a lingering close, as nginx does). A larger declared body is
// not read to its end; net/http then half-closes and waits 500 ms before the
// close, for the same reason. A stranger dribbling a body holds the
// connection for unreadLinger, not ReadTimeout.
func closeUnread(c echo.Context) {
	if c.Request().ContentLength != 0 {
		c.Response().Header().Set(echo.HeaderConnection, "close")
		_ = http.NewResponseController(c.Response()).SetReadDeadline(time.Now().Add(unreadLinger))
	}
}

// unreadLinger is how long a refused request's unread body is still read
// (and thrown away) after the answer: 1 MiB in 2 s needs about 4 Mbit/s.
const unreadLinger = 2 * time.Second

func tooLarge(limit int64) error {
	return document.CodedErrorf(document.ETOOLARGE, codeTooLarge, "request body exceeds %d bytes", limit)
}

func (s *Server) accessLog() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := time.Now()
			err := next(c)
			if err != nil {
				c.Error(err) // let the error handler write the response before we log its status
			}
			fields := []zap.Field{
				zap.String("request_id", c.Response().Header().Get(echo.HeaderXRequestID)),
				zap.String("method", c.Request().Method),
				zap.String("route", c.Path()),
				zap.Int("status", c.Response().Status),
				zap.Int64("bytes_in", c.Request().ContentLength),
				zap.Duration("latency", time.Since(start)),
			}
			if cl := clientFrom(c); cl.ID != "" {
				fields = append(fields, zap.String("client_id", cl.ID))
			}
			if v, ok := c.Get("log_id").(string); ok {
				fields = append(fields, zap.String("log_id", v))
			}
			if v, ok := c.Get("message_id").(string); ok {
				fields = append(fields, zap.String("message_id", v))
			}
			s.logger.Info("request", fields...)
			return nil
		}
	}
}

type httpMetrics struct {
	requests    *prometheus.CounterVec
	latency     *prometheus.HistogramVec
	uploadBytes prometheus.Histogram
	handler     http.Handler
}

func newHTTPMetrics(reg prometheus.Registerer) *httpMetrics {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "docintake_http_requests_total", Help: "HTTP requests by route template, method and status code.",
		}, []string{"route", "method", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "docintake_http_request_duration_seconds", Help: "HTTP request latency by route template.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"route", "method"}),
		uploadBytes: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "docintake_ingest_upload_bytes", Help: "Size of accepted PDF uploads in bytes.",
			Buckets: prometheus.ExponentialBuckets(1<<10, 4, 10),
		}),
	}
	reg.MustRegister(m.requests, m.latency, m.uploadBytes)
	if g, ok := reg.(prometheus.Gatherer); ok {
		m.handler = promhttp.HandlerFor(g, promhttp.HandlerOpts{})
	} else {
		m.handler = promhttp.Handler()
	}
	return m
}

func (m *httpMetrics) middleware() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := time.Now()
			err := next(c)
			if err != nil {
				c.Error(err)
			}
			route := c.Path() // the template, never the raw path
			if route == "" {
				route = "unmatched"
			}
			m.requests.WithLabelValues(route, c.Request().Method, strconv.Itoa(c.Response().Status)).Inc()
			m.latency.WithLabelValues(route, c.Request().Method).Observe(time.Since(start).Seconds())
			return nil
		}
	}
}

func (s *Server) handleHealthz(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) handleReadyz(c echo.Context) error {
	failed := s.health.Ready(c.Request().Context())
	if len(failed) > 0 {
		names := make([]string, 0, len(failed))
		for n := range failed {
			names = append(names, n)
		}
		return c.JSON(http.StatusServiceUnavailable, map[string]any{"status": "unavailable", "failed": sorted(names)})
	}
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

func sorted(s []string) []string { slices.Sort(s); return s }
