package template_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/template"
)

// structuredSet loads templates written for the structured path: a plain
// order template with rules, requirements and a mapping, one that ignores
// attachments, one that only reads them, and an invoice template.
func structuredSet(t *testing.T) *template.Set {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"strict.yml": `issuer: Strict
keywords: ['STRICT BUYER']
options:
  decimal_separator: ','
docintake:
  required: [buyer_vat_id, delivery_address]
  rules:
    - field: buyer_name
      match: 'BLOCKED'
      action: reject
      reason: unknown_format
    - match: 'TestIndicator>true'
      action: ignore
  mappings:
    - field: buyer_article_id
      table: articles
      to: supplier_article_id
`,
		"textonly.yml": `issuer: Text
keywords: ['TEXT ONLY']
docintake:
  embedded: ignore
`,
		"xmlonly.yml": `issuer: XML
keywords: ['anything']
docintake:
  name: embedded
  party_ids: [EMBEDDED]
  embedded: require
`,
		"invoices.yml": `issuer: Inv
keywords: ['INVOICE']
docintake:
  document_type: invoice
`,
	}
	for name, body := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600))
	}
	set, err := template.Load(dir)
	require.NoError(t, err)
	return set
}

func structuredOrder() *order.Order {
	return &order.Order{Type: order.TypeOrder, ID: "PO-1", IssueDate: order.Date{Year: 2024, Month: 3, Day: 1}, Currency: "EUR",
		Remarks: []string{"a note", "Buyer reference: R-9"},
		Parties: []order.Party{
			{Role: order.RoleBuyer, ID: "B1", IDType: "buyer_specific", VATID: "DE123", Address: order.Address{Name: "Buyer GmbH"}},
			{Role: order.RoleDelivery, Address: order.Address{Name: "Dock", Street: "Kai 1", Zip: "20457", City: "Hamburg"}},
		},
		Items: []order.Item{
			{Position: "1", BuyerArticleID: "B-77", Quantity: "1000.5", Unit: "KGM", UnitPrice: "2.50", PriceBasisQuantity: "100",
				LineAmount: "25.01", TaxRate: "19.00", Remarks: []string{"x", "y"}},
		},
		Totals: order.Totals{NetAmount: "25.01", GrossAmount: "29.76"}}
}

type mapTable map[string]string

func (m mapTable) Lookup(_ context.Context, kind, key string) (string, bool, error) {
	v, ok := m[kind+"/"+key]
	return v, ok, nil
}

func structured(o *order.Order, text string) *template.Structured {
	return &template.Structured{Source: "embedded Order-X COMFORT (order-x.xml)", Type: o.Type, Order: o, Text: text}
}

// TestRunStructuredDocIntake: an order read from an attachment passes the
// template's docintake block like a text-derived one: values arrive intact
// (no re-parsing with the template's decimal comma), mappings apply and a
// miss defers, requirements and rules decide.
func TestRunStructuredDocIntake(t *testing.T) {
	set := structuredSet(t)
	ctx := context.Background()
	opts := template.RunOptions{Template: "strict", Mapper: mapTable{"articles/B-77": "S-500"}, Debug: true}

	run, err := set.RunStructured(ctx, structured(structuredOrder(), "<xml/>"), opts)
	require.NoError(t, err)
	require.Equal(t, template.OutcomeSuccess, run.Outcome.Status, run.Outcome.String())
	want := structuredOrder()
	want.Items[0].SupplierArticleID = "S-500"
	require.Equal(t, want, run.Order)
	require.Contains(t, run.Trace.Checks, "source: embedded Order-X COMFORT (order-x.xml) (keywords skipped)")

	miss := opts
	miss.Mapper = mapTable{}
	run, err = set.RunStructured(ctx, structured(structuredOrder(), "<xml/>"), miss)
	require.NoError(t, err)
	require.Equal(t, template.OutcomeDeferred, run.Outcome.Status)
	require.Equal(t, document.ReasonMappingNotResolved, run.Outcome.Reason)

	noVAT := structuredOrder()
	noVAT.Parties[0].VATID = ""
	run, err = set.RunStructured(ctx, structured(noVAT, "<xml/>"), opts)
	require.NoError(t, err)
	require.Equal(t, document.ReasonVATIDMissing, run.Outcome.Reason)

	noDelivery := structuredOrder()
	noDelivery.Parties = noDelivery.Parties[:1]
	run, err = set.RunStructured(ctx, structured(noDelivery, "<xml/>"), opts)
	require.NoError(t, err)
	require.Equal(t, document.ReasonCannotParseDeliveryAddress, run.Outcome.Reason)

	blocked := structuredOrder()
	blocked.Parties[0].Address.Name = "BLOCKED Corp"
	run, err = set.RunStructured(ctx, structured(blocked, "<xml/>"), opts)
	require.NoError(t, err)
	require.Equal(t, template.OutcomeRejected, run.Outcome.Status)
	require.Equal(t, document.ReasonUnknownFormat, run.Outcome.Reason)

	// Rules without a field match the attachment's XML.
	run, err = set.RunStructured(ctx, structured(structuredOrder(), "<ram:TestIndicator>true</ram:TestIndicator>"), opts)
	require.NoError(t, err)
	require.Equal(t, template.OutcomeIgnored, run.Outcome.Status)

	noItems := opts
	noItems.Mode = document.ResultModeNoItems
	run, err = set.RunStructured(ctx, structured(structuredOrder(), "<xml/>"), noItems)
	require.NoError(t, err)
	require.Equal(t, template.OutcomeSuccess, run.Outcome.Status)
	require.True(t, run.Order.NoItems)
	require.Empty(t, run.Order.Items)
}

