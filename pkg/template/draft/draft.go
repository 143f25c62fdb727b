// Package draft writes a first template for a new buyer from one or more
// sample purchase orders, deterministically and offline.
//
// When the generic reader (pkg/generic) proves every sample — its line
// arithmetic, totals and single order number close — the draft freezes that
// reading: the order number, dates, currency and totals are anchored on the
// labels the reader read them under, the lines block is written from the
// rows and columns it read, the decimal separator and date format are those
// of the numbers and dates it read, and the keywords are the letterhead, the
// title and those labels, never a value. The draft must then read each
// sample back as the reader did; the report says field by field where it
// does not. Otherwise the draft falls back to labels and column headings:
// labels next to values give the header fields, the aligned item table gives
// the lines block, the printed numbers and dates give the conventions.
// Either way, party blocks and payment terms come from labels, and with
// several samples what all share is layout (labels, keywords) and what
// differs is a value.
//
//	d, err := draft.Build(ctx, []draft.Sample{{Name: "po-1.pdf", Text: text}}, draft.Options{Name: "acme"})
//	os.WriteFile("acme.yml", d.YAML, 0o644)
//	d.WriteReport(os.Stderr)
//
// The draft is checked before it is returned: it parses as a template and
// every field it keeps reproduces the value it was drafted from on every
// sample (fields that do not are dropped and reported); Draft.ReadsBack
// says whether it reads the samples as the generic reader proved them.
package draft

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/template"
)

// Sample is one sample document: a name for the report (its file name) and
// its layout text as the pdftext engine prints it.
type Sample struct {
	Name string
	Text string
	// Truth is the order a person confirmed for the sample (issue 27's
	// review), or nil: the draft is anchored on it and read back against
	// it instead of the generic reader's verdict (truth.go).
	Truth *order.Order
}

// Options name the drafted template.
type Options struct {
	Name    string // docintake.name; default: derived from the buyer's name
	PartyID string // docintake.party_ids; default: the name upper-cased
}

// Outcome is what the draft reads from one sample.
type Outcome struct {
	Sample string
	Result *template.Result
	Order  *order.Order
	Status template.OutcomeStatus
	Detail string
	// JSON is invoice2data's output for the sample (intakectl extract
	// --output json): the sample's expected result.
	JSON []byte
}

// Draft is a drafted template with its report.
type Draft struct {
	Name     string
	YAML     []byte
	Template *template.Template
	Outcomes []Outcome
	report   []string
	// readsBack is set when the draft is built on the generic reader's
	// proven readings and reads every sample back as the reader did.
	readsBack bool
}

// ErrNoSample is returned when Build gets no sample text.
var ErrNoSample = errors.New("draft: no sample text")

// field is a header field of the draft.
type field struct {
	Name, Label, How, Regex, Type string
	// Static fields hold their only value (the letterhead's name).
	Static bool
	// Group reduces several matches to one (a total repeated per page
	// with different values: the last is the document's).
	Group  string
	Values []string // per sample, as printed (canonical with Canon)
	// Regexes are several label patterns whose matches are collected
	// (tax lines under different labels); Regex is the first.
	Regexes []string
	// Canon is set for the generic reader's fields: Values are canonical
	// (the order id, dates as YYYY-MM-DD, decimals with a point).
	Canon bool
	// DateFormat is the field's own date format when it differs from the
	// template's ("" for a textual date read without one).
	DateFormat *string
}

