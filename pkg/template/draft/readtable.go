package draft

import (
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strings"

	"github.com/docintake/docintake/pkg/generic"
	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/template"
)

// roleDisc is a line discount in percent.
const roleDisc role = "discount_percent"

// readerRow is one item the reader read: the line printing its numbers
// and where each of them is.
type readerRow struct {
	line int
	at   map[string]generic.Position
}

// rows are the reading's items in order.
func (r *reading) rows() []readerRow {
	n := len(r.res.Order.Items)
	rows := make([]readerRow, n)
	for i := range rows {
		rows[i] = readerRow{line: -1, at: map[string]generic.Position{}}
	}
	for _, f := range r.res.Fields {
		i, key, ok := itemField(f.Name)
		if !ok || i >= n {
			continue
		}
		rows[i].at[key] = f.At
		if key == "quantity" {
			rows[i].line = r.line(f.At)
		}
	}
	return rows
}

// valueRoles are the values whose position the reader keeps.
var valueRoles = map[string]role{"quantity": roleQty, "unit_price": rolePrice, "line_amount": roleAmount, "discount_percent": roleDisc}

// readerParse splits a row's line into parts by the reading: the numbers
// at the positions the reader read them; the words under a heading of a
// position, article, unit, date, EAN or price basis column (cols); the unit, position
// and article the reader read; the description between. What else is
// printed is read past (a date as the line's delivery date, a number equal
// to the price basis as that).
func (vt valueTypes) readerParse(line string, rr readerRow, it order.Item, cols []column) (rowParse, string) {
	toks, cur := vt.rowTokens(line)
	toks = mergeTokens(toks, rr.at)
	parts := make([][]part, len(toks))
	for key, r := range valueRoles {
		at, ok := rr.at[key]
		if !ok {
			continue
		}
		i := tokenAt(toks, at)
		if i < 0 {
			return rowParse{}, fmt.Sprintf("its %s is not a word of its line", key)
		}
		parts[i] = vt.valueParts(r, toks[i].Text)
		if r == roleDisc && i+1 < len(toks) && toks[i+1].Text == "%" {
			parts[i+1] = []part{{Role: roleOther, Text: "%"}}
		}
	}
	free := func(i int) bool { return i >= 0 && i < len(toks) && parts[i] == nil }
	for i, t := range toks {
		for _, c := range cols {
			// A price basis is a right-aligned number that may stick
			// out of its heading.
			slack := 1
			if c.Role == roleBasis {
				slack = 3
			}
			if free(i) && t.Start < c.End+slack && c.Start-slack < t.End && vt.fits(c.Role, t.Text) {
				parts[i] = []part{{Role: c.Role, Text: t.Text}}
			}
		}
	}
	// What the reader read, where no heading named it: one word each.
	has := func(r role) bool {
		return slices.ContainsFunc(parts, func(ps []part) bool { return slices.ContainsFunc(ps, func(p part) bool { return p.Role == r }) })
	}
	for i := range toks {
		switch t := strings.TrimSuffix(toks[i].Text, "."); {
		case !free(i):
		case i == 0 && it.Position != "" && toks[i].Text == it.Position && !has(rolePosition):
			parts[i] = []part{{Role: rolePosition, Text: toks[i].Text}}
		case it.BuyerArticleID != "" && toks[i].Text == it.BuyerArticleID && !has(roleArticle):
			parts[i] = []part{{Role: roleArticle, Text: toks[i].Text}}
		case i > 0 && !free(i-1) && parts[i-1][0].Role == roleQty && !free(i+1) && isUnitWord(t) && !has(roleUnit):
			// A word alone between the quantity and the next value.
			parts[i] = []part{{Role: roleUnit, Text: toks[i].Text}}
		}
	}
	return vt.assemble(toks, parts, it, cur), ""
}

// assemble joins the free words of the description into one part and
// gives the other free words their roles.
func (vt valueTypes) assemble(toks []token, parts [][]part, it order.Item, cur bool) rowParse {
	rp := rowParse{Currency: cur, RightStart: 1 << 30}
	if len(toks) > 0 {
		rp.Indent = toks[0].Start
	}
	ds, de := descRun(toks, parts, it.Description)
	for i := 0; i < len(toks); i++ {
		if i == ds {
			words := make([]string, 0, de-ds)
			for _, t := range toks[ds:de] {
				words = append(words, t.Text)
			}
			rp.Desc = strings.Join(words, " ")
			rp.Parts = append(rp.Parts, []part{{Role: roleDesc, Text: rp.Desc}})
			rp.DescStart, rp.DescEnd = toks[ds].Start, toks[de-1].End
			if de < len(toks) {
				rp.RightStart = toks[de].Start
			}
			i = de - 1
			continue
		}
		if parts[i] == nil {
			parts[i] = []part{{Role: vt.otherRole(toks[i].Text, it), Text: toks[i].Text}}
		}
		rp.Parts = append(rp.Parts, parts[i])
	}
	return rp
}