// TestRunStructuredTypes: the attached document's type decides first.
func TestRunStructuredTypes(t *testing.T) {
	set := structuredSet(t)
	ctx := context.Background()
	invoice := &template.Structured{Source: "embedded Factur-X/ZUGFeRD EN16931 invoice (factur-x.xml)", Type: order.TypeInvoice}
	for _, name := range []string{"strict", "embedded"} {
		run, err := set.RunStructured(ctx, invoice, template.RunOptions{Template: name})
		require.NoError(t, err)
		require.Equal(t, template.OutcomeRejected, run.Outcome.Status, name)
		require.Equal(t, document.ReasonNotAnOrder, run.Outcome.Reason, name)
		require.Contains(t, run.Outcome.Detail, "factur-x.xml")
	}
	// Keyword selection would have nothing to match: the "embedded"
	// template decides.
	run, err := set.RunStructured(ctx, invoice, template.RunOptions{})
	require.NoError(t, err)
	require.Equal(t, "embedded", run.Template.Name)
	require.Equal(t, document.ReasonNotAnOrder, run.Outcome.Reason)

	response := structuredOrder()
	response.Type = order.TypeOrderResponse
	run, err = set.RunStructured(ctx, structured(response, ""), template.RunOptions{Template: "embedded"})
	require.NoError(t, err)
	require.Equal(t, document.ReasonNotAnOrder, run.Outcome.Reason)

	change := structuredOrder()
	change.Type = order.TypeOrderChange
	run, err = set.RunStructured(ctx, structured(change, ""), template.RunOptions{PartyID: "EMBEDDED"})
	require.NoError(t, err)
	require.Equal(t, template.OutcomeSuccess, run.Outcome.Status)
	require.Equal(t, order.TypeOrderChange, run.Order.Type)

	run, err = set.RunStructured(ctx, structured(structuredOrder(), ""), template.RunOptions{Template: "invoices"})
	require.NoError(t, err)
	require.Equal(t, document.ReasonNotAnInvoice, run.Outcome.Reason)

	// Invoices are recognised, not mapped: an invoice template reads the text.
	run, err = set.RunStructured(ctx, invoice, template.RunOptions{Template: "invoices"})
	require.NoError(t, err)
	require.Nil(t, run)

	// docintake.embedded: ignore reads the text.
	require.False(t, set.ReadsEmbedded(template.RunOptions{Template: "textonly"}))
	require.True(t, set.ReadsEmbedded(template.RunOptions{Template: "strict"}))
	require.True(t, set.ReadsEmbedded(template.RunOptions{}))
	run, err = set.RunStructured(ctx, structured(structuredOrder(), ""), template.RunOptions{Template: "textonly"})
	require.NoError(t, err)
	require.Nil(t, run)

	_, err = set.RunStructured(ctx, invoice, template.RunOptions{Template: "nope"})
	require.Error(t, err)
}

// TestEmbeddedRequireText: a template that only reads attachments rejects a
// PDF without one unknown_format and is never chosen by keywords.
func TestEmbeddedRequireText(t *testing.T) {
	set := structuredSet(t)
	run, err := set.Run(context.Background(), "anything at all", template.RunOptions{PartyID: "EMBEDDED"})
	require.NoError(t, err)
	require.Equal(t, template.OutcomeRejected, run.Outcome.Status)
	require.Equal(t, document.ReasonUnknownFormat, run.Outcome.Reason)
	tpl, _ := set.Match("anything at all")
	require.Nil(t, tpl)
}

func TestEmbeddedModeParse(t *testing.T) {
	tpl, err := template.Parse("x.yml", []byte("issuer: X\nkeywords: [X]\ndocintake:\n  embedded: sometimes\n"))
	require.NoError(t, err)
	require.Len(t, tpl.Problems, 1)
	require.Contains(t, tpl.Problems[0].Error(), `unknown embedded mode "sometimes"`)
	tpl, err = template.Parse("x.yml", []byte("issuer: X\nkeywords: [X]\ndocintake:\n  embedded: use\n"))
	require.NoError(t, err)
	require.Empty(t, tpl.Problems)
	require.Equal(t, template.EmbeddedUse, tpl.DocIntake.Embedded)
}
