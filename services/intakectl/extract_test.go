package intakectl_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docintake/docintake/pkg/opentrans"
	"github.com/docintake/docintake/pkg/opentrans/opentranstest"
	"github.com/docintake/docintake/pkg/pdftext/pdftexttest"
	"github.com/docintake/docintake/services/intakectl"
	"github.com/stretchr/testify/require"
)

// A buyer layout invented for these tests: label/value header, a table
// with columns placed by x position.
const testTemplate = `issuer: Northwind Test Buyer
keywords:
  - PURCHASE ORDER
  - Northwind Traders
fields:
  order_id:
    parser: regex
    regex: 'Order number:\s+(\S+)'
  date:
    parser: regex
    regex: 'Order date:\s+(\d{2}\.\d{2}\.\d{4})'
    type: date
  buyer_name:
    parser: static
    value: Northwind Traders
  buyer_street:
    parser: static
    value: 1 Harbour Road
  buyer_zip:
    parser: static
    value: "20095"
  buyer_city:
    parser: static
    value: Hamburg
  delivery_name:
    parser: regex
    regex: 'Deliver to:\s+(.+?)\s*\n'
  delivery_street:
    parser: regex
    regex: 'Deliver to:.*\n\s+(.+?)\s*\n'
  delivery_zip:
    parser: regex
    regex: 'Deliver to:.*\n.*\n\s+(\d{5}) '
  delivery_city:
    parser: regex
    regex: 'Deliver to:.*\n.*\n\s+\d{5} (.+?)\s*\n'
  lines:
    parser: lines
    start: Pos\s+Article\s+Description
    end: Total
    line: ^\s*(?P<position>\d+)\s+(?P<supplier_article_id>\S+)\s+(?P<description>\S.*?)\s{2,}(?P<quantity>\d+)\s+(?P<unit>\S+)\s+(?P<unit_price>[\d.]+,\d{2})\s+(?P<line_amount>[\d.]+,\d{2})\s*$
options:
  currency: EUR
  date_formats: ["%d.%m.%Y"]
  decimal_separator: ","
docintake:
  name: northwind
  party_ids: [NORTHWIND]
  document_type: order
  rules:
    - match: (?i)\binvoice\b
      action: reject
      reason: not_an_order
    - match: (?i)cancelled
      action: ignore
`

func orderPDF(extra ...string) []byte { return pdftexttest.Build(orderPage(extra...)) }

func orderPage(extra ...string) pdftexttest.Page {
	t := func(x, y float64, s string) pdftexttest.Text { return pdftexttest.Text{X: x, Y: y, S: s} }
	texts := []pdftexttest.Text{
		t(72, 60, "Northwind Traders"), t(380, 60, "PURCHASE ORDER"),
		t(72, 90, "Order number:"), t(180, 90, "NW-2026-0042"),
		t(72, 104, "Order date:"), t(180, 104, "03.11.2026"),
		t(72, 130, "Deliver to:"), t(180, 130, "Northwind Warehouse"),
		t(180, 144, "Dock Street 7"), t(180, 158, "21079 Hamburg"),
		t(72, 200, "Pos"), t(110, 200, "Article"), t(200, 200, "Description"), t(380, 200, "Qty"), t(420, 200, "Unit"), t(460, 200, "Price"), t(520, 200, "Amount"),
		t(72, 216, "1"), t(110, 216, "A-100"), t(200, 216, "Hex bolt M8"), t(380, 216, "250"), t(420, 216, "PCE"), t(460, 216, "0,12"), t(520, 216, "30,00"),
		t(72, 230, "2"), t(110, 230, "B-220"), t(200, 230, "Washer 8 mm"), t(380, 230, "250"), t(420, 230, "PCE"), t(460, 230, "0,04"), t(520, 230, "10,00"),
		t(420, 260, "Total"), t(520, 260, "40,00"),
	}
	for i, s := range extra {
		texts = append(texts, t(72, 300+14*float64(i), s))
	}
	return pdftexttest.Page{Texts: texts}
}

type result struct {
	code           int
	stdout, stderr string
}

