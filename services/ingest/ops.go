package ingest

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/docintake/docintake/pkg/config"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/lifecycle"
	"github.com/docintake/docintake/pkg/queue"
	"github.com/docintake/docintake/pkg/store"
	"github.com/labstack/echo/v4"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
)

//go:embed templates/*.html templates/*.css
var opsFiles embed.FS

// OpsConfig configures the ops console.
type OpsConfig struct {
	// Token is the console's shared bearer token (INTAKE_OPS_TOKEN), the
	// unnamed operator ops-console of every client. Browsers log in with it
	// (or an operator's own token) once and then carry a session cookie.
	Token string
	// Enabled serves the console for named operators without a shared
	// token (INTAKE_OPS_CONSOLE). The console is off unless Enabled, Token
	// or TrustedUserHeader is set.
	Enabled bool
	// TrustedUserHeader names the header an identity-aware proxy puts the
	// user's name in (INTAKE_OPS_TRUSTED_USER_HEADER); it is honoured only
	// from TrustedProxies (INTAKE_OPS_TRUSTED_PROXIES; nil: loopback), and
	// the user must have an operator account. Empty: never read.
	TrustedUserHeader string
	TrustedProxies    []netip.Prefix
	// SessionTTL is how long a login lasts (INTAKE_OPS_SESSION_TTL).
	// Sessions live in PostgreSQL: logout revokes one on every replica, and
	// changing the token ends all. Defaults to 12h.
	SessionTTL time.Duration
	// Stream and Consumers name the JetStream stream and the durable
	// consumers whose backlog the console shows. Consumers defaults to
	// processor and dispatcher.
	Stream    string
	Consumers []string
	// SubjectPrefix is where re-queued and re-delivered jobs go.
	SubjectPrefix string
	// Refresh is the pages' auto-refresh interval. Defaults to config's
	// Tuning.OpsRefresh.
	Refresh time.Duration
	// DLQLimit caps the DLQ list. Defaults to config's Tuning.OpsDLQLimit.
	DLQLimit int
	// Review, when set, adds the review queue and pages (ops_review.go).
	Review *ReviewConfig
}

// ops is the console: server-rendered pages, so it works through any
// proxy and needs no build step; only the review page adds a script of
// ours (review.js) for its boxes, arithmetic and keys.
type ops struct {
	cfg    OpsConfig
	store  *store.Store
	js     jetstream.JetStream // nil: queue section says so
	logger *zap.Logger
	pages  map[string]*template.Template
	tag    string    // HMAC of the token, stored with each session it opens
	review *reviewer // nil: no review pages
}

const (
	opsCookie = "docintake_ops"
)

// EnableOps mounts the ops console under /ops/ with its own tokens (never a
// client token). Call it once, before Run. Does nothing unless cfg.Enabled,
// cfg.Token or cfg.TrustedUserHeader is set.
func (s *Server) EnableOps(cfg OpsConfig, st *store.Store, js jetstream.JetStream) {
	if !cfg.Enabled && cfg.Token == "" && cfg.TrustedUserHeader == "" {
		return
	}
	if st == nil {
		panic("ingest.EnableOps: nil store")
	}
	if len(cfg.Consumers) == 0 {
		cfg.Consumers = []string{"processor", "dispatcher"}
	}
	if cfg.Refresh <= 0 {
		cfg.Refresh = config.Defaults().Tuning.OpsRefresh
	}
	if cfg.DLQLimit <= 0 {
		cfg.DLQLimit = config.Defaults().Tuning.OpsDLQLimit
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = config.Defaults().OpsSessionTTL
	}
	if cfg.SubjectPrefix == "" {
		cfg.SubjectPrefix = s.cfg.SubjectPrefix
	}
	if cfg.TrustedProxies == nil {
		cfg.TrustedProxies = config.Defaults().OpsTrustedProxies
	}
	o := &ops{cfg: cfg, store: st, js: js, logger: s.logger.Named("ops"), pages: parsePages(),
		tag: derive(cfg.Token, "session")}
	if cfg.Review != nil {
		o.review = newReviewer(o, *cfg.Review)
		o.review.push = s.draftPush()
	}
	o.routes(s.echo)
}

