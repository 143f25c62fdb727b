package lifecycle

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/resultjson"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/template"
)

// Learning from a review (issue 27): the order a person confirmed becomes
// a regression sample of the buyer's template (AddSample), the truth a
// drafted template is anchored on and tested against (Draft), and the
// mapping entries a reviewer adds feed the client's mapping tables
// (AddMapping).

// SampleAdded is what AddSample stored.
type SampleAdded struct {
	Template string // the template's name
	ClientID string // its scope ("" = global)
	// Version is the new version holding the sample (the current one when
	// Changed is false: the same sample was stored already).
	Version int
	Changed bool
	Sample  string // the sample's document (review-LOG_ID.pdf); its JSON beside it
	// Results are the verdicts of every sample of the version, the new one
	// included, as `intakectl templates test` prints them.
	Results []catalogue.SampleResult
	// Forced is set when a sample fails: the version is stored anyway and
	// recorded as forced, as `templates push --force` does.
	Forced bool
}

// Failed counts the failed samples of the version.
func (s SampleAdded) Failed() int { return catalogue.FailedSamples(s.Results) }

// SampleName is the base name of the sample AddSample makes of d.
func SampleName(d document.Document) string { return "review-" + d.LogID }

// AddSample stores the document's PDF and its confirmed order as a sample
// of the template the document was processed with (its scope kept), as a
// new version of that template with the current content and samples plus
// this one (catalogue.OrderSample: the order in the result JSON's shape,
// with the mapping entries it was decided with). The document must have a
// delivered success: an approved review (the corrected order) or a
// success as read; a document still held is refused with ECONFLICT
// (not_reviewed: approve it first), one without a stored template (the
// built-in generic reader) with EINVALID (no_template: draft one).
//
// The sample records the truth. When the template does not read it (a
// correction the template cannot reproduce yet), the version is stored
// anyway, marked forced, and Results say what differs: storing a sample
// never changes what is served (the content is the current one), and the
// failing sample is what holds the template's next push to the fix. The
// event on the document's history names who added it, the version and the
// samples' verdict. Adding the same document again changes nothing.
func (r Review) AddSample(ctx context.Context, d document.Document, who string) (SampleAdded, error) {
	d, confirmed, pin, err := r.confirmed(ctx, d)
	if err != nil {
		return SampleAdded{}, err
	}
	pdf, err := r.object(ctx, d.SourceKey, "the PDF of "+d.LogID)
	if err != nil {
		return SampleAdded{}, err
	}
	text, done := r.sampleText()
	defer done()
	for range 3 { // a concurrent push of the template: build on it
		added, err := r.pushSample(ctx, d, confirmed, pin, pdf, text, who)
		if e, ok := document.AsError(err); ok && e.Code == store.CodeTemplateConflict && e.Kind == document.ECONFLICT {
			continue
		}
		return added, err
	}
	return SampleAdded{}, document.CodedErrorf(document.ECONFLICT, store.CodeTemplateConflict,
		"template %s changed three times while the sample was added; try again", pin.Name)
}

// confirmed returns the document as stored now, its confirmed order (the
// result JSON's) and the template version its attempt used.
func (r Review) confirmed(ctx context.Context, d document.Document) (document.Document, resultjson.File, store.AttemptTemplate, error) {
	d, res, err := r.confirmedOrder(ctx, d)
	if err != nil {
		return d, res, store.AttemptTemplate{}, err
	}
	pin, err := r.Store.CurrentPin(ctx, d.ID)
	if err != nil {
		return d, res, pin, fmt.Errorf("template of %s: %w", d.LogID, err)
	}
	if pin.TemplateID == 0 {
		return d, res, pin, document.CodedErrorf(document.EINVALID, "no_template",
			"document %s was read by the built-in generic reader, which has no samples: draft a template from it (intakectl review draft %s)", d.LogID, d.LogID)
	}
	return d, res, pin, nil
}

// confirmedOrder returns the document as stored now and its result JSON,
// whose order is the confirmed one: ECONFLICT while it is held for review
// (not_reviewed) or has no success (no_confirmed_order).
func (r Review) confirmedOrder(ctx context.Context, d document.Document) (document.Document, resultjson.File, error) {
	var res resultjson.File
	d, err := r.Store.Document(ctx, d.ID)
	if err != nil {
		return d, res, err
	}
	if _, held, err := r.Store.ReviewUntil(ctx, d.ID); err != nil {
		return d, res, err
	} else if held {
		return d, res, document.CodedErrorf(document.ECONFLICT, "not_reviewed",
			"document %s is held for review: approve its corrected order first", d.LogID)
	}
	if d.State.Verdict() != document.VerdictSuccess || d.ResultJSONKey == "" {
		return d, res, document.CodedErrorf(document.ECONFLICT, "no_confirmed_order",
			"document %s is %s: only a success (an approved review) has an order to learn from", d.LogID, d.State)
	}
	b, err := r.object(ctx, d.ResultJSONKey, "the result of "+d.LogID)
	if err == nil {
		err = json.Unmarshal(b, &res)
	}
	return d, res, err
}