type builder struct {
	samples []Sample
	lines   [][]string
	nc      numberConv
	dc      dateConv
	vt      valueTypes
	table   *table
	tables  []*table
	fields  []*field
	notes   map[string]string // field → why it is not in the draft
	// checksOff are the header arithmetic checks (net_total, gross_total)
	// a sample fails, with why: the draft switches them off rather than
	// rejecting its own samples, and the report says so.
	checksOff map[string]string
	kw        []string
	kwWhy     []string
	issuer    string
	curr      string
	currWhy   string
	rule      bool
	name      string
	party     string
	// letter is the letterhead kept as a keyword.
	letter string
	// readings are the generic reader's proven readings of the samples
	// (nil unless it proves every sample); unproven names the samples it
	// does not prove, with why.
	readings []*reading
	unproven []string
	// ref names what the draft is read back against: the generic reader,
	// or confirmedRef when the samples carry truths; truthNotes say what
	// of the truths the reader's reading does not show.
	ref        string
	truthNotes []string
	// readerTab is the lines block written from the reader's rows (nil
	// with readerTableWhy when it cannot be); tableFrom says which table
	// the draft keeps and why.
	readerTab      *table
	readerTableWhy string
	tableFrom      string
}

// Build drafts a template from samples. It fails only without usable
// samples; whatever it cannot find is left out and said in the report.
func Build(ctx context.Context, samples []Sample, opts Options) (*Draft, error) {
	if len(samples) == 0 {
		return nil, ErrNoSample
	}
	b := &builder{samples: samples, notes: map[string]string{}, checksOff: map[string]string{}, ref: "the generic reader"}
	var texts []string
	for _, s := range samples {
		if strings.TrimSpace(s.Text) == "" {
			return nil, fmt.Errorf("%w: %s has no text (a scanned PDF needs the ocr engine)", ErrNoSample, s.Name)
		}
		texts = append(texts, s.Text)
		b.lines = append(b.lines, splitLines(s.Text))
	}
	if err := b.readSamples(ctx); err != nil {
		return nil, err
	}
	b.conventions(texts)
	b.vt = newValueTypes(b.nc, b.dc)
	b.findTables()
	b.findFields()
	b.findCurrency()
	b.findKeywords()
	if b.proven() {
		b.freeze()
		if err := b.chooseTable(ctx); err != nil {
			return nil, err
		}
	}
	b.name, b.party = opts.Name, opts.PartyID
	if b.name == "" {
		b.name = slug(b.issuer)
		if b.name == "" {
			b.name = slug(strings.TrimSuffix(samples[0].Name, ".pdf"))
		}
		if b.name == "" {
			b.name = "draft"
		}
	}
	if b.party == "" {
		b.party = strings.ToUpper(b.name)
	}
	b.rule = true
	for _, t := range texts {
		if invoiceWords.MatchString(t) {
			b.rule = false
		}
	}
	// Write, load and run; drop what does not reproduce its sample values.
	for range 4 {
		d, dropped, err := b.try(ctx)
		if err != nil {
			return nil, err
		}
		if !dropped {
			d.report = b.report(d)
			return d, nil
		}
	}
	d, _, err := b.try(ctx)
	if err != nil {
		return nil, err
	}
	d.report = b.report(d)
	return d, nil
}

// conventions decides the number and date conventions: from the reader's
// reading when it proves the samples, else from the printed text.
func (b *builder) conventions(texts []string) {
	b.nc = detectNumbers(texts)
	dollar := false
	for _, t := range texts {
		dollar = dollar || strings.Contains(t, "$") || strings.Contains(t, "USD")
	}
	b.dc = detectDates(texts, b.nc, dollar)
	if b.proven() {
		b.readerConventions()
	}
}

// invoiceWords finds an invoice or credit note title: the word starting a
// cell, alone or before a number ("INVOICE", "Rechnung Nr. 12", "FACTUUR.",
// "Facture n°5"), not in running text ("send your invoice to", "Invoice
// address"), so that a buyer's remark never rejects its order.
var invoiceWords = regexp.MustCompile(`(?im)(?:^|[ \t]{2,})[ \t]*(?:invoice|rechnung|facture|factuur|credit note|gutschrift|avoir)\b[.:]?[ \t]*(?:$|[ \t]{2}|(?:no\.?|nr\.?|n[°º]|number|#)|[\w/-]*\d)`)

