package lifecycle

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/resultjson"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/template"
	"github.com/docintake/docintake/pkg/template/draft"
)

// Drafted is a template drafted from a reviewed document.
type Drafted struct {
	Name string
	YAML []byte
	// Report is the drafter's report (what it found and why, and where it
	// does not read the confirmed values back).
	Report string
	// ReadsBack is set when the draft reads the confirmed order back.
	ReadsBack bool
	// Samples are the document as the draft's sample: SampleName(d).pdf
	// and its expected order (.json), to push with the draft (NAME.samples/).
	Samples []store.TemplateSample
	// Results are the draft tested against them, as `intakectl templates
	// test` and a push test it.
	Results []catalogue.SampleResult
}

// Passed reports whether the draft delivers the confirmed order.
func (d Drafted) Passed() bool { return len(d.Results) > 0 && catalogue.FailedSamples(d.Results) == 0 }

// Draft drafts a template from the document's PDF anchored on the order a
// person confirmed (package draft, Sample.Truth) and tests it against the
// PDF and that order. truth is the confirmed order: nil takes the
// document's delivered success (an approved review, AddSample's
// requirement); a document still held may be drafted with the person's
// corrections before approval. opts name the draft; empty, the name and
// first party id of the template the document was processed with, else
// the drafter's (from the letterhead). Nothing is stored: the caller
// pushes the draft with its samples (intakectl templates push) once a
// person has read it. The draft carries no mappings, checks or rules of
// the buyer's template: an order that needed a mapping fails its test
// until the draft's docintake block lists them.
func (r Review) Draft(ctx context.Context, d document.Document, truth *resultjson.Order, opts draft.Options) (Drafted, error) {
	confirmed, tpl, err := r.draftTruth(ctx, d, truth, &opts)
	if err != nil {
		return Drafted{}, err
	}
	pdf, err := r.object(ctx, d.SourceKey, "the PDF of "+d.LogID)
	if err != nil {
		return Drafted{}, err
	}
	text, done := r.sampleText()
	defer done()
	txt, err := text(ctx, SampleName(d)+".pdf", pdf)
	if err != nil {
		return Drafted{}, fmt.Errorf("text of %s: %w", d.LogID, err)
	}
	o, err := confirmed.Canonical(nil)
	if err != nil {
		return Drafted{}, err
	}
	dr, err := draft.Build(ctx, []draft.Sample{{Name: SampleName(d) + ".pdf", Text: txt, Truth: o}}, opts)
	if err != nil {
		return Drafted{}, err
	}
	var rep strings.Builder
	_ = dr.WriteReport(&rep) // a strings.Builder does not fail
	out := Drafted{Name: dr.Name, YAML: dr.YAML, Report: rep.String(), ReadsBack: dr.ReadsBack()}
	expect, err := r.expectation(ctx, d, confirmed, tpl)
	if err != nil {
		return out, err
	}
	out.Samples = withSample(nil, SampleName(d), pdf, expect)
	push, err := catalogue.NewTemplatePush(dr.Name+".yml", dr.YAML, out.Samples)
	if err != nil {
		return out, fmt.Errorf("the draft does not load: %w", err)
	}
	out.Results, err = catalogue.RunSamples(ctx, push, text)
	return out, err
}

// draftTruth returns the order to anchor on and the template the document
// was processed with (nil for the generic reader), and fills opts' name
// and party id from that template when they are empty.
func (r Review) draftTruth(ctx context.Context, d document.Document, truth *resultjson.Order, opts *draft.Options) (resultjson.Order, *template.Template, error) {
	var confirmed resultjson.Order
	if truth != nil {
		confirmed = *truth
	} else {
		cur, res, err := r.confirmedOrder(ctx, d)
		if err != nil {
			return confirmed, nil, err
		}
		d, confirmed = cur, res.Order
	}
	pin, err := r.Store.CurrentPin(ctx, d.ID)
	if err != nil || pin.TemplateID == 0 {
		return confirmed, nil, nil // never processed, or by the generic reader
	}
	v, err := r.Store.TemplateVersionByID(ctx, pin.TemplateID, pin.Version)
	if err != nil {
		return confirmed, nil, err
	}
	tpl, err := catalogue.CompileVersion(v.Name, v.Filename, v.Content)
	if err != nil {
		return confirmed, nil, err
	}
	if opts.Name == "" {
		opts.Name = tpl.Name
		if opts.PartyID == "" && len(tpl.DocIntake.PartyIDs) > 0 {
			opts.PartyID = tpl.DocIntake.PartyIDs[0]
		}
	}
	return confirmed, tpl, nil
}

// expectation is the X.json of the document's sample: the confirmed order
// with the mapping entries tpl (nil: none) looks up for it.
func (r Review) expectation(ctx context.Context, d document.Document, o resultjson.Order, tpl *template.Template) ([]byte, error) {
	var used []catalogue.SampleMapping
	if tpl != nil {
		var err error
		if used, err = r.mappingsUsed(ctx, d, tpl, o); err != nil {
			return nil, err
		}
	}
	received := d.CreatedAt.UTC()
	s := catalogue.OrderSample{Order: o, Mappings: used, ResultMode: string(d.ResultMode), ReceivedAt: &received,
		From: fmt.Sprintf("the order confirmed for document %s of client %s", d.LogID, d.ClientID)}
	return json.MarshalIndent(s, "", "  ")
}
