package template

import (
	"strings"

	"github.com/docintake/docintake/pkg/document"
)

// DamageNote says that the PDF's text was read from a damaged document
// (pdftext.Text.Damage): for the document's events and the debug view. ""
// for an intact PDF.
func DamageNote(damage []string) string {
	if len(damage) == 0 {
		return ""
	}
	return "the PDF is damaged; its text is what the reader made of it after repairing it (" + strings.Join(damage, "; ") + ")"
}

// UnreadableVerdict keeps a verdict about what a document is off a text
// that could not be read. When the PDF gave no text at all, or its text is
// what was left after the reader repaired the PDF's structure (damage,
// pdftext.Text.Damage), a rejection becomes unknown_format with a detail
// that says the PDF could not be read, followed by the template's own
// verdict: a client's order desk reads not_an_order as "this is not an
// order", and of a document nobody could read that is not known. A success
// stands (the order was read and passed the template's checks), as do
// ignored and deferred outcomes. run may be nil.
func UnreadableVerdict(run *Run, text string, damage []string) {
	if run == nil || run.Outcome == nil || run.Outcome.Status != OutcomeRejected {
		return
	}
	var why string
	switch {
	case strings.TrimSpace(text) == "":
		why = "the PDF could not be read: no text was found in it"
	case len(damage) > 0:
		why = "the PDF could not be read reliably: it is damaged (" + strings.Join(damage, "; ") + ")"
	default:
		return
	}
	own := string(run.Outcome.Status)
	if run.Outcome.Reason != "" {
		own += " " + run.Outcome.Reason.WireValue()
	}
	if run.Outcome.Detail != "" {
		own += ": " + run.Outcome.Detail
	}
	run.Outcome.Reason = document.ReasonUnknownFormat
	run.Outcome.Detail = why + "; the template's verdict on that text: " + own
}
