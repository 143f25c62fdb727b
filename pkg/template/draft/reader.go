package draft

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/docintake/docintake/pkg/generic"
	"github.com/docintake/docintake/pkg/template"
)

// A sample the generic reader proves (its line arithmetic, totals and
// order id close) is read right: the draft then freezes that reading into
// the template instead of guessing from labels and columns — the labels
// the reader anchored on, the rows and columns it read, the separators and
// the date format of the numbers and dates it read — and checks that the
// template reads the sample back as the reader did.

// reading is the reader's proven reading of one sample. Positions count
// lines per page; pages[p] is the index of page p+1's first line in lines.
type reading struct {
	res   *generic.Result
	pages []int
	lines []string
}

func newReading(res *generic.Result, text string, lines []string) *reading {
	r := &reading{res: res, lines: lines}
	n := 0
	for _, pg := range strings.Split(strings.ReplaceAll(text, "\r", ""), "\f") {
		r.pages = append(r.pages, n)
		n += strings.Count(pg, "\n") + 1
	}
	return r
}

// line is the index in lines of a position's line, -1 without one.
func (r *reading) line(at generic.Position) int {
	if at.Page < 1 || at.Page > len(r.pages) {
		return -1
	}
	i := r.pages[at.Page-1] + at.Line
	if i >= len(r.lines) {
		return -1
	}
	return i
}

// span is the text printed at a position.
func (r *reading) span(at generic.Position) string {
	i := r.line(at)
	if i < 0 {
		return ""
	}
	rs := []rune(r.lines[i])
	lo, hi := min(at.Col, len(rs)), min(at.Col+at.Len, len(rs))
	return string(rs[lo:hi])
}

// field is the kept field of that name.
func (r *reading) field(name string) (generic.Field, bool) {
	for _, f := range r.res.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return generic.Field{}, false
}

// readSamples reads every sample with the generic reader. The draft is
// built on the readings only when the reader proves every sample; the
// samples it does not prove are named in the report.
func (b *builder) readSamples(ctx context.Context) error {
	var rs []*reading
	for k, s := range b.samples {
		res, notes, err := b.read(ctx, s)
		if err != nil {
			return fmt.Errorf("draft: %s: %w", s.Name, err)
		}
		for _, n := range notes {
			b.truthNotes = append(b.truthNotes, s.Name+": "+n)
		}
		if res.Outcome.Status != template.OutcomeSuccess {
			b.unproven = append(b.unproven, fmt.Sprintf("%s (%s)", s.Name, strings.TrimPrefix(res.Outcome.Detail, "generic reader: ")))
			continue
		}
		rs = append(rs, newReading(res, s.Text, b.lines[k]))
	}
	if len(b.unproven) == 0 {
		b.readings = rs
	}
	return nil
}

// read reads a sample with the generic reader, anchored on its truth
// when it has one (truth.go).
func (b *builder) read(ctx context.Context, s Sample) (*generic.Result, []string, error) {
	if s.Truth == nil {
		res, err := generic.Read(ctx, s.Text, generic.Options{Debug: true})
		return res, nil, err
	}
	b.ref = confirmedRef
	return readAnchored(ctx, s.Text, s.Truth)
}

// proven reports whether the draft is built on the reader's readings.
func (b *builder) proven() bool { return len(b.readings) > 0 }

// readerConventions takes the decimal separator, the grouping and the date
// format from the numbers and dates the reader read.
func (b *builder) readerConventions() {
	v := numberVotes{dec: map[string]int{}, group: map[string]int{}}
	count := map[string]int{}
	for _, r := range b.readings {
		for _, f := range r.res.Fields {
			switch {
			case strings.HasPrefix(f.Name, "items[") && f.At.Page > 0:
				v.add(r.span(f.At), f.Value)
			case f.Name == "order_date" || f.Name == "delivery_date":
				if h, ok := findDate(r.span(f.At), f.Value); ok {
					for _, fm := range h.formats {
						count[fm]++
					}
				}
			}
		}
		for _, c := range r.res.Candidates {
			if strings.HasPrefix(c.Field, "totals.") {
				v.add(r.span(c.At), c.Value)
			}
		}
	}
	if nc, ok := v.conv(); ok {
		b.nc = nc
	}
	if len(count) == 0 {
		return
	}
	f := maxKey(count)
	if count[b.dc.Format] == count[f] {
		f = b.dc.Format // day and month equal: the samples' other dates decide
	}
	why := "as the generic reader read the order date"
	if f == b.dc.Format {
		why += "; " + b.dc.Why
	}
	b.dc = dateConvOf(f)
	b.dc.Why = why
}

