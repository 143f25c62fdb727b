package template_test

import (
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/template"
	"github.com/docintake/docintake/pkg/template/templatetest"
)

// synthTruth is a truth file of ../shared/corpus/synthetic: the values
// printed on the generated PDF.
type synthTruth struct {
	OrderID   string      `json:"order_id"`
	OrderDate string      `json:"order_date"`
	Currency  string      `json:"currency"`
	Net       json.Number `json:"net"`
	Tax       json.Number `json:"tax"`
	Total     json.Number `json:"total"`
	Items     []struct {
		Item         string      `json:"item"`
		Description  string      `json:"description"`
		Quantity     json.Number `json:"quantity"`
		Unit         string      `json:"unit"`
		UnitPrice    json.Number `json:"unit_price"`
		PriceBasis   json.Number `json:"price_basis"`
		LineAmount   json.Number `json:"line_amount"`
		DeliveryDate string      `json:"delivery_date"`
	} `json:"items"`
}

// TestSyntheticLayouts runs the templates of testdata/synthetic, each
// drafted from a layout's first order, on all three orders of the layout
// (pdftotext text) and compares every value with the truth file.
func TestSyntheticLayouts(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(templatetest.SharedDir(t), "corpus", "synthetic")
	set, err := template.Load(filepath.Join("testdata", "synthetic"))
	require.NoError(t, err)
	for _, layout := range []string{"alpine", "durand", "greatlakes", "nordwind", "vanderberg"} {
		for _, n := range []string{"1", "2", "3"} {
			name := layout + "-" + n
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				raw, err := os.ReadFile(filepath.Join(dir, name+".json"))
				require.NoError(t, err)
				var want synthTruth
				d := json.NewDecoder(strings.NewReader(string(raw)))
				d.UseNumber()
				require.NoError(t, d.Decode(&want))
				text := templatetest.PDFText(t, filepath.Join(dir, name+".pdf"))
				tpl, _ := set.Match(text)
				require.NotNil(t, tpl, "no template matched")
				require.Equal(t, "synthetic-"+layout, tpl.Name)
				run, err := set.Run(t.Context(), text, template.RunOptions{Template: tpl.Name, Debug: true})
				require.NoError(t, err)
				require.Equal(t, template.OutcomeSuccess, run.Outcome.Status, run.Outcome.String())
				o := run.Order
				require.Equal(t, want.OrderID, o.ID)
				require.Equal(t, want.OrderDate, o.IssueDate.String())
				require.Equal(t, want.Currency, o.Currency)
				sameNumber(t, want.Net, o.Totals.NetAmount, "net")
				sameNumber(t, want.Tax, o.Totals.TaxAmount, "tax")
				sameNumber(t, want.Total, o.Totals.GrossAmount, "total")
				require.Len(t, o.Items, len(want.Items))
				for i, w := range want.Items {
					it := o.Items[i]
					require.Equal(t, w.Item, it.SupplierArticleID, "item %d", i+1)
					require.Equal(t, w.Description, it.Description, "item %d", i+1)
					require.Equal(t, w.Unit, it.Unit, "item %d", i+1)
					sameNumber(t, w.Quantity, it.Quantity, "item %d quantity", i+1)
					sameNumber(t, w.UnitPrice, it.UnitPrice, "item %d unit price", i+1)
					basis := it.PriceBasisQuantity
					if basis == "" {
						basis = "1"
					}
					sameNumber(t, w.PriceBasis, basis, "item %d price basis", i+1)
					sameNumber(t, w.LineAmount, it.LineAmount, "item %d line amount", i+1)
					require.Equal(t, w.DeliveryDate, itemDelivery(o, it).String(), "item %d delivery date", i+1)
				}
			})
		}
	}
}

// itemDelivery is the line's own delivery date, else the order's.
func itemDelivery(o *order.Order, it order.Item) order.Date {
	if !it.DeliveryDate.IsZero() {
		return it.DeliveryDate
	}
	return o.DeliveryDate
}

func sameNumber(t *testing.T, want json.Number, got string, format string, args ...any) {
	t.Helper()
	what := fmt.Sprintf(format, args...)
	w, ok := new(big.Rat).SetString(want.String())
	require.True(t, ok, "truth %q", want)
	g, ok := new(big.Rat).SetString(got)
	require.True(t, ok, "%s: %q is not a number", what, got)
	require.True(t, w.Cmp(g) == 0, "%s: want %s, got %s", what, want, got)
}