// pushSample stores the current version of pin's template with the sample
// added, and the event, in one transaction.
func (r Review) pushSample(ctx context.Context, d document.Document, res resultjson.File, pin store.AttemptTemplate,
	pdf []byte, text catalogue.TextFunc, who string) (SampleAdded, error) {
	added := SampleAdded{Template: pin.Name, ClientID: pin.ClientID, Sample: SampleName(d) + ".pdf"}
	info, err := r.Store.Template(ctx, pin.ClientID, pin.Name)
	if err != nil {
		return added, err
	}
	cur, err := r.Store.TemplateVersion(ctx, pin.ClientID, pin.Name, info.Version)
	if err != nil {
		return added, err
	}
	expect, err := r.orderSample(ctx, d, res, cur)
	if err != nil {
		return added, err
	}
	push, err := catalogue.NewTemplatePush(cur.Filename, cur.Content,
		withSample(cur.Samples, SampleName(d), pdf, expect))
	if err != nil {
		return added, fmt.Errorf("template %s v%d: %w", pin.Name, cur.Version, err)
	}
	if added.Results, err = catalogue.RunSamples(ctx, push, text); err != nil {
		return added, fmt.Errorf("samples of %s: %w", pin.Name, err)
	}
	added.Forced = added.Failed() > 0
	push.ClientID, push.PushedBy, push.Forced, push.IfVersion = pin.ClientID, who, added.Forced, &info.Version
	push.Comment = fmt.Sprintf("sample %s: the confirmed order of document %s", added.Sample, d.LogID)
	err = r.Store.WithTx(ctx, func(tx *store.Store) error {
		pr, err := tx.PushTemplate(ctx, push)
		if err != nil || !pr.Changed {
			added.Version = pr.Version
			return err
		}
		added.Version, added.Changed = pr.Version, true
		return tx.RecordEvent(ctx, d.ID, d.State, who, sampleDetail(added))
	})
	return added, err
}

// sampleDetail is the document event of an added sample.
func sampleDetail(a SampleAdded) string {
	scope := "global"
	if a.ClientID != "" {
		scope = "client " + a.ClientID
	}
	s := fmt.Sprintf("added as sample %s of template %s v%d (%s): %d samples, %d failed", a.Sample, a.Template,
		a.Version, scope, len(a.Results), a.Failed())
	for _, res := range a.Results {
		if !res.Pass {
			s += "; " + res.Line()
		}
	}
	if a.Forced {
		s += "; stored as forced: the template does not deliver every sample yet"
	}
	return s
}

// withSample returns samples with base.pdf and base.json (re)placed.
func withSample(samples []store.TemplateSample, base string, pdf, expect []byte) []store.TemplateSample {
	var out []store.TemplateSample
	for _, s := range samples {
		if strings.TrimSuffix(s.Name, ".pdf") == base || strings.TrimSuffix(s.Name, ".json") == base {
			continue
		}
		out = append(out, s)
	}
	return append(out, store.TemplateSample{Name: base + ".pdf", Content: pdf},
		store.TemplateSample{Name: base + ".json", Content: expect})
}

// orderSample is the sample's X.json: the confirmed order with the mapping
// entries the template looks up for it and what else decided it.
func (r Review) orderSample(ctx context.Context, d document.Document, res resultjson.File, v store.TemplateVersion) ([]byte, error) {
	tpl, err := catalogue.CompileVersion(v.Name, v.Filename, v.Content)
	if err != nil {
		return nil, fmt.Errorf("template %s v%d: %w", v.Name, v.Version, err)
	}
	return r.expectation(ctx, d, res.Order, tpl)
}

// mappingsUsed decides the confirmed order again with the template's
// mappings against the client's tables and returns the entries looked up
// and found. The checks are left out: the order was confirmed (a
// difference may have been confirmed with a comment), and only the
// lookups are wanted here.
func (r Review) mappingsUsed(ctx context.Context, d document.Document, tpl *template.Template, oj resultjson.Order) ([]catalogue.SampleMapping, error) {
	if len(tpl.DocIntake.Mappings) == 0 {
		return nil, nil
	}
	o, err := oj.Canonical(nil)
	if err != nil {
		return nil, fmt.Errorf("confirmed order of %s: %w", d.LogID, err)
	}
	t := *tpl
	t.DocIntake.Checks = template.Checks{}
	rec := &recorder{m: mapper{r.Store, d.ClientID}}
	if _, err := t.Verify(ctx, o, rec, d.ResultMode, nil); err != nil {
		return nil, err
	}
	return rec.found, nil
}

// recorder is a mapper that remembers the entries it found.
type recorder struct {
	m     mapper
	mu    sync.Mutex
	found []catalogue.SampleMapping
}

func (c *recorder) Lookup(ctx context.Context, kind, key string) (string, bool, error) {
	v, ok, err := c.m.Lookup(ctx, kind, key)
	if ok && err == nil {
		e := catalogue.SampleMapping{Kind: kind, Key: key, Value: v}
		c.mu.Lock()
		if !slices.Contains(c.found, e) {
			c.found = append(c.found, e)
		}
		c.mu.Unlock()
	}
	return v, ok, err
}

// sampleText is how samples' PDFs are read: r.SampleText, else a default
// engine for this call (done stops it).
func (r Review) sampleText() (text catalogue.TextFunc, done func()) {
	if r.SampleText != nil {
		return r.SampleText, func() {}
	}
	st := &catalogue.SampleText{}
	return st.Text, func() { _ = st.Close() }
}

// object reads a stored object whole.
func (r Review) object(ctx context.Context, key, what string) ([]byte, error) {
	rc, err := r.Objects.Get(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	return b, nil
}
