package embedded_test

import (
	"context"
	"os"
	"testing"

	"github.com/docintake/docintake/pkg/embedded"
	"github.com/docintake/docintake/pkg/embedded/embeddedtest"
	"github.com/docintake/docintake/pkg/template"
	"github.com/stretchr/testify/require"
)

// TestRun: the attached order wins over the printed text; a template with
// embedded: ignore never looks; unreadable attachments leave the text in
// charge without an error.
func TestRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	set := deployTemplates(t)
	pdf, _ := orderX(t)

	a, err := embedded.Run(ctx, set, pdf, embedded.Limits{}, template.RunOptions{PartyID: "EMBEDDED"})
	require.NoError(t, err)
	require.NotNil(t, a.Run)
	require.Nil(t, a.Unreadable)
	require.Equal(t, "PO123456789", a.Run.Order.ID) // BT-13 of the example's XML
	require.Equal(t, "embedded Order-X COMFORT (order-x.xml)", a.Found.Document.Source())

	ignore, err := template.Parse("ignore.yml", []byte("issuer: X\nkeywords: [x]\nfields:\n  order_id:\n    parser: regex\n    regex: 'PO (\\d+)'\ndocintake:\n  name: ignore\n  embedded: ignore\n"))
	require.NoError(t, err)
	one, err := template.NewSet(ignore)
	require.NoError(t, err)
	a, err = embedded.Run(ctx, one, pdf, embedded.Limits{}, template.RunOptions{Template: "ignore"})
	require.NoError(t, err)
	require.Equal(t, embedded.Attempt{}, a, "attachments not even read")

	// pdfdetach cannot even start in 1 MiB of address space.
	a, err = embedded.Run(ctx, set, pdf, embedded.Limits{MemoryLimitBytes: 1 << 20}, template.RunOptions{PartyID: "EMBEDDED"})
	require.NoError(t, err)
	require.Nil(t, a.Run)
	require.Error(t, a.Unreadable)

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = embedded.Run(canceled, set, pdf, embedded.Limits{}, template.RunOptions{PartyID: "EMBEDDED"})
	require.ErrorIs(t, err, context.Canceled)

	contosoPDF, err := os.ReadFile(embeddedtest.Corpus(t, "orders", "contoso-po-Adatum-Adel.pdf"))
	require.NoError(t, err)
	a, err = embedded.Run(ctx, set, contosoPDF, embedded.Limits{}, template.RunOptions{PartyID: "EMBEDDED"})
	require.NoError(t, err)
	require.Nil(t, a.Run, "no attachment: read the text")
	require.NotNil(t, a.Found)
}
