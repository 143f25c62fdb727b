package draft

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"unicode"

	"github.com/docintake/docintake/pkg/template"
)

// column is one column of an item table header.
type column struct {
	Role       role
	Text       string // header text as printed
	Start, End int
}

// part is one value of a row: its role (group name, "" for an unnamed
// value such as a currency next to a price) and the printed text.
type part struct {
	Role role
	Text string
	// Glue is printed between the previous part and this one instead of
	// blanks when Glued: "/" of "450/EA", "" of "2m".
	Glue  string
	Glued bool
}

// rowParse is one table row split into columns: Parts[i] holds the values
// of column i (one, or two for "25 Stk" under a quantity header).
type rowParse struct {
	Parts [][]part
	Desc  string
	// DescStart is the column of the description's first rune, DescEnd the
	// column after its last; RightStart the column of the first value right
	// of the description.
	DescStart, DescEnd, RightStart int
	Currency                       bool // currency signs or codes next to its numbers
	// Indent is the column of the row's first value when the row is read
	// from a proven reading (0: not known).
	Indent int
}

// altShape is the rows of a table that miss the value of one column.
type altShape struct {
	Missing int // index into the table's columns
	Rows    []int
	Parsed  []rowParse
}

// table is a detected item table.
type table struct {
	HeaderLine int
	Header     string
	Columns    []column
	Desc       int // index of the description column, -1 without one
	Signature  []int
	Rows       []int // line indices of the rows
	Parsed     []rowParse
	Cont       []int // line indices of continuation lines
	ContMin    int
	ContMax    int
	StopLine   int // the line after the table (totals), -1 at the end of the text
	StartRe    string
	EndRe      string
	EndWhy     string
	LineRe     string
	// Alt are rows with one empty cell (no article, no date), read by
	// their own patterns after the main one.
	Alt    []altShape
	AltRes []string
	// More are rows of the same shape from the other samples.
	More   []rowParse
	ContRe string
	Types  map[string]string
}

func splitWords(s string) []string { return strings.Fields(s) }

// parseHeader recognises column terms on a line; it returns nil unless the
// line names a quantity column and at least two other known columns.
func parseHeader(line string) []column {
	cols, known := headerTerms(line)
	if !known[roleQty] || len(known) < 3 {
		return nil
	}
	return mergeHeader(cols)
}

// headerTerms are a line's words as columns: the column terms it names
// (longest first), each other word a column of its own.
func headerTerms(line string) ([]column, map[role]bool) {
	toks := tokens(line)
	var cols []column
	known := map[role]bool{}
	for i := 0; i < len(toks); {
		matched := 0
		for n := min(maxTermWords, len(toks)-i); n >= 1; n-- {
			ok := true
			for k := i; k < i+n-1; k++ {
				if toks[k+1].Start-toks[k].End != 1 {
					ok = false
					break
				}
			}
			if !ok {
				continue
			}
			words := make([]string, n)
			for k := range n {
				words[k] = toks[i+k].Text
			}
			key := fold(strings.TrimSuffix(strings.Join(words, " "), ":"))
			if r, ok := termIndex[key]; ok {
				cols = append(cols, column{Role: r, Text: strings.Join(words, " "), Start: toks[i].Start, End: toks[i+n-1].End})
				known[r] = true
				matched = n
				break
			}
		}
		if matched == 0 {
			cols = append(cols, column{Role: roleOther, Text: toks[i].Text, Start: toks[i].Start, End: toks[i].End})
			matched = 1
		}
		i += matched
	}
	return cols, known
}

// mergeHeader joins words to the terms they belong to and keeps one
// column per role.
func mergeHeader(cols []column) []column {
	// An unknown word one space before or after a known term belongs to it
	// ("Req. Date", "Prix unit. HT").
	merged := make([]column, 0, len(cols))
	for i := 0; i < len(cols); i++ {
		c := cols[i]
		if c.Role == roleOther && i+1 < len(cols) && cols[i+1].Role != roleOther && cols[i+1].Start-c.End == 1 {
			next := cols[i+1]
			next.Text, next.Start = c.Text+" "+next.Text, c.Start
			merged = append(merged, next)
			i++
			continue
		}
		if c.Role == roleOther && len(merged) > 0 && merged[len(merged)-1].Role != roleOther && c.Start-merged[len(merged)-1].End == 1 {
			merged[len(merged)-1].Text += " " + c.Text
			merged[len(merged)-1].End = c.End
			continue
		}
		merged = append(merged, c)
	}
	// A role named twice: keep the first as it is and make the second an
	// unnamed column (two amount columns cannot both be line_amount).
	// "Quantity Ordered": two terms of one role a space apart are one.
	seen := map[role]bool{}
	var out []column
	for _, c := range merged {
		if n := len(out); n > 0 && c.Role != roleOther && out[n-1].Role == c.Role && c.Start-out[n-1].End == 1 {
			out[n-1].Text += " " + c.Text
			out[n-1].End = c.End
			continue
		}
		if c.Role != roleOther && seen[c.Role] {
			c.Role = roleOther
		}
		seen[c.Role] = true
		out = append(out, c)
	}
	return out
}

