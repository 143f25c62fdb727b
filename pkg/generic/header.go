package generic

import (
	"regexp"
	"strings"
)

// cand is one value considered for a header field.
type cand struct {
	value string
	at    Position
	why   string
}

// typer turns the text found for a label into the field's value ("" when
// the text is not of the field's type). whole is set when the text is a
// cell of its own, not the rest of the label's cell.
type typer func(text string, whole bool) string

// idToken is an order number as printed: letters, digits and the
// separators buyers use (4500012345, AB0004711, 412345-0, AB/24-25/117).
var idToken = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9/\-._]*[A-Za-z0-9]$`)

// typeID reads an order number: the first word of the text, with at least
// two digits, that is not a date or an amount.
func typeID(text string, whole bool) string {
	fields := strings.Fields(text)
	if len(fields) == 0 {
		return ""
	}
	if whole && len(fields) > 3 && fields[1] != "/" { // "65156074 / 30 Juli 2020" under a number/date label
		return ""
	}
	v := strings.Trim(fields[0], ":#.,;*")
	if !idToken.MatchString(v) || len(v) > 35 || digits(v) < 2 {
		return ""
	}
	if isDate(v) || dotDecimal.MatchString(v) || commaDecimal.MatchString(v) {
		return ""
	}
	return v
}

// isDate reports whether a word is a numeric date (12/03/2024, but not
// the order number PZ/22-23/439).
func isDate(v string) bool {
	m := numericDate.FindStringSubmatch(v)
	if m == nil || len(m[0]) < len(v)-2 {
		return false
	}
	n, ok := parseNumDate(m)
	if !ok {
		return false
	}
	_, dmy := n.date(orderDMY)
	_, mdy := n.date(orderMDY)
	return dmy || mdy
}

func digits(s string) int {
	n := 0
	for _, r := range s {
		if r >= '0' && r <= '9' {
			n++
		}
	}
	return n
}

// anyLabel reports whether a cell is itself a label of some field (a value
// never is).
func anyLabel(c cell) bool {
	for _, re := range []*regexp.Regexp{orderIDLabels, orderDateLabels, orderDateLabels2, deliveryLabels, currencyLabels,
		netLabels, grossLabels, taxLabels, invoiceLabels} {
		if _, rest, ok := matchLabel(re, c); ok && rest == "" {
			return true
		}
	}
	return false
}

// labelled collects the values of every label re matches: the rest of the
// label's cell, else the next cell to the right, else the cell below the
// label (a grid or a label above its value).
func (r *reader) labelled(field string, re *regexp.Regexp, typ typer) []cand {
	var out []cand
	bare := re == orderIDLabels2 || re == orderDateLabels2
	for i, l := range r.d.lines {
		if r.hdr != nil && i >= r.hdr.first && i <= r.hdr.last {
			continue
		}
		if bare && (l.page > 1 || r.hdr != nil && i >= r.hdr.first) {
			break // a bare "Date" or "No." counts on the first page's header only
		}
		for ci, c := range l.cells {
			label, rest, ok := matchLabel(re, c)
			if !ok {
				continue
			}
			if v, at, how := r.valueOf(i, ci, rest, typ); v != "" {
				at.Label = label
				out = append(out, cand{value: v, at: at, why: how})
				r.consider(field, v, at, true, how+" of label "+label)
			}
		}
	}
	return out
}

// valueOf finds the value of the label in cell ci of line i.
func (r *reader) valueOf(i, ci int, rest string, typ typer) (string, Position, string) {
	l := r.d.lines[i]
	c := l.cells[ci]
	if rest != "" {
		if v := typ(rest, false); v != "" {
			return v, l.at(c.col, c.end, ""), "same cell"
		}
		return "", Position{}, ""
	}
	if ci+1 < len(l.cells) {
		n := l.cells[ci+1]
		if n.col-c.end <= 40 && !anyLabel(n) {
			if v := typ(n.text, true); v != "" {
				return v, l.at(n.col, n.end, ""), "right"
			}
		}
	}
	for j := i + 1; j < len(r.d.lines) && j <= i+3; j++ {
		b := r.d.lines[j]
		if b.page != l.page {
			break
		}
		for k, n := range b.cells {
			if !overlaps(n.col, n.end, c.col, c.end, 1) {
				continue
			}
			if anyLabel(n) || k > 0 && labelOfNext(b.cells[k-1]) {
				return "", Position{}, "" // the value of another label
			}
			if v := typ(n.text, true); v != "" {
				return v, b.at(n.col, n.end, ""), "below"
			}
			return "", Position{}, ""
		}
	}
	return "", Position{}, ""
}

// labelOfNext reports whether a cell reads as a label of the cell after
// it ("Vendor No.:", "Kreditor-Nr."), so that cell is not another label's
// value below.
func labelOfNext(c cell) bool {
	t := strings.TrimSpace(c.text)
	return strings.HasSuffix(t, ":") || strings.HasSuffix(t, "#") || anyLabel(c) ||
		strings.HasSuffix(fold(t), "no.") || strings.HasSuffix(fold(t), "nr.")
}

// titleNumber matches a title with the number in the same cell
// ("PURCHASE ORDER 4500012345", "Bestellung Nr. 4711").
var titleNumber = regexp.MustCompile(`^(.*?)\s+(?:(?:no|nr|n°|#|number|nummer|numero)\.?\s*:?\s*)?(\S*\d\S*)$`)

// docTitle finds the document's title among the first lines of page 1:
// the first cell that is an order title or another document's title.
// For an order title it also collects the number printed in the title
// line or under it.
func (r *reader) docTitle() (isOrder bool, other string, ids []cand) {
	seen := 0
	for i, l := range r.d.lines {
		if l.page != 1 || seen >= 20 {
			break
		}
		if l.empty() {
			continue
		}
		seen++
		for ci, c := range l.cells {
			t := fold(unspace(c.text))
			if otherTitleWhole.MatchString(t) {
				return false, c.text, nil
			}
			if orderTitle.MatchString(t) {
				return true, "", r.titleIDs(i, ci, "")
			}
			if m := titleNumber.FindStringSubmatch(c.text); m != nil {
				switch t := fold(unspace(m[1])); {
				case otherTitleWhole.MatchString(t):
					return false, c.text, nil
				case orderTitle.MatchString(t):
					return true, "", r.titleIDs(i, ci, m[2])
				}
			}
		}
	}
	return false, "", nil
}

// titleIDs is the order number of a title: in its cell, the next cell on
// its line, or alone under it.
func (r *reader) titleIDs(i, ci int, inCell string) []cand {
	l := r.d.lines[i]
	c := l.cells[ci]
	at := l.at(c.col, c.end, c.text)
	if v := typeID(inCell, false); v != "" {
		r.consider("order_id", v, at, true, "in the title "+c.text)
		return []cand{{value: v, at: at, why: "title"}}
	}
	single := func(s string, whole bool) string {
		if len(strings.Fields(s)) != 1 {
			return ""
		}
		return typeID(s, whole)
	}
	v, pos, how := r.valueOf(i, ci, "", single)
	if v == "" {
		v, pos, how = r.underTitle(i, c, single)
	}
	if v == "" {
		return nil
	}
	pos.Label = c.text
	r.consider("order_id", v, pos, true, how+" of the title "+c.text)
	return []cand{{value: v, at: pos, why: "title"}}
}

// underTitle finds a number printed alone on the next line under a title,
// aligned anywhere from the title's start to a little past its end (a
// right-aligned number under a shorter or longer title).
func (r *reader) underTitle(i int, title cell, typ typer) (string, Position, string) {
	for j := i + 1; j < len(r.d.lines) && j <= i+2; j++ {
		b := r.d.lines[j]
		if b.page != r.d.lines[i].page {
			break
		}
		for k, n := range b.cells {
			if n.end < title.col || n.col > title.end+20 || k > 0 && labelOfNext(b.cells[k-1]) {
				continue
			}
			if v := typ(n.text, true); v != "" {
				return v, b.at(n.col, n.end, ""), "under"
			}
		}
		if !b.empty() {
			break
		}
	}
	return "", Position{}, ""
}

// distinct returns the distinct values of cs in order of appearance.
func distinct(cs []cand) []cand {
	var out []cand
	seen := map[string]bool{}
	for _, c := range cs {
		if !seen[c.value] {
			seen[c.value] = true
			out = append(out, c)
		}
	}
	return out
}
