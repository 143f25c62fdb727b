// A template's regression samples are the documents in
// NAME.samples/ beside NAME.yml, each X.pdf or X.txt with an X.json that says
// what the template must make of it. X.json is either
//
//   - the expected `intakectl extract --output json` output (invoice2data's
//     format, a list), compared as invoice2data's own test compares: the
//     whole list as JSON values (1 and 1.0 differ), template_name dropped; or
//   - an expected outcome, {"status": "rejected", "status_reason":
//     "not_an_order"} (status success, rejected, ignored or
//     deferred_for_retry; status_reason as on the wire, null for none), for
//     documents the template must refuse or ignore.
//   - an expected order, {"order": {…}} in the result JSON's shape, with
//     the mapping entries it was decided with (OrderSample): what a person
//     confirmed in review; the template must deliver exactly that order.
//
// A push runs the samples first and refuses a template that fails one.

package catalogue

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/docintake/docintake/pkg/embedded"
	"github.com/docintake/docintake/pkg/template"
)

// SampleFile is one file of a samples folder.
type SampleFile struct {
	Name    string
	Content []byte
}

// TextFunc returns a sample document's text: a .txt file as it is, a PDF
// through a text engine.
type TextFunc func(ctx context.Context, name string, content []byte) (string, error)

// SampleResult is one sample's verdict.
type SampleResult struct {
	Name string // the document's file name (X.pdf)
	Pass bool
	// Problems says what differs: one line per key ("key: want … got …"),
	// or why the sample could not run.
	Problems []string
}

// Line is the one-line report of a result: "pass X.pdf" or
// "FAIL X.pdf: problem; problem".
func (r SampleResult) Line() string {
	if r.Pass {
		return "pass " + r.Name
	}
	return "FAIL " + r.Name + ": " + strings.Join(r.Problems, "; ")
}

// Failed counts the failed results.
func FailedSamples(results []SampleResult) int {
	n := 0
	for _, r := range results {
		if !r.Pass {
			n++
		}
	}
	return n
}

// Run runs every sample of files against tpl, in file name order. A
// document without an X.json, or an X.json without a document, is a failed
// sample. ctx errors are returned; everything else is a sample's verdict.
func CheckSamples(ctx context.Context, tpl *template.Template, files []SampleFile, text TextFunc) ([]SampleResult, error) {
	set, err := template.NewSet(tpl)
	if err != nil {
		return nil, err
	}
	docs, expect := map[string]SampleFile{}, map[string]SampleFile{}
	var bases []string
	for _, f := range files {
		base := strings.TrimSuffix(f.Name, path.Ext(f.Name))
		switch strings.ToLower(path.Ext(f.Name)) {
		case ".pdf", ".txt":
			docs[base] = f
		case ".json":
			expect[base] = f
		default:
			continue // notes, READMEs
		}
		bases = append(bases, base)
	}
	sort.Strings(bases)
	bases = slices.Compact(bases)
	var out []SampleResult
	for _, base := range bases {
		doc, hasDoc := docs[base]
		exp, hasExp := expect[base]
		switch {
		case !hasDoc:
			out = append(out, SampleResult{Name: exp.Name, Problems: []string{"no " + base + ".pdf or " + base + ".txt beside it"}})
			continue
		case !hasExp:
			out = append(out, SampleResult{Name: doc.Name, Problems: []string{"no " + base + ".json says what to expect"}})
			continue
		}
		r, err := runOne(ctx, set, tpl.Name, doc, exp, text)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// expectedOutcome is the second X.json form.
type expectedOutcome struct {
	Status       string  `json:"status"`
	StatusReason *string `json:"status_reason"`
}

func runOne(ctx context.Context, set *template.Set, name string, doc, exp SampleFile, text TextFunc) (SampleResult, error) {
	res := SampleResult{Name: doc.Name}
	want, err := decode(exp.Content)
	if err != nil {
		res.Problems = []string{exp.Name + ": " + err.Error()}
		return res, nil
	}
	opts := template.RunOptions{Template: name}
	var wantOrder OrderSample
	if m, ok := want.(map[string]any); ok && isOrderSample(m) {
		if wantOrder, opts, err = orderOptions(exp.Content, opts); err != nil {
			res.Problems = []string{exp.Name + ": " + err.Error()}
			return res, nil
		}
	}
	// As in the processor and `intakectl extract`: a business document
	// attached to the PDF wins over its text.
	run, err := structuredRun(ctx, set, doc, opts)
	if run == nil && err == nil {
		txt, terr := text(ctx, doc.Name, doc.Content)
		if terr != nil {
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			res.Problems = []string{"text: " + terr.Error()}
			return res, nil
		}
		run, err = set.Run(ctx, txt, opts)
	}
	if err != nil {
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		res.Problems = []string{"template: " + err.Error()}
		return res, nil
	}
	if m, ok := want.(map[string]any); ok && isOrderSample(m) {
		res.Problems = compareOrder(wantOrder, run)
	} else if ok {
		res.Problems = compareOutcome(m, run.Outcome)
	} else {
		got, err := template.MarshalInvoice2dataJSON([]*template.Result{run.Result})
		if err != nil {
			return res, err
		}
		g, err := decode(got)
		if err != nil {
			return res, err
		}
		res.Problems = compareResult(want, g)
	}
	res.Pass = len(res.Problems) == 0
	return res, nil
}

// decode reads JSON keeping numbers as written (1 and 1.0 differ, as in
// Python) and drops template_name from list entries.
func decode(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			if m, ok := e.(map[string]any); ok {
				delete(m, "template_name")
			}
		}
	case map[string]any:
		if _, ok := x["status"]; !ok && !isOrderSample(x) {
			return nil, fmt.Errorf(`an object must be an expected outcome {"status": …, "status_reason": …} or an expected order {"order": …}`)
		}
	default:
		return nil, fmt.Errorf("want a list (extract --output json) or an outcome object")
	}
	return v, nil
}