// valueTypes decides which printed tokens fit which column.
type valueTypes struct {
	num  *regexp.Regexp
	date *regexp.Regexp
	// glued is a number with a unit or a price basis glued to it ("2m",
	// "450/EA", "3,00/100").
	glued *regexp.Regexp
	nc    numberConv
	dc    dateConv
}

func newValueTypes(nc numberConv, dc dateConv) valueTypes {
	return valueTypes{num: nc.numberTok(), date: regexp.MustCompile(`^(?:` + dc.dateRe() + `)$`),
		glued: regexp.MustCompile(`^(` + nc.numberRe() + `)(?:(/)(\S+)|()(\pL\S*))$`), nc: nc, dc: dc}
}

func isUnitWord(s string) bool {
	rs := []rune(s)
	return len(rs) > 0 && len(rs) <= 12 && unicode.IsLetter(rs[0]) && !strings.ContainsAny(s, "/:")
}

func (vt valueTypes) fits(r role, s string) bool {
	switch r {
	case roleQty, rolePrice, roleAmount, roleBasis:
		return vt.num.MatchString(s)
	case roleUnit:
		return isUnitWord(s)
	case roleDate:
		return vt.date.MatchString(s)
	case rolePosition:
		return len(s) <= 8 && (hasDigit(s) || len(s) <= 3)
	case roleTax:
		return vt.num.MatchString(strings.TrimSuffix(s, "%")) || s == "%"
	case roleEAN:
		return regexp.MustCompile(`^\d{8,14}$`).MatchString(s)
	}
	return true
}

var (
	groupHead = regexp.MustCompile(`^-?\d{1,3}(?: \d{3})*$`)
	curToken  = regexp.MustCompile(`^(?:[$€£₹]|EUR|USD|CHF|GBP|INR|Rs\.?)$`)
	curAffix  = regexp.MustCompile(`^(?:[$€£₹]|Rs\.)|[$€£₹]$`)
)

// rowTokens are a line's tokens with space-grouped numbers ("2 400",
// "1 332,00") joined when the buyer groups thousands with spaces, and
// currency signs or codes next to numbers ("$ 62.00", "12,00 €") left out;
// cur reports that there were such.
func (vt valueTypes) rowTokens(line string) (out []token, cur bool) {
	toks := tokens(line)
	var tail *regexp.Regexp
	if vt.nc.Group == " " {
		tail = regexp.MustCompile(`^\d{3}(?:` + regexp.QuoteMeta(vt.nc.Decimal) + `\d+)?$`)
	}
	for i, t := range toks {
		// "$12.50", "12,50€", "£25.0000/100" (a price per 100).
		if stripped := curAffix.ReplaceAllString(t.Text, ""); stripped != t.Text && vt.num.MatchString(strings.SplitN(stripped, "/", 2)[0]) {
			t.Text, cur = stripped, true
		}
		if curToken.MatchString(t.Text) && (i+1 < len(toks) && vt.num.MatchString(toks[i+1].Text) ||
			len(out) > 0 && vt.num.MatchString(out[len(out)-1].Text)) {
			cur = true
			continue
		}
		if n := len(out); tail != nil && n > 0 && t.Start-out[n-1].End == 1 && tail.MatchString(t.Text) && groupHead.MatchString(out[n-1].Text) {
			out[n-1].Text += " " + t.Text
			out[n-1].End = t.End
			continue
		}
		out = append(out, t)
	}
	return out, cur
}