func (b *builder) findTables() {
	for _, ls := range b.lines {
		b.tables = append(b.tables, findTable(ls, b.vt))
	}
	if b.tables[0] == nil {
		return
	}
	t := b.tables[0]
	// Values of the other samples' rows of the same shape widen the value
	// patterns (a longer unit, a position with letters).
	for _, o := range b.tables[1:] {
		if o != nil && len(o.Parsed) > 0 && signature(o.Parsed[0]) == signature(t.Parsed[0]) {
			t.More = append(t.More, o.Parsed...)
		}
	}
	t.build(b.lines[0], b.vt)
	b.table = t
	// The end pattern must be printed in every sample after its rows.
	for k, o := range b.tables[1:] {
		if o == nil {
			continue
		}
		o.build(b.lines[k+1], b.vt)
		if o.EndRe != t.EndRe {
			t.EndRe, t.EndWhy = `\Z`, "the samples end their tables differently; the end of the text"
		}
	}
}

// tableLines reports whether line i of sample k belongs to the item table
// (header, rows, wrapped descriptions).
func (b *builder) tableLines(k int) func(int) bool {
	t := b.tables[k]
	if t == nil {
		return func(int) bool { return false }
	}
	last := t.lastLine()
	return func(i int) bool { return i >= t.HeaderLine && i <= last }
}

// fieldOrder is the order fields are written in.
var fieldOrder = func() []string {
	out := []string{"order_id", "date", "delivery_date", "currency", "buyer_order_id", "payment_terms"}
	for _, p := range []string{"buyer", "supplier", "delivery"} {
		for _, s := range []string{"name", "name2", "street", "zip", "city", "state", "country", "country_code", "phone", "email"} {
			out = append(out, p+"_"+s)
		}
	}
	return append(out, "total_net", "total_tax", "total_extra_charges", "total_gross", "total_quantity")
}()

// reported are the fields the report lists even when missing; address
// pieces are listed only when found.
var reported = map[string]bool{"order_id": true, "date": true, "delivery_date": true, "currency": true, "buyer_order_id": true,
	"payment_terms": true, "buyer_name": true, "supplier_name": true, "delivery_name": true, "total_net": true, "total_tax": true, "total_gross": true}

func (b *builder) findFields() {
	per := make([]map[string]*found, len(b.samples))
	for k := range b.samples {
		per[k] = findHeader(b.lines[k], b.tableLines(k), b.vt)
	}
	for _, name := range fieldOrder {
		f0 := per[0][name]
		if f0 == nil {
			b.notes[name] = "no label found"
			continue
		}
		f := &field{Name: name, Label: f0.Label, How: f0.How, Regex: f0.Regex}
		ok := true
		for k := range b.samples {
			fk := per[k][name]
			if fk == nil || fold(fk.Label) != fold(f0.Label) {
				ok = false
				b.notes[name] = fmt.Sprintf("label %q of %s not found in %s", f0.Label, b.samples[0].Name, b.samples[k].Name)
				break
			}
			f.Values = append(f.Values, fk.Value)
		}
		if !ok {
			continue
		}
		switch {
		case strings.HasPrefix(name, "total_"):
			f.Type = "float"
		case name == "date" || name == "delivery_date":
			f.Type = "date"
		}
		b.fields = append(b.fields, f)
	}
}

var isoCode = regexp.MustCompile(`\b(EUR|USD|CHF|GBP|CAD|AUD|JPY|CNY|SEK|NOK|DKK|PLN|CZK|HUF|RON|BGN|HRK|TRY|ZAR|INR|BRL|MXN|SGD|HKD|NZD)\b`)

func (b *builder) findCurrency() {
	for _, f := range b.fields {
		if f.Name == "currency" {
			v := f.Values[0]
			if c, ok := symbols[v]; ok {
				v = c
			}
			b.curr, b.currWhy = v, fmt.Sprintf("the currency field (label %q)", f.Label)
			return
		}
	}
	count := map[string]int{}
	for _, s := range b.samples {
		for _, m := range isoCode.FindAllString(s.Text, -1) {
			count[m]++
		}
		for sym, c := range symbols {
			count[c] += strings.Count(s.Text, sym)
		}
	}
	for k, n := range count {
		if n == 0 {
			delete(count, k)
		}
	}
	if len(count) == 0 {
		b.curr, b.currWhy = "EUR", "no currency printed; assumed EUR — check this"
		return
	}
	b.curr = maxKey(count)
	b.currWhy = fmt.Sprintf("printed %d times (code or sign)", count[b.curr])
}

