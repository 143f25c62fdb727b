package ingest

import (
	"fmt"
	"math"
	"net/url"
	"strings"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/pdftext"
	"github.com/docintake/docintake/pkg/resultjson"
	"github.com/docintake/docintake/pkg/template"
)

// reviewView is the form part of the review page: the order's values as
// inputs, where each was read, what failed at it, and what the page's
// JavaScript needs to re-run the template's checks as the person types.
type reviewView struct {
	Header, Totals []reviewField
	Parties        []partyView
	Columns        []columnView
	Items          []itemRow
	ItemsCount     int // rows posted back, the blank one included
	ItemsProblem   string
	Checks         checksView
	// Failures are the checks that fail on the order shown, in words.
	Failures []string
	Pages    []pageView
	Notes    []string // what the page images leave out
	// Missing are the unknown keys printed outside the items (a header
	// value); those of items are at their rows (ops_review_map.go).
	Missing []missingView
}

type partyView struct {
	Index  int
	Role   string
	Added  bool // not read: an empty block to fill in
	Fields []reviewField
}

type columnView struct {
	Key, Label, Problem string
	Numeric             bool
}

// itemRow is a row of the item table; its discounts (not shown, kept from
// the reading) enter the page's line amount check.
type itemRow struct {
	Index                           int
	Cells                           []reviewField
	DiscountPercent, DiscountAmount string
	// Unknown are the keys this row prints first that no mapping or unit
	// table knows, with their inputs; Also names those mapped at an
	// earlier row.
	Unknown []missingView
	Also    []string
}

// checksView is the template's checks as the page re-runs them
// (template.Checks, with the totals the form does not show).
type checksView struct {
	On, Tolerance                                            string
	LinesAmount, Charges, Allowances, ExtraCharges, Quantity string
}

type pageView struct {
	Number        int
	Src, Note     string
	Width, Height float64
	Boxes         []boxView
}

type boxView struct {
	For, Label, Box string
}

// viewInput is what a review view is built from.
type viewInput struct {
	shown  resultjson.Order // the values in the inputs
	base   order.Order      // the canonical order as read (discounts, hidden totals)
	tpl    *template.Template
	reason document.Reason
	detail string
	layout *pdftext.Layout // nil: no page images
	errs   formErrors      // problems of a posted form
	logID  string
	flags  []resultjson.Flag // what the order's checks found (warnings)
}

func buildReviewView(in viewInput) reviewView {
	loc := newLocator(in.layout)
	v := reviewView{Checks: checksOf(in.tpl, in.shown.Currency, in.base)}
	for _, f := range headerFields {
		if f.name == "buyer_order_id" && *f.at(&in.shown) == "" && in.shown.DocumentType == string(order.TypeOrder) {
			continue // an order references no buyer's order
		}
		v.Header = append(v.Header, fieldOf(f.name, f.label, f.kind, f.role, *f.at(&in.shown), loc, false))
	}
	for _, f := range totalFields {
		v.Totals = append(v.Totals, fieldOf(f.name, f.label, f.kind, f.role, *f.at(&in.shown), loc, true))
	}
	v.Parties = partyViews(in.shown.Parties, in.reason, loc)
	v.Columns, v.Items = itemViews(in.shown.Items, in.base.Items, loc)
	v.ItemsCount = len(v.Items)
	v.placeProblems(in)
	v.placeFlags(in.flags) // ops_review_marks.go
	v.Pages, v.Notes = pageViews(in.layout, in.logID)
	v.addBoxes()
	return v
}

// fieldOf is an input with the box of its value: the first place it is
// printed, or the last for a total.
func fieldOf(name, label string, kind valueKind, role, value string, loc *locator, last bool) reviewField {
	f := reviewField{Name: name, Label: label, Value: value, Kind: kind, Role: role}
	if b, ok := loc.first(value, kind, last); ok {
		f.Box = &b
	}
	return f
}

// partyViews are the parties read, plus an empty delivery address to fill
// in when none was read and that is what failed.
func partyViews(parties []resultjson.Party, reason document.Reason, loc *locator) []partyView {
	var out []partyView
	hasDelivery := false
	for k, p := range parties {
		pv := partyView{Index: k, Role: p.Role}
		for _, f := range partyFields {
			pv.Fields = append(pv.Fields, fieldOf(fmt.Sprintf("p%d.%s", k, f.key), f.label, kindText, "", *f.at(&p), loc, false))
		}
		out = append(out, pv)
		hasDelivery = hasDelivery || p.Role == string(order.RoleDelivery)
	}
	if !hasDelivery && reason == document.ReasonCannotParseDeliveryAddress {
		k := len(parties)
		pv := partyView{Index: k, Role: string(order.RoleDelivery), Added: true}
		for _, f := range partyFields {
			pv.Fields = append(pv.Fields, reviewField{Name: fmt.Sprintf("p%d.%s", k, f.key), Label: f.label})
		}
		out = append(out, pv)
	}
	return out
}

