package ingest

import (
	"context"
	_ "embed"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/lifecycle"
	"github.com/docintake/docintake/pkg/objectstore"
	"github.com/docintake/docintake/pkg/pdftext"
	"github.com/docintake/docintake/pkg/resultjson"
	"github.com/labstack/echo/v4"
	"go.uber.org/zap"
)

// The console's review of held rejections (issue 27): a queue of the
// documents held for review, and a page per document with its pages drawn
// beside the values read, where an operator corrects the order and
// approves it (lifecycle.Review.Approve: delivered as success) or releases
// the rejection. The page is server-rendered; review.js (served from the
// console, allowed by the CSP as script-src 'self') positions the boxes of
// the values on the page images, re-runs the template's checks as the
// person types and gives the keyboard shortcuts. The server decides
// everything again on approval.

//go:embed templates/review.js
var reviewJS []byte

//go:embed templates/review.css
var reviewCSS []byte

// reviewFormMaxBytes bounds the approval's form: a corrected order of a
// few hundred items, far below a console's time and memory.
const reviewFormMaxBytes = 512 << 10

// ReviewConfig turns on the console's review pages (OpsConfig.Review).
type ReviewConfig struct {
	// Review runs the actions; its Objects also hold the source PDFs and
	// the drawn pages.
	Review lifecycle.Review
	// Render bounds the drawing of page images (zero fields: pdftext's
	// defaults).
	Render pdftext.RenderOptions
	// Renders is how many drawings run at once (default 2).
	Renders int
}

// reviewer serves the review pages of one console.
type reviewer struct {
	ops     *ops
	cfg     ReviewConfig
	review  lifecycle.Review
	renders chan struct{}
	push    draftPush // the template API's limits for a drafted template (ops_review_push.go)
}

func newReviewer(o *ops, cfg ReviewConfig) *reviewer {
	if cfg.Review.Store == nil || cfg.Review.Objects == nil || cfg.Review.Pinned == nil {
		panic("ingest: OpsConfig.Review needs Review.Store, Objects and Pinned")
	}
	if cfg.Renders <= 0 {
		cfg.Renders = 2
	}
	return &reviewer{ops: o, cfg: cfg, review: cfg.Review, renders: make(chan struct{}, cfg.Renders)}
}

func (r *reviewer) objects() objectstore.Store { return r.review.Objects }

func (r *reviewer) handleJS(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "max-age=300")
	return c.Blob(http.StatusOK, "text/javascript; charset=utf-8", reviewJS)
}

func (r *reviewer) handleCSS(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "max-age=300")
	return c.Blob(http.StatusOK, "text/css; charset=utf-8", reviewCSS)
}

// document is the :log_id of the request when the operator may see it
// (ops.visibleDocument: another client's is ENOTFOUND).
func (r *reviewer) document(c echo.Context) (document.Document, error) {
	return r.ops.visibleDocument(c)
}

// pageState is what a posted form brings back to the page it refused.
type pageState struct {
	form    url.Values
	errs    formErrors
	message string
	comment string
	confirm bool
	status  int
	done    string // what an action on the page did (shown as ?done= is)
}

func (r *reviewer) handlePage(c echo.Context) error {
	d, err := r.document(c)
	if err != nil {
		return r.ops.fail(c, err)
	}
	return r.renderPage(c, d, pageState{status: http.StatusOK})
}

// renderPage renders the review page of d: the form while it is held,
// else how its review ended.
func (r *reviewer) renderPage(c echo.Context, d document.Document, st pageState) error {
	ctx := c.Request().Context()
	data := map[string]any{"Doc": d, "Done": reviewDone(c), "Message": st.message}
	rd, err := r.review.Held(ctx, d)
	if document.ErrorKind(err) == document.ECONFLICT {
		return r.renderFinished(c, d, st.status, data)
	}
	if err != nil {
		return r.ops.fail(c, err)
	}
	until, _, err := r.ops.store.ReviewUntil(ctx, d.ID)
	if err != nil {
		return r.ops.fail(c, err)
	}
	in := viewInput{shown: rd.Result.Order, base: rd.Canonical, reason: rd.Reason, detail: rd.Detail, errs: st.errs, logID: d.LogID,
		flags: rd.Result.Flags}
	if st.done != "" {
		data["Done"] = st.done
	}
	if st.form != nil {
		in.shown, _ = orderFromForm(st.form, rd.Result.Order)
	}
	data["Template"] = d.Template
	if v, err := r.review.Pinned(ctx, d.ID); err != nil {
		data["TemplateProblem"] = "The template version of this document is not available, so its checks are not run here: " + errText(err)
	} else if v != nil {
		in.tpl, data["Template"] = v.Template, v.String()
	}
	var layoutProblem string
	if in.layout, err = r.layout(ctx, d); err != nil {
		layoutProblem = r.layoutProblem(d, err)
	}
	view := buildReviewView(in)
	if o, err := in.shown.Canonical(&in.base); err == nil {
		r.heldMissing(ctx, d, &view, in.tpl, o) // ops_review_map.go
	}
	data["View"] = view
	data["LayoutProblem"] = layoutProblem
	data["Reason"], data["Detail"], data["Until"] = rd.Reason.WireValue(), rd.Detail, until
	data["Comment"], data["Confirm"] = st.comment, st.confirm
	return r.ops.render(c, st.status, "review", data)
}