func run(t *testing.T, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := intakectl.Main(context.Background(), args, intakectl.Env{Getenv: func(string) string { return "" },
		Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
	return result{code, out.String(), errb.String()}
}

func fixture(t *testing.T, files map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	for name, b := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, b, 0o644))
	}
	return dir
}

func TestExtractXML(t *testing.T) {
	t.Parallel()
	dir := fixture(t, map[string][]byte{"templates/northwind.yml": []byte(testTemplate), "order.pdf": orderPDF()})
	for _, engine := range []string{"pdftotext", "pdfium"} {
		r := run(t, "extract", "--templates", filepath.Join(dir, "templates"), "--party-id", "NORTHWIND",
			"--engine", engine, "--output", "xml", filepath.Join(dir, "order.pdf"))
		require.Equal(t, 0, r.code, "%s: %s", engine, r.stderr)
		opentranstest.Validate(t, []byte(r.stdout))
		o, err := opentrans.Read(strings.NewReader(r.stdout))
		require.NoError(t, err)
		// Expected values as printed on the fixture page.
		require.Equal(t, "NW-2026-0042", o.ID, engine)
		require.Equal(t, "2026-11-03", o.IssueDate.String(), engine)
		require.Len(t, o.Items, 2, engine)
		require.Equal(t, "A-100", o.Items[0].SupplierArticleID)
		require.Equal(t, "Hex bolt M8", o.Items[0].Description)
		require.Equal(t, "250", o.Items[0].Quantity)
		require.Equal(t, "0.12", o.Items[0].UnitPrice)
		require.Equal(t, "30.00", o.Items[0].LineAmount)
		require.Equal(t, "10.00", o.Items[1].LineAmount)
		del, ok := o.Party("delivery")
		require.True(t, ok)
		require.Equal(t, "Northwind Warehouse", del.Address.Name)
		require.Equal(t, "21079", del.Address.Zip)
	}
}

func TestExtractOutcomesAndExitCodes(t *testing.T) {
	t.Parallel()
	dir := fixture(t, map[string][]byte{
		"templates/northwind.yml": []byte(testTemplate),
		"invoice.pdf":             orderPDF("This is an INVOICE, not an order"),
		"cancelled.pdf":           orderPDF("Order cancelled by the buyer"),
		"other.pdf":               pdftexttest.PDF([]string{"Some letter", "nothing to see"}),
	})
	tmpl := filepath.Join(dir, "templates")
	cases := []struct {
		file, party string
		code        int
		status      string
		reason      any
	}{
		{"invoice.pdf", "NORTHWIND", 3, "rejected", "not_an_order"},
		{"cancelled.pdf", "NORTHWIND", 4, "ignored", nil},
		{"other.pdf", "NORTHWIND", 3, "rejected", "unknown_format"}, // selected template, keywords do not match
	}
	for _, c := range cases {
		r := run(t, "extract", "--templates", tmpl, "--party-id", c.party, "--output", "xml", filepath.Join(dir, c.file))
		require.Equal(t, c.code, r.code, "%s: %s", c.file, r.stderr)
		require.Empty(t, r.stdout, c.file)
		var line map[string]any
		require.NoError(t, json.Unmarshal([]byte(strings.TrimSpace(r.stderr)), &line), r.stderr)
		require.Equal(t, c.status, line["status"], c.file)
		require.Equal(t, c.reason, line["status_reason"], c.file)
	}
	r := run(t, "extract", "--templates", tmpl, "--template", "nope", "--output", "xml", filepath.Join(dir, "other.pdf"))
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "nope")
}

