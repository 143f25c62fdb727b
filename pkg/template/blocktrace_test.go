package template_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/docintake/docintake/pkg/template"
)

// The debug view says which lines block read nothing and which of its
// patterns did not match: a start that matches nowhere (the commonest
// authoring failure) and an end missing after a start; the same for tables.
func TestTraceNamesBlocksNotFound(t *testing.T) {
	t.Parallel()
	tpl, err := template.Parse("t.yml", []byte(`keywords: [ACME]
fields:
  order_id: {parser: regex, regex: 'Order (\d+)'}
  lines:
    parser: lines
    rules:
      - {start: 'Pos\s+Article', end: Total, line: '^(?P<description>\w+)\s+(?P<quantity>\d+)$'}
      - {start: 'Delivery schedule', end: 'End of schedule', line: '^(?P<description>\w+)$'}
tables:
  - {start: 'Payment terms', end: 'Signature', body: '(?P<terms>.+)'}
docintake: {name: t}
`))
	require.NoError(t, err)
	require.Empty(t, tpl.Problems)
	set, err := template.NewSet(tpl)
	require.NoError(t, err)
	// No "Pos Article" header: the first rule's start matches nowhere; the
	// schedule starts but never ends.
	text := "ACME Order 4711\nPos  Art.  Qty\nBolt 5\nTotal 5\nDelivery schedule\nBolt\n"
	run, err := set.Run(t.Context(), text, template.RunOptions{Template: "t", Debug: true})
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, run.Trace.WriteText(&b))
	require.Contains(t, b.String(), `== block lines (rule 0): start "Pos\\s+Article" never matched; no rows read from it`)
	require.Contains(t, b.String(), `== block lines (rule 1): start "Delivery schedule" matched, but end "End of schedule" was not found after it; the block was not read`)
	require.Contains(t, b.String(), `== block tables[0] (rule 0): start "Payment terms" never matched; no rows read from it`)
	require.Equal(t, template.OutcomeRejected, run.Outcome.Status)
}
