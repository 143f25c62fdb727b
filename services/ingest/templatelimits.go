package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/docintake/docintake/pkg/config"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/template"
	"github.com/labstack/echo/v4"
)

// Error codes of the template limits (config.TemplateLimits): a tenant's
// templates are compiled by every processor and its samples read by
// ingest, so what one client stores is bounded per client.
const (
	// codeTemplateTooLarge (413): the template file is over
	// INTAKE_TEMPLATE_MAX_BYTES.
	codeTemplateTooLarge = "template_too_large"
	// codeSamplesTooLarge (413): the samples of one PUT are over
	// INTAKE_TEMPLATE_SAMPLES_MAX_BYTES.
	codeSamplesTooLarge = "samples_too_large"
	// codeTemplateLimitReached (422): the client has
	// INTAKE_TEMPLATE_MAX_COUNT templates; a new one is refused.
	codeTemplateLimitReached = "template_limit_reached"
	// codeTooManyPatterns and codePatternsTooLong (422): the template's
	// regexes are more than INTAKE_TEMPLATE_MAX_PATTERNS or longer together
	// than INTAKE_TEMPLATE_MAX_PATTERN_BYTES.
	codeTooManyPatterns = "template_too_many_patterns"
	codePatternsTooLong = "template_patterns_too_long"
)

// formSlack is what a multipart PUT may carry besides its template and
// samples: boundaries, part headers, small fields.
const formSlack = 64 << 10

// templateLimits returns cfg's limits with every unset one at its default.
func templateLimits(cfg config.TemplateLimits) config.TemplateLimits {
	def := config.Defaults().TemplateLimits
	orDefault := func(v, d int64) int64 {
		if v <= 0 {
			return d
		}
		return v
	}
	cfg.MaxBytes = orDefault(cfg.MaxBytes, def.MaxBytes)
	cfg.SamplesMaxBytes = orDefault(cfg.SamplesMaxBytes, def.SamplesMaxBytes)
	cfg.MaxCount = int(orDefault(int64(cfg.MaxCount), int64(def.MaxCount)))
	cfg.MaxPatterns = int(orDefault(int64(cfg.MaxPatterns), int64(def.MaxPatterns)))
	cfg.MaxPatternBytes = int(orDefault(int64(cfg.MaxPatternBytes), int64(def.MaxPatternBytes)))
	return cfg
}

func tooLargeCode(code, what string, limit int64) error {
	return &document.Error{Kind: document.ETOOLARGE, Code: code, Message: fmt.Sprintf("%s exceeds %d bytes", what, limit),
		Details: map[string]string{"limit": strconv.FormatInt(limit, 10)}}
}

// readCapped reads r to its end, or refuses with err once it passes limit
// bytes: it reads at most limit+1 of them.
func readCapped(r io.Reader, limit int64, over error) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, over
	}
	return b, nil
}

// capBody refuses a request body declared longer than limit at once and
// caps the reading of an undeclared one (chunked) at limit, so an oversized
// template is refused before it is read. A refusal closes the connection.
// The request keeps its own Body: net/http then closes a connection whose
// body was left unread gracefully (half-close, a moment to read the
// answer), where another Body made it reset the connection at once and
// the client saw "connection reset" instead of the 413.
func capBody(c echo.Context, limit int64, over error) (io.Reader, error) {
	r := c.Request()
	if r.ContentLength > limit {
		closeUnread(c)
		return nil, over
	}
	return http.MaxBytesReader(c.Response(), r.Body, limit), nil
}

// bodyError turns the read error of a capped body into its 413.
func bodyError(c echo.Context, err, over error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		closeUnread(c)
		return over
	}
	return fmt.Errorf("read template: %w", err)
}

// checkCount refuses a new template name when the client already has
// lim.MaxCount live ones; a new version of an existing one is fine. Two
// replicas creating templates at the same moment can both pass: the limit
// is exceeded by at most the concurrent creations.
func checkCount(ctx context.Context, st TemplateStore, clientID, name string, max int) error {
	list, err := st.ListTemplates(ctx, store.TemplatesFilter{ClientID: clientID, OnlyClient: true})
	if err != nil {
		return err
	}
	for _, t := range list {
		if t.Name == name {
			return nil
		}
	}
	if len(list) < max {
		return nil
	}
	return &document.Error{Kind: document.EINVALID, Code: codeTemplateLimitReached,
		Message: fmt.Sprintf("the client has %d templates, the most it may have; delete one first", len(list)),
		Details: map[string]string{"limit": strconv.Itoa(max)}}
}

// checkPatterns bounds what the template's regexes cost once compiled
// (about 50 bytes of memory per pattern byte, 11 KiB per small pattern,
// held by every processor that serves the template).
func checkPatterns(tpl *template.Template, lim config.TemplateLimits) error {
	n, size := 0, 0
	for _, re := range patterns(tpl) {
		n++
		size += len(re.Source)
	}
	switch {
	case n > lim.MaxPatterns:
		return &document.Error{Kind: document.EINVALID, Code: codeTooManyPatterns,
			Message: fmt.Sprintf("the template has %d regexes; at most %d are allowed", n, lim.MaxPatterns),
			Details: map[string]string{"limit": strconv.Itoa(lim.MaxPatterns), "count": strconv.Itoa(n)}}
	case size > lim.MaxPatternBytes:
		return &document.Error{Kind: document.EINVALID, Code: codePatternsTooLong,
			Message: fmt.Sprintf("the template's regexes are %d bytes long together; at most %d are allowed", size, lim.MaxPatternBytes),
			Details: map[string]string{"limit": strconv.Itoa(lim.MaxPatternBytes), "bytes": strconv.Itoa(size)}}
	}
	return nil
}