// otherRole is the role of a word the reader read past: a date, or a
// number other than 1 by which the price must be divided for the line
// amount (a price basis the arithmetic shows).
func (vt valueTypes) otherRole(text string, it order.Item) role {
	switch {
	case vt.date.MatchString(text):
		return roleDate
	case vt.num.MatchString(text):
		if v, err := template.ParseAmount(text, vt.nc.Decimal); err == nil && !sameNumber(v, "1") && perBasis(it, v) {
			return roleBasis
		}
	}
	return roleOther
}

// perBasis reports whether quantity × price ÷ basis (less the discount)
// is the item's line amount, to the cent.
func perBasis(it order.Item, basis string) bool {
	q, p, a, b := rat(it.Quantity), rat(it.UnitPrice), rat(it.LineAmount), rat(basis)
	if q == nil || p == nil || a == nil || b == nil || b.Sign() == 0 {
		return false
	}
	v := new(big.Rat).Quo(new(big.Rat).Mul(q, p), b)
	if d := rat(it.DiscountPercent); d != nil {
		v.Mul(v, new(big.Rat).Sub(big.NewRat(1, 1), new(big.Rat).Quo(d, big.NewRat(100, 1))))
	}
	return new(big.Rat).Abs(v.Sub(v, a)).Cmp(big.NewRat(1, 100)) <= 0
}

func rat(s string) *big.Rat {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil
	}
	return r
}

// descRun is the run of free words that is the row's description: the
// first with a letter whose words the reader's description holds (in any
// order), else the longest with a letter; (-1, -1) without one.
func descRun(toks []token, parts [][]part, desc string) (int, int) {
	best, bestEnd, held := -1, -1, false
	inDesc := map[string]bool{}
	for _, w := range strings.Fields(desc) {
		inDesc[w] = true
	}
	for i := 0; i < len(toks); {
		if parts[i] != nil {
			i++
			continue
		}
		j := i
		letter := false
		var words []string
		for j < len(toks) && parts[j] == nil {
			letter = letter || hasLetter(toks[j].Text)
			words = append(words, toks[j].Text)
			j++
		}
		in := !slices.ContainsFunc(words, func(w string) bool { return !inDesc[w] })
		if letter && (best < 0 || in && !held || in == held && j-i > bestEnd-best) {
			best, bestEnd, held = i, j, in
		}
		i = j
	}
	return best, bestEnd
}

// valueParts are the parts of a value's word: the number, and what is
// glued to it, by a slash or not (a unit after a quantity, a price basis
// after a price: "450/EA", "2m", "4,250.00/1,000").
func (vt valueTypes) valueParts(r role, text string) []part {
	m := vt.glued.FindStringSubmatch(text)
	if m == nil || (r != roleQty && r != rolePrice) {
		return []part{{Role: r, Text: text}}
	}
	if m[2] == "" {
		m[3] = m[5]
	}
	sub := roleOther
	switch {
	case r == roleQty && isUnitWord(strings.TrimSuffix(m[3], ".")):
		sub = roleUnit
	case r == rolePrice && m[2] == "/" && vt.num.MatchString(m[3]):
		sub = roleBasis
	}
	return []part{{Role: r, Text: m[1]}, {Role: sub, Text: m[3], Glue: m[2], Glued: true}}
}

// mergeTokens joins the words a value spans (a number grouped by blanks
// the row's tokens did not join).
func mergeTokens(toks []token, at map[string]generic.Position) []token {
	for _, p := range at {
		var idx []int
		for i, t := range toks {
			if t.Start < p.Col+p.Len && p.Col < t.End {
				idx = append(idx, i)
			}
		}
		if len(idx) < 2 {
			continue
		}
		first, last := idx[0], idx[len(idx)-1]
		words := make([]string, 0, last-first+1)
		for _, t := range toks[first : last+1] {
			words = append(words, t.Text)
		}
		joined := token{Text: strings.Join(words, " "), Start: toks[first].Start, End: toks[last].End}
		toks = append(append(append([]token(nil), toks[:first]...), joined), toks[last+1:]...)
	}
	return toks
}

