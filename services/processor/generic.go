package processor

import (
	"context"
	"fmt"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/generic"
	"github.com/docintake/docintake/pkg/template"
)

// runText reads a document's layout text with version v: the generic reader
// for the built-in template generic, else the template, and then its
// docintake.fallback when the template found nothing. via names the reader
// for the result's source when it was not the template ("" otherwise).
func runText(ctx context.Context, v *catalogue.Version, text string, opts template.RunOptions) (run *template.Run, via string, err error) {
	if v.Builtin() {
		run, err = readGeneric(ctx, text, opts)
		return run, "read by " + generic.Name, err
	}
	run, err = v.Set.Run(ctx, text, opts)
	if err != nil || !v.Template.FallsBack(run.Outcome) {
		return run, "", err
	}
	g, err := readGeneric(ctx, text, opts)
	if err != nil {
		return nil, "", err
	}
	own := outcomeSummary(run.Outcome)
	if g.Outcome.Status != template.OutcomeSuccess {
		// Only a reading that proves itself replaces the template's
		// verdict; the reader's reason stays in the events for whoever
		// writes the template.
		run.Outcome.Detail = own + "; fallback " + generic.Name + ": " + outcomeSummary(g.Outcome)
		return run, "", nil
	}
	g.Outcome.Detail = fmt.Sprintf("template %s found nothing (%s); read by its fallback %s", v.Name, own, generic.Name)
	return g, "read by " + generic.Name + " (fallback of " + v.Name + ")", nil
}

// readGeneric runs the generic reader on text (generic.ReadAs: its only
// errors are ctx's).
func readGeneric(ctx context.Context, text string, opts template.RunOptions) (*template.Run, error) {
	r, err := generic.ReadAs(ctx, text, opts.Mode, generic.Options{ReceivedAt: opts.ReceivedAt})
	if err != nil {
		return nil, err
	}
	return r.Run(), nil
}

// outcomeSummary is "reason: detail" of a rejection for events.
func outcomeSummary(o *template.Outcome) string {
	s := string(o.Status)
	if o.Reason != "" {
		s = o.Reason.WireValue()
	}
	if o.Detail != "" {
		s += ": " + o.Detail
	}
	return s
}