func TestExtractTextJSONDebug(t *testing.T) {
	t.Parallel()
	dir := fixture(t, map[string][]byte{"templates/northwind.yml": []byte(testTemplate), "order.pdf": orderPDF()})
	tmpl := filepath.Join(dir, "templates")
	r := run(t, "extract", "--output", "text", "--engine", "pdftotext", filepath.Join(dir, "order.pdf"))
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "engine: pdftotext")
	require.Contains(t, r.stdout, "NW-2026-0042")

	// invoice2data's JSON: keyword selection (no --template), fields typed.
	r = run(t, "extract", "--templates", tmpl, "--output", "json", filepath.Join(dir, "order.pdf"))
	require.Equal(t, 0, r.code, r.stderr)
	var list []map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &list), r.stdout)
	require.Len(t, list, 1)
	require.Equal(t, "Northwind Test Buyer", list[0]["issuer"])
	require.Equal(t, "NW-2026-0042", list[0]["order_id"])
	require.Equal(t, "2026-11-03", list[0]["date"])
	require.Equal(t, "EUR", list[0]["currency"])
	lines, _ := list[0]["lines"].([]any)
	require.Len(t, lines, 2)

	// .txt files are read as text, as invoice2data does.
	txt := filepath.Join(dir, "order.txt")
	require.NoError(t, os.WriteFile(txt, []byte("Northwind Traders   PURCHASE ORDER\nOrder number: TXT-1\n"), 0o644))
	r = run(t, "extract", "--templates", tmpl, "--output", "json", txt)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, `"TXT-1"`)

	r = run(t, "extract", "--templates", tmpl, "--output", "debug", filepath.Join(dir, "order.pdf"))
	require.Equal(t, 0, r.code, r.stderr)
	for _, want := range []string{"northwind", "order_id", "NW-2026-0042", "Order number", "outcome: success"} {
		require.Contains(t, r.stdout, want)
	}
}

func TestTemplatesCheck(t *testing.T) {
	t.Parallel()
	dir := fixture(t, map[string][]byte{
		"ok/northwind.yml": []byte(testTemplate),
		"bad/regex.yml":    []byte("issuer: X\nkeywords: [X]\nfields:\n  order_id:\n    parser: regex\n    regex: '(unclosed'\n"),
		"bad/dup.yml":      []byte(strings.Replace(testTemplate, "party_ids: [NORTHWIND]", "party_ids: [OTHER]", 1)),
	})
	r := run(t, "templates", "check", filepath.Join(dir, "ok"))
	require.Equal(t, 0, r.code, r.stdout)
	require.Contains(t, r.stdout, "ok   "+filepath.Join(dir, "ok", "northwind.yml"))

	r = run(t, "templates", "check", dir)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stdout, "FAIL "+filepath.Join(dir, "bad", "regex.yml"))
	require.Contains(t, r.stdout, "fields.order_id", "the key path of the problem")
	require.Contains(t, r.stdout, `name "northwind" is also used by`)
	require.Contains(t, r.stdout, "3 templates, 1 ok, 2 failed")
}

// The shipped templates are valid and turn the shared Contoso orders into
// openTRANS that validates.
func TestShippedTemplatesOnCorpus(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	orders := sharedDir(t, "corpus", "orders")
	r := run(t, "templates", "check", filepath.Join(root, "deploy", "templates"))
	require.Equal(t, 0, r.code, r.stdout)
	files, _ := filepath.Glob(filepath.Join(orders, "contoso-po-*.pdf"))
	require.NotEmpty(t, files)
	for _, f := range files {
		r := run(t, "extract", "--templates", filepath.Join(root, "deploy", "templates"), "--party-id", "CONTOSO", "--output", "xml", f)
		require.Equal(t, 0, r.code, "%s: %s", f, r.stderr)
		opentranstest.Validate(t, []byte(r.stdout))
	}
}