// derive makes the sessions' token tag and the CSRF values from the token
// with HMAC, so none reveals the token and rotating the token logs everyone
// out.
func derive(token, purpose string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("docintake ops " + purpose))
	return hex.EncodeToString(m.Sum(nil))
}

// headers keep the pages out of caches and frames and allow nothing but our
// own stylesheets, scripts (the review page's), images (its page images)
// and forms.
func (o *ops) headers(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		return next(c)
	}
}

// csrfFor is the form value that proves a form came from the console page
// of that session: it changes with every login.
func (o *ops) csrfFor(session string) string { return derive(o.cfg.Token, "csrf "+session) }

func (o *ops) auth(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, ok, err := o.identify(c)
		if errors.Is(err, errNoAccount) {
			return o.render(c, http.StatusForbidden, "error", map[string]any{"Message": "You have no operator account; ask for one (intakectl operators add)."})
		}
		if err != nil {
			return o.fail(c, err)
		}
		if !ok {
			if c.Request().Method == http.MethodGet && strings.Contains(c.Request().Header.Get("Accept"), "text/html") {
				return c.Redirect(http.StatusSeeOther, "/ops/login")
			}
			c.Response().Header().Set("WWW-Authenticate", `Bearer realm="docintake ops"`)
			return c.String(http.StatusUnauthorized, "unauthorized: an operator token or INTAKE_OPS_TOKEN as bearer token, or log in at /ops/login\n")
		}
		c.Set("ops_session", id.session)
		c.Set("ops_identity", id)
		c.Set("ops_operator", id.op)
		return next(c)
	}
}

// The console's forms hold a token or a CSRF value: a few hundred bytes,
// sent at once by any browser. A larger body is refused from its
// Content-Length, and one that does not arrive within opsFormReadTimeout is
// cut, so a dribbled login holds a connection for seconds, not ReadTimeout.
const (
	opsFormMaxBytes    = 4 << 10
	opsFormReadTimeout = 5 * time.Second
)

// form reads the POST form before the handler, bounded in size and time
// (the handlers and checkCSRF then use the parsed values). A refusal is the
// connection's last, as the body was not read (closeRefusals).
func (o *ops) form(next echo.HandlerFunc) echo.HandlerFunc { return o.formUpTo(opsFormMaxBytes, next) }

// formUpTo is form for a form of up to limit bytes (the review page's
// corrected order is larger than a button's form).
func (o *ops) formUpTo(limit int64, next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if r.ContentLength > limit {
			return o.render(c, http.StatusRequestEntityTooLarge, "error", map[string]any{"Message": "The form is too large."})
		}
		rc := http.NewResponseController(c.Response())
		_ = rc.SetReadDeadline(time.Now().Add(opsFormReadTimeout))
		r.Body = http.MaxBytesReader(c.Response(), r.Body, limit)
		if err := r.ParseForm(); err != nil {
			return o.formError(c, err)
		}
		// The body is read; a deadline left set would cancel the request's
		// context in the middle of the handler.
		_ = rc.SetReadDeadline(time.Time{})
		return next(c)
	}
}

func (o *ops) formError(c echo.Context, err error) error {
	var mbe *http.MaxBytesError
	var ne net.Error
	status, msg := http.StatusBadRequest, "The form could not be read."
	switch {
	case errors.As(err, &mbe):
		status, msg = http.StatusRequestEntityTooLarge, "The form is too large."
	case errors.As(err, &ne) && ne.Timeout():
		status, msg = http.StatusRequestTimeout, "The form did not arrive in time."
	}
	return o.render(c, status, "error", map[string]any{"Message": msg})
}

// checkCSRF: a browser sends the cookie (and the proxy its user header)
// with any form posted to us, also from another site's page; only our own
// pages know the CSRF value. Bearer requests are not sent by browsers on
// their own and need no check.
func (o *ops) checkCSRF(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if id, _ := c.Get("ops_identity").(identity); id.browser && (id.session == "" || !o.csrfOK(c, id.session)) {
			return o.staleForm(c)
		}
		return next(c)
	}
}

