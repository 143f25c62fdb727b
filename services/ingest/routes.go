package ingest

import (
	_ "embed"
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

//go:embed openapi.yaml
var openAPISpec []byte

// OpenAPI returns the OpenAPI 3.1 description of the client API.
func OpenAPI() []byte { return openAPISpec }

// routes is the whole API surface on one screen.
func (s *Server) routes() *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.handleError
	e.Pre(closeRefusals) // before routing: unknown routes and 405s too

	// Outermost first: request id, trace span (so the access log and the
	// handlers run inside it), access log (outside Recover so a panic is
	// logged as the 500 it becomes), metrics by route template (also
	// outside Recover, so panics are counted), recover.
	e.Use(middleware.RequestID())
	e.Use(s.tracing())
	e.Use(s.accessLog())
	e.Use(s.metrics.middleware())
	e.Use(middleware.RecoverWithConfig(middleware.RecoverConfig{DisableStackAll: true, LogErrorFunc: s.logPanic}))

	e.GET("/healthz", s.handleHealthz)
	e.GET("/readyz", s.handleReadyz)
	e.GET("/metrics", echo.WrapHandler(s.metrics.handler))
	e.GET(s.cfg.BasePath+"/openapi.yaml", func(c echo.Context) error {
		return c.Blob(http.StatusOK, "application/yaml", openAPISpec)
	})

	// Middleware per route, not Group.Use: a group's middleware also runs for
	// unmatched paths, which would turn every 404 into a 401.
	api := e.Group(s.cfg.BasePath)
	api.POST("/incoming", s.handleUploadMultipart(), s.authenticate(), s.rateLimit(), s.bodyLimit())
	api.POST("/incoming-json", s.handleUploadJSON(), s.authenticate(), s.rateLimit(), s.bodyLimit())
	api.GET("/documents/:log_id", s.handleDocument(), s.authenticate())
	return e
}
