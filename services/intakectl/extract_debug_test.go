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
