package template_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/template"
)

const acmeTemplate = `
issuer: ACME
keywords: [ACME Corp, Purchase Order]
exclude_keywords: [CANCELLED]
fields:
  order_id: {parser: regex, regex: 'Order no\.? (\w+)'}
  date: {parser: regex, regex: 'Date: (\d{4}-\d{2}-\d{2})', type: date}
  buyer_vat_id: {parser: regex, regex: 'VAT: (\w+)'}
  delivery_name: {parser: regex, regex: 'Ship to: (.+)'}
  delivery_street: {parser: regex, regex: 'Ship to: .*\n(.+)'}
  delivery_city: {parser: regex, regex: 'Ship to: .*\n.*\n\d{5} (.+)'}
  delivery_zip: {parser: regex, regex: 'Ship to: .*\n.*\n(\d{5}) '}
  lines:
    parser: lines
    start: Items
    end: Total
    line: '^(?P<buyer_article_id>\S+)\s+(?P<description>.+?)\s+(?P<quantity>\d+)$'
docintake:
  name: acme
  party_ids: [ACME]
  required: [vat_id, delivery_address]
  rules:
    - {match: 'TEST PRINT', action: ignore}
    - {match: 'Order confirmation', action: reject, reason: not_an_order_response}
  mappings:
    - {field: buyer_article_id, table: article, to: supplier_article_id}
  ignored_feedback: true
`

const acmeText = `ACME Corp        Purchase Order
Order no. A-77
Date: 2026-02-03
VAT: DE123456789
Ship to: Warehouse 3
Dock Street 1
12345 Hamburg
Items
B-1   Bolts   10
N-2   Nuts    20
Total 99
`

type fakeMapper struct {
	LookupFunc func(ctx context.Context, kind, key string) (string, bool, error)
}

func (f fakeMapper) Lookup(ctx context.Context, kind, key string) (string, bool, error) {
	return f.LookupFunc(ctx, kind, key)
}

var articles = fakeMapper{LookupFunc: func(_ context.Context, kind, key string) (string, bool, error) {
	v, ok := map[string]string{"B-1": "S-100", "N-2": "S-200"}[key]
	return v, ok && kind == "article", nil
}}

func TestOrderReasons(t *testing.T) {
	t.Parallel()
	tpl := parseTemplate(t, acmeTemplate)
	cases := []struct {
		name   string
		text   string
		mapper template.Mapper
		mode   document.ResultMode
		status template.OutcomeStatus
		reason document.Reason
	}{
		{"success", acmeText, articles, "", template.OutcomeSuccess, ""},
		{"keywords missing", strings.Replace(acmeText, "Purchase Order", "Delivery Note", 1), articles, "", template.OutcomeRejected, document.ReasonUnknownFormat},
		{"exclude keyword", acmeText + "CANCELLED\n", articles, "", template.OutcomeRejected, document.ReasonNotAnOrder},
		{"reject rule", acmeText + "Order confirmation\n", articles, "", template.OutcomeRejected, document.ReasonNotAnOrderResponse},
		{"ignore rule", acmeText + "TEST PRINT\n", articles, "", template.OutcomeIgnored, ""},
		{"order id missing", strings.Replace(acmeText, "Order no. A-77", "", 1), articles, "", template.OutcomeRejected, document.ReasonDocumentIDMissing},
		{"vat id missing", strings.Replace(acmeText, "VAT: DE123456789", "", 1), articles, "", template.OutcomeRejected, document.ReasonVATIDMissing},
		{"delivery address unparsable", strings.Replace(acmeText, "12345 Hamburg", "Hamburg", 1), articles, "", template.OutcomeRejected, document.ReasonCannotParseDeliveryAddress},
		{"no items", strings.Replace(acmeText, "Items\n", "", 1), articles, "", template.OutcomeRejected, document.ReasonCannotParseItems},
		{"no items, no_items mode", strings.Replace(acmeText, "Items\n", "", 1), articles, document.ResultModeNoItems, template.OutcomeSuccess, ""},
		{"mapping missing", strings.Replace(acmeText, "N-2", "X-9", 1), articles, "", template.OutcomeDeferred, document.ReasonMappingNotResolved},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res, err := tpl.Extract(t.Context(), c.text, nil)
			require.NoError(t, err)
			o, out, err := tpl.Order(t.Context(), res, c.mapper, c.mode, nil)
			require.NoError(t, err)
			require.Equal(t, c.status, out.Status, out.String())
			require.Equal(t, c.reason, out.Reason, out.String())
			if c.status == template.OutcomeSuccess && c.mode == "" {
				require.Len(t, o.Items, 2)
				require.Equal(t, "S-100", o.Items[0].SupplierArticleID)
				require.Equal(t, "B-1", o.Items[0].BuyerArticleID)
				require.Equal(t, "10", o.Items[0].Quantity)
			}
			if c.status == template.OutcomeIgnored {
				require.True(t, out.Feedback)
			}
		})
	}
	// A failing mapper is an error, not a reason.
	res, err := tpl.Extract(t.Context(), acmeText, nil)
	require.NoError(t, err)
	boom := errors.New("db down")
	_, _, err = tpl.Order(t.Context(), res, fakeMapper{LookupFunc: func(context.Context, string, string) (string, bool, error) {
		return "", false, boom
	}}, "", nil)
	require.ErrorIs(t, err, boom)
}