// layoutProblem is the sentence the page shows when its images cannot be
// drawn; the error itself goes to the log.
func (r *reviewer) layoutProblem(d document.Document, err error) string {
	r.ops.logger.Warn("review: page layout", zap.String("log_id", d.LogID), zap.Error(err))
	switch {
	case errors.Is(err, pdftext.ErrTimeout):
		return "The pages could not be drawn within the time limit."
	case errors.Is(err, pdftext.ErrUnreadable):
		return "The pages could not be drawn: poppler cannot read this PDF within the limits."
	case errors.Is(err, pdftext.ErrUnavailable):
		return "The pages cannot be drawn here: poppler-utils (pdfinfo, pdftotext, pdftoppm) is not installed."
	}
	return "The pages could not be drawn (see the ingest log)."
}

// errText is the message of a coded error, else a fixed sentence (an
// internal error's text is for the log).
func errText(err error) string {
	if e, ok := document.AsError(err); ok {
		return e.Message
	}
	return "see the ingest log"
}

// renderFinished shows how the review of d ended (or that it was never
// held): who approved or released it, with a way to the next document.
func (r *reviewer) renderFinished(c echo.Context, d document.Document, status int, data map[string]any) error {
	ctx := c.Request().Context()
	cur, err := r.ops.store.Document(ctx, d.ID)
	if err != nil {
		return r.ops.fail(c, err)
	}
	events, err := r.ops.store.Events(ctx, d.ID)
	if err != nil {
		return r.ops.fail(c, err)
	}
	var last, sampled, pushed *document.Event
	for i, e := range events {
		switch {
		case strings.Contains(e.Detail, "in review by"), strings.Contains(e.Detail, "released by an operator"),
			strings.Contains(e.Detail, "review timeout passed"):
			last = &events[i]
		case strings.HasPrefix(e.Detail, "added as sample"):
			sampled = &events[i]
		case strings.HasPrefix(e.Detail, lifecycle.DraftPushedEvent):
			pushed = &events[i]
		}
	}
	data["Doc"], data["Finished"], data["Ended"], data["Sampled"], data["Pushed"] = cur, true, last, sampled, pushed
	data["CanSample"] = last != nil && strings.HasPrefix(last.Detail, "approved in review by")
	data["CanDraft"] = cur.State.Verdict() == document.VerdictSuccess && cur.ResultJSONKey != ""
	data["Waiting"] = r.waitingMissing(ctx, cur) // ops_review_map.go
	data["Next"] = r.next(c, cur.LogID)
	return r.ops.render(c, status, "review", data)
}

// next is the oldest other held document the operator may see ("" none).
func (r *reviewer) next(c echo.Context, except string) string {
	held, err := r.ops.store.ReviewQueue(c.Request().Context(), "", queueFetch)
	if err != nil {
		return ""
	}
	op := operatorOf(c)
	for _, h := range held {
		if h.LogID != except && op.sees(h.ClientID) {
			return h.LogID
		}
	}
	return ""
}

func (r *reviewer) handleApprove(c echo.Context) error {
	d, err := r.document(c)
	if err != nil {
		return r.ops.fail(c, err)
	}
	ctx := c.Request().Context()
	rd, err := r.review.Held(ctx, d)
	if document.ErrorKind(err) == document.ECONFLICT {
		return r.conflict(c, d)
	}
	if err != nil {
		return r.ops.fail(c, err)
	}
	form := c.Request().PostForm
	corrected, errs := orderFromForm(form, rd.Result.Order)
	st := pageState{form: form, errs: errs, comment: strings.TrimSpace(form.Get("comment")),
		confirm: form.Get("confirm") != "", status: http.StatusUnprocessableEntity}
	if len(errs) > 0 {
		st.message = "Not approved: some values are not valid (marked below)."
		return r.renderPage(c, d, st)
	}
	if fails := r.failures(ctx, d, rd, corrected); len(fails) > 0 && !(st.confirm && st.comment != "") {
		st.message = "Not approved: the order does not close (" + strings.Join(fails, "; ") +
			"). Correct it, or tick “confirm the difference” and say why in the comment."
		return r.renderPage(c, d, st)
	}
	who := operatorOf(c).actor()
	got, err := r.review.Approve(ctx, d, corrected, st.comment, who)
	switch document.ErrorKind(err) {
	case "":
		r.ops.logger.Info("ops action", zap.String("action", "approved"), zap.String("log_id", d.LogID),
			zap.String("client_id", d.ClientID), zap.String("operator", who), zap.Stringer("state", got.State))
		done := "approved"
		if got.State == document.StateProcessedIgnored { // a copy of a delivered PO (issue 28)
			done = "duplicate"
		}
		return c.Redirect(http.StatusSeeOther, "/ops/review/"+url.PathEscape(d.LogID)+"?done="+done)
	case document.ECONFLICT:
		return r.conflict(c, d)
	case document.EINVALID:
		st.message = "Not approved: " + errText(err)
		return r.renderPage(c, d, st)
	}
	return r.ops.fail(c, err)
}