// A template whose items are looked up in a mapping table: without the
// mapping the document is deferred (exit 5); with --mappings it succeeds and
// the mapped value lands in the XML.
func TestExtractWithMappings(t *testing.T) {
	t.Parallel()
	mapped := strings.Replace(testTemplate, "  rules:\n", "  mappings:\n    - {field: supplier_article_id, table: article, to: buyer_article_id}\n  rules:\n", 1)
	dir := fixture(t, map[string][]byte{
		"templates/northwind.yml": []byte(mapped),
		"order.pdf":               orderPDF(),
		"partial.csv":             []byte("kind,key,value\narticle,A-100,NW-BOLT-8\n"),
		"full.csv":                []byte("article,A-100,NW-BOLT-8\narticle,B-220,NW-WASH-8\n"),
	})
	tmpl := filepath.Join(dir, "templates")
	pdf := filepath.Join(dir, "order.pdf")

	r := run(t, "extract", "--templates", tmpl, "--party-id", "NORTHWIND", "--output", "xml", pdf)
	require.Equal(t, 5, r.code, r.stderr)
	require.Contains(t, r.stderr, `"status_reason":"mapping_not_resolved"`)

	r = run(t, "extract", "--templates", tmpl, "--party-id", "NORTHWIND", "--output", "xml", "--mappings", filepath.Join(dir, "partial.csv"), pdf)
	require.Equal(t, 5, r.code, "B-220 has no mapping: %s", r.stderr)
	require.Contains(t, r.stderr, "B-220")

	r = run(t, "extract", "--templates", tmpl, "--party-id", "NORTHWIND", "--output", "xml", "--mappings", filepath.Join(dir, "full.csv"), pdf)
	require.Equal(t, 0, r.code, r.stderr)
	opentranstest.Validate(t, []byte(r.stdout))
	o, err := opentrans.Read(strings.NewReader(r.stdout))
	require.NoError(t, err)
	require.Equal(t, "NW-BOLT-8", o.Items[0].BuyerArticleID)
	require.Equal(t, "NW-WASH-8", o.Items[1].BuyerArticleID)
	require.Equal(t, "A-100", o.Items[0].SupplierArticleID)

	r = run(t, "extract", "--templates", tmpl, "--output", "xml", "--mappings", filepath.Join(dir, "missing.csv"), pdf)
	require.Equal(t, 1, r.code)
}

// The two pitfalls templates check catches before run time: a field regex
// with two capturing groups, and an unquoted regex cut short by " #".
func TestTemplatesCheckPitfalls(t *testing.T) {
	t.Parallel()
	twoGroups := strings.Replace(testTemplate, `regex: 'Order number:\s+(\S+)'`, `regex: 'Order (number|no):\s+(\S+)'`, 1)
	hash := strings.Replace(testTemplate, `regex: 'Order number:\s+(\S+)'`, `regex: PO # (\d+)`, 1)
	dir := fixture(t, map[string][]byte{"groups/northwind.yml": []byte(twoGroups), "hash/northwind.yml": []byte(hash)})
	r := run(t, "templates", "check", filepath.Join(dir, "groups"))
	require.Equal(t, 1, r.code, r.stdout)
	require.Contains(t, r.stdout, "northwind.yml:8: fields.order_id.regex: field order_id: regex")
	require.Contains(t, r.stdout, "has 2 capturing groups")
	require.Contains(t, r.stdout, "(?:…)")

	flow := fixture(t, map[string][]byte{"t.yml": []byte("keywords: [X]\nfields:\n  order_id: {parser: regex, regex: 'PO (\\d+)'\n  date: {parser: regex}\n")})
	r = run(t, "templates", "check", flow)
	require.Equal(t, 1, r.code, r.stdout)
	require.Contains(t, r.stdout, filepath.Join(flow, "t.yml")+":3: fields.order_id: the flow mapping { opened here is not closed")

	r = run(t, "templates", "check", filepath.Join(dir, "hash"))
	require.Equal(t, 0, r.code, "a warning, not a failure: %s", r.stdout)
	require.Contains(t, r.stdout, "warning: "+filepath.Join(dir, "hash", "northwind.yml")+":8: fields.order_id.regex: unquoted value \"PO\" is followed by \"# (\\\\d+)\"")
}