// patterns lists every regex of tpl: keywords, fields (with their replace
// and lines blocks), lines, tables, options.replace and docintake.rules.
func patterns(tpl *template.Template) []*template.Regex {
	out := append(append([]*template.Regex{}, tpl.Keywords...), tpl.ExcludeKeywords...)
	replace := func(rs []template.Replacement) {
		for _, r := range rs {
			out = append(out, r.Re)
		}
	}
	lines := func(l *template.LinesSpec) {
		if l == nil {
			return
		}
		for _, r := range l.Rules {
			out = append(append(append(append(append(out, r.Start, r.End, r.LineSeparator), r.Line...), r.FirstLine...),
				r.LastLine...), r.SkipLine...)
		}
	}
	for _, f := range tpl.Fields {
		out = append(out, f.Regexes...)
		replace(f.Replace)
		lines(f.Lines)
	}
	lines(tpl.Lines)
	for _, t := range tpl.Tables {
		out = append(out, t.Start, t.End, t.Body, t.LineSeparator)
	}
	replace(tpl.Options.Replace)
	for _, r := range tpl.DocIntake.Rules {
		out = append(out, r.Match)
	}
	kept := out[:0]
	for _, re := range out {
		if re != nil {
			kept = append(kept, re)
		}
	}
	return kept
}

// readTemplateBody reads PUT's body within lim: the template as YAML or
// JSON, or multipart/form-data with a part "template" (the file) and parts
// "samples" (X.pdf, X.txt, X.json files, by file name).
func readTemplateBody(c echo.Context, name string, lim config.TemplateLimits) (filename string, content []byte, smp []store.TemplateSample, err error) {
	ct, _, _ := mime.ParseMediaType(c.Request().Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		filename = name + ".json"
	case "application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml", "text/plain":
		filename = name + ".yml"
	case "multipart/form-data":
		return readTemplateForm(c, name, lim)
	default:
		return "", nil, nil, document.CodedErrorf(document.EUNSUPPORTED, codeUnsupportedContent,
			"send the template as application/yaml, application/json or multipart/form-data")
	}
	over := tooLargeCode(codeTemplateTooLarge, "the template", lim.MaxBytes)
	body, err := capBody(c, lim.MaxBytes, over)
	if err == nil {
		content, err = io.ReadAll(body)
	}
	if err != nil {
		return "", nil, nil, bodyError(c, err, over)
	}
	return filename, content, nil, nil
}

// readTemplateForm reads the multipart form part by part, so a part over
// its limit is refused when it passes it, before the rest is read.
func readTemplateForm(c echo.Context, name string, lim config.TemplateLimits) (string, []byte, []store.TemplateSample, error) {
	total := lim.MaxBytes + lim.SamplesMaxBytes + formSlack
	whole := tooLargeCode(codeTooLarge, "the request", total)
	body, err := capBody(c, total, whole)
	if err != nil {
		return "", nil, nil, err
	}
	_, params, _ := mime.ParseMediaType(c.Request().Header.Get("Content-Type"))
	if params["boundary"] == "" {
		return "", nil, nil, validationError(map[string]string{"body": "unreadable multipart form: no boundary"})
	}
	mr := multipart.NewReader(body, params["boundary"])
	f := &templateForm{lim: lim, samplesLeft: lim.SamplesMaxBytes, filename: name + ".yml"}
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err == nil {
			err = f.read(p)
		}
		if err != nil {
			var de *document.Error
			if errors.As(err, &de) {
				closeUnread(c)
				return "", nil, nil, err
			}
			return "", nil, nil, bodyError(c, err, whole)
		}
	}
	if f.content == nil {
		return "", nil, nil, validationError(map[string]string{"template": "exactly one template file is required"})
	}
	return f.filename, f.content, f.samples, nil
}

// templateForm gathers the parts of a multipart PUT.
type templateForm struct {
	lim         config.TemplateLimits
	samplesLeft int64
	filename    string
	content     []byte
	samples     []store.TemplateSample
}

// read takes one part: the template, a sample, or another field (read
// and dropped, within the body's cap).
// A part refused is not closed: closing reads it to its end.
func (f *templateForm) read(p *multipart.Part) error {
	switch p.FormName() {
	case "template":
		if f.content != nil {
			return validationError(map[string]string{"template": "exactly one template file is required"})
		}
		if strings.EqualFold(path.Ext(p.FileName()), ".json") {
			f.filename = strings.TrimSuffix(f.filename, ".yml") + ".json"
		}
		b, err := readCapped(p, f.lim.MaxBytes, tooLargeCode(codeTemplateTooLarge, "the template", f.lim.MaxBytes))
		if err != nil {
			return err
		}
		f.content = b
	case "samples":
		base := path.Base(strings.ReplaceAll(p.FileName(), `\`, "/"))
		switch strings.ToLower(path.Ext(base)) {
		case ".pdf", ".txt", ".json":
		default:
			return validationError(map[string]string{"samples": fmt.Sprintf("%q: samples are X.pdf, X.txt and X.json files", base)})
		}
		b, err := readCapped(p, f.samplesLeft, tooLargeCode(codeSamplesTooLarge, "the samples together", f.lim.SamplesMaxBytes))
		if err != nil {
			return err
		}
		f.samplesLeft -= int64(len(b))
		f.samples = append(f.samples, store.TemplateSample{Name: base, Content: b})
	default:
		_, err := io.Copy(io.Discard, p)
		return err
	}
	return nil
}

// sampleRuns is how many sample documents of smp run (X.pdf and X.txt;
// X.json is an expected output): each takes one of the client's uploads.
func sampleRuns(smp []store.TemplateSample) int {
	n := 0
	for _, s := range smp {
		if ext := strings.ToLower(path.Ext(s.Name)); ext == ".pdf" || ext == ".txt" {
			n++
		}
	}
	return n
}
