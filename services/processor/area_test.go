package processor_test

import (
	"strings"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/opentrans"
	"github.com/docintake/docintake/pkg/pdftext/pdftexttest"
	"github.com/stretchr/testify/require"
)

// TestTemplateArea: a field's area crops the PDF in the processor, through
// the configured engine. The order prints a second "Order no." further
// down; only the crop around the header makes the order id one value.
func TestTemplateArea(t *testing.T) {
	t.Parallel()
	for _, engine := range []string{"pdftotext", "resident"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			b := setup(t, map[string]string{"INTAKE_PDF_ENGINE": engine, "INTAKE_PDF_RESIDENT_BIN": pdftexttest.ResidentBin(t)})
			// The test PDF's lines are 14 pt apart from 72 pt below the top
			// edge: at 144 dpi the crop from 120 px (60 pt) to 188 px (94 pt)
			// holds the first two lines only.
			tpl := useAcmeVariant(t, b, "acme-area",
				`order_id: {parser: regex, regex: 'Order no\.? ([\w-]+)'}`,
				`order_id: {parser: regex, regex: 'Order no\.? ([\w-]+)', area: {f: 1, l: 1, r: 144, x: 0, y: 120, W: 1200, H: 68}}`)
			require.Contains(t, tpl, "area:")
			b.addArticles()
			b.start()
			d := b.upload(orderPDF("A-1", appendLine("Order no. OLD-9")), docOpts{template: "acme-area"})
			d = b.waitState(d, document.StateProcessedSuccess, 20*time.Second)
			o, err := opentrans.Read(strings.NewReader(string(b.read(d.ResultPath))))
			require.NoError(t, err)
			require.Equal(t, "A-1", o.ID)
		})
	}
}
