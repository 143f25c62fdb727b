package ingest

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/lifecycle"
	"github.com/docintake/docintake/pkg/resultjson"
	"github.com/docintake/docintake/pkg/template/draft"
	"github.com/labstack/echo/v4"
	"go.uber.org/zap"
)

// "Draft a template" on the review page (issue 27): lifecycle.Review.Draft
// anchored on the corrected values (a held document's form, or the
// approved order), shown with its test against the PDF, and pushed from
// the page through the template API's checks and limits (draftPush).

// draftView is the draft page.
type draftView struct {
	Name, YAML, Report string
	Expect             string // the document's sample JSON, posted back with the push
	Tested             bool   // Results are the draft's test (not a refused push's)
	Results            []catalogue.SampleResult
	Fields             []draftField
	Targets            []pushTarget
}

// Passed reports whether every sample passes.
func (v draftView) Passed() bool {
	return len(v.Results) > 0 && catalogue.FailedSamples(v.Results) == 0
}

// draftField is a header field of the drafter's report: found (where) or
// missing (why).
type draftField struct {
	Name, Status, How string
}

// pushTarget is a scope the draft can be pushed to.
type pushTarget struct {
	Scope   string // the form's value: client or global
	Label   string // what the button says
	Version int    // the current version there (0: none yet)
}

// reportField is a header field line of draft.Draft.WriteReport.
var reportField = regexp.MustCompile(`^  (\S+)\s+(found|missing)\s+(.*)$`)

// draftFields are the header fields of the drafter's report.
func draftFields(report string) []draftField {
	var out []draftField
	for _, l := range strings.Split(report, "\n") {
		if m := reportField.FindStringSubmatch(l); m != nil {
			out = append(out, draftField{Name: m[1], Status: m[2], How: m[3]})
		}
	}
	return out
}

// handleDraft drafts a template from the document: with the corrections
// of the posted review form while it is held, else from its approved
// order.
func (r *reviewer) handleDraft(c echo.Context) error {
	d, err := r.document(c)
	if err != nil {
		return r.ops.fail(c, err)
	}
	ctx := c.Request().Context()
	var truth *resultjson.Order
	rd, err := r.review.Held(ctx, d)
	switch document.ErrorKind(err) {
	case "":
		form := c.Request().PostForm
		corrected, errs := orderFromForm(form, rd.Result.Order)
		if len(errs) > 0 {
			return r.renderPage(c, d, pageState{form: form, errs: errs, status: http.StatusUnprocessableEntity,
				message: "Not drafted: some values are not valid (marked below)."})
		}
		truth = &corrected
	case document.ECONFLICT: // no longer held: the approved order
	default:
		return r.ops.fail(c, err)
	}
	var dr lifecycle.Drafted
	err = r.limited(ctx, func() error {
		dr, err = r.review.Draft(ctx, d, truth, draft.Options{})
		return err
	})
	if err != nil {
		return r.ops.fail(c, err)
	}
	r.ops.logger.Info("ops action", zap.String("action", "drafted"), zap.String("log_id", d.LogID),
		zap.String("template", dr.Name), zap.Bool("passed", dr.Passed()), zap.String("operator", operatorOf(c).actor()))
	v := draftView{Name: dr.Name, YAML: string(dr.YAML), Report: dr.Report, Tested: true, Results: dr.Results,
		Fields: draftFields(dr.Report)}
	for _, s := range dr.Samples {
		if strings.HasSuffix(s.Name, ".json") {
			v.Expect = string(s.Content)
		}
	}
	return r.renderDraft(c, d, v, http.StatusOK, "")
}

// renderDraft renders the draft page with the scopes it can be pushed to.
func (r *reviewer) renderDraft(c echo.Context, d document.Document, v draftView, status int, message string) error {
	var err error
	if v.Targets, err = r.pushTargets(c, d, v.Name); err != nil {
		return r.ops.fail(c, err)
	}
	return r.ops.render(c, status, "review_draft", map[string]any{"Doc": d, "Draft": v, "Message": message})
}