// failures are the template's checks that fail on the corrected order
// (none when its template or dates cannot be read: Approve decides then).
func (r *reviewer) failures(ctx context.Context, d document.Document, rd lifecycle.Reading, corrected resultjson.Order) []string {
	v, err := r.review.Pinned(ctx, d.ID)
	if err != nil || v == nil || v.Template == nil {
		return nil
	}
	o, err := corrected.Canonical(&rd.Canonical)
	if err != nil {
		return nil
	}
	fails, _ := v.Template.CheckOrder(o)
	out := make([]string, len(fails))
	for i, f := range fails {
		out[i] = f.Check + ": " + f.Detail
	}
	return out
}

// conflict tells an operator that another one (or the review timeout)
// finished the document first: 409 with who did what.
func (r *reviewer) conflict(c echo.Context, d document.Document) error {
	r.ops.logger.Info("ops review conflict", zap.String("log_id", d.LogID), zap.String("operator", operatorOf(c).actor()))
	data := map[string]any{"Doc": d, "Conflict": true,
		"Message": "Your change was not applied: this document is no longer held for review. Someone else approved or released it first (or its review timeout passed); see below."}
	return r.renderFinished(c, d, http.StatusConflict, data)
}

func (r *reviewer) handleRelease(c echo.Context) error {
	d, err := r.document(c)
	if err != nil {
		return r.ops.fail(c, err)
	}
	who := operatorOf(c).actor()
	_, err = r.review.Release(c.Request().Context(), d, who)
	if document.ErrorKind(err) == document.ECONFLICT {
		return r.conflict(c, d)
	}
	if err != nil {
		return r.ops.fail(c, err)
	}
	r.ops.logger.Info("ops action", zap.String("action", "released"), zap.String("log_id", d.LogID),
		zap.String("client_id", d.ClientID), zap.String("operator", who))
	return c.Redirect(http.StatusSeeOther, "/ops/review/"+url.PathEscape(d.LogID)+"?done=released")
}

// handleSample adds a reviewed document as a sample of its template
// (lifecycle.Review.AddSample: a new template version, so the next push
// and `intakectl templates test` run it); the page then shows the
// samples' verdict from the history.
func (r *reviewer) handleSample(c echo.Context) error {
	d, err := r.document(c)
	if err != nil {
		return r.ops.fail(c, err)
	}
	who := operatorOf(c).actor()
	added, err := r.review.AddSample(c.Request().Context(), d, who)
	if err != nil {
		return r.ops.fail(c, err)
	}
	r.ops.logger.Info("ops action", zap.String("action", "sampled"), zap.String("log_id", d.LogID),
		zap.String("template", added.Template), zap.Int("version", added.Version), zap.Int("failed", added.Failed()),
		zap.String("operator", who))
	return c.Redirect(http.StatusSeeOther, "/ops/review/"+url.PathEscape(d.LogID)+"?done=sampled")
}

// reviewDone turns the redirect's ?done= into a fixed sentence.
func reviewDone(c echo.Context) string {
	switch c.QueryParam("done") {
	case "approved":
		return "Approved: the corrected order is delivered as success."
	case "duplicate":
		return "Approved, but its PO was delivered before with the same content: ignored as its duplicate, not delivered again (the history names the delivery)."
	case "released":
		return "Released: the rejection is delivered."
	case "sampled":
		return "Added as a sample of the template: the next push of the template is tested against it."
	case "pushed":
		return "Pushed the drafted template with its samples, every one passing: the new version is live (the history names it)."
	case "unchanged":
		return "The drafted template and its samples are the template's current version already: nothing stored."
	case "mapped":
		return "Added to the client's table: the documents that waited for it are processed again now (see the history)."
	}
	return ""
}
