package ingest

import (
	"fmt"
	"strings"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/order"
)

// placeProblems puts what failed at the field it concerns: a posted
// value's problem, the rejection's reason (a missing order number, VAT id
// or delivery address), and each of the template's checks that fails on
// the order shown (a line amount at its row, a total at the total).
func (v *reviewView) placeProblems(in viewInput) {
	at := v.fieldsByName()
	set := func(name, msg string) {
		if f := at[name]; f != nil && f.Problem == "" {
			f.Problem = msg
		}
	}
	for name, msg := range in.errs {
		set(name, msg)
	}
	v.reasonProblem(in, at, set)
	if in.tpl == nil {
		return
	}
	o, err := in.shown.Canonical(&in.base)
	if err != nil {
		return // a malformed date: its field says so
	}
	fails, _ := in.tpl.CheckOrder(o)
	for _, f := range fails {
		v.Failures = append(v.Failures, f.Check+": "+f.Detail)
		switch f.Check {
		case "line_amount":
			var n int
			if _, err := fmt.Sscanf(f.Detail, "line %d", &n); err == nil {
				set(fmt.Sprintf("i%d.line_amount", n-1), f.Detail)
			}
		case "net_total":
			set("totals.net_amount", f.Detail)
		case "gross_total":
			set("totals.gross_amount", f.Detail)
		case "quantity_total":
			v.columnProblem("quantity", f.Detail)
		}
	}
}

// reasonProblem shows the rejection's reason at its field while that field
// is still empty.
func (v *reviewView) reasonProblem(in viewInput, at map[string]*reviewField, set func(name, msg string)) {
	empty := func(name string) bool { return at[name] != nil && at[name].Value == "" }
	switch in.reason {
	case document.ReasonDocumentIDMissing:
		if empty("order_id") {
			set("order_id", "missing: "+in.detail)
		}
	case document.ReasonVATIDMissing:
		if k := v.partyIndex(string(order.RoleBuyer)); k >= 0 && empty(fmt.Sprintf("p%d.vat_id", k)) {
			set(fmt.Sprintf("p%d.vat_id", k), "missing: "+in.detail)
		}
	case document.ReasonCannotParseDeliveryAddress:
		if k := v.partyIndex(string(order.RoleDelivery)); k >= 0 {
			set(fmt.Sprintf("p%d.name", k), "the delivery address could not be read: "+in.detail)
		}
	case document.ReasonCannotParseItems:
		if !strings.HasPrefix(in.detail, "arithmetic check failed") {
			v.ItemsProblem = in.detail
		}
	}
}

func (v *reviewView) partyIndex(role string) int {
	for _, p := range v.Parties {
		if p.Role == role {
			return p.Index
		}
	}
	return -1
}

func (v *reviewView) columnProblem(key, msg string) {
	for i := range v.Columns {
		if v.Columns[i].Key == key {
			v.Columns[i].Problem = msg
		}
	}
}

// fieldsByName indexes every input of the view.
func (v *reviewView) fieldsByName() map[string]*reviewField {
	at := map[string]*reviewField{}
	for _, fs := range [][]reviewField{v.Header, v.Totals} {
		for i := range fs {
			at[fs[i].Name] = &fs[i]
		}
	}
	for _, p := range v.Parties {
		for i := range p.Fields {
			at[p.Fields[i].Name] = &p.Fields[i]
		}
	}
	for _, r := range v.Items {
		for i := range r.Cells {
			at[r.Cells[i].Name] = &r.Cells[i]
		}
	}
	return at
}
