package catalogue

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/resultjson"
	"github.com/docintake/docintake/pkg/template"
)

// OrderSample is the third X.json form: the order a person confirmed for
// the document (issue 27's "add as a sample"), in the result JSON's shape,
// with what deciding it needs besides the PDF. The template must deliver
// it as a success, value for value. It is independent of the template's
// field names, so it holds for any template of the buyer: a rewrite or a
// draft is tested against the same truth.
type OrderSample struct {
	Order resultjson.Order `json:"order"`
	// Mappings are the client's mapping entries the order was decided
	// with; the sample runs with exactly these (a lookup of another key
	// misses, as in production without the entry).
	Mappings []SampleMapping `json:"mappings,omitempty"`
	// ResultMode is the document's result mode (items, no_items).
	ResultMode string `json:"result_mode,omitempty"`
	// ReceivedAt dates an order without a printed date for a template
	// with date_fallback: receipt.
	ReceivedAt *time.Time `json:"received_at,omitempty"`
	// From says where the truth comes from (the review, who); not compared.
	From string `json:"from,omitempty"`
}

// SampleMapping is one mapping entry an OrderSample was decided with.
type SampleMapping struct {
	Kind  string `json:"kind"`
	Key   string `json:"key"`
	Value string `json:"value"`
}

// isOrderSample reports whether a decoded X.json object is an OrderSample.
func isOrderSample(m map[string]any) bool {
	_, hasOrder := m["order"]
	_, hasStatus := m["status"]
	return hasOrder && !hasStatus
}

// orderOptions are the run options an order sample asks for.
func orderOptions(content []byte, opts template.RunOptions) (OrderSample, template.RunOptions, error) {
	var s OrderSample
	if err := json.Unmarshal(content, &s); err != nil {
		return s, opts, fmt.Errorf("expected order: %w", err)
	}
	opts.Mapper = sampleMapper(s.Mappings)
	opts.Mode = document.ResultMode(s.ResultMode)
	if s.ReceivedAt != nil {
		opts.ReceivedAt = *s.ReceivedAt
	}
	return s, opts, nil
}

// compareOrder names what differs between the expected order and the
// run's: the outcome, then each value by its result JSON path.
func compareOrder(want OrderSample, run *template.Run) []string {
	if run.Outcome == nil || run.Outcome.Status != template.OutcomeSuccess || run.Order == nil {
		got := "no outcome"
		if o := run.Outcome; o != nil {
			got = wireStatus(o)
			if o.Reason != "" {
				got += " " + o.Reason.WireValue()
			}
			if o.Detail != "" {
				got += ": " + o.Detail
			}
		}
		return []string{"status: want success got " + got}
	}
	var p []string
	for _, d := range resultjson.Diff(want.Order, resultjson.OrderOf(run.Order)) {
		p = append(p, fmt.Sprintf("%s: want %q got %q", d.Path, d.Before, d.After))
	}
	return p
}

// sampleMapper looks mappings up in an order sample's entries.
type sampleMapper []SampleMapping

func (m sampleMapper) Lookup(_ context.Context, kind, key string) (string, bool, error) {
	for _, e := range m {
		if e.Kind == kind && e.Key == key {
			return e.Value, true, nil
		}
	}
	return "", false, nil
}
