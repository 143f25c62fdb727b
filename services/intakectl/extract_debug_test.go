package intakectl_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// --output debug names a lines block whose start regex never matches (the
// block and the pattern) and exits as --output xml does: 3 rejected, 4
// ignored, 2 no template matched, 0 success.
func TestExtractDebugBlockNotFoundAndExitCodes(t *testing.T) {
	t.Parallel()
	// The page prints the header "Pos Article Description"; this template
	// looks for "Pos Artikel".
	wrong := strings.Replace(testTemplate, `start: Pos\s+Article\s+Description`, `start: Pos\s+Artikel`, 1)
	dir := fixture(t, map[string][]byte{"wrong/northwind.yml": []byte(wrong), "ok/northwind.yml": []byte(testTemplate),
		"order.pdf": orderPDF(), "cancelled.pdf": orderPDF("This order was cancelled"), "invoice.pdf": orderPDF("INVOICE"),
		"letter.txt": []byte("Dear Sir or Madam,\n")})
	doc := func(name string) string { return filepath.Join(dir, name) }

	r := run(t, "extract", "--templates", doc("wrong"), "--party-id", "NORTHWIND", "--output", "debug", doc("order.pdf"))
	require.Equal(t, 3, r.code, r.stdout)
	require.Contains(t, r.stdout, `== block lines (rule 0): start "Pos\\s+Artikel" never matched; no rows read from it`)
	require.Contains(t, r.stdout, "== outcome: rejected (cannot_parse_items)")
	r = run(t, "extract", "--templates", doc("wrong"), "--party-id", "NORTHWIND", "--output", "xml", doc("order.pdf"))
	require.Equal(t, 3, r.code, r.stderr)

	for file, want := range map[string]int{"order.pdf": 0, "invoice.pdf": 3, "cancelled.pdf": 4, "letter.txt": 2} {
		r = run(t, "extract", "--templates", doc("ok"), "--output", "debug", doc(file))
		require.Equal(t, want, r.code, "%s: %s", file, r.stdout)
		r = run(t, "extract", "--templates", doc("ok"), "--output", "xml", doc(file))
		require.Equal(t, want, r.code, "%s with --output xml: %s", file, r.stderr)
	}
}

// extract judges an unreadable PDF as the processor does: the corpus's
// malformed files, three of which print "Invoice No 4711", are never
// rejected not_an_order by contoso-po (whose rule rejects invoices): a PDF
// that cannot be opened or is a decompression bomb is an extraction error
// (exit 1), one read only after repairing it is rejected unknown_format
// saying it could not be read (exit 3).
func TestExtractMalformedNotAnOrderNever(t *testing.T) {
	t.Parallel()
	dir := sharedDir(t, "corpus", "malformed")
	tmpl := filepath.Join(repoRoot(t), "deploy", "templates")
	for file, want := range map[string]int{"bad_random.pdf": 1, "bad_truncated.pdf": 1, "bad_flate_bomb.pdf": 1, "bad_cyclic_pages.pdf": 3, "bad_huge_length.pdf": 3} {
		r := run(t, "extract", "--templates", tmpl, "--template", "contoso-po", "--output", "xml", filepath.Join(dir, file))
		require.Equal(t, want, r.code, "%s: %s", file, r.stderr)
		require.NotContains(t, r.stderr, "not_an_order\"", file)
		if want == 3 {
			require.Contains(t, r.stderr, `"status_reason":"unknown_format"`, file)
			require.Contains(t, r.stderr, "could not be read reliably: it is damaged", file)
		}
	}
}

// TestExtractGenericMalformedNotAnOrderNever: the generic reader on the
// repaired hostile PDFs (their text prints "Invoice No 4711") says the PDF
// could not be read, not that it is no order.
func TestExtractGenericMalformedNotAnOrderNever(t *testing.T) {
	t.Parallel()
	dir := sharedDir(t, "corpus", "malformed")
	for _, file := range []string{"bad_cyclic_pages.pdf", "bad_huge_length.pdf"} {
		r := run(t, "extract", "--generic", "--output", "xml", filepath.Join(dir, file))
		require.Equal(t, 3, r.code, "%s: %s", file, r.stderr)
		require.NotContains(t, r.stderr, "not_an_order\"", file)
		require.Contains(t, r.stderr, `"status_reason":"unknown_format"`, file)
		require.Contains(t, r.stderr, "could not be read reliably: it is damaged", file)
	}
}
