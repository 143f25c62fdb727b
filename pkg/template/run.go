package template

import (
	"context"
	"fmt"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/order"
)

// RunOptions select the template and tune one document's processing.
type RunOptions struct {
	// Template or PartyID selects the template (the upload decides); with
	// neither, the template is chosen by keywords as invoice2data does.
	Template string
	PartyID  string
	Mapper   Mapper
	Mode     document.ResultMode
	Area     AreaFunc
	// Debug collects a Trace (templates tried, fields, blocks, checks).
	Debug bool
	// ReceivedAt is when the document was received: the order date of a
	// template with docintake.date_fallback: receipt when none is printed.
	ReceivedAt time.Time
	// Budget bounds the time of the whole run: template choice, options,
	// fields, lines, tables and rules, every backtracking match included
	// (0: DefaultBudget; negative: only ctx and MatchTimeout bound it).
	// Mapper lookups are not counted.
	Budget time.Duration
}

// Run is one document's processing: the chosen template, invoice2data's
// result, the canonical order and the outcome.
type Run struct {
	Template *Template // nil when no template matched
	Result   *Result
	Order    *order.Order
	Outcome  *Outcome
	Trace    *Trace // set when RunOptions.Debug
}

// Run selects a template for text, extracts and builds the canonical order.
// An unknown template name or party id is an EBADREQUEST error with code
// template_not_found; no matching template is a rejected unknown_format
// outcome, not an error. Other errors come from Order (mapper failure,
// unparsable canonical value), the budget (a *BudgetError naming the
// template and the step where the time ran out) or ctx; with those the
// Run holds what was read so far (the trace, the partial Result).
func (s *Set) Run(ctx context.Context, text string, opts RunOptions) (*Run, error) {
	run := &Run{}
	if opts.Debug {
		run.Trace = &Trace{}
	}
	t, err := s.chosen(opts)
	if err != nil {
		return nil, err
	}
	m := newMeter(ctx, "", opts.Budget)
	if t == nil {
		if run.Trace != nil {
			t, run.Trace.Templates = s.match(m, text, true, true)
		} else {
			t, _ = s.match(m, text, false, true) // as Choose: the trace nobody reads is not kept
		}
		if err := m.result(); err != nil {
			return run, err
		}
		if t == nil {
			run.Outcome = &Outcome{Status: OutcomeRejected, Reason: document.ReasonUnknownFormat, Detail: "no template matched"}
			return run, nil
		}
	}
	run.Template = t
	if t.DocIntake.Embedded == EmbeddedRequire {
		run.Outcome = &Outcome{Status: OutcomeRejected, Reason: document.ReasonUnknownFormat,
			Detail: fmt.Sprintf("template %s reads structured attachments only and the PDF carries no structured order", t.Name)}
		return run, nil
	}
	res, err := t.Extract(ctx, text, &ExtractOptions{Area: opts.Area, Trace: run.Trace, meter: m})
	run.Result = res
	if err != nil {
		return run, err
	}
	if run.Trace != nil && len(run.Trace.Templates) == 0 {
		run.Trace.Templates = []TemplateTrace{{Name: t.Name, File: t.File, Priority: t.Priority, Matched: res.Matched, Keywords: res.Keywords}}
	}
	o, out, err := t.order(ctx, m, res, opts.Mapper, opts.Mode, run.Trace)
	res.Usage = m.usage
	if o != nil && o.IssueDate.IsZero() && t.DocIntake.DateFallback == "receipt" && !opts.ReceivedAt.IsZero() {
		o.IssueDate = order.DateOf(opts.ReceivedAt)
		o.Remarks = append(o.Remarks, "No order date printed; the order is dated by the day it was received ("+o.IssueDate.String()+")")
	}
	run.Order, run.Outcome = o, out
	return run, err
}

// chosen is the template opts name (by template name or party id); nil when
// opts name none. An unknown name or party id is an EBADREQUEST error with
// code template_not_found.
func (s *Set) chosen(opts RunOptions) (*Template, error) {
	switch {
	case opts.Template != "":
		t, ok := s.ByName(opts.Template)
		if !ok {
			return nil, document.CodedErrorf(document.EBADREQUEST, "template_not_found", "no template named %q", opts.Template)
		}
		return t, nil
	case opts.PartyID != "":
		t, ok := s.ByPartyID(opts.PartyID)
		if !ok {
			return nil, document.CodedErrorf(document.EBADREQUEST, "template_not_found", "no template for party_id %q", opts.PartyID)
		}
		return t, nil
	}
	return nil, nil
}
