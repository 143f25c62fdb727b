package processor_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/docintake/docintake/pkg/catalogue"
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
	acme, err := os.ReadFile(filepath.Join("testdata", "templates", "acme.yml"))
	require.NoError(t, err)
	// The test PDF's lines are 14 pt apart from 72 pt below the top edge:
	// at 144 dpi the crop from 120 px (60 pt) to 188 px (94 pt) holds the
	// first two lines only.
	tpl := strings.NewReplacer(
		`order_id: {parser: regex, regex: 'Order no\.? ([\w-]+)'}`,
		`order_id: {parser: regex, regex: 'Order no\.? ([\w-]+)', area: {f: 1, l: 1, r: 144, x: 0, y: 120, W: 1200, H: 68}}`,
		"name: acme", "name: acme-area", "party_ids: [ACME]", "party_ids: [ACME-AREA]",
	).Replace(string(acme))
	require.Contains(t, tpl, "area:")
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "acme-area.yml"), []byte(tpl), 0o644))

	for _, engine := range []string{"pdftotext", "resident"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			b := setup(t, map[string]string{"INTAKE_PDF_ENGINE": engine, "INTAKE_PDF_RESIDENT_BIN": pdftexttest.ResidentBin(t)})
			// The template joins the catalogue as INTAKE_TEMPLATES_DIR does.
			tm, err := catalogue.Open(t.Context(), b.st, zaptest.NewLogger(t), catalogue.Options{Dirs: []string{dir}})
			require.NoError(t, err)
			t.Cleanup(tm.Close)
			b.tmpls = tm
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
