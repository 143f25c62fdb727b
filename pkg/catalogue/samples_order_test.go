package catalogue_test

import (
	"testing"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/template"
	"github.com/stretchr/testify/require"
)

// An order template with an article mapping, for the expected-order form.
const mappedYAML = `issuer: Acme
keywords: [ACME ORDER]
fields:
  order_id:
    parser: regex
    regex: 'PO (\d+)'
  date:
    parser: regex
    regex: 'Date (\d{4}-\d\d-\d\d)'
    type: date
  lines:
    parser: lines
    start: Items
    end: Total
    line: '^(?P<buyer_article_id>\S+)\s+(?P<quantity>\d+)\s+(?P<unit_price>\d+\.\d\d)\s+(?P<line_amount>\d+\.\d\d)$'
options:
  currency: EUR
docintake:
  name: acme
  mappings:
    - {field: buyer_article_id, table: article, to: supplier_article_id}
`

// The expected order (what a reviewer confirmed) is compared value by
// value, with exactly the mapping entries it lists.
func TestOrderSamples(t *testing.T) {
	t.Parallel()
	tpl, err := template.Parse("acme.yml", []byte(mappedYAML))
	require.NoError(t, err)
	require.Empty(t, tpl.Problems)
	doc := []byte("ACME ORDER\nPO 4711\nDate 2026-02-03\nItems\nB-1   3   2.00   6.00\nTotal 6.00\n")
	expect := func(qty, mappings string) []byte {
		return []byte(`{"order": {"document_type": "order", "order_id": "4711", "order_date": "2026-02-03", "currency": "EUR",
			"parties": [], "items": [{"position": "1", "buyer_article_id": "B-1", "supplier_article_id": "S-100", "quantity": "` + qty + `",
			"unit_price": "2.00", "line_amount": "6.00"}], "totals": {},
			"remarks": ["No unit printed: every quantity is written in pieces (C62)"]}` + mappings + `}`)
	}
	withEntry := `, "mappings": [{"kind": "article", "key": "B-1", "value": "S-100"}]`
	files := []catalogue.SampleFile{
		{Name: "good.txt", Content: doc}, {Name: "good.json", Content: expect("3", withEntry)},
		{Name: "qty.txt", Content: doc}, {Name: "qty.json", Content: expect("4", withEntry)},
		{Name: "nomap.txt", Content: doc}, {Name: "nomap.json", Content: expect("3", "")},
	}
	res, err := catalogue.CheckSamples(t.Context(), tpl, files, txt)
	require.NoError(t, err)
	got := map[string]catalogue.SampleResult{}
	for _, r := range res {
		got[r.Name] = r
	}
	require.True(t, got["good.txt"].Pass, got["good.txt"].Line())
	require.Equal(t, []string{`items[0].quantity: want "4" got "3"`}, got["qty.txt"].Problems)
	require.Len(t, got["nomap.txt"].Problems, 1)
	require.Contains(t, got["nomap.txt"].Problems[0], `status: want success got deferred_for_retry mapping_not_resolved: no article mapping for "B-1"`)
}