// pushTargets are the scopes the operator may push a draft named name of
// d to: the document's client, and global for an operator not limited to
// some clients; first the scope of the template d was processed with.
func (r *reviewer) pushTargets(c echo.Context, d document.Document, name string) ([]pushTarget, error) {
	ctx := c.Request().Context()
	scopes := []string{d.ClientID}
	if operatorOf(c).Clients == nil {
		scopes = append(scopes, "")
		if pin, err := r.ops.store.CurrentPin(ctx, d.ID); err == nil && pin.TemplateID != 0 && pin.Name == name && pin.ClientID == "" {
			scopes = []string{"", d.ClientID}
		}
	}
	var out []pushTarget
	for _, scope := range scopes {
		t := pushTarget{Scope: "client", Label: "client " + d.ClientID}
		if scope == "" {
			t.Scope, t.Label = "global", "global"
		}
		info, err := r.ops.store.Template(ctx, scope, name)
		switch document.ErrorKind(err) {
		case "":
			t.Version = info.Version
			t.Label = fmt.Sprintf("push as %s v%d (%s)", name, info.Version+1, t.Label)
		case document.ENOTFOUND:
			t.Label = fmt.Sprintf("push as new template %s (%s)", name, t.Label)
		default:
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// handlePush pushes a draft from the draft page's form; a refusal shows
// the page again with the form's template, why, and the failing samples.
func (r *reviewer) handlePush(c echo.Context) error {
	d, err := r.document(c)
	if err != nil {
		return r.ops.fail(c, err)
	}
	ctx := c.Request().Context()
	f := c.Request().PostForm
	op := operatorOf(c)
	req := pushRequest{doc: d, name: strings.TrimSpace(f.Get("name")), scope: d.ClientID, content: []byte(f.Get("content")),
		expect: []byte(f.Get("expect")), comment: strings.TrimSpace(f.Get("comment")), who: op.actor()}
	ifKey := "if_client"
	if f.Get("scope") == "global" {
		req.scope, ifKey = "", "if_global"
	}
	if n, err := strconv.Atoi(f.Get(ifKey)); err == nil && n >= 0 {
		req.ifVersion = &n
	}
	var pushed lifecycle.DraftPushed
	if req.scope == "" && op.Clients != nil {
		err = document.CodedErrorf(document.EINVALID, "scope_not_allowed",
			"an operator limited to some clients pushes templates of those clients only: push it as the client's template")
	} else {
		err = r.limited(ctx, func() error {
			pushed, err = r.push.push(ctx, r.review, r.ops.store, req)
			return err
		})
	}
	if err != nil {
		return r.pushRefused(c, d, req, pushed, err)
	}
	r.ops.logger.Info("ops action", zap.String("action", "pushed draft"), zap.String("log_id", d.LogID),
		zap.String("template", pushed.Name), zap.String("scope", pushed.ClientID), zap.Int("version", pushed.Version),
		zap.String("operator", req.who))
	done := "pushed"
	if !pushed.Changed {
		done = "unchanged"
	}
	return c.Redirect(http.StatusSeeOther, "/ops/review/"+url.PathEscape(d.LogID)+"?done="+done)
}

// pushRefused shows the draft page again with why the push was refused.
func (r *reviewer) pushRefused(c echo.Context, d document.Document, req pushRequest, pushed lifecycle.DraftPushed, err error) error {
	v := draftView{Name: req.name, YAML: string(req.content), Expect: string(req.expect), Results: pushed.Results}
	var rl *rateLimitedError
	if errors.As(err, &rl) {
		c.Response().Header().Set("Retry-After", strconv.Itoa(rl.seconds()))
		return r.renderDraft(c, d, v, http.StatusTooManyRequests, "Not pushed: "+rl.Error()+".")
	}
	e, ok := document.AsError(err)
	if !ok || statusByKind[e.Kind] == 0 || statusByKind[e.Kind] >= http.StatusInternalServerError {
		return r.ops.fail(c, err)
	}
	msg := "Not pushed: " + e.Message
	if line := e.Details["line"]; line != "" {
		msg += " (line " + line + ")"
	}
	return r.renderDraft(c, d, v, statusByKind[e.Kind], msg)
}
