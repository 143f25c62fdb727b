package draft

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/docintake/docintake/pkg/generic"
)

// totalKinds are the reader's kinds of totals lines per draft field.
var totalKinds = map[string]string{"total_net": "net", "total_tax": "tax", "total_gross": "gross",
	"total_extra_charges": "charge", "total_quantity": "quantity"}

// usedTotals are the totals lines the reader proved a total with (none
// when the total is not printed: a net total the reader adds up) and the
// total as the reader read it ("" when the order has none).
func (r *reading) usedTotals(name string) ([]generic.Candidate, string) {
	t := r.res.Order.Totals
	value := map[string]string{"total_net": t.NetAmount, "total_tax": t.TaxAmount, "total_gross": t.GrossAmount,
		"total_extra_charges": t.ExtraCharges, "total_quantity": t.Quantity}[name]
	if value == "" {
		return nil, ""
	}
	var all []generic.Candidate
	for _, c := range r.res.Candidates {
		if c.Field == "totals."+totalKinds[name] {
			all = append(all, c)
		}
	}
	switch name {
	case "total_net": // the first net total that is the lines' sum
		for _, c := range all {
			if sameNumber(c.Value, value) {
				return []generic.Candidate{c}, value
			}
		}
		return nil, value
	case "total_gross", "total_quantity": // the last one printed
		if len(all) > 0 {
			all = all[len(all)-1:]
		}
	}
	return all, value // tax and charges: every line, added up
}

