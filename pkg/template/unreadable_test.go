package template_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/template"
)

// A rejection of a text that could not be read (no text, or a damaged PDF)
// becomes unknown_format saying so, the template's verdict kept in the
// detail; success, ignored and deferred stand, as does a rejection of an
// intact text.
func TestUnreadableVerdict(t *testing.T) {
	t.Parallel()
	rejected := func() *template.Run {
		return &template.Run{Outcome: &template.Outcome{Status: template.OutcomeRejected, Reason: document.ReasonNotAnOrder, Detail: `rule matched "Invoice"`}}
	}
	damaged := []string{"Loop in Pages tree"}

	r := rejected()
	template.UnreadableVerdict(r, "Invoice No 4711\f", damaged)
	require.Equal(t, document.ReasonUnknownFormat, r.Outcome.Reason)
	require.Equal(t, `the PDF could not be read reliably: it is damaged (Loop in Pages tree); the template's verdict on that text: rejected not_an_order: rule matched "Invoice"`, r.Outcome.Detail)

	r = rejected()
	template.UnreadableVerdict(r, " \n\f\f", nil)
	require.Equal(t, document.ReasonUnknownFormat, r.Outcome.Reason)
	require.Contains(t, r.Outcome.Detail, "the PDF could not be read: no text was found in it; ")

	r = rejected()
	template.UnreadableVerdict(r, "Invoice No 4711\f", nil)
	require.Equal(t, rejected().Outcome, r.Outcome, "an intact text keeps the template's verdict")

	for _, st := range []template.OutcomeStatus{template.OutcomeSuccess, template.OutcomeIgnored, template.OutcomeDeferred} {
		r = &template.Run{Outcome: &template.Outcome{Status: st, Detail: "d"}}
		template.UnreadableVerdict(r, "text", damaged)
		require.Equal(t, &template.Outcome{Status: st, Detail: "d"}, r.Outcome)
	}
	template.UnreadableVerdict(nil, "", damaged) // an error: no run
	require.Equal(t, "", template.DamageNote(nil))
	require.Equal(t, "the PDF is damaged; its text is what the reader made of it after repairing it (Loop in Pages tree)", template.DamageNote(damaged))
}