// wireStatus is the outcome's status as the webhook says it.
func wireStatus(o *template.Outcome) string {
	if o.Status == template.OutcomeDeferred {
		return "deferred_for_retry"
	}
	return string(o.Status)
}

func compareOutcome(want map[string]any, got *template.Outcome) []string {
	b, _ := json.Marshal(want)
	var w expectedOutcome
	if err := json.Unmarshal(b, &w); err != nil {
		return []string{"expected outcome: " + err.Error()}
	}
	gotReason := ""
	if got.Reason != "" {
		gotReason = got.Reason.WireValue()
	}
	wantReason := ""
	if w.StatusReason != nil {
		wantReason = *w.StatusReason
	}
	var p []string
	if w.Status != wireStatus(got) {
		p = append(p, fmt.Sprintf("status: want %s got %s", w.Status, wireStatus(got)))
	}
	if wantReason != gotReason {
		p = append(p, fmt.Sprintf("status_reason: want %s got %s", orNull(wantReason), orNull(gotReason)))
	}
	if len(p) > 0 && got.Detail != "" {
		p = append(p, "detail: "+got.Detail)
	}
	return p
}

func orNull(s string) string {
	if s == "" {
		return "null"
	}
	return s
}

// compareResult compares two invoice2data output lists and names the
// differing keys of each entry.
func compareResult(want, got any) []string {
	if reflect.DeepEqual(want, got) {
		return nil
	}
	wl, gl := want.([]any), got.([]any)
	if len(wl) != len(gl) {
		return []string{fmt.Sprintf("want %d results, got %d (keywords did not match or a required field is missing)", len(wl), len(gl))}
	}
	var p []string
	for i := range wl {
		wm, _ := wl[i].(map[string]any)
		gm, _ := gl[i].(map[string]any)
		keys := map[string]bool{}
		for k := range wm {
			keys[k] = true
		}
		for k := range gm {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			wv, wok := wm[k]
			gv, gok := gm[k]
			switch {
			case !gok:
				p = append(p, k+": missing")
			case !wok:
				p = append(p, k+": not expected, got "+short(gv))
			case !reflect.DeepEqual(wv, gv):
				p = append(p, fmt.Sprintf("%s: want %s got %s", k, short(wv), short(gv)))
			}
		}
	}
	return p
}

func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 80 {
		return string(b[:77]) + "..."
	}
	return string(b)
}

// structuredRun runs the template on the business document a PDF sample
// carries (Order-X, UBL, an invoice); nil without one, or when the template
// ignores attachments. Unreadable attachments leave the text in charge, as
// in the processor.
func structuredRun(ctx context.Context, set *template.Set, doc SampleFile, opts template.RunOptions) (*template.Run, error) {
	if !strings.EqualFold(path.Ext(doc.Name), ".pdf") {
		return nil, nil
	}
	a, err := embedded.Run(ctx, set, doc.Content, embedded.Limits{}, opts)
	return a.Run, err
}