// csrfOK compares the form's CSRF value with the session's. Only the POST
// body counts (the console's forms send it there; it has no JavaScript):
// a value in the query string ends up in access logs, proxies and the
// Referer of the next page, and c.FormValue would read it from there too.
func (o *ops) csrfOK(c echo.Context, session string) bool {
	return subtle.ConstantTimeCompare([]byte(c.Request().PostFormValue("csrf")), []byte(o.csrfFor(session))) == 1
}

func (o *ops) staleForm(c echo.Context) error {
	return o.render(c, http.StatusForbidden, "error", map[string]any{"Message": "The form is stale; reload the page and try again."})
}

func (o *ops) handleCSS(c echo.Context) error {
	b, err := opsFiles.ReadFile("templates/ops.css")
	if err != nil {
		return fmt.Errorf("ops css: %w", err)
	}
	c.Response().Header().Set("Cache-Control", "max-age=300")
	return c.Blob(http.StatusOK, "text/css; charset=utf-8", b)
}

func (o *ops) handleLoginForm(c echo.Context) error {
	return o.render(c, http.StatusOK, "login", map[string]any{})
}

func (o *ops) handleLogin(c echo.Context) error {
	// The token only from the POST body: in a URL it would be kept in
	// browser history, access logs and proxies.
	op, ok, err := o.operatorByToken(c.Request().Context(), c.Request().PostFormValue("token"))
	if err != nil {
		return o.fail(c, err)
	}
	if !ok {
		o.logger.Warn("ops login failed", zap.String("remote", c.RealIP()))
		return o.render(c, http.StatusUnauthorized, "login", map[string]any{"Failed": true})
	}
	tag, name := o.tag, ""
	if op.Name != consoleOperator.Name {
		tag, name = store.OpsSessionByToken, op.Name
	}
	if _, err := o.openSession(c, tag, name); err != nil {
		return o.fail(c, err)
	}
	o.logger.Info("ops login", zap.String("operator", op.Name))
	return c.Redirect(http.StatusSeeOther, "/ops/")
}

// handleLogout revokes the session on the server, so a copy of the cookie
// is worth nothing afterwards, and clears it in the browser. It asks for
// the session's CSRF value like every other form: without it any site
// could log the operator out behind their back.
func (o *ops) handleLogout(c echo.Context) error {
	if ck, err := c.Cookie(opsCookie); err == nil && ck.Value != "" {
		if !o.csrfOK(c, ck.Value) {
			return o.staleForm(c)
		}
		if err := o.store.RevokeOpsSession(c.Request().Context(), sessionHash(ck.Value)); err != nil {
			return o.fail(c, err)
		}
	}
	c.SetCookie(&http.Cookie{Name: opsCookie, Value: "", Path: "/ops/", HttpOnly: true, MaxAge: -1})
	return c.Redirect(http.StatusSeeOther, "/ops/login")
}

// stateCount is one row of the documents-by-state table.
type stateCount struct {
	State document.State
	Count int
}

// consumerRow is one row of the queue table.
type consumerRow struct {
	queue.ConsumerStats
	Name      string
	OldestAge time.Duration // 0: nothing pending
	Err       string
}

func (o *ops) handleIndex(c echo.Context) error {
	ctx := c.Request().Context()
	op := operatorOf(c)
	data := map[string]any{"Done": doneMessage(c)}
	counts, err := o.indexCounts(ctx, op, data)
	if err != nil {
		return o.fail(c, err)
	}
	dlq, err := o.store.OpsDocumentsOf(ctx, op.Clients, document.StateDLQ, o.cfg.DLQLimit)
	if err != nil {
		return o.fail(c, err)
	}
	recent, err := o.store.OpsRecentDocumentsOf(ctx, op.Clients, 20)
	if err != nil {
		return o.fail(c, err)
	}
	// The mail intake's mailboxes of the operator's clients (issue 29).
	if data["Mailboxes"], err = o.store.MailboxStatuses(ctx, op.Clients, 24*time.Hour); err != nil {
		return o.fail(c, err)
	}
	var states []stateCount
	for _, st := range document.States {
		if st != document.StateUnknown {
			states = append(states, stateCount{st, counts[st]})
		}
	}
	data["States"], data["DLQ"], data["DLQTotal"], data["Recent"] = states, dlq, counts[document.StateDLQ], recent
	return o.render(c, http.StatusOK, "index", data)
}

