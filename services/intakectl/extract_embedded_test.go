package intakectl_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/docintake/docintake/pkg/embedded/embeddedtest"
	"github.com/docintake/docintake/pkg/opentrans/opentranstest"
	"github.com/stretchr/testify/require"
)

// Every invoice of the shared corpus is rejected not_an_order (exit 3) by
// every shipped order template, offline as in the processor.
func TestExtractInvoicesNotAnOrder(t *testing.T) {
	t.Parallel()
	tmpl := filepath.Join(repoRoot(t), "deploy", "templates")
	files, err := filepath.Glob(filepath.Join(sharedDir(t, "corpus", "other"), "*.pdf"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		for _, name := range []string{"contoso-po", "orderx-comfort", "embedded"} {
			r := run(t, "extract", "--templates", tmpl, "--template", name, "--output", "xml", f)
			require.Equal(t, 3, r.code, "%s with %s: %s", filepath.Base(f), name, r.stderr)
			var line map[string]any
			require.NoError(t, json.Unmarshal([]byte(r.stderr), &line), r.stderr)
			require.Equal(t, "not_an_order", line["status_reason"], "%s with %s", filepath.Base(f), name)
		}
	}
}

// An Order-X attachment added to a Contoso PO wins over the printed text;
// --output debug shows the attachment, its standard and profile and the
// mapped values; --output text still shows the printed text.
func TestExtractEmbeddedOrder(t *testing.T) {
	t.Parallel()
	tmpl := filepath.Join(repoRoot(t), "deploy", "templates")
	orders := sharedDir(t, "corpus", "orders")
	contoso, err := os.ReadFile(filepath.Join(orders, "contoso-po-Adatum-Adel.pdf"))
	require.NoError(t, err)
	orderX := embeddedtest.Detach(t, filepath.Join(orders, "orderx-ex01-order-comfort.pdf"), 1)
	pdf := embeddedtest.Attach(t, contoso, []string{"order-x.xml"}, map[string][]byte{"order-x.xml": orderX})
	dir := fixture(t, map[string][]byte{"po.pdf": pdf})
	f := filepath.Join(dir, "po.pdf")

	r := run(t, "extract", "--templates", tmpl, "--party-id", "CONTOSO", "--output", "xml", f)
	require.Equal(t, 0, r.code, r.stderr)
	opentranstest.Validate(t, []byte(r.stdout))
	require.Contains(t, r.stdout, "<ORDER_ID>PO123456789</ORDER_ID>")
	require.NotContains(t, r.stdout, "190122")

	r = run(t, "extract", "--templates", tmpl, "--party-id", "CONTOSO", "--output", "debug", f)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, `attachment "order-x.xml": Order-X COMFORT (order-x.xml)`)
	require.Contains(t, r.stdout, "standard Order-X, profile COMFORT, order PO123456789 (type code 220)")
	require.Contains(t, r.stdout, "(engine: embedded Order-X COMFORT (order-x.xml))")
	require.Contains(t, r.stdout, "BY_ID_9587456", "mapped values are listed")
	require.Contains(t, r.stdout, "== outcome: success")

	r = run(t, "extract", "--output", "text", f)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "190122")

	// The embedded template on the Order-X example; on a PDF without a
	// structured order it rejects unknown_format.
	r = run(t, "extract", "--templates", tmpl, "--party-id", "EMBEDDED", "--output", "xml", filepath.Join(orders, "orderx-ex01-order-comfort.pdf"))
	require.Equal(t, 0, r.code, r.stderr)
	opentranstest.Validate(t, []byte(r.stdout))
	r = run(t, "extract", "--templates", tmpl, "--party-id", "EMBEDDED", "--output", "xml", filepath.Join(orders, "contoso-po-Adatum-Adel.pdf"))
	require.Equal(t, 3, r.code)
	require.Contains(t, r.stderr, `"status_reason":"unknown_format"`)
}

// AzureInterior.pdf of invoice2data's golden set attaches its invoice
// (UBL-Invoice-2.1.xml). Read without its template, the attachment decides
// before any field is read: --output json has no invoice2data output for
// it and says why in {"file", "error"}, exit 1 (it panicked on the missing
// result); --output xml rejects it not_an_order.
func TestExtractAttachedInvoiceWithoutResult(t *testing.T) {
	t.Parallel()
	pdf := filepath.Join(sharedDir(t, "corpus", "invoice2data", "tests", "compare"), "AzureInterior.pdf")
	tmpl := sharedDir(t, "corpus", "invoice2data", "tests", "custom", "templates")
	r := run(t, "extract", "--templates", tmpl, "--output", "json", pdf)
	require.Equal(t, 1, r.code, r.stderr)
	var got []map[string]string
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got), r.stdout)
	require.Len(t, got, 1)
	require.Equal(t, pdf, got[0]["file"])
	require.Contains(t, got[0]["error"], "rejected (not_an_order)")
	require.Contains(t, got[0]["error"], "UBL-Invoice-2.1.xml")

	r = run(t, "extract", "--templates", tmpl, "--output", "xml", pdf)
	require.Equal(t, 3, r.code, r.stderr)
	require.Contains(t, r.stderr, `"status_reason":"not_an_order"`)
	r = run(t, "extract", "--templates", tmpl, "--output", "debug", pdf)
	require.Equal(t, 3, r.code, r.stdout)
	require.Contains(t, r.stdout, "== outcome: rejected (not_an_order)")
}