// tokenAt is the token at a position, -1 when none overlaps it.
func tokenAt(toks []token, p generic.Position) int {
	for i, t := range toks {
		if t.Start < p.Col+p.Len && p.Col < t.End {
			return i
		}
	}
	return -1
}

// readerTable drafts the lines block from the reader's rows: the header
// line above them starts it, the first totals line after them ends it,
// and the row patterns are written from the parts of the rows.
func (b *builder) readerTable() {
	r0 := b.readings[0]
	t, why := b.vt.rowsOf(r0)
	if t == nil {
		b.readerTableWhy = why
		return
	}
	t.Header = r0.lines[t.HeaderLine]
	t.StopLine = firstTotalAfter(r0, t.lastRow())
	sig := signature(t.Parsed[0])
	for _, r := range b.readings[1:] {
		if o, _ := b.vt.rowsOf(r); o != nil {
			for _, rp := range append(o.Parsed, o.altParsed()...) {
				if signature(rp) == sig {
					t.More = append(t.More, rp)
				}
			}
		}
	}
	t.build(r0.lines, b.vt)
	b.readerTab = t
}

// rowsOf parses a reading's rows and sorts them by shape: the most frequent
// shape is the main pattern, the others get patterns of their own.
func (vt valueTypes) rowsOf(r *reading) (*table, string) {
	rows := r.rows()
	if len(rows) == 0 {
		return nil, "the generic reader reads no item"
	}
	for i, rr := range rows {
		if rr.line < 0 {
			return nil, fmt.Sprintf("item %d has no quantity position", i+1)
		}
	}
	h0, h1 := headerAbove(r, rows[0].line)
	if h0 < 0 {
		return nil, fmt.Sprintf("no column header above the first row (line %d)", rows[0].line+1)
	}
	var cols []column
	for _, l := range r.lines[h0 : h1+1] {
		hc, _ := headerTerms(l)
		for _, c := range hc {
			switch c.Role {
			case rolePosition, roleArticle, roleUnit, roleDate, roleEAN, roleBasis:
				cols = append(cols, c)
			}
		}
	}
	t := &table{HeaderLine: h0, Desc: -1, StopLine: -1}
	parsed := make([]rowParse, len(rows))
	for i, rr := range rows {
		var why string
		if parsed[i], why = vt.readerParse(r.lines[rr.line], rr, r.res.Order.Items[i], cols); why != "" {
			return nil, fmt.Sprintf("item %d (line %d): %s", i+1, rr.line+1, why)
		}
	}
	promoteBasis(parsed)
	byShape := map[string]*altShape{}
	var shapes []string
	for i, rp := range parsed {
		s := signature(rp)
		if i > 0 {
			rp, s = vt.harmonize(rp, parsed[0])
		}
		if byShape[s] == nil {
			byShape[s] = &altShape{Missing: -1}
			shapes = append(shapes, s)
		}
		byShape[s].Rows = append(byShape[s].Rows, rows[i].line)
		byShape[s].Parsed = append(byShape[s].Parsed, rp)
	}
	main := shapes[0]
	for _, s := range shapes {
		if len(byShape[s].Rows) > len(byShape[main].Rows) {
			main = s
		}
	}
	t.Rows, t.Parsed = byShape[main].Rows, byShape[main].Parsed
	for _, s := range shapes {
		if s != main {
			t.Alt = append(t.Alt, *byShape[s])
		}
	}
	t.columnsOf(rows[0], cols)
	if t.Desc >= 0 {
		t.Columns[t.Desc].Text = headingOver(r.lines[h0:h1+1], t.Parsed[0].DescStart, t.Parsed[0].DescEnd, "description")
	}
	return t, ""
}

var one = regexp.MustCompile(`^1(?:[.,]0+)?$`)

// promoteBasis makes a column a price basis on every row when the
// arithmetic shows it on some: the rows printing 1 there are per one unit.
func promoteBasis(parsed []rowParse) {
	basis := map[[2]int]bool{}
	for _, rp := range parsed {
		for ci, ps := range rp.Parts {
			if len(ps) == 1 && ps[0].Role == roleBasis {
				basis[[2]int{len(rp.Parts), ci}] = true
			}
		}
	}
	for _, rp := range parsed {
		for ci, ps := range rp.Parts {
			if len(ps) == 1 && ps[0].Role == roleOther && basis[[2]int{len(rp.Parts), ci}] && one.MatchString(ps[0].Text) {
				ps[0].Role = roleBasis
			}
		}
	}
}