// extract --strict loads templates as strictly as the services: a broken
// regex fails with file, line and key path instead of a silent rejection.
func TestExtractStrictLoad(t *testing.T) {
	t.Parallel()
	broken := strings.Replace(testTemplate, `regex: 'Order number:\s+(\S+)'`, `regex: 'Order number:\s+(\S+'`, 1)
	dir := fixture(t, map[string][]byte{"templates/northwind.yml": []byte(broken), "order.pdf": orderPDF(),
		"dup/a.yml": []byte(testTemplate), "dup/b.yml": []byte(strings.Replace(testTemplate, "NORTHWIND]", "OTHER]", 1))})
	for _, out := range []string{"xml", "json", "debug"} {
		r := run(t, "extract", "--strict", "--templates", filepath.Join(dir, "templates"), "--party-id", "NORTHWIND", "--output", out, filepath.Join(dir, "order.pdf"))
		require.Equal(t, 1, r.code, r.stderr)
		require.Contains(t, r.stderr, filepath.Join(dir, "templates", "northwind.yml")+":8: fields.order_id.regex")
	}
	r := run(t, "extract", "--strict", "--templates", filepath.Join(dir, "dup"), "--output", "json", filepath.Join(dir, "order.pdf"))
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, `duplicate name "northwind" in `+filepath.Join(dir, "dup", "a.yml")+":47: docintake.name and "+filepath.Join(dir, "dup", "b.yml")+":47: docintake.name")
	// --lenient loads as invoice2data would and says what it let pass.
	r = run(t, "extract", "--lenient", "--templates", filepath.Join(dir, "dup"), "--output", "json", filepath.Join(dir, "order.pdf"))
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stderr, `warning: template: duplicate name "northwind"`)
	r = run(t, "extract", "--strict", "--lenient", "--templates", filepath.Join(dir, "dup"), filepath.Join(dir, "order.pdf"))
	require.Equal(t, 2, r.code, r.stderr)
}

// A value that does not convert: debug still prints every field and line
// with the error, JSON reports it instead of an empty list, exit code 1.
func TestExtractValueErrorReported(t *testing.T) {
	t.Parallel()
	// The template declares a decimal point; the page prints decimal commas.
	dot := strings.Replace(testTemplate, `decimal_separator: ","`, `decimal_separator: "."`, 1)
	dir := fixture(t, map[string][]byte{"templates/northwind.yml": []byte(dot), "order.pdf": orderPDF()})
	tmpl, pdf := filepath.Join(dir, "templates"), filepath.Join(dir, "order.pdf")
	r := run(t, "extract", "--templates", tmpl, "--party-id", "NORTHWIND", "--output", "debug", pdf)
	require.Equal(t, 1, r.code, r.stderr)
	for _, want := range []string{"order_id", "NW-2026-0042", "== block lines", "Hex bolt M8", "Washer 8 mm",
		`lines[1] position="2" supplier_article_id="B-220" description="Washer 8 mm" quantity="250" unit="PCE" unit_price="0,04" line_amount="10,00"`,
		`    error   field lines[1].unit_price: "0,04" does not fit the decimal separator "."`,
		`== error: template northwind: field lines[0].unit_price: "0,12" does not fit the decimal separator "."`} {
		require.Contains(t, r.stdout, want)
	}
	r = run(t, "extract", "--templates", tmpl, "--party-id", "NORTHWIND", "--output", "json", pdf)
	require.Equal(t, 1, r.code, r.stderr)
	var list []map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &list), r.stdout)
	require.Len(t, list, 2, "invoice2data's output for the file, then its error")
	require.Equal(t, "NW-2026-0042", list[0]["order_id"])
	require.Equal(t, pdf, list[1]["file"])
	require.Contains(t, list[1]["error"], `lines[0].unit_price: "0,12" does not fit`)
	r = run(t, "extract", "--templates", tmpl, "--output", "json", filepath.Join(dir, "nothing.txt"))
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stdout, `"error"`, "an unreadable file is reported in the list too")
	r = run(t, "extract", "--templates", tmpl, "--party-id", "NORTHWIND", "--output", "xml", pdf)
	require.Equal(t, 1, r.code)
	require.Empty(t, r.stdout)
	require.Contains(t, r.stderr, `"0,12" does not fit`)
}

