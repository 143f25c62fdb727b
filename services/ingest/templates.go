package ingest

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/config"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/template"
	"github.com/labstack/echo/v4"
)

// Error codes of the template API.
const (
	codeTemplateInvalid = "template_invalid"
	codeSamplesFailed   = "samples_failed"
	// codeTemplateNameReserved refuses a template named generic: the
	// built-in reader owns that name for every client.
	codeTemplateNameReserved = "template_name_reserved"
	// codeTemplateNameInvalid refuses a name outside 1-100 ASCII letters,
	// digits, '-', '_' and '.' (catalogue.CheckTemplateName).
	codeTemplateNameInvalid = "template_name_invalid"
)

// TemplateStore is what the template API needs of PostgreSQL (implemented
// by *store.Store).
type TemplateStore interface {
	ListTemplates(ctx context.Context, f store.TemplatesFilter) ([]store.TemplateInfo, error)
	TemplateVersion(ctx context.Context, clientID, name string, version int) (store.TemplateVersion, error)
	Template(ctx context.Context, clientID, name string) (store.TemplateInfo, error)
	PushTemplate(ctx context.Context, p store.TemplatePush) (store.PushResult, error)
	CheckTemplateVersion(ctx context.Context, clientID, name string, want int) error
	DeleteTemplate(ctx context.Context, clientID, name string) error
}

// templatesAPI serves a client's own templates: the same validation,
// samples and versioning as `intakectl templates push`, scoped to the
// caller (global templates are listed, never changed).
type templatesAPI struct {
	st   TemplateStore
	text catalogue.TextFunc
	lim  config.TemplateLimits
	// budget bounds each sample's template run (0: the default).
	budget time.Duration
	// uploads is the client's upload limit that sample runs take from
	// (nil: unlimited), read per request.
	uploads func() *clientLimit
}

// EnableTemplates adds the client template API (GET /templates,
// GET/PUT/DELETE /templates/{name}); text reads sample documents (see
// catalogue.SampleText).
func (s *Server) EnableTemplates(st TemplateStore, text catalogue.TextFunc) {
	if st == nil || text == nil {
		panic("ingest.EnableTemplates: nil dependency")
	}
	a := &templatesAPI{st: st, text: text, lim: s.cfg.TemplateLimits, budget: s.cfg.TemplateBudget,
		uploads: func() *clientLimit { return s.uploadLimit }}
	s.templateRoutes(a)
}

// templateSummary is one entry of GET /templates.
type templateSummary struct {
	Name      string    `json:"name"`
	Scope     string    `json:"scope"` // global | client
	Version   int       `json:"version"`
	SHA256    string    `json:"sha256"`
	PartyIDs  []string  `json:"party_ids"`
	Enabled   bool      `json:"enabled"`
	UpdatedAt time.Time `json:"updated_at"`
}

// templateDetail is GET/PUT /templates/{name}.
type templateDetail struct {
	templateSummary
	Filename string   `json:"filename"`
	Content  string   `json:"content"`
	Comment  string   `json:"comment"`
	PushedBy string   `json:"pushed_by"`
	Forced   bool     `json:"forced"`
	Samples  []string `json:"samples"`
	// Changed is false when a PUT stored nothing (same content and
	// samples as the current version).
	Changed *bool `json:"changed,omitempty"`
}