// numericFormat is a day-month-year format the samples' own date
// detection describes (its separator in group 1).
var numericFormat = regexp.MustCompile(`^%[dm](\W)%[dm]\W%[yY]$`)

// dateConvOf describes a format read off a proven date.
func dateConvOf(f string) dateConv {
	dc := dateConv{Format: f, Pattern: formatPattern(f, false), Year: 4}
	if f == "" {
		dc.Pattern = textDateRe
	}
	if strings.Contains(f, "%y") {
		dc.Year = 2
	}
	if m := numericFormat.FindStringSubmatch(f); m != nil {
		dc.Sep, dc.Pattern = m[1], ""
	}
	return dc
}

// readerOwned are the draft's fields the reader's reading decides.
var readerOwned = map[string]bool{"order_id": true, "date": true, "delivery_date": true, "currency": true,
	"total_net": true, "total_tax": true, "total_gross": true, "total_extra_charges": true, "total_quantity": true}

// freeze replaces what the reader proved: the header values, the totals,
// the currency, the item table and the keywords.
func (b *builder) freeze() {
	var kept []*field
	for _, f := range b.fields {
		if !readerOwned[f.Name] {
			kept = append(kept, f)
		}
	}
	for name := range readerOwned {
		delete(b.notes, name)
	}
	b.fields = kept
	for _, h := range [][2]string{{"order_id", "order_id"}, {"order_date", "date"}, {"delivery_date", "delivery_date"}, {"currency", "currency"}} {
		if f := b.readerField(h[0], h[1]); f != nil {
			b.fields = append(b.fields, f)
		}
	}
	for _, name := range []string{"total_net", "total_tax", "total_gross", "total_extra_charges", "total_quantity"} {
		if f := b.readerTotal(name); f != nil {
			b.fields = append(b.fields, f)
		}
	}
	slices.SortStableFunc(b.fields, func(x, y *field) int {
		return slices.Index(fieldOrder, x.Name) - slices.Index(fieldOrder, y.Name)
	})
	b.readerCurrency()
	b.readerTable()
	b.readerKeywords()
}

// readerField drafts a header field from the label the reader read it
// under, on every sample.
func (b *builder) readerField(rname, name string) *field {
	f0, ok := b.readings[0].field(rname)
	switch {
	case !ok && rname == "currency":
		b.notes[name] = "the generic reader finds no currency printed"
		return nil
	case !ok:
		b.notes[name] = "the generic reader finds none"
		return nil
	case f0.At.Label == "":
		b.notes[name] = "printed without a label: the template's options.currency"
		return nil
	}
	a, pat, err := anchorField(b.readings[0], f0, b.dc.Format)
	if err != nil {
		b.notes[name] = fmt.Sprintf("NOT EXPRESSED: the generic reader reads %q at page %d line %d under %q, but %v", f0.Value, f0.At.Page, f0.At.Line+1, f0.At.Label, err)
		return nil
	}
	f := &field{Name: name, Label: a.label, How: a.how() + " (generic reader)", Regex: a.regex(b.readings[0].lines, pat), Canon: true}
	for k, r := range b.readings {
		fk, ok := r.field(rname)
		if !ok || fk.At.Label != f0.At.Label {
			b.notes[name] = fmt.Sprintf("the generic reader reads it under %q in %s but not in %s", f0.At.Label, b.samples[0].Name, b.samples[k].Name)
			return nil
		}
		f.Values = append(f.Values, fk.Value)
	}
	if rname == "order_date" || rname == "delivery_date" {
		f.Type = "date"
		if a.format != b.dc.Format {
			f.DateFormat = &a.format
		}
	}
	return f
}