// totalLabels are the distinct labels of totals lines, in order: the
// label's cell as printed up to a rate or an amount ("Total sin IVA",
// "CGST" of "CGST 9%").
func (r *reading) totalLabels(cs []generic.Candidate) []string {
	var out []string
	for _, c := range cs {
		l := leaderCut(c.At.Label)
		if i := r.line(c.At); i >= 0 {
			for _, cl := range cells(r.lines[i]) {
				if strings.HasPrefix(cl.Text, l) {
					cut := strings.TrimSpace(cl.Text[:strings.IndexFunc(cl.Text+"0", unicode.IsDigit)])
					if len(cut) > len(l) && !strings.ContainsAny(cut, "$€£₹") {
						l = strings.TrimRight(cut, " :=#-([")
					}
					break
				}
			}
		}
		if !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}

// readerTotal drafts a total from the labels of the totals lines the
// reader proved it with: the last amount on the label's line.
func (b *builder) readerTotal(name string) *field {
	c0, v0 := b.readings[0].usedTotals(name)
	if v0 == "" {
		return nil
	}
	if len(c0) == 0 {
		b.notes[name] = fmt.Sprintf("NOT EXPRESSED: not printed; the generic reader adds up the lines (%s), a template reads only what is printed", v0)
		return nil
	}
	labels := b.readings[0].totalLabels(c0)
	f := &field{Name: name, Label: strings.Join(labels, `" + "`), How: "same line, its last amount (generic reader)", Type: "float", Canon: true}
	for _, l := range labels {
		f.Regexes = append(f.Regexes, totalRegex(l, b.nc))
	}
	f.Regex = f.Regexes[0]
	if len(c0) > 1 {
		f.Group, f.How = "sum", f.How+", added up"
	}
	for k, r := range b.readings {
		ck, vk := r.usedTotals(name)
		if len(ck) == 0 || !slices.Equal(r.totalLabels(ck), labels) {
			b.notes[name] = fmt.Sprintf("the generic reader reads it under %q in %s but not so in %s", f.Label, b.samples[0].Name, b.samples[k].Name)
			return nil
		}
		f.Values = append(f.Values, vk)
	}
	return f
}

// totalRegex reads the last amount on a totals label's line: between label
// and amount only blanks, punctuation, a currency code or sign ("Rs.") and
// whole numbers (a rate, a total quantity), never the head of the amount.
func totalRegex(label string, nc numberConv) string {
	return `(?m)` + cellStart + wordStart(label) + literal(label) + `(?:[^\pL\d\n]|\b\pL{1,3}\b\.?|\d[\d.,'%]*[^\pL\d.,'%\n])*?(` + nc.numberRe() +
		`)(?:[ \t]?(?:[$€£₹]|[A-Z]{3}|\b\pL{1,3}\b\.?))?[ \t]*$`
}

// readerCurrency takes the currency the reader read: a labelled one is a
// field (readerField), one printed without a label the template's option;
// none printed leaves the order without a currency, as the reader does.
func (b *builder) readerCurrency() {
	f, ok := b.readings[0].field("currency")
	switch {
	case !ok:
		b.curr, b.currWhy = "", "none printed (the generic reader finds no currency), so the draft sets none"
	case f.At.Label != "":
		b.curr, b.currWhy = f.Value, fmt.Sprintf("the currency field (label %q), as the generic reader read it", f.At.Label)
	default:
		b.curr, b.currWhy = f.Value, "the only currency printed (code or sign), as the generic reader read it"
	}
}

// readerKeywords keeps layout as keywords: the letterhead, the title and
// the labels the reader read the order number and date under — never a
// value the reader read (order number, dates, amounts) nor a party's name.
func (b *builder) readerKeywords() {
	vals := b.readerValues()
	bad := func(s string) bool { return containsValue(s, vals) }
	b.kw, b.kwWhy = nil, nil
	if b.letter != "" {
		b.addKeyword(b.letter, "letterhead", bad)
	}
	if t := b.readerTitle(vals); t != "" {
		b.addKeyword(t, "document title", bad)
	}
	for _, f := range b.fields {
		if f.Canon && (f.Name == "order_id" || f.Name == "date" || len(b.kw) < 2) {
			b.addKeyword(f.Label, "label the generic reader reads "+f.Name+" under", bad)
		}
	}
}

// readerValues are the values the readings hold as printed, and the
// values of the other header fields (the supplier's name): never a
// keyword.
func (b *builder) readerValues() []string {
	var vals []string
	for _, r := range b.readings {
		vals = append(vals, r.res.Order.ID)
		for _, f := range r.res.Fields {
			switch {
			case strings.HasPrefix(f.Name, "items["):
				vals = append(vals, r.span(f.At))
			case f.Name == "order_date" || f.Name == "delivery_date":
				if h, ok := findDate(r.span(f.At), f.Value); ok {
					vals = append(vals, string([]rune(r.span(f.At))[h.start:h.end]))
				}
			}
		}
		for _, c := range r.res.Candidates {
			if strings.HasPrefix(c.Field, "totals.") {
				vals = append(vals, numChars.FindAllString(r.span(c.At), -1)...)
			}
		}
		for _, it := range r.res.Order.Items {
			vals = append(vals, it.Description, it.BuyerArticleID)
		}
	}
	for _, f := range b.fields {
		// The buyer's own name and addresses (the letterhead, its plants
		// as ship-to) are its layout; the supplier's are values.
		if !f.Canon && !f.Static && !strings.HasPrefix(f.Name, "buyer_") && !strings.HasPrefix(f.Name, "delivery_") {
			vals = append(vals, f.Values...)
		}
	}
	return vals
}

// containsValue reports whether text holds one of the values as a word.
func containsValue(text string, vals []string) bool {
	for _, v := range vals {
		v = strings.TrimSpace(v)
		if len([]rune(v)) < 2 || !strings.Contains(text, v) {
			continue
		}
		if regexp.MustCompile(`(?:^|[^\pL\pN])` + regexp.QuoteMeta(v) + `(?:$|[^\pL\pN])`).MatchString(text) {
			return true
		}
	}
	return false
}

// readerTitle is the order's title: the one the reader read the order
// number in or under (without the number), else a title among the first
// lines.
func (b *builder) readerTitle(vals []string) string {
	for _, c := range b.readings[0].res.Candidates {
		if c.Field == "order_id" && c.Kept && strings.Contains(c.Why, "title") {
			t := c.At.Label
			if i := strings.Index(t, c.Value); i > 0 {
				t = strings.TrimSpace(t[:i])
			}
			if !containsValue(t, vals) {
				return t
			}
		}
	}
	for i, l := range b.lines[0] {
		if i > 20 {
			break
		}
		for _, c := range cells(l) {
			if isTitle(c.Text) {
				return c.Text
			}
		}
	}
	return ""
}