// findKeywords picks layout text all samples share: the letterhead's first
// cell (usually the buyer's name), the document title, the order number's
// label.
func (b *builder) findKeywords() {
	values := map[string]bool{}
	for _, f := range b.fields {
		if strings.HasPrefix(f.Name, "buyer_") || strings.HasPrefix(f.Name, "delivery_") {
			continue // the buyer's own name and addresses are part of its layout
		}
		for _, v := range f.Values {
			values[fold(v)] = true
		}
	}
	add := func(text, why string) bool {
		return b.addKeyword(text, why, func(s string) bool { return values[fold(s)] })
	}
	// Letterhead: the first cell of the first lines with text that is
	// neither the title nor a label.
	seen := 0
	for li, l := range b.lines[0] {
		if blank(l) {
			continue
		}
		if seen++; seen > 3 {
			break
		}
		c := cells(l)[0]
		if d, _ := labelAt(c.Text); d != nil || isLabelText(c.Text) {
			continue // a heading or a copy mark above the name ("Invoice To", "Original")
		}
		if hasLetter(c.Text) && len([]rune(c.Text)) <= 60 {
			b.issuer = c.Text
			if add(c.Text, "letterhead") {
				b.letter = c.Text
			}
			b.letterhead(li, c)
		}
		break
	}
	for i, l := range b.lines[0] {
		if i > 20 {
			break
		}
		for _, c := range cells(l) {
			if isTitle(c.Text) {
				add(c.Text, "document title")
			}
		}
	}
	for _, f := range b.fields {
		if f.Name == "order_id" {
			add(f.Label, "order number label")
		}
	}
	if len(b.kw) < 2 && b.table != nil {
		add(strings.Join(strings.Fields(strings.ReplaceAll(b.table.Header, "|", " ")), " "), "item table header")
	}
	for _, f := range b.fields {
		if len(b.kw) >= 2 {
			break
		}
		add(f.Label, "label of "+f.Name)
	}
	if len(b.kw) == 0 {
		// Last resort: the first text of the first sample, as printed.
		for _, l := range b.lines[0] {
			if !blank(l) {
				c := cells(l)[0]
				b.kw = append(b.kw, wordStart(c.Text)+literal(c.Text)+wordEnd(c.Text))
				b.kwWhy = append(b.kwWhy, fmt.Sprintf("%q (first text of the page; the samples share no label — replace it)", c.Text))
				break
			}
		}
	}
	if b.issuer == "" && len(b.kwWhy) > 0 {
		b.issuer = strings.Trim(strings.SplitN(b.kwWhy[0], " (", 2)[0], `"`)
	}
}

// addKeyword keeps text as a keyword unless bad says it is a value or a
// sample does not print it; it reports whether text is a keyword.
func (b *builder) addKeyword(text, why string, bad func(string) bool) bool {
	re := wordStart(text) + literal(text) + wordEnd(text)
	if strings.TrimSpace(text) == "" || bad(text) {
		return false
	}
	if slices.Contains(b.kw, re) {
		return true
	}
	r := regexp.MustCompile(re)
	for _, s := range b.samples {
		if !r.MatchString(s.Text) {
			return false
		}
	}
	b.kw = append(b.kw, re)
	b.kwWhy = append(b.kwWhy, fmt.Sprintf("%q (%s)", text, why))
	return true
}

