// Package embeddedtest builds PDFs with attachments and hostile attachments
// for the tests of pkg/embedded, the processor and intakectl, with poppler's
// pdfattach and pdfdetach and libxml2's xmllint as independent tools.
package embeddedtest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docintake/docintake/pkg/repotest"
)

func tool(tb testing.TB, name string) string {
	tb.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("embeddedtest: %s not installed (poppler-utils / libxml2-utils; CI=true: not skipping)", name)
		}
		tb.Skipf("embeddedtest: %s not installed; skipping", name)
	}
	return p
}

// Corpus returns the path of a corpus file (../shared/corpus/PARTS…),
// skipping the test when the corpus is absent (failing under CI=true).
func Corpus(tb testing.TB, parts ...string) string {
	tb.Helper()
	return repotest.Shared(tb, append([]string{"corpus"}, parts...)...)
}

// Attach returns pdf with files attached (name → content) by pdfattach,
// in the order of names.
func Attach(tb testing.TB, pdf []byte, names []string, files map[string][]byte) []byte {
	tb.Helper()
	bin := tool(tb, "pdfattach")
	dir := tb.TempDir()
	cur := filepath.Join(dir, "in-0.pdf")
	if err := os.WriteFile(cur, pdf, 0o600); err != nil {
		tb.Fatal(err)
	}
	for i, name := range names {
		att := filepath.Join(dir, fmt.Sprintf("att-%d", i), name)
		if err := os.MkdirAll(filepath.Dir(att), 0o700); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(att, files[name], 0o600); err != nil {
			tb.Fatal(err)
		}
		next := filepath.Join(dir, fmt.Sprintf("in-%d.pdf", i+1))
		if out, err := exec.Command(bin, cur, att, next).CombinedOutput(); err != nil {
			tb.Fatalf("pdfattach %s: %v: %s", name, err, out)
		}
		cur = next
	}
	b, err := os.ReadFile(cur)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// Detach returns attachment n (1-based) of the PDF file, read by pdfdetach.
func Detach(tb testing.TB, file string, n int) []byte {
	tb.Helper()
	bin := tool(tb, "pdfdetach")
	out := filepath.Join(tb.TempDir(), "attachment")
	if b, err := exec.Command(bin, "-save", fmt.Sprint(n), "-o", out, file).CombinedOutput(); err != nil {
		tb.Fatalf("pdfdetach %s: %v: %s", file, err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// XPath evaluates expr on the XML document with xmllint (string()
// results) — a reader independent of pkg/embedded's.
func XPath(tb testing.TB, doc []byte, expr string) string {
	tb.Helper()
	bin := tool(tb, "xmllint")
	f := filepath.Join(tb.TempDir(), "doc.xml")
	if err := os.WriteFile(f, doc, 0o600); err != nil {
		tb.Fatal(err)
	}
	out, err := exec.Command(bin, "--nonet", "--xpath", "string("+expr+")", f).Output()
	if err != nil {
		// xmllint exits 10 for an empty result.
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 10 {
			return ""
		}
		tb.Fatalf("xmllint --xpath %s: %v", expr, err)
	}
	return strings.TrimSpace(string(out))
}

// Hostile returns attachments that must be refused without expanding,
// fetching, recursing or allocating without bound, by name.
func Hostile() map[string][]byte {
	var laughs strings.Builder
	laughs.WriteString(`<?xml version="1.0"?>` + "\n" + `<!DOCTYPE lolz [<!ENTITY lol "lol">`)
	prev := "lol"
	for i := 1; i <= 9; i++ {
		name := fmt.Sprintf("lol%d", i)
		fmt.Fprintf(&laughs, `<!ENTITY %s "%s">`, name, strings.Repeat("&"+prev+";", 10))
		prev = name
	}
	laughs.WriteString(`]>` + "\n" + `<rsm:SCRDMCCBDACIOMessageStructure xmlns:rsm="urn:un:unece:uncefact:data:SCRDMCCBDACIOMessageStructure:100"><rsm:ExchangedDocument>&lol9;</rsm:ExchangedDocument></rsm:SCRDMCCBDACIOMessageStructure>`)
	xxe := `<?xml version="1.0"?>
<!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<rsm:CrossIndustryInvoice xmlns:rsm="urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100"><rsm:ExchangedDocument>&xxe;</rsm:ExchangedDocument></rsm:CrossIndustryInvoice>`
	undeclared := `<rsm:SCRDMCCBDACIOMessageStructure xmlns:rsm="urn:un:unece:uncefact:data:SCRDMCCBDACIOMessageStructure:100">&lol9;</rsm:SCRDMCCBDACIOMessageStructure>`
	const depth = 100_000
	deep := `<rsm:SCRDMCCBDACIOMessageStructure xmlns:rsm="urn:un:unece:uncefact:data:SCRDMCCBDACIOMessageStructure:100">` +
		strings.Repeat("<a>", depth) + strings.Repeat("</a>", depth) + `</rsm:SCRDMCCBDACIOMessageStructure>`
	wide := `<rsm:SCRDMCCBDACIOMessageStructure xmlns:rsm="urn:un:unece:uncefact:data:SCRDMCCBDACIOMessageStructure:100">` +
		strings.Repeat("<a/>", 600_000) + `</rsm:SCRDMCCBDACIOMessageStructure>`
	return map[string][]byte{
		"entity-expansion.xml":  []byte(laughs.String()),
		"external-entity.xml":   []byte(xxe),
		"undeclared-entity.xml": []byte(undeclared),
		"deep-nesting.xml":      []byte(deep),
		"many-elements.xml":     []byte(wide),
	}
}

// Bomb returns an attachment of n bytes that looks like an Order-X
// document (its start) followed by padding: larger than the reader's cap,
// it must be skipped unread.
func Bomb(n int) []byte {
	head := []byte(`<?xml version="1.0"?><rsm:SCRDMCCBDACIOMessageStructure xmlns:rsm="urn:un:unece:uncefact:data:SCRDMCCBDACIOMessageStructure:100"><!--`)
	return append(head, bytes.Repeat([]byte{' '}, max(n-len(head), 0))...)
}