// indexCounts returns the documents per state the operator sees. An
// operator of every client also gets the system's state (queues, outbox,
// deliveries) in data; a limited one does not, as those numbers count
// every client's documents.
func (o *ops) indexCounts(ctx context.Context, op operator, data map[string]any) (map[document.State]int, error) {
	if op.Clients != nil {
		return o.store.OpsStateCounts(ctx, op.Clients)
	}
	sum, err := o.store.OpsSummary(ctx)
	if err != nil {
		return nil, err
	}
	data["Summary"], data["Consumers"] = sum, queueStats(ctx, o.js, o.cfg.Stream, o.cfg.Consumers)
	return sum.States, nil
}

// queueStats reads every consumer's counters and the age of its oldest
// undelivered message; a consumer that cannot be read gets its error
// instead of failing the page.
func queueStats(ctx context.Context, js jetstream.JetStream, stream string, consumers []string) []consumerRow {
	out := make([]consumerRow, 0, len(consumers))
	for _, name := range consumers {
		row := consumerRow{Name: name}
		if js == nil {
			row.Err = "not connected to NATS"
			out = append(out, row)
			continue
		}
		st, err := queue.Stats(ctx, js, stream, name)
		if err != nil {
			row.Err = err.Error()
			out = append(out, row)
			continue
		}
		row.ConsumerStats = st
		if at, ok, err := queue.OldestPending(ctx, js, stream, name); err != nil {
			row.Err = err.Error()
		} else if ok {
			row.OldestAge = max(time.Since(at), 0)
		}
		out = append(out, row)
	}
	return out
}

func (o *ops) handleFind(c echo.Context) error {
	id := strings.TrimSpace(c.QueryParam("log_id"))
	if id == "" {
		return c.Redirect(http.StatusSeeOther, "/ops/")
	}
	return c.Redirect(http.StatusSeeOther, "/ops/documents/"+url.PathEscape(id))
}

// deliveryView is a delivery with its attempts.
type deliveryView struct {
	store.Delivery
	Calls []store.DeliveryAttempt
}

func (o *ops) handleDocument(c echo.Context) error {
	ctx := c.Request().Context()
	d, err := o.visibleDocument(c)
	if err != nil {
		return o.fail(c, err)
	}
	events, err := o.store.Events(ctx, d.ID)
	if err != nil {
		return o.fail(c, err)
	}
	dels, err := o.store.Deliveries(ctx, d.ID)
	if err != nil {
		return o.fail(c, err)
	}
	views := make([]deliveryView, 0, len(dels))
	for _, dv := range dels {
		atts, err := o.store.DeliveryAttempts(ctx, dv.ID)
		if err != nil {
			return o.fail(c, err)
		}
		views = append(views, deliveryView{dv, atts})
	}
	attempts, err := o.store.Attempts(ctx, d.ID)
	if err != nil {
		return o.fail(c, err)
	}
	flags, err := o.store.DocumentFlags(ctx, d.ID) // prices and dates, docs/orders.md
	if err != nil {
		return o.fail(c, err)
	}
	_, hasStatus := document.StatusFor(d.State)
	return o.render(c, http.StatusOK, "document", map[string]any{
		"Attempts":     attempts,
		"Flags":        flags,
		"CanReprocess": document.CanTransition(d.State, document.StateReceived),
		"Doc":          d,
		"Events":       events,
		"Deliveries":   views,
		"CanRequeue":   d.State == document.StateDLQ,
		"CanRedeliver": hasStatus || len(dels) > 0,
		"Done":         doneMessage(c),
	})
}