// anchor is a value the reader read and the label it anchored on.
type anchor struct {
	label            string
	labelLine        int // index in the sample's lines
	labelAt          int // rune column
	line, start, end int // the printed value
	format           string
}

func (a anchor) how() string {
	switch n := a.line - a.labelLine; n {
	case 0:
		return "same line"
	case 1:
		return "below"
	default:
		return fmt.Sprintf("below, %d lines down", n)
	}
}

// idPattern is an order number as the reader reads one.
const idPattern = `[A-Za-z0-9][A-Za-z0-9/\-._]*[A-Za-z0-9]`

// anchorField finds a header value's printed text and its label, and the
// pattern of such values. A date is read with the format prefer when that
// reads it (a date whose day is its month fits two).
func anchorField(r *reading, fl generic.Field, prefer string) (anchor, string, error) {
	vl := r.line(fl.At)
	if vl < 0 {
		return anchor{}, "", errors.New("its position is not on the page")
	}
	label := leaderCut(fl.At.Label)
	var format string
	find := func(text string) (int, int, bool) {
		i := strings.Index(text, fl.Value)
		if i < 0 {
			return 0, 0, false
		}
		s := runeIndex(text, i)
		return s, s + len([]rune(fl.Value)), true
	}
	pat := idPattern
	switch fl.Name {
	case "order_id":
		if i := strings.Index(label, fl.Value); i > 0 {
			label = strings.TrimSpace(label[:i]) // a title that prints its number
		}
	case "currency":
		pat = `[A-Z]{3}`
	default:
		find = func(text string) (int, int, bool) {
			h, ok := findDate(text, fl.Value)
			if ok {
				format = h.formats[0]
				if slices.Contains(h.formats, prefer) {
					format = prefer
				}
			}
			return h.start, h.end, ok
		}
	}
	a, err := locate(r.lines, r.pages[fl.At.Page-1], vl, fl.At, label, find)
	if err != nil {
		return a, "", err
	}
	if fl.Name == "order_date" || fl.Name == "delivery_date" {
		a.format = format
		pat = dateConvOf(format).dateRe()
	}
	return a, pat, nil
}

// locate finds the label left of the value on its line (or starting the
// value's cell), else above the value over its columns, as the reader
// reads a label's value.
func locate(lines []string, pageStart, vl int, at generic.Position, label string, find func(string) (int, int, bool)) (anchor, error) {
	if label == "" {
		return anchor{}, errors.New("it has no label")
	}
	rs := []rune(lines[vl])
	lo, hi := min(at.Col, len(rs)), min(at.Col+at.Len, len(rs))
	lr := []rune(label)
	a := anchor{label: label, line: vl}
	if _, _, ok := find(string(rs[lo:hi])); !ok {
		return anchor{}, fmt.Errorf("the draft finds no value of the kind in %q (a date format it does not know?)", string(rs[lo:hi]))
	}
	for _, i := range slices.Backward(runeIndexes(rs[:hi], lr)) {
		if i > lo {
			continue
		}
		from := max(lo, i+len(lr))
		if s, e, ok := find(string(rs[from:hi])); ok {
			a.labelLine, a.labelAt, a.start, a.end = vl, i, from+s, from+e
			return a, nil
		}
	}
	// Over the value's columns; else the nearest above (a title whose
	// number is printed under its end).
	for _, over := range []bool{true, false} {
		for j := vl - 1; j >= max(pageStart, vl-4); j-- {
			for _, i := range runeIndexes([]rune(lines[j]), lr) {
				if over && (i >= hi+1 || i+len(lr) <= lo-1) {
					continue
				}
				s, e, _ := find(string(rs[lo:hi]))
				a.labelLine, a.labelAt, a.start, a.end = j, i, lo+s, lo+e
				return a, nil
			}
		}
	}
	return anchor{}, fmt.Errorf("the label %q is not printed left of the value or above it", label)
}