// parseRow splits a line into the table's columns: columns left of the
// description take one value each from the left, columns right of it from
// the right; what remains is the description. A numeric column may carry a
// unit word after its number ("25 Stk").
func (vt valueTypes) parseRow(cols []column, desc int, line string) (rowParse, bool) {
	toks, cur := vt.rowTokens(line)
	rp := rowParse{Parts: make([][]part, len(cols)), Currency: cur}
	left, right := cols, []column(nil)
	if desc >= 0 {
		left, right = cols[:desc], cols[desc+1:]
	}
	i := 0
	for ci, c := range left {
		if i >= len(toks) || !vt.fits(c.Role, toks[i].Text) {
			return rp, false
		}
		// A value left of the description starts before the next
		// column's header: with an empty cell the next value would
		// shift into this column.
		if ci+1 < len(cols) && toks[i].Start >= cols[ci+1].Start-1 {
			return rp, false
		}
		rp.Parts[ci] = []part{{Role: c.Role, Text: toks[i].Text}}
		i++
	}
	j := len(toks)
	hasUnitCol := false
	for _, c := range cols {
		hasUnitCol = hasUnitCol || c.Role == roleUnit
	}
	for k := len(right) - 1; k >= 0; k-- {
		c := right[k]
		ci := desc + 1 + k
		if j-1 < i {
			return rp, false
		}
		t := toks[j-1].Text
		// A value right of the description ends after the previous
		// column's header (the mirror of the check on the left).
		if ci > 0 && ci-1 != desc && toks[j-1].End <= cols[ci-1].End+1 {
			return rp, false
		}
		switch {
		case vt.fits(c.Role, t):
			if c.Role == roleTax && t == "%" && j-2 >= i {
				rp.Parts[ci] = []part{{Role: c.Role, Text: toks[j-2].Text + " %"}}
				j -= 2
				continue
			}
			rp.Parts[ci] = []part{{Role: c.Role, Text: t}}
			j--
		case (c.Role == roleQty || c.Role == rolePrice || c.Role == roleAmount) && isUnitWord(t) && j-2 >= i && vt.fits(c.Role, toks[j-2].Text):
			sub := roleOther
			if c.Role == roleQty && !hasUnitCol {
				sub = roleUnit
			}
			rp.Parts[ci] = []part{{Role: c.Role, Text: toks[j-2].Text}, {Role: sub, Text: t}}
			j -= 2
		default:
			return rp, false
		}
	}
	if desc >= 0 {
		if j <= i {
			return rp, false
		}
		var words []string
		for _, t := range toks[i:j] {
			words = append(words, t.Text)
		}
		rp.Desc = strings.Join(words, " ")
		rp.Parts[desc] = []part{{Role: roleDesc, Text: rp.Desc}}
		rp.DescStart, rp.DescEnd = toks[i].Start, toks[j-1].End
		if j < len(toks) {
			rp.RightStart = toks[j].Start
		} else {
			rp.RightStart = 1 << 30
		}
	} else if i != len(toks) && j != i {
		return rp, false
	}
	return rp, true
}

// signature describes a parsed row's shape: values per column.
func signature(rp rowParse) string {
	var b strings.Builder
	for _, ps := range rp.Parts {
		for _, p := range ps {
			b.WriteString(string(p.Role))
			b.WriteByte(',')
		}
		b.WriteByte('|')
	}
	return b.String()
}

// findTable finds the item table of one sample: the first header line
// followed by rows that fit it.
func findTable(lines []string, vt valueTypes) *table {
	for h, l := range lines {
		cols := parseHeader(l)
		if cols == nil {
			continue
		}
		desc := -1
		for i, c := range cols {
			if c.Role == roleDesc {
				desc = i
				break
			}
		}
		t := &table{HeaderLine: h, Header: l, Columns: cols, Desc: desc, StopLine: -1}
		sigs := map[string]int{}
		cur := cols // the header of the current page (positions differ per page)
		for i := h + 1; i < len(lines); i++ {
			if stopsTable(lines[i]) {
				// A subtotal per page: the table goes on where its
				// header is printed again.
				next := -1
				for k := i + 1; k < len(lines); k++ {
					if len(parseHeader(lines[k])) == len(cols) {
						next = k
						break
					}
				}
				if next < 0 {
					t.StopLine = i
					break
				}
				i = next - 1
				continue
			}
			if again := parseHeader(lines[i]); len(again) == len(cols) {
				cur = again
				continue
			}
			if rp, ok := vt.parseRow(cur, desc, lines[i]); ok {
				t.Rows = append(t.Rows, i)
				t.Parsed = append(t.Parsed, rp)
				sigs[signature(rp)]++
			}
		}
		if len(t.Rows) == 0 {
			continue
		}
		// Keep the rows of the most frequent shape.
		best := maxKey(sigs)
		var rows []int
		var parsed []rowParse
		for k, rp := range t.Parsed {
			if signature(rp) == best {
				rows = append(rows, t.Rows[k])
				parsed = append(parsed, rp)
			}
		}
		t.Rows, t.Parsed = rows, parsed
		t.findAlt(lines, vt)
		return t
	}
	return nil
}