// itemViews are the item rows (and a blank one to add an item) with the
// boxes of their values: each item is looked for on the row of its article
// number or description, below the previous item's.
func itemViews(items []resultjson.Item, base []order.Item, loc *locator) ([]columnView, []itemRow) {
	cols := make([]columnView, len(itemColumns))
	for i, c := range itemColumns {
		cols[i] = columnView{Key: c.key, Label: c.label, Numeric: c.kind == kindDecimal}
	}
	rows := make([]itemRow, 0, len(items)+1)
	var prev *wordSpan
	for k, it := range append(append([]resultjson.Item{}, items...), resultjson.Item{}) {
		row := itemRow{Index: k}
		if k < len(base) {
			row.DiscountPercent, row.DiscountAmount = base[k].DiscountPercent, base[k].DiscountAmount
		}
		anchor := loc.anchor(it, prev)
		if anchor != nil {
			prev = anchor
		}
		for _, c := range itemColumns {
			f := reviewField{Name: fmt.Sprintf("i%d.%s", k, c.key), Label: c.label, Value: *c.at(&it), Kind: c.kind, Role: c.role}
			if anchor != nil {
				f.Box = loc.onRow(*anchor, f.Value, c.kind)
			}
			row.Cells = append(row.Cells, f)
		}
		rows = append(rows, row)
	}
	return cols, rows
}

// anchor is the span of an item's article number or description, after
// prev in reading order.
func (loc *locator) anchor(it resultjson.Item, prev *wordSpan) *wordSpan {
	after := func(s wordSpan) bool {
		return prev == nil || s.page > prev.page || (s.page == prev.page && s.y0 > prev.y0+0.5)
	}
	for _, v := range []string{it.SupplierArticleID, it.BuyerArticleID, it.EAN, it.Description} {
		if spans := loc.find(v, kindText, after); len(spans) > 0 {
			return &spans[0]
		}
	}
	return nil
}

// onRow is the box of value nearest to the anchor's line, within two line
// heights of it on its page (an item's values may be printed over a few
// lines).
func (loc *locator) onRow(anchor wordSpan, value string, kind valueKind) *box {
	h := anchor.y1 - anchor.y0
	mid := (anchor.y0 + anchor.y1) / 2
	near := func(s wordSpan) bool {
		return s.page == anchor.page && math.Abs((s.y0+s.y1)/2-mid) <= 2*h
	}
	spans := loc.find(value, kind, near)
	if len(spans) == 0 {
		return nil
	}
	dist := func(s wordSpan) float64 { return math.Abs((s.y0+s.y1)/2 - mid) }
	best := spans[0]
	for _, s := range spans[1:] {
		if (s.exact && !best.exact) || (s.exact == best.exact && dist(s) < dist(best)) {
			best = s
		}
	}
	b := best.box(loc.pages[best.page])
	return &b
}

// checksOf is the template's checks for the page's arithmetic.
func checksOf(tpl *template.Template, currency string, base order.Order) checksView {
	var c template.Checks
	if tpl != nil {
		c = tpl.DocIntake.Checks
	}
	var on []string
	for _, x := range []struct {
		on   bool
		name string
	}{{c.LineAmount, "line_amount"}, {c.NetTotal, "net_total"}, {c.GrossTotal, "gross_total"}, {c.QuantityTotal, "quantity_total"}} {
		if x.on {
			on = append(on, x.name)
		}
	}
	t := base.Totals
	return checksView{On: strings.Join(on, " "), Tolerance: c.ToleranceFor(currency), LinesAmount: t.LinesAmount,
		Charges: t.Charges, Allowances: t.Allowances, ExtraCharges: t.ExtraCharges, Quantity: t.Quantity}
}

// pageViews are the page images of the layout and its notes.
func pageViews(l *pdftext.Layout, logID string) ([]pageView, []string) {
	if l == nil {
		return nil, nil
	}
	var pages []pageView
	for _, p := range l.Pages {
		pv := pageView{Number: p.Number, Note: p.Note, Width: p.Width, Height: p.Height}
		if p.DPI > 0 {
			pv.Src = fmt.Sprintf("/ops/review/%s/pages/%d", url.PathEscape(logID), p.Number)
		}
		pages = append(pages, pv)
	}
	return pages, l.Notes
}

// addBoxes lays every located field's box on its page.
func (v *reviewView) addBoxes() {
	add := func(f reviewField) {
		if f.Box == nil || f.Box.Page < 1 || f.Box.Page > len(v.Pages) {
			return
		}
		p := &v.Pages[f.Box.Page-1]
		p.Boxes = append(p.Boxes, boxView{For: f.ID(), Label: f.Label, Box: f.Box.attr()})
	}
	for _, fs := range [][]reviewField{v.Header, v.Totals} {
		for _, f := range fs {
			add(f)
		}
	}
	for _, p := range v.Parties {
		for _, f := range p.Fields {
			add(f)
		}
	}
	for _, r := range v.Items {
		for _, f := range r.Cells {
			add(f)
		}
	}
}
