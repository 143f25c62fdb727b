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

// Every route of the service is registered in this file: routes the core API
// at New, and the parts a deployment enables (EnableTemplates,
// EnableReprocess, EnableOps) through the functions below.

// routes is the core API surface.
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

// templateRoutes is the client template API (EnableTemplates). PUT's body is
// capped by the template limits (readTemplateBody), not by
// INTAKE_MAX_UPLOAD_BYTES.
func (s *Server) templateRoutes(a *templatesAPI) {
	api := s.echo.Group(s.cfg.BasePath)
	api.GET("/templates", a.handleList, s.authenticate())
	api.GET("/templates/:name", a.handleGet, s.authenticate())
	api.PUT("/templates/:name", a.handlePut, s.authenticate(), s.templateChangeRate())
	api.DELETE("/templates/:name", a.handleDelete, s.authenticate(), s.templateChangeRate())
}

// priceListRoutes is the client price list API (EnablePriceLists): each
// change replaces a whole list and counts as one of the client's template
// changes (INTAKE_TEMPLATE_CHANGE_RATE_LIMIT). PUT's body is capped at
// pricelist.DefaultMaxBytes.
func (s *Server) priceListRoutes(a *priceListsAPI) {
	api := s.echo.Group(s.cfg.BasePath)
	api.GET("/price-lists", a.handleList, s.authenticate())
	api.GET("/price-list", a.handleGet, s.authenticate())
	api.PUT("/price-list", a.handlePut, s.authenticate(), s.templateChangeRate())
	api.DELETE("/price-list", a.handleDelete, s.authenticate(), s.templateChangeRate())
}

// reprocessRoutes is a client's reprocess request (EnableReprocess): it
// counts against the client's upload rate.
func (s *Server) reprocessRoutes(h echo.HandlerFunc) {
	api := s.echo.Group(s.cfg.BasePath)
	api.POST("/documents/:log_id/reprocess", h, s.authenticate(), s.rateLimit())
}

// routes is the ops console (EnableOps): pages behind o.auth, forms with
// o.form (size and time bounds) and o.checkCSRF.
func (o *ops) routes(e *echo.Echo) {
	g := e.Group("/ops", o.headers)
	g.GET("", func(c echo.Context) error { return c.Redirect(http.StatusSeeOther, "/ops/") })
	g.GET("/static/ops.css", o.handleCSS)
	g.GET("/login", o.handleLoginForm)
	g.POST("/login", o.handleLogin, o.form)
	g.POST("/logout", o.handleLogout, o.form)
	g.GET("/", o.handleIndex, o.auth)
	g.GET("/documents", o.handleFind, o.auth)
	g.GET("/documents/:log_id", o.handleDocument, o.auth)
	g.POST("/documents/:log_id/requeue", o.handleAction("requeued"), o.auth, o.form, o.checkCSRF)
	g.POST("/documents/:log_id/give-up", o.handleAction("given-up"), o.auth, o.form, o.checkCSRF)
	g.POST("/documents/:log_id/redeliver", o.handleAction("redelivered"), o.auth, o.form, o.checkCSRF)
	g.POST("/documents/:log_id/reprocess", o.handleAction("reprocessed"), o.auth, o.form, o.checkCSRF) // ops_templates.go
	g.GET("/templates", o.handleTemplates, o.auth)
	if o.review != nil {
		o.reviewRoutes(g, o.review)
	}
}

// reviewRoutes are the review queue and pages (OpsConfig.Review,
// ops_review.go). The approval's form carries a whole corrected order.
func (o *ops) reviewRoutes(g *echo.Group, r *reviewer) {
	approveForm := func(next echo.HandlerFunc) echo.HandlerFunc { return o.formUpTo(reviewFormMaxBytes, next) }
	g.GET("/static/review.js", r.handleJS)
	g.GET("/static/review.css", r.handleCSS)
	g.GET("/review", r.handleQueue, o.auth)
	g.GET("/review/:log_id", r.handlePage, o.auth)
	g.GET("/review/:log_id/pages/:n", r.handlePageImage, o.auth)
	g.POST("/review/:log_id/approve", r.handleApprove, o.auth, approveForm, o.checkCSRF)
	g.POST("/review/:log_id/release", r.handleRelease, o.auth, o.form, o.checkCSRF)
	g.POST("/review/:log_id/sample", r.handleSample, o.auth, o.form, o.checkCSRF)
	// Learning from the review (ops_review_draft.go, ops_review_map.go):
	// from a held document's page these post its whole corrected order.
	pushForm := func(next echo.HandlerFunc) echo.HandlerFunc {
		return o.formUpTo(r.push.lim.MaxBytes+reviewFormMaxBytes, next)
	}
	g.POST("/review/:log_id/draft", r.handleDraft, o.auth, approveForm, o.checkCSRF)
	g.POST("/review/:log_id/draft/push", r.handlePush, o.auth, pushForm, o.checkCSRF)
	g.POST("/review/:log_id/map", r.handleMap, o.auth, approveForm, o.checkCSRF)
}