// lastLine is the table's last row or wrapped description line.
func (t *table) lastLine() int {
	all, _ := t.allRows()
	last := all[len(all)-1]
	if len(t.Cont) > 0 {
		last = max(last, t.Cont[len(t.Cont)-1])
	}
	return last
}

// findAlt reads the lines inside the table that look like rows but do not
// fit: with one column left out (its cell is empty) they may.
func (t *table) findAlt(lines []string, vt valueTypes) {
	known := map[int]bool{}
	for _, r := range t.Rows {
		known[r] = true
	}
	byMissing := map[int]*altShape{}
	for _, i := range t.unread(lines, vt) {
		for k := range t.Columns {
			if k == t.Desc {
				continue
			}
			cols := append(append([]column(nil), t.Columns[:k]...), t.Columns[k+1:]...)
			desc := t.Desc
			if desc > k {
				desc--
			}
			rp, ok := vt.parseRow(cols, desc, lines[i])
			if !ok {
				continue
			}
			a := byMissing[k]
			if a == nil {
				a = &altShape{Missing: k}
				byMissing[k] = a
			}
			a.Rows = append(a.Rows, i)
			a.Parsed = append(a.Parsed, rp)
			break
		}
	}
	for k := range t.Columns {
		if a := byMissing[k]; a != nil {
			t.Alt = append(t.Alt, *a)
		}
	}
}

// allRows are the rows of every shape, in line order, with their parses.
func (t *table) allRows() ([]int, []rowParse) {
	rows := append([]int(nil), t.Rows...)
	parsed := append([]rowParse(nil), t.Parsed...)
	for _, a := range t.Alt {
		rows = append(rows, a.Rows...)
		parsed = append(parsed, a.Parsed...)
	}
	idx := make([]int, len(rows))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return rows[idx[a]] < rows[idx[b]] })
	r2, p2 := make([]int, len(rows)), make([]rowParse, len(rows))
	for i, j := range idx {
		r2[i], p2[i] = rows[j], parsed[j]
	}
	return r2, p2
}

// stopsTable reports a line that ends an item table: a totals label at the
// start of one of its cells.
func stopsTable(line string) bool {
	for _, c := range cells(line) {
		if d, _ := labelAt(c.Text); d != nil && d.Kind == kindAmount {
			return true
		}
	}
	return false
}

// continuation finds wrapped description lines: single-cell lines under
// the description column between or right after rows. Evidence that the
// buyer wraps is such a line before another row, or one that starts in
// lower case or with a digit. Without evidence, wrapping is still allowed
// when nothing at all was printed under the rows' descriptions; but a line
// there that does not look wrapped (a capitalised line under the last row,
// such as a name) may be anything, and then no continuation is drafted.
func (t *table) continuation(lines []string) {
	if t.Desc < 0 {
		return
	}
	allRows, allParsed := t.allRows()
	rowAt := map[int]bool{}
	descMin, descMax := 1<<30, -1
	for k, r := range allRows {
		rowAt[r] = true
		descMin, descMax = min(descMin, allParsed[k].DescStart), max(descMax, allParsed[k].DescStart)
	}
	end := len(lines)
	if t.StopLine >= 0 {
		end = t.StopLine
	}
	evidence := false
	var cands []int
	minI, maxI := 1<<30, -1
	for k, r := range allRows {
		rp := allParsed[k]
		for i := r + 1; i < end; i++ {
			if rowAt[i] || blank(lines[i]) {
				if rowAt[i] && i > r+1 {
					evidence = true
				}
				break
			}
			ind := indent(lines[i])
			cs := cells(lines[i])
			if len(cs) != 1 || ind < rp.DescStart-2 || ind > rp.DescStart+8 || cs[0].End > rp.RightStart+1 {
				break
			}
			cands = append(cands, i)
			minI, maxI = min(minI, ind), max(maxI, ind)
			first := []rune(cs[0].Text)[0]
			if unicode.IsLower(first) || unicode.IsDigit(first) {
				evidence = true
			}
		}
	}
	switch {
	case evidence:
	case len(cands) == 0 && descMin >= 2:
		minI, maxI = descMin, descMax
	default:
		return
	}
	if minI < 2 {
		return
	}
	t.Cont, t.ContMin, t.ContMax = cands, max(1, minI-3), maxI+4
	t.ContRe = fmt.Sprintf(`^[ \t]{%d,%d}(?P<description>\S+(?: \S+)*)[ \t]*$`, t.ContMin, t.ContMax)
}

