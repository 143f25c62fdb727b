// Package pogen generates purchase-order PDFs together with their truth: the
// values a reader should extract, exactly as printed (canonical decimals, ISO
// dates). It is test tooling for the layout-agnostic reader and for template
// drafts, not product code; no product module may import it.
//
// Every document is drawn at random from its seed, in the proportions of the
// 86 real purchase orders described in the corpus notes (LAYOUTS.md): six
// languages (en, de, fr, nl, es, it) with US, Indian, UK, German, Swiss,
// French, Dutch, Spanish and Italian conventions; order numbers on the label's
// line, below it in a (boxed) grid, in or under the title, or glued to the
// label; competing numbers and dates with their own labels; the date, number
// and currency conventions of the region and some foreign ones; item tables
// with stacked or two-row headers, wrapped descriptions, sub-rows, price
// bases, discounts, missing prices or amounts, several pages with repeated
// headers and footers; tax, freight, total-quantity and amount-in-words rows;
// terms, copy marks; and about 8 % negatives (invoices, delivery notes,
// quotations, credit notes, proforma invoices) that a reader must reject.
// Truth.Features names what was drawn, so a failure can be traced to a trait.
//
// The same seed always gives the same bytes and the same truth. Usage:
//
//	go run ./cmd/pogen -seed 1 -n 500 -out DIR
//
// writes DIR/po-<seed>.pdf and DIR/po-<seed>.json for seeds 1..500.
package pogen

import (
	"fmt"
	"slices"
)

// Truth is what a document prints, in canonical form. Decimals have no
// grouping, '.' as decimal point and the printed number of decimals
// ("5518.00", "89", "4.12000"); dates are YYYY-MM-DD. A field is "" when the
// document does not print it.
//
// Arithmetic: every item with a price has LineAmount = Quantity × UnitPrice ÷
// PriceBasis (1 when empty) × (1 − DiscountPercent/100), rounded half away
// from zero to 2 decimals, whether or not the amount is printed. Net is the
// sum of the line amounts; Gross = Net + Tax + Charges (missing ones count as
// zero). When Net is not printed, Gross is still the sum of lines plus Tax
// and Charges.
//
// For negatives (Kind != "order") OrderID, OrderDate and DeliveryDate are
// empty because the document is not an order; DocumentNo is its own number
// (invoice number, quotation number ...) and OrderRef the buyer's order number
// it quotes, if any. Items and amounts are still as printed.
type Truth struct {
	File          string      `json:"file"`
	Seed          int64       `json:"seed"`
	Kind          string      `json:"kind"`
	Language      string      `json:"language"`
	Features      []string    `json:"features"`
	OrderID       string      `json:"order_id"`
	OrderDate     string      `json:"order_date"`
	DeliveryDate  string      `json:"delivery_date,omitempty"`
	Currency      string      `json:"currency"`
	Net           string      `json:"net,omitempty"`
	Tax           string      `json:"tax,omitempty"`
	Gross         string      `json:"gross,omitempty"`
	Charges       string      `json:"charges,omitempty"`
	TotalQuantity string      `json:"total_quantity,omitempty"`
	DocumentNo    string      `json:"document_no,omitempty"`
	OrderRef      string      `json:"order_ref,omitempty"`
	Items         []TruthItem `json:"items"`
}

// TruthItem is one printed item row; see Truth for the canonical forms.
// Description is the item's description cell only (wrapped lines joined with
// one space), not its sub-rows. DeliveryDate is the line's date column or its
// first schedule sub-row.
type TruthItem struct {
	Position        string `json:"position,omitempty"`
	Article         string `json:"article,omitempty"`
	Description     string `json:"description"`
	Quantity        string `json:"quantity"`
	Unit            string `json:"unit,omitempty"`
	UnitPrice       string `json:"unit_price,omitempty"`
	PriceBasis      string `json:"price_basis,omitempty"`
	LineAmount      string `json:"line_amount,omitempty"`
	DiscountPercent string `json:"discount_percent,omitempty"`
	DeliveryDate    string `json:"delivery_date,omitempty"`
}

// Generate draws the document of a seed and returns its PDF and truth.
func Generate(seed int64) (pdf []byte, truth Truth, err error) {
	g := newGen(seed)
	g.drawContent()
	g.drawLayout()
	pdf, err = g.render()
	if err != nil {
		return nil, Truth{}, fmt.Errorf("pogen: seed %d: %w", seed, err)
	}
	return pdf, g.truth(), nil
}

// FileName is the base name cmd/pogen gives a seed's files (without
// extension).
func FileName(seed int64) string { return fmt.Sprintf("po-%d", seed) }

// feat records a drawn feature once.
func (g *gen) feat(names ...string) {
	for _, n := range names {
		if !slices.Contains(g.feats, n) {
			g.feats = append(g.feats, n)
		}
	}
}

// truth assembles the Truth from what was drawn and printed.
func (g *gen) truth() Truth {
	t := Truth{File: FileName(g.seed) + ".pdf", Seed: g.seed, Kind: g.kind, Language: g.v.lang, Items: []TruthItem{}}
	t.Features = slices.Clone(g.feats)
	slices.Sort(t.Features)
	if g.kind == "order" {
		t.OrderID = g.orderID
		if g.printed.orderDate {
			t.OrderDate = iso(g.orderDate)
		}
		if g.printed.delivery {
			t.DeliveryDate = iso(g.delivery)
		}
	} else {
		t.DocumentNo = g.orderID
		if g.printed.orderRef {
			t.OrderRef = g.orderRef
		}
	}
	if g.printed.currency {
		t.Currency = g.cur.code
	}
	g.truthTotals(&t)
	for _, it := range g.items {
		t.Items = append(t.Items, g.truthItem(it))
	}
	return t
}

func (g *gen) truthTotals(t *Truth) {
	p := g.printed
	if p.net {
		t.Net = g.net.canon()
	}
	if p.tax {
		t.Tax = g.tax.canon()
	}
	if p.charges {
		t.Charges = g.charges.canon()
	}
	if p.gross {
		t.Gross = g.gross.canon()
	}
	if p.totalQty {
		t.TotalQuantity = g.totalQty.canon()
	}
}

func (g *gen) truthItem(it *item) TruthItem {
	l := g.lay
	ti := TruthItem{Description: it.desc, Quantity: it.qty.canon()}
	if l.posStyle != "none" {
		ti.Position = it.pos
	}
	if l.has("art") {
		ti.Article = it.art
	}
	if l.has("unit") || l.qtyUnitCell {
		ti.Unit = it.unit
	}
	if !l.noPrices {
		ti.UnitPrice = it.price.canon()
		if l.basis == "column" || l.basis == "inline" && it.basis != 1 {
			ti.PriceBasis = fmt.Sprint(it.basis)
		}
		if !l.noAmounts {
			ti.LineAmount = it.amount.canon()
		}
		if l.has("disc") {
			ti.DiscountPercent = it.disc.canon()
		}
	}
	if !it.date.IsZero() && (l.has("date") || len(it.sched) > 0) {
		ti.DeliveryDate = iso(it.date)
	}
	return ti
}