func TestRunSelection(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "acme.yml"), []byte(acmeTemplate), 0o600))
	set, err := template.Load(dir)
	require.NoError(t, err)
	for _, opts := range []template.RunOptions{{Template: "acme"}, {PartyID: "ACME"}, {}} {
		opts.Mapper, opts.Debug = articles, true
		run, err := set.Run(t.Context(), acmeText, opts)
		require.NoError(t, err)
		require.Equal(t, template.OutcomeSuccess, run.Outcome.Status)
		var b strings.Builder
		require.NoError(t, run.Trace.WriteText(&b))
		require.Contains(t, b.String(), "order_id (parser regex)")
		require.Contains(t, b.String(), `"B-1   Bolts   10"`)
	}
	run, err := set.Run(t.Context(), "something else", template.RunOptions{})
	require.NoError(t, err)
	require.Equal(t, document.ReasonUnknownFormat, run.Outcome.Reason)
	_, err = set.Run(t.Context(), acmeText, template.RunOptions{PartyID: "NOPE"})
	e, ok := document.AsError(err)
	require.True(t, ok)
	require.Equal(t, "template_not_found", e.Code)
}

func TestLoadErrors(t *testing.T) {
	t.Parallel()
	write := func(dir, name, body string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600))
	}
	t.Run("bad regex names file line and key", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		write(dir, "bad.yml", "keywords: [X]\nfields:\n  amount:\n    parser: regex\n    regex: '(unclosed'\n")
		_, err := template.Load(dir)
		require.ErrorContains(t, err, "bad.yml:5: fields.amount.regex")
	})
	t.Run("unknown key", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		write(dir, "typo.yml", "keywords: [X]\nfeilds: {}\n")
		_, err := template.Load(dir)
		require.ErrorContains(t, err, "typo.yml:2: feilds: unknown key")
	})
	t.Run("duplicate names and party ids", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		write(dir, "a.yml", "keywords: [X]\ndocintake: {name: same, party_ids: [P1]}\n")
		write(dir, "b.yml", "keywords: [Y]\ndocintake: {name: same}\n")
		write(dir, "c.yml", "keywords: [Z]\ndocintake: {party_ids: [P1]}\n")
		_, err := template.Load(dir)
		require.ErrorContains(t, err, `duplicate name "same" in `+filepath.Join(dir, "a.yml")+":2: docintake.name and "+filepath.Join(dir, "b.yml")+":2: docintake.name")
		require.ErrorContains(t, err, `duplicate party_id "P1" in `+filepath.Join(dir, "a.yml")+":2: docintake.party_ids and "+filepath.Join(dir, "c.yml")+":2: docintake.party_ids")
	})
	t.Run("no keywords", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		write(dir, "nokw.json", `{"issuer": "X", "fields": {}}`)
		_, err := template.Load(dir)
		require.ErrorContains(t, err, "nokw.json:1: keywords")
	})
}

// A YAML syntax error in flow style names the line to fix and the key path.
func TestFlowStyleSyntaxErrors(t *testing.T) {
	t.Parallel()
	cases := []struct{ yml, want string }{
		{"keywords: [X]\nfields:\n  order_id: {parser: regex, regex: 'PO (\\d+)'\n  date: {parser: regex, regex: 'x'}\n",
			"t.yml:3: fields.order_id: the flow mapping { opened here is not closed with '}'"},
		{"keywords: [X]\nfields:\n  order_id: {parser: regex, regex: PO: (\\d+)}\n  date: {parser: regex}\n",
			"t.yml:3: fields.order_id.regex: the value contains \": \""},
		{"issuer: X\nkeywords: [X, Y\nfields:\n  a: b\n", "t.yml:2: keywords: the flow sequence [ opened here is not closed with ']'"},
		{"keywords: [X]\nfields:\n  lines:\n    parser: lines\n    types: {quantity: float, unit_price: [float}\n",
			"t.yml:5: fields.lines.types.unit_price: the flow sequence [ opened on line 5 ends with '}' instead of ']'"},
	}
	for _, c := range cases {
		_, err := template.Parse("t.yml", []byte(c.yml))
		require.Error(t, err)
		require.Contains(t, err.Error(), c.want)
	}
}