// handleAction runs one operator action and redirects to the document
// (post/redirect/get, so a refresh never repeats the action).
func (o *ops) handleAction(done string) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		d, err := o.visibleDocument(c)
		if err != nil {
			return o.fail(c, err)
		}
		actor := operatorOf(c).actor()
		switch done {
		case "requeued":
			_, err = lifecycle.Requeue(ctx, o.store, o.cfg.SubjectPrefix, d, actor)
		case "given-up":
			_, err = lifecycle.GiveUp(ctx, o.store, d, actor)
		case "redelivered":
			_, err = lifecycle.Redeliver(ctx, o.store, o.cfg.SubjectPrefix, d, actor)
		case "reprocessed":
			_, err = lifecycle.Reprocess(ctx, o.store, o.cfg.SubjectPrefix, d, actor)
		}
		if err != nil {
			return o.fail(c, err)
		}
		o.logger.Info("ops action", zap.String("action", done), zap.String("operator", operatorOf(c).Name), zap.String("log_id", d.LogID),
			zap.String("client_id", d.ClientID), zap.String("from_state", string(d.State)))
		return c.Redirect(http.StatusSeeOther, "/ops/documents/"+url.PathEscape(d.LogID)+"?done="+done)
	}
}

// doneMessage turns the redirect's ?done= into a fixed sentence; the query
// value itself is never shown.
func doneMessage(c echo.Context) string {
	switch c.QueryParam("done") {
	case "requeued":
		return "Re-queued: a new process job is in the outbox."
	case "given-up":
		return "Given up: the document is finished_with_failure."
	case "redelivered":
		return "Redelivery queued under a new webhook-id."
	case "reprocessed":
		return "Reprocessing with the current template version (a new attempt)."
	}
	return ""
}

// fail renders an error page with the status the API would use.
func (o *ops) fail(c echo.Context, err error) error {
	status := http.StatusInternalServerError
	switch document.ErrorKind(err) {
	case document.ENOTFOUND:
		status = http.StatusNotFound
	case document.ECONFLICT:
		status = http.StatusConflict
	case document.EINVALID:
		status = http.StatusUnprocessableEntity
	case document.EUNAVAILABLE:
		status = http.StatusServiceUnavailable
	}
	msg := "internal error (see the ingest log)"
	if e, ok := document.AsError(err); ok && status != http.StatusInternalServerError {
		msg = e.Message
	} else {
		o.logger.Error("ops page failed", zap.String("route", c.Path()), zap.Error(err))
	}
	return o.render(c, status, "error", map[string]any{"Message": msg})
}

func (o *ops) render(c echo.Context, status int, page string, data map[string]any) error {
	session, _ := c.Get("ops_session").(string)
	if ck, err := c.Cookie(opsCookie); err == nil && session == "" {
		// Pages outside auth (login, a refused logout) carry the logout
		// form too; its value is bound to the cookie the browser sent, which
		// the logout checks it against.
		session = ck.Value
	}
	data["CSRF"] = o.csrfFor(session)
	if id, ok := c.Get("ops_identity").(identity); ok {
		data["Operator"], data["ViaProxy"] = id.op, id.proxy
	}
	data["Refresh"] = int(o.cfg.Refresh.Seconds())
	data["Now"] = time.Now().UTC()
	data["Page"] = page
	data["ReviewOn"] = o.review != nil
	var b strings.Builder
	if err := o.pages[page].ExecuteTemplate(&b, "layout", data); err != nil {
		return fmt.Errorf("render %s: %w", page, err)
	}
	return c.HTML(status, b.String())
}

// parsePages parses every page together with the shared layout. The
// templates are embedded, so a parse error is a build error: panic.
func parsePages() map[string]*template.Template {
	funcs := template.FuncMap{
		"age": func(d time.Duration) string {
			switch {
			case d <= 0:
				return "–"
			case d < time.Second:
				return d.Round(time.Millisecond).String()
			default:
				return d.Round(time.Second).String()
			}
		},
		"since": func(t time.Time) string {
			if t.IsZero() {
				return "–"
			}
			return time.Since(t).Round(time.Second).String()
		},
		"sinceAt": func(now, t time.Time) string {
			if t.IsZero() {
				return "–"
			}
			return now.Sub(t).Round(time.Second).String()
		},
		"ts":    func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") },
		"ms":    func(d time.Duration) string { return d.Round(time.Millisecond).String() },
		"shown": showBidi,
	}
	pages := map[string]*template.Template{}
	for _, p := range []string{"index", "document", "login", "error", "templates", "review", "review_queue", "review_draft"} {
		pages[p] = template.Must(template.New(p).Funcs(funcs).ParseFS(opsFiles, "templates/layout.html", "templates/"+p+".html"))
	}
	return pages
}