// patternFor is the regex of one value of a column across the samples.
func (vt valueTypes) patternFor(r role, values []string) string {
	switch r {
	case roleQty, rolePrice, roleAmount, roleBasis:
		return vt.nc.numberRe()
	case roleUnit:
		// Units are short words; a bound keeps a description word from
		// passing for a unit when a row's unit cell is empty.
		n := 0
		for _, v := range values {
			n = max(n, len([]rune(v)))
		}
		return fmt.Sprintf(`[^\W\d_]\S{0,%d}`, min(n, 8))
	case roleDate:
		return vt.dc.dateRe()
	case roleTax:
		return `\d+(?:[.,]\d+)?(?:[ \t]*%)?`
	case roleDisc:
		return vt.nc.numberRe() + `(?:[ \t]*%)?`
	case roleEAN:
		return `\d{8,14}`
	case rolePosition:
		for _, v := range values {
			if !regexp.MustCompile(`^\d+$`).MatchString(v) {
				return `\S+`
			}
		}
		return `\d+`
	}
	return `\S+`
}

// build writes start, end, the row pattern and the types.
func (t *table) build(lines []string, vt valueTypes) {
	t.StartRe = literal(strings.ReplaceAll(t.Header, "|", " "))
	t.Types = map[string]string{}
	t.LineRe = t.rowRegex(append(append([]rowParse(nil), t.Parsed...), t.More...), vt)
	t.AltRes = nil
	for _, a := range t.Alt {
		t.AltRes = append(t.AltRes, t.rowRegex(a.Parsed, vt))
	}
	t.continuation(lines)
	t.endRe(lines)
}

// rowRegex writes the pattern of rows of one shape: a named group per
// value, the description lazy, blanks between.
func (t *table) rowRegex(parsed []rowParse, vt valueTypes) string {
	vals := map[[2]int][]string{}
	currency := false
	for _, rp := range parsed {
		currency = currency || rp.Currency
		for ci, ps := range rp.Parts {
			for pi, p := range ps {
				vals[[2]int{ci, pi}] = append(vals[[2]int{ci, pi}], p.Text)
			}
		}
	}
	var b strings.Builder
	b.WriteString(indentPattern(parsed))
	named := map[role]bool{} // a group name once per pattern (Python's re)
	for ci, ps := range parsed[0].Parts {
		for pi, p := range ps {
			switch {
			case p.Glued:
				b.WriteString(regexp.QuoteMeta(p.Glue))
			case ci > 0 || pi > 0:
				b.WriteString(`[ \t|]+`)
			}
			if p.Role == roleDesc {
				b.WriteString(`(?P<description>\S.*?)`)
				continue
			}
			pat := vt.patternFor(p.Role, vals[[2]int{ci, pi}])
			if p.Role == roleOther || named[p.Role] {
				b.WriteString(`(?:` + pat + `)`)
				continue
			}
			pre, post := "", ""
			if currency && (p.Role == rolePrice || p.Role == roleAmount) {
				pre, post = `(?:(?:[$€£₹]|EUR|USD|CHF|GBP|INR|Rs\.?)[ \t]?)?`, `(?:[ \t]?(?:[$€£₹]|EUR|USD|CHF|GBP|INR))?`
			}
			named[p.Role] = true
			b.WriteString(pre + `(?P<` + string(p.Role) + `>` + pat + `)` + post)
			switch p.Role {
			case roleQty, rolePrice, roleAmount, roleBasis:
				t.Types[string(p.Role)] = "float"
			case roleDate:
				t.Types[string(p.Role)] = "date"
			}
		}
	}
	b.WriteString(`[ \t|]*$`)
	return b.String()
}

// indentPattern starts a row: where rows print their first value far
// right (an item's numbers under its description line), no less than three
// quarters of that indent, so that a description line with numbers in it
// is not read as a row.
func indentPattern(parsed []rowParse) string {
	m := 1 << 30
	for _, rp := range parsed {
		m = min(m, rp.Indent)
	}
	if m < 8 {
		return `^[ \t|]*`
	}
	return fmt.Sprintf(`^[ \t|]{%d,}`, m*3/4)
}