// letterhead drafts the buyer's party from the letterhead when no label
// names it: the name as a static value (printed on every order) and the
// address lines under it, anchored on the name.
func (b *builder) letterhead(line int, c cell) {
	for _, f := range b.fields {
		if strings.HasPrefix(f.Name, "buyer_") {
			return
		}
	}
	b.fields = append(b.fields, &field{Name: "buyer_name", Label: c.Text, How: "letterhead (static)", Static: true,
		Values: slices.Repeat([]string{c.Text}, len(b.samples))})
	// At the start of a line: the buyer's name may be printed again
	// elsewhere (as the ship-to party).
	re := `^[ \t]*` + wordStart(c.Text) + literal(c.Text) + wordEnd(c.Text)
	per := make([][]*found, len(b.samples))
	for k := range b.samples {
		for i, l := range b.lines[k] {
			if cs := cells(l); len(cs) > 0 && cs[0].Text == c.Text {
				per[k] = partyAddress(b.lines[k], "buyer_name", c.Text, re, i, i, cs[0])
				break
			}
		}
	}
	for _, f0 := range per[0] {
		f := &field{Name: f0.Name, Label: c.Text, How: "letterhead, " + f0.How, Regex: f0.Regex}
		for k := range b.samples {
			var v *found
			for _, fk := range per[k] {
				if fk.Name == f0.Name {
					v = fk
				}
			}
			if v == nil {
				f = nil
				break
			}
			f.Values = append(f.Values, v.Value)
		}
		if f != nil {
			b.fields = append(b.fields, f)
		}
	}
}

func isTitle(s string) bool {
	fs := fold(strings.TrimSpace(s))
	for _, t := range titles {
		if fs == fold(t) {
			return true
		}
	}
	return false
}

func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		switch {
		case r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.Trim(b.String(), "-")
}

// yamlQuote writes s as a single-quoted YAML scalar.
func yamlQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func (b *builder) yaml() []byte {
	var w strings.Builder
	names := make([]string, len(b.samples))
	for i, s := range b.samples {
		names[i] = s.Name
	}
	fmt.Fprintf(&w, "# Drafted by `intakectl templates draft` from %s.\n", strings.Join(names, ", "))
	w.WriteString("# Review it: run `intakectl extract --output debug` on the samples and on new orders.\n")
	if b.issuer != "" {
		fmt.Fprintf(&w, "issuer: %s\n", yamlQuote(b.issuer))
	}
	w.WriteString("keywords:\n")
	for _, k := range b.kw {
		fmt.Fprintf(&w, "  - %s\n", yamlQuote(k))
	}
	if len(b.fields) == 0 && b.table == nil {
		w.WriteString("fields: {}\n")
	} else {
		w.WriteString("fields:\n")
	}
	for _, f := range b.fields {
		if f.Static {
			fmt.Fprintf(&w, "  %s:\n    parser: static\n    value: %s\n", f.Name, yamlQuote(f.Values[0]))
			continue
		}
		if len(f.Regexes) > 1 {
			fmt.Fprintf(&w, "  %s:\n    parser: regex\n    regex:\n", f.Name)
			for _, re := range f.Regexes {
				fmt.Fprintf(&w, "      - %s\n", yamlQuote(re))
			}
		} else {
			fmt.Fprintf(&w, "  %s:\n    parser: regex\n    regex: %s\n", f.Name, yamlQuote(f.Regex))
		}
		if f.Type != "" {
			fmt.Fprintf(&w, "    type: %s\n", f.Type)
		}
		if f.DateFormat != nil && *f.DateFormat != "" {
			fmt.Fprintf(&w, "    date_formats: [%s]\n", yamlQuote(*f.DateFormat))
		}
		if f.Group != "" {
			fmt.Fprintf(&w, "    group: %s\n", f.Group)
		}
	}
	writeLines(&w, b.table)
	b.writeOptions(&w)
	w.WriteString("docintake:\n")
	fmt.Fprintf(&w, "  name: %s\n  party_ids: [%s]\n  document_type: order\n", yamlQuote(b.name), yamlQuote(b.party))
	if len(b.checksOff) > 0 {
		w.WriteString("  # A sample fails these checks (see the draft report): map what lies between\n")
		w.WriteString("  # the totals (e.g. shipping to total_extra_charges) and switch them on again.\n")
		w.WriteString("  checks:\n")
		for _, c := range []string{"net_total", "gross_total"} {
			if _, off := b.checksOff[c]; off {
				fmt.Fprintf(&w, "    %s: false\n", c)
			}
		}
	}
	if b.rule {
		w.WriteString("  rules:\n    # No sample is titled invoice or credit note: such documents are not orders.\n")
		fmt.Fprintf(&w, "    - match: %s\n      action: reject\n      reason: not_an_order\n", yamlQuote(invoiceWords.String()))
	}
	return []byte(w.String())
}