// harmonize gives a row the roles of the first row's shape where its
// words fit them: a unit the reader did not read on that row ("EA" taken
// for the description) is still the unit column.
func (vt valueTypes) harmonize(rp, first rowParse) (rowParse, string) {
	if len(rp.Parts) != len(first.Parts) || signature(rp) == signature(first) {
		return rp, signature(rp)
	}
	out := rp
	out.Parts = make([][]part, len(rp.Parts))
	for ci, ps := range rp.Parts {
		fs := first.Parts[ci]
		out.Parts[ci] = ps
		if len(ps) != 1 || len(fs) != 1 || ps[0].Role == fs[0].Role {
			continue
		}
		switch r := fs[0].Role; {
		case ps[0].Role != roleDesc && ps[0].Role != roleOther:
			return rp, signature(rp)
		case r == roleUnit || r == rolePosition || r == roleArticle || r == roleDate || r == roleOther:
			if !vt.fits(r, ps[0].Text) || r == roleUnit && !isUnitWord(ps[0].Text) {
				return rp, signature(rp)
			}
			out.Parts[ci] = []part{{Role: r, Text: ps[0].Text}}
		default:
			return rp, signature(rp)
		}
	}
	return out, signature(out)
}

// columnsOf names the main shape's columns for the report: the reader's
// column headings for the values, the headings a column's words were read
// under, the role for the rest.
func (t *table) columnsOf(rr readerRow, headings []column) {
	label := map[role]string{}
	for _, c := range slices.Backward(headings) {
		label[c.Role] = c.Text
	}
	for key, ro := range valueRoles {
		if at, ok := rr.at[key]; ok {
			label[ro] = at.Label
		}
	}
	for ci, ps := range t.Parsed[0].Parts {
		ro := ps[0].Role
		text := label[ro]
		if text == "" {
			text = map[bool]string{true: string(ro), false: "(read past)"}[ro != roleOther]
		}
		t.Columns = append(t.Columns, column{Role: ro, Text: text})
		if ro == roleDesc {
			t.Desc = ci
		}
	}
}

// headingOver is the heading printed over columns [from, to) in the
// header lines (its words there), or def.
func headingOver(lines []string, from, to int, def string) string {
	for _, l := range lines {
		var words []string
		for _, t := range tokens(l) {
			if t.Start < to && from < t.End {
				words = append(words, t.Text)
			}
		}
		if len(words) > 0 {
			return strings.Join(words, " ")
		}
	}
	return def
}

// altParsed are the rows of the other shapes.
func (t *table) altParsed() []rowParse {
	var out []rowParse
	for _, a := range t.Alt {
		out = append(out, a.Parsed...)
	}
	return out
}

// lastRow is the line of the table's last row.
func (t *table) lastRow() int {
	all, _ := t.allRows()
	return all[len(all)-1]
}

// headerAbove finds the item table's header above its first row: the
// nearest line naming a column the reader read a value under (last), and
// the lines of the same header stacked over it (from first); -1 when there
// is none.
func headerAbove(r *reading, row int) (first, last int) {
	words := map[string]bool{}
	for _, rr := range r.rows() {
		for _, at := range rr.at {
			for _, w := range strings.Fields(at.Label) {
				words[w] = true
			}
		}
	}
	isHeader := func(i int) bool {
		toks := tokens(r.lines[i])
		named, digits := false, 0
		for _, t := range toks {
			named = named || words[t.Text]
			if hasDigit(t.Text) {
				digits++
			}
		}
		return named && digits <= 1 && digits*3 <= len(toks)
	}
	lo := 0
	for _, p := range r.pages {
		if p <= row {
			lo = p
		}
	}
	lo = max(lo, row-12)
	last = row - 1
	for last >= lo && !isHeader(last) {
		last--
	}
	if last < lo {
		return -1, -1
	}
	first = last
	for first-1 >= lo && isHeader(first-1) {
		first--
	}
	return first, last
}

// firstTotalAfter is the first totals line the reader read after line
// last, -1 when there is none.
func firstTotalAfter(r *reading, last int) int {
	best := -1
	for _, c := range r.res.Candidates {
		if !strings.HasPrefix(c.Field, "totals.") {
			continue
		}
		if i := r.line(c.At); i > last && (best < 0 || i < best) {
			best = i
		}
	}
	return best
}
