package template_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/template"
)

func fallbackTemplate(t *testing.T, docintake string) *template.Template {
	t.Helper()
	tpl, err := template.Parse("po.yml", []byte("keywords: [PO]\nfields:\n  order_id: {parser: regex, regex: 'PO (\\d+)'}\ndocintake:\n"+docintake))
	require.NoError(t, err)
	return tpl
}

// docintake.fallback takes generic or none, and only for order templates.
func TestParseFallback(t *testing.T) {
	t.Parallel()
	require.Equal(t, template.FallbackGeneric, fallbackTemplate(t, "  fallback: generic\n").DocIntake.Fallback)
	require.Empty(t, fallbackTemplate(t, "  fallback: none\n").DocIntake.Fallback)
	require.Empty(t, fallbackTemplate(t, "  name: po\n").DocIntake.Fallback)
	for in, want := range map[string]string{
		"  fallback: invoice2data\n":                      `fallback must be generic or none, not "invoice2data"`,
		"  document_type: invoice\n  fallback: generic\n": "fallback: generic reads orders, and document_type is invoice",
	} {
		tpl := fallbackTemplate(t, in)
		require.Len(t, tpl.Problems, 1, in)
		require.Equal(t, "docintake.fallback", tpl.Problems[0].Path, in)
		require.ErrorContains(t, tpl.Problems[0], want, in)
	}
}

// A template falls back only when it found nothing of the order; its
// other verdicts stand.
func TestFallsBack(t *testing.T) {
	t.Parallel()
	with, without := fallbackTemplate(t, "  fallback: generic\n"), fallbackTemplate(t, "  name: po\n")
	rejected := func(r document.Reason) *template.Outcome {
		return &template.Outcome{Status: template.OutcomeRejected, Reason: r}
	}
	for _, r := range []document.Reason{document.ReasonUnknownFormat, document.ReasonDocumentIDMissing, document.ReasonCannotParseItems} {
		require.True(t, with.FallsBack(rejected(r)), r)
		require.False(t, without.FallsBack(rejected(r)), r)
	}
	for _, r := range []document.Reason{document.ReasonNotAnOrder, document.ReasonVATIDMissing, document.ReasonCannotParseDeliveryAddress} {
		require.False(t, with.FallsBack(rejected(r)), r)
	}
	require.False(t, with.FallsBack(&template.Outcome{Status: template.OutcomeSuccess}))
	require.False(t, with.FallsBack(&template.Outcome{Status: template.OutcomeIgnored}))
	require.False(t, with.FallsBack(&template.Outcome{Status: template.OutcomeDeferred, Reason: document.ReasonMappingNotResolved}))
}