// writeLines writes the lines block of table t (nothing without one).
func writeLines(w *strings.Builder, t *table) {
	if t == nil {
		return
	}
	w.WriteString("  lines:\n    parser: lines\n")
	fmt.Fprintf(w, "    start: %s\n    end: %s\n", yamlQuote(t.StartRe), yamlQuote(t.EndRe))
	rows := yamlQuote(t.LineRe)
	if len(t.AltRes) > 0 {
		// The first pattern that matches a line is used: the main
		// shape first, then rows of other shapes (an empty cell).
		rows = "\n      - " + rows
		for _, a := range t.AltRes {
			rows += "\n      - " + yamlQuote(a)
		}
	}
	if t.ContRe != "" {
		fmt.Fprintf(w, "    first_line: %s\n    line: %s\n", rows, yamlQuote(t.ContRe))
	} else {
		fmt.Fprintf(w, "    line: %s\n", rows)
	}
	if len(t.Types) > 0 {
		keys := make([]string, 0, len(t.Types))
		for k := range t.Types {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		w.WriteString("    types:\n")
		for _, k := range keys {
			fmt.Fprintf(w, "      %s: %s\n", k, t.Types[k])
		}
	}
}

// writeOptions writes the currency (none when the generic reader finds none
// printed) and the number and date conventions.
func (b *builder) writeOptions(w *strings.Builder) {
	w.WriteString("options:\n")
	if b.curr != "" {
		fmt.Fprintf(w, "  currency: %s\n", b.curr)
	}
	fmt.Fprintf(w, "  decimal_separator: %s\n", yamlQuote(b.nc.Decimal))
	if b.dc.Format != "" {
		fmt.Fprintf(w, "  date_formats:\n    - %s\n", yamlQuote(b.dc.Format))
	}
}

// try writes the draft, loads it and reads every sample with it. Fields
// whose value differs from the one printed next to their label are removed
// (dropped=true: the caller tries again).
func (b *builder) try(ctx context.Context) (*Draft, bool, error) {
	y := b.yaml()
	tpl, err := template.Parse(b.name+".yml", y)
	if err != nil {
		return nil, false, fmt.Errorf("draft: the drafted template does not load (a bug): %w\n%s", err, y)
	}
	if len(tpl.Problems) > 0 {
		return nil, false, fmt.Errorf("draft: the drafted template has problems (a bug): %v\n%s", tpl.Problems[0], y)
	}
	d := &Draft{Name: b.name, YAML: y, Template: tpl}
	bad := map[string]string{}
	regroup := map[string]string{}
	retry := false // a check was switched off: draft again
	for k, s := range b.samples {
		res, err := tpl.Extract(ctx, s.Text, nil)
		if err != nil {
			return nil, false, fmt.Errorf("draft: extract %s: %w", s.Name, err)
		}
		for _, f := range b.fields {
			v, ok := res.Fields.Get(f.Name)
			if !ok {
				bad[f.Name] = fmt.Sprintf("its regex finds nothing in %s", s.Name)
				continue
			}
			if list, isList := v.([]any); isList && f.Group == "" {
				// Several values (a label repeated with different
				// values, e.g. per page, or a column heading with
				// the label's words): the first or the last, whichever
				// is the value drafted from; totals try the last first.
				if g := b.pick(f, list, f.Values[k]); g != "" {
					regroup[f.Name] = g
					continue
				}
			}
			if !b.same(f, v, f.Values[k]) {
				bad[f.Name] = fmt.Sprintf("its regex reads %v instead of %q in %s", v, f.Values[k], s.Name)
			}
		}
		o, out, err := tpl.Order(ctx, res, nil, "", nil)
		if o != nil {
			fails, _ := tpl.CheckOrder(o)
			for _, f := range fails {
				if _, off := b.checksOff[f.Check]; !off && f.Check != "line_amount" {
					b.checksOff[f.Check] = fmt.Sprintf("%s: %s", s.Name, f.Detail)
					retry = true
				}
			}
		}
		oc := Outcome{Sample: s.Name, Result: res, Order: o}
		if err != nil {
			oc.Status, oc.Detail = template.OutcomeRejected, err.Error()
			for _, f := range b.fields {
				if regroup[f.Name] == "" && strings.Contains(err.Error(), "field "+f.Name+":") {
					bad[f.Name] = err.Error()
				}
			}
		} else {
			oc.Status, oc.Detail = out.Status, out.Detail
		}
		if oc.JSON, err = template.MarshalInvoice2dataJSON([]*template.Result{res}); err != nil {
			return nil, false, fmt.Errorf("draft: %s: %w", s.Name, err)
		}
		d.Outcomes = append(d.Outcomes, oc)
	}
	if len(bad) == 0 && len(regroup) == 0 {
		return d, retry, nil
	}
	b.regroup(bad, regroup)
	return d, true, nil
}

// regroup gives fields that read several values the group that picks the
// one drafted from, and drops the fields that do not reproduce theirs.
func (b *builder) regroup(bad, regroup map[string]string) {
	var kept []*field
	for _, f := range b.fields {
		if g, ok := regroup[f.Name]; ok && bad[f.Name] == "" {
			f.Group = g
			f.How += ", " + g + " of several"
		}
		if why, ok := bad[f.Name]; ok {
			b.notes[f.Name] = fmt.Sprintf("label %q found but dropped: %s", f.Label, why)
			continue
		}
		kept = append(kept, f)
	}
	b.fields = kept
}

// pick says which of several values is the one drafted from: "first",
// "last" (totals are tried last first), or "" for neither.
func (b *builder) pick(f *field, list []any, want string) string {
	ends := []string{"first", "last"}
	if strings.HasPrefix(f.Name, "total_") {
		ends = []string{"last", "first"}
	}
	for _, g := range ends {
		v := list[0]
		if g == "last" {
			v = list[len(list)-1]
		}
		if b.same(f, v, want) {
			return g
		}
	}
	return ""
}

// same compares an extracted value with the value printed in the sample.
func (b *builder) same(f *field, got any, printed string) bool {
	if f.Canon {
		return sameCanonical(got, printed)
	}
	switch x := got.(type) {
	case order.Date:
		want, err := template.ParseDate(printed, b.dateFormats(), nil)
		return err == nil && want == x
	case template.Float:
		want, err := template.ParseNumber(printed, b.nc.Decimal)
		return err == nil && want.Dec == x.Dec
	case string:
		return strings.TrimSpace(x) == strings.TrimSpace(printed) || symbols[x] != "" && x == printed
	}
	return false
}

func (b *builder) dateFormats() []string {
	if b.dc.Format == "" {
		return nil
	}
	return []string{b.dc.Format}
}

// WriteReport prints what the draft found and why: each canonical field
// with its label or why it is missing, the item table, the number and date
// conventions, and what the draft reads from each sample.
func (d *Draft) WriteReport(w io.Writer) error {
	for _, l := range d.report {
		if _, err := fmt.Fprintln(w, l); err != nil {
			return err
		}
	}
	return nil
}

func (b *builder) report(d *Draft) []string {
	var r []string
	add := func(format string, args ...any) { r = append(r, fmt.Sprintf(format, args...)) }
	add("draft %s (party id %s) from %d sample(s)", b.name, b.party, len(b.samples))
	reading, back, ok := b.readerReport(d)
	add("%s", reading)
	add("keywords:")
	if len(b.kwWhy) == 0 {
		add("  none found: add text every order of this buyer prints")
	}
	for _, k := range b.kwWhy {
		add("  %s", k)
	}
	add("header fields:")
	byName := map[string]*field{}
	for _, f := range b.fields {
		byName[f.Name] = f
	}
	for _, n := range fieldOrder {
		if f := byName[n]; f != nil {
			add("  %-15s found   label %q, value %s: %s", n, f.Label, f.How, strings.Join(quoteAll(f.Values), ", "))
		} else if reported[n] || strings.Contains(b.notes[n], "dropped") || strings.Contains(b.notes[n], "generic reader") {
			add("  %-15s missing (%s)", n, b.notes[n])
		}
	}
	for _, c := range []string{"net_total", "gross_total"} {
		if why, off := b.checksOff[c]; off {
			add("check %s switched off: it fails on %s", c, why)
		}
	}
	r = append(r, b.tableReport()...)
	add("numbers: decimal separator %q — %s", b.nc.Decimal, b.nc.Why)
	if b.dc.Format != "" {
		add("dates: %s — %s", b.dc.Format, b.dc.Why)
	} else {
		add("dates: no format — %s", b.dc.Why)
	}
	add("currency: %s — %s", orNone(b.curr), b.currWhy)
	add("samples read with the draft:")
	for _, o := range d.Outcomes {
		items := 0
		if o.Order != nil {
			items = len(o.Order.Items)
		}
		s := fmt.Sprintf("  %s: %s, %d items", o.Sample, o.Status, items)
		if o.Detail != "" {
			s += " (" + o.Detail + ")"
		}
		add("%s", s)
	}
	d.readsBack = ok
	return append(r, back...)
}

// tableReport describes the item table: where its lines block comes
// from, its columns, the rows it reads and what it may not read.
func (b *builder) tableReport() []string {
	var r []string
	add := func(format string, args ...any) { r = append(r, fmt.Sprintf(format, args...)) }
	add("item table:")
	if b.readerTableWhy != "" {
		add("  NOT EXPRESSED from the generic reader's rows: %s", b.readerTableWhy)
	}
	if t := b.table; t == nil {
		add("  not found: no line names a quantity column and two other known columns with rows under it")
	} else {
		if b.tableFrom != "" {
			add("  lines block: %s", b.tableFrom)
		}
		add("  header line %d: %q", t.HeaderLine+1, strings.TrimSpace(t.Header))
		for _, c := range t.describe() {
			add("    column %s", c)
		}
		add("  %d rows in %s", len(t.Rows), b.samples[0].Name)
		for _, a := range t.Alt {
			if a.Missing < 0 {
				add("  %d rows of another shape, read by a pattern of their own", len(a.Rows))
				continue
			}
			add("  %d rows with an empty %q cell, read by a pattern of their own", len(a.Rows), t.Columns[a.Missing].Text)
		}
		if t.ContRe != "" {
			add("  wrapped descriptions: %d continuation lines in the samples; lines indented %d–%d under a row continue its description", len(t.Cont), t.ContMin, t.ContMax)
		} else {
			add("  wrapped descriptions: none seen")
		}
		add("  table ends at %s", t.EndWhy)
		for _, i := range t.unread(b.lines[0], b.vt) {
			add("  NOT READ: line %d %q looks like a row but does not fit the row pattern (an empty cell?)", i+1, strings.TrimSpace(b.lines[0][i]))
		}
		if bad, n := t.arithmetic(b.nc); bad > 0 {
			add("  CHECK: on %d of %d rows the line amount is not quantity × price ÷ price basis (a discount or price unit column the draft did not recognise?)", bad, n)
		} else if n > 0 {
			add("  line amounts = quantity × price ÷ price basis on all %d rows", n)
		}
	}
	return r
}

func quoteAll(vs []string) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = fmt.Sprintf("%q", v)
	}
	return out
}