func summary(t store.TemplateInfo) templateSummary {
	scope := "global"
	if t.ClientID != "" {
		scope = "client"
	}
	return templateSummary{Name: t.Name, Scope: scope, Version: t.Version, SHA256: hex.EncodeToString(t.SHA256),
		PartyIDs: nonNilStrings(t.PartyIDs), Enabled: t.Enabled, UpdatedAt: t.UpdatedAt}
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (a *templatesAPI) handleList(c echo.Context) error {
	cl := clientFrom(c)
	list, err := a.st.ListTemplates(c.Request().Context(), store.TemplatesFilter{ClientID: cl.ID})
	if err != nil {
		return err
	}
	out := make([]templateSummary, 0, len(list))
	for _, t := range list {
		out = append(out, summary(t))
	}
	return c.JSON(http.StatusOK, map[string]any{"templates": out})
}

// detail reads the current version of the caller's own template name.
func (a *templatesAPI) detail(ctx context.Context, clientID, name string) (templateDetail, error) {
	info, err := a.st.Template(ctx, clientID, name)
	if err != nil {
		return templateDetail{}, err
	}
	v, err := a.st.TemplateVersion(ctx, clientID, name, info.Version)
	if err != nil {
		return templateDetail{}, err
	}
	d := templateDetail{templateSummary: summary(info), Filename: v.Filename, Content: string(v.Content),
		Comment: v.Comment, PushedBy: v.PushedBy, Forced: v.Forced, Samples: []string{}}
	for _, s := range v.Samples {
		d.Samples = append(d.Samples, s.Name)
	}
	return d, nil
}

func etag(version int) string { return `"v` + strconv.Itoa(version) + `"` }

func (a *templatesAPI) handleGet(c echo.Context) error {
	cl := clientFrom(c)
	d, err := a.detail(c.Request().Context(), cl.ID, c.Param("name"))
	if err != nil {
		return err
	}
	c.Response().Header().Set("ETag", etag(d.Version))
	return c.JSON(http.StatusOK, d)
}

func (a *templatesAPI) handleDelete(c echo.Context) error {
	cl := clientFrom(c)
	if err := a.st.DeleteTemplate(c.Request().Context(), cl.ID, c.Param("name")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// ifVersion reads the optimistic-concurrency precondition: If-Match "vN"
// (the version the caller read) or If-None-Match * (must not exist yet).
func ifVersion(r *http.Request) (*int, error) {
	if r.Header.Get("If-None-Match") == "*" {
		zero := 0
		return &zero, nil
	}
	m := strings.TrimSpace(r.Header.Get("If-Match"))
	if m == "" || m == "*" {
		return nil, nil
	}
	n, err := strconv.Atoi(strings.TrimPrefix(strings.Trim(strings.TrimPrefix(m, "W/"), `"`), "v"))
	if err != nil || n < 0 {
		return nil, validationError(map[string]string{"If-Match": `want "vN", the ETag of the version the change is based on`})
	}
	return &n, nil
}

// handlePut stores a new version. Checks go from cheap to dear: the change
// rate and the body's size (before it is read), the client's template
// count, the template (parsed once, its regexes bounded), If-Match, and
// only then the samples, each taking one of the client's uploads.
func (a *templatesAPI) handlePut(c echo.Context) error {
	ctx := c.Request().Context()
	cl := clientFrom(c)
	name := c.Param("name")
	if err := catalogue.CheckTemplateName(name); err != nil {
		return nameInvalid(err, "name")
	}
	ifv, err := ifVersion(c.Request())
	if err != nil {
		return err
	}
	filename, content, smp, err := readTemplateBody(c, name, a.lim)
	if err != nil {
		return err
	}
	if err := checkCount(ctx, a.st, cl.ID, name, a.lim.MaxCount); err != nil {
		return err
	}
	p, err := a.parsePush(name, filename, content, smp)
	if err != nil {
		return err
	}
	// A stale If-Match is refused before the samples run: they read PDFs and
	// can take seconds, and their outcome would be thrown away.
	if ifv != nil {
		if err := a.st.CheckTemplateVersion(ctx, cl.ID, name, *ifv); err != nil {
			return err
		}
	}
	forced, err := a.runSamples(c, p)
	if err != nil {
		return err
	}
	p.ClientID, p.Comment, p.PushedBy, p.IfVersion, p.Forced = cl.ID, c.QueryParam("comment"), "client:"+cl.ID, ifv, forced
	res, err := a.st.PushTemplate(ctx, p)
	if err != nil {
		return err
	}
	d, err := a.detail(ctx, cl.ID, name)
	if err != nil {
		return err
	}
	d.Changed = &res.Changed
	c.Response().Header().Set("ETag", etag(d.Version))
	status := http.StatusOK
	if res.Changed && res.Version == 1 {
		status = http.StatusCreated
	}
	return c.JSON(status, d)
}

// parsePush validates the template strictly, as `templates push` does, and
// within the client limits on its regexes.
func (a *templatesAPI) parsePush(name, filename string, content []byte, smp []store.TemplateSample) (store.TemplatePush, error) {
	p, tpl, err := catalogue.ParsePush(filename, content, smp)
	if errors.Is(err, catalogue.ErrInvalidName) {
		return p, nameInvalid(catalogue.ErrInvalidName, "docintake.name")
	}
	if errors.Is(err, catalogue.ErrReservedName) {
		return p, &document.Error{Kind: document.EINVALID, Code: codeTemplateNameReserved, Message: err.Error(),
			Details: map[string]string{"path": "docintake.name"}}
	}
	if err != nil {
		return p, templateInvalid(err)
	}
	if p.Name != name {
		return p, &document.Error{Kind: document.EINVALID, Code: codeTemplateInvalid,
			Message: fmt.Sprintf("the template names itself %q, not %q", p.Name, name),
			Details: map[string]string{"path": "docintake.name", "error": "must equal the name in the URL"}}
	}
	return p, checkPatterns(tpl, a.lim)
}

// runSamples runs p's samples, each sample document taking one of the
// client's uploads first; failures refuse the change unless ?force=true,
// and forced says whether any failed.
func (a *templatesAPI) runSamples(c echo.Context, p store.TemplatePush) (forced bool, err error) {
	ctx := c.Request().Context()
	for range sampleRuns(p.Samples) {
		if err := a.uploads().take(ctx, clientFrom(c).ID); err != nil {
			return false, err
		}
	}
	// Each sample runs under the template budget and the request's
	// context: a client that goes away stops its samples.
	results, err := catalogue.RunSamples(template.WithBudget(ctx, a.budget), p, a.text)
	if err != nil {
		return false, err
	}
	n := catalogue.FailedSamples(results)
	if n > 0 && c.QueryParam("force") != "true" {
		details := map[string]string{}
		for _, r := range results {
			if !r.Pass {
				details[r.Name] = strings.Join(r.Problems, "; ")
			}
		}
		return false, &document.Error{Kind: document.EINVALID, Code: codeSamplesFailed,
			Message: fmt.Sprintf("%d of %d samples failed; nothing stored (force=true stores anyway)", n, len(results)),
			Details: details}
	}
	return n > 0, nil
}

// nameInvalid is 422 template_name_invalid; where says which name (the
// URL's or the template's own docintake.name).
func nameInvalid(err error, where string) error {
	return &document.Error{Kind: document.EINVALID, Code: codeTemplateNameInvalid, Message: err.Error(),
		Details: map[string]string{"path": where}}
}

// templateInvalid turns a parse error into 422 template_invalid with the
// first problem's line and key path in details (all problems in message).
func templateInvalid(err error) error {
	details := map[string]string{}
	var le *template.LoadError
	if errors.As(err, &le) {
		if le.Line > 0 {
			details["line"] = strconv.Itoa(le.Line)
		}
		if le.Path != "" {
			details["path"] = le.Path
		}
		if le.Err != nil {
			details["error"] = le.Err.Error()
		}
	}
	return &document.Error{Kind: document.EINVALID, Code: codeTemplateInvalid, Message: err.Error(), Details: details}
}