// endRe chooses the end of the table: the totals label after it, else the
// first line after the rows that is neither a row nor a wrapped
// description, else the end of the text. The end pattern must not occur
// between the header and the last row.
func (t *table) endRe(lines []string) {
	last := t.lastLine()
	inside := strings.Join(lines[t.HeaderLine+1:last+1], "\n")
	try := func(i int) bool {
		for _, c := range cells(lines[i]) {
			lbl := c.Text
			if d, l := labelAt(c.Text); d != nil {
				lbl = l
			} else if hasDigit(lbl) || !hasLetter(lbl) {
				continue
			}
			re := wordStart(lbl) + literal(lbl) + wordEnd(lbl)
			if !regexp.MustCompile(re).MatchString(inside) {
				t.EndRe = re
				t.EndWhy = fmt.Sprintf("line %d %q", i+1, strings.TrimSpace(lines[i]))
				return true
			}
			return false
		}
		return false
	}
	if t.StopLine >= 0 && try(t.StopLine) {
		return
	}
	rows := map[int]bool{}
	all, _ := t.allRows()
	for _, r := range append(all, t.Cont...) {
		rows[r] = true
	}
	for i := last + 1; i < len(lines); i++ {
		if blank(lines[i]) || rows[i] {
			continue
		}
		if try(i) {
			return
		}
	}
	t.EndRe = `\Z`
	t.EndWhy = "the end of the text (nothing after the rows is printed only there)"
}

// describe lists the columns for the report.
func (t *table) describe() []string {
	var out []string
	shape := t.Parsed[0].Parts
	for ci, c := range t.Columns {
		var roles []string
		for _, p := range shape[ci] {
			r := string(p.Role)
			if r == "" {
				r = "(not kept)"
			}
			roles = append(roles, r)
		}
		typ := ""
		for _, p := range shape[ci] {
			if tt := t.Types[string(p.Role)]; tt != "" {
				typ = " (" + tt + ")"
			}
		}
		out = append(out, fmt.Sprintf("%q → %s%s", c.Text, strings.Join(roles, " + "), typ))
	}
	return out
}

// unread lists lines inside the table that look like item rows (two or more
// numbers) but fit neither the row nor the continuation pattern: rows with
// an empty cell or another shape, which the draft would miss.
func (t *table) unread(lines []string, vt valueTypes) []int {
	known := map[int]bool{}
	all, _ := t.allRows()
	for _, r := range append(all, t.Cont...) {
		known[r] = true
	}
	end := len(lines)
	if t.StopLine >= 0 {
		end = t.StopLine
	}
	numeric := 0
	for _, c := range t.Columns {
		switch c.Role {
		case roleQty, rolePrice, roleAmount, roleBasis:
			numeric++
		}
	}
	var out []int
	for i := t.HeaderLine + 1; i < end; i++ {
		if known[i] {
			continue
		}
		n := 0
		toks, _ := vt.rowTokens(lines[i])
		for _, tk := range toks {
			if vt.num.MatchString(tk.Text) {
				n++
			}
		}
		// Rows end in a number (the amount, a price or a quantity); text
		// lines with numbers in them (an address) do not.
		if n >= max(2, numeric-1) && vt.num.MatchString(toks[len(toks)-1].Text) {
			out = append(out, i)
		}
	}
	return out
}

// arithmetic counts the rows whose line amount is not quantity × price ÷
// price basis (to the cent): a discount or a price unit column the draft did
// not recognise, which docintake's arithmetic checks would reject.
func (t *table) arithmetic(nc numberConv) (bad, checked int) {
	for _, rp := range t.Parsed {
		v := map[role]float64{roleBasis: 1}
		for _, ps := range rp.Parts {
			for _, p := range ps {
				switch p.Role {
				case roleQty, rolePrice, roleAmount, roleBasis, roleDisc:
					f, err := template.ParseNumber(strings.TrimSpace(strings.TrimSuffix(p.Text, "%")), nc.Decimal)
					if err != nil {
						return bad, checked
					}
					v[p.Role] = f.F
				}
			}
		}
		q, okQ := v[roleQty]
		p, okP := v[rolePrice]
		a, okA := v[roleAmount]
		if !okQ || !okP || !okA || v[roleBasis] == 0 {
			continue
		}
		checked++
		if math.Abs(q*p/v[roleBasis]*(1-v[roleDisc]/100)-a) > 0.011 {
			bad++
		}
	}
	return bad, checked
}