// leaders are leader dots (or dashes, underscores) ending a label; their
// number varies from order to order.
var leaders = regexp.MustCompile(`^(.*?\S)\s*(?:\.{3,}|:{3,}|_{3,}|-{3,}|–{3,}|…+).*$`)

// leaderCut is a label without the leader dots the reader took into it.
func leaderCut(label string) string {
	if m := leaders.FindStringSubmatch(label); m != nil {
		return m[1]
	}
	return label
}

// runeIndexes are the rune offsets where needle occurs in hay.
func runeIndexes(hay, needle []rune) []int {
	var out []int
	for i := 0; i+len(needle) <= len(hay); i++ {
		if slices.Equal(hay[i:i+len(needle)], needle) {
			out = append(out, i)
		}
	}
	return out
}

// cellStart anchors a label at the start of a cell: the start of a line or
// a page, after two blanks or a box bar.
const cellStart = `(?:^|[ \t]{2}|[|│┃¦\f])[ \t]*`

// Cells before a value in the line below its label: text with single
// blanks, then two blanks or a bar.
const (
	cellText = `[^\s|]+(?: [^\s|]+)*`
	cellGap  = `(?:[ \t]{2,}|[ \t]*\|[ \t|]*)`
)

// regex writes the field's regex: the label, then the value after it on
// its line, or on a line below it as the same cell of that line.
func (a anchor) regex(lines []string, pat string) string {
	lbl := `(?m)` + cellStart + wordStart(a.label) + literal(a.label)
	rs := []rune(lines[a.line])
	if a.labelLine == a.line {
		sep := string(rs[a.labelAt+len([]rune(a.label)) : a.start])
		end := "" // punctuation ends the label, or the value is glued to it
		if sep != "" && strings.TrimSpace(sep) == "" {
			end = wordEnd(a.label)
		}
		return lbl + end + sepPattern(sep) + `(` + pat + `)`
	}
	re := lbl + `[^\n]*\n`
	if k := a.line - a.labelLine - 1; k > 0 {
		re += fmt.Sprintf(`(?:[^\n]*\n){%d}`, k)
	}
	re += `[ \t|]*`
	n, cellAt := 0, a.start
	for _, c := range cells(lines[a.line]) {
		if c.End <= a.start {
			n++
			continue
		}
		cellAt = min(c.Start, a.start)
		break
	}
	if n > 0 {
		re += fmt.Sprintf(`(?:%s%s){%d}`, cellText, cellGap, n)
	}
	if cellAt < a.start {
		re += sepPattern(string(rs[cellAt:a.start]))
	}
	return re + `(` + pat + `)`
}

// sepPattern generalises what is printed between a label and its value:
// any run of blanks, a run of the same punctuation of any length (leader
// dots), words as printed.
func sepPattern(sep string) string {
	var b strings.Builder
	rs := []rune(sep)
	for i := 0; i < len(rs); {
		j := i + 1
		switch r := rs[i]; {
		case isBlank(r) || r == '|':
			for j < len(rs) && (isBlank(rs[j]) || rs[j] == '|') {
				j++
			}
			b.WriteString(`[ \t|]*`)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			for j < len(rs) && (unicode.IsLetter(rs[j]) || unicode.IsDigit(rs[j])) {
				j++
			}
			b.WriteString(regexp.QuoteMeta(string(rs[i:j])))
		default:
			for j < len(rs) && rs[j] == r {
				j++
			}
			b.WriteString(regexp.QuoteMeta(string(r)) + "+")
		}
		i = j
	}
	if b.Len() == 0 {
		return `[ \t]*`
	}
	return b.String()
}

// itemField parses "items[3].quantity".
func itemField(name string) (int, string, bool) {
	rest, ok := strings.CutPrefix(name, "items[")
	if !ok {
		return 0, "", false
	}
	n, key, ok := strings.Cut(rest, "].")
	if !ok {
		return 0, "", false
	}
	i, err := strconv.Atoi(n)
	return i, key, err == nil
}