// TestExtractArea: a template field's area crops the PDF through every
// engine. invoice2data's Netpresse template reads its date from an area
// (the whole text holds two dates); with the crop the output is the
// golden JSON of invoice2data's test suite.
func TestExtractArea(t *testing.T) {
	t.Parallel()
	compare := sharedDir(t, "corpus", "invoice2data", "tests", "compare")
	tpl, err := os.ReadFile(filepath.Join(sharedDir(t, "corpus", "invoice2data", "templates"), "fr", "fr.publicationannoncelegale.yml"))
	require.NoError(t, err)
	dir := fixture(t, map[string][]byte{"templates/fr.publicationannoncelegale.yml": tpl})
	want, err := os.ReadFile(filepath.Join(compare, "NetpresseInvoice.json"))
	require.NoError(t, err)
	env := map[string]string{"INTAKE_PDF_RESIDENT_BIN": pdftexttest.ResidentBin(t)}
	for _, engine := range []string{"pdftotext", "resident", "pdfium", "auto"} {
		var out, errb bytes.Buffer
		code := intakectl.Main(t.Context(), []string{"extract", "--templates", filepath.Join(dir, "templates"),
			"--engine", engine, "--output", "json", filepath.Join(compare, "NetpresseInvoice.pdf")},
			intakectl.Env{Getenv: func(k string) string { return env[k] }, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
		require.Equal(t, 0, code, "%s: %s", engine, errb.String())
		require.JSONEq(t, string(want), out.String(), engine)
	}
}

// extract honours INTAKE_PDF_TIMEOUT, as the processor does, and --timeout
// overrides it.
func TestExtractTimeout(t *testing.T) {
	t.Parallel()
	pdf := filepath.Join(fixture(t, map[string][]byte{"order.pdf": orderPDF()}), "order.pdf")
	args := func(extra ...string) []string {
		return append([]string{"extract", "--output", "text", "--engine", "pdftotext", pdf}, extra...)
	}
	r := run(t, args("--timeout", "1us")...)
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "timed out")

	r = runEnv(t, map[string]string{"INTAKE_PDF_TIMEOUT": "1us"}, args()...)
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "timed out")

	r = runEnv(t, map[string]string{"INTAKE_PDF_TIMEOUT": "1us"}, args("--timeout", "1m")...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "NW-2026-0042")

	r = run(t, args("--timeout", "0s")...)
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "--timeout must be positive")

	r = runEnv(t, map[string]string{"INTAKE_PDF_TIMEOUT": "soon"}, args()...)
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "INTAKE_PDF_TIMEOUT")
}

// A scanned page whose OCR runs over INTAKE_OCR_PAGE_TIMEOUT is skipped;
// the order is read from the other page, and the debug view (stderr for
// the other outputs) says which page was not read.
func TestExtractShowsSkippedPages(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"tesseract", "pdftoppm", "pdftotext"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipping: %s not installed", tool)
		}
	}
	img := pdftexttest.TextImage([]string{"Delivery note"}, 2)
	scanned := pdftexttest.Page{Width: 300, Height: 100, Images: []pdftexttest.Image{{X: 10, Y: 10, W: 200, H: 40, Img: img}}}
	dir := fixture(t, map[string][]byte{"templates/northwind.yml": []byte(testTemplate),
		"order.pdf": pdftexttest.Build(orderPage(), scanned)})
	// 1ns: the page's budget is over before its rendering starts.
	env := map[string]string{"INTAKE_OCR_PAGE_TIMEOUT": "1ns"}
	args := []string{"extract", "--templates", filepath.Join(dir, "templates"), "--party-id", "NORTHWIND", "--engine", "pdftotext", filepath.Join(dir, "order.pdf")}

	r := runEnv(t, env, append(args, "--output", "debug")...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `(?m)^== warning: page 2 not read: OCR took longer than the page budget of 1ns`, r.stdout)
	require.Contains(t, r.stdout, "== outcome: success")

	r = runEnv(t, env, append(args, "--output", "xml")...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stderr, "order.pdf: warning: page 2 not read")
	o, err := opentrans.Read(strings.NewReader(r.stdout))
	require.NoError(t, err)
	require.Equal(t, "NW-2026-0042", o.ID)

	// With the order only on the skipped page, the values are missing: the
	// document is rejected, not failed for the slow page.
	only := filepath.Join(dir, "scan-only.pdf")
	require.NoError(t, os.WriteFile(only, pdftexttest.Build(scanned), 0o644))
	r = runEnv(t, env, "extract", "--templates", filepath.Join(dir, "templates"), "--party-id", "NORTHWIND", "--engine", "pdftotext", "--output", "xml", only)
	require.Equal(t, 3, r.code, r.stderr)
	require.Contains(t, r.stderr, "scan-only.pdf: warning: page 1 not read")
	require.Contains(t, r.stderr, `"status":"rejected"`)
}
