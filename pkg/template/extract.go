package template

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// AreaFunc returns the text of a cropped region of the document (the
// invoice2data area option). Callers that have the PDF pass one in
// ExtractOptions; without it, area fields search the whole text.
type AreaFunc func(ctx context.Context, a Area) (string, error)

// ExtractOptions tune Extract.
type ExtractOptions struct {
	Area AreaFunc
	// Trace, when set, receives the debug trace (fields, regexes, matches,
	// line blocks). Leave nil in production: tracing allocates per line.
	Trace *Trace
	// Budget bounds the extraction's time (0: DefaultBudget; negative:
	// only ctx and MatchTimeout bound it).
	Budget time.Duration
	// meter is Run's budget, shared with template choice and Order.
	meter *meter
}

// Result is what a template extracted, in invoice2data's shape.
type Result struct {
	Template string
	// Fields is invoice2data's output object: issuer, fields in template
	// order, currency, lines/tables, desc.
	Fields *Object
	// OK is false when required fields are missing (invoice2data then
	// returns nothing for the document).
	OK      bool
	Missing []string
	// Errors lists field-level problems (a number or date that did not
	// parse, a match timeout); the field is left out, as invoice2data does.
	Errors []string
	// Matched reports whether the template's keywords matched the text and
	// no exclude keyword did (filled by Extract for the debug view and by
	// Order for the unknown_format decision).
	Matched   bool
	Excluded  bool
	Keywords  KeywordTrace
	text      string // prepared text the fields were extracted from
	rawValues map[string][]string
	// failed holds the fields whose regex failed (a match timeout): they
	// are errors in the canonical order, never "not found".
	failed map[string]string
	// printedCurrency is a currency field's value (invoice2data's output
	// then overwrites "currency" with options.currency).
	printedCurrency any
	// Usage is the regex work the extraction did (within its budget).
	Usage Usage
}

// Prepare applies the template's text options in invoice2data's order:
// remove_whitespace (runs of spaces), remove_accents, lowercase, replace.
func (t *Template) Prepare(text string) string {
	s, _ := t.prepare(nil, text)
	return s
}

// prepare is Prepare under the budget m; the error is m's stop.
func (t *Template) prepare(m *meter, text string) (string, error) {
	m.at("options.replace")
	return t.Options.replace(m, t.Options.prepareBase(text))
}

// prepareBase applies the flag options (remove_whitespace,
// remove_accents, lowercase); replace comes after them.
func (o *Options) prepareBase(text string) string {
	s := text
	if o.RemoveWhitespace {
		// re.sub(' +', '', s): every run of spaces goes, so every space.
		s = strings.ReplaceAll(s, " ", "")
	}
	if o.RemoveAccents {
		s = removeAccents(s)
	}
	if o.Lowercase {
		s = strings.ToLower(s)
	}
	return s
}

// replace applies options.replace in order; a replacement that fails (a
// match timeout) leaves the text as it was. The error is m's stop.
func (o *Options) replace(m *meter, s string) (string, error) {
	for _, r := range o.Replace {
		out, err := r.Re.sub(m, s, r.With)
		if stop := m.stop(); stop != nil {
			return s, stop
		}
		if err == nil {
			s = out
		}
	}
	return s, nil
}

// baseKey indexes prepareBase's result by the three flags.
func (o *Options) baseKey() int {
	k := 0
	if o.RemoveWhitespace {
		k |= 1
	}
	if o.RemoveAccents {
		k |= 2
	}
	if o.Lowercase {
		k |= 4
	}
	return k
}

// preparer prepares one text for many templates, sharing the work between
// templates whose options prepare alike: most templates have none (the
// text itself), many share a flag combination, and replace lists repeat
// the same substitutions (a family of templates by one author). Every
// substitution is done once per distinct input, every keyword tested once
// per distinct prepared text. Per text the result equals each template's
// own Prepare.
type preparer struct {
	m     *meter // the run's budget (nil: none)
	text  string
	texts []string // the prepared texts met so far, by id
	base  [8]int   // 1 + the id of each flag combination's text; 0: not yet
	subs  map[subKey]int
	finds map[findKey]bool
}

// subKey is one substitution of the text with id in; findKey one keyword
// test.
type subKey struct {
	in        int
	src, with string
}

type findKey struct {
	in  int
	src string
}

// intern returns the id of s: from's id when the substitution that made s
// from it changed nothing (it returns its input; comparing a string with
// itself stops at the pointer), else a new one. Templates whose lists
// differ only by substitutions that did not apply thus reach the same ids.
func (p *preparer) intern(s string, from int) int {
	if from >= 0 && p.texts[from] == s {
		return from
	}
	p.texts = append(p.texts, s)
	return len(p.texts) - 1
}

// prepareBase returns the id of o's text after the flag options.
func (p *preparer) prepareBase(o *Options) int {
	k := o.baseKey()
	if p.base[k] == 0 {
		p.base[k] = 1 + p.intern(o.prepareBase(p.text), -1)
	}
	return p.base[k] - 1
}

// prepare returns the id of o's prepared text. stop, when not nil, is
// asked before each substitution not done yet, with its index and the
// text so far; when it answers true prepare gives up and returns false.
func (p *preparer) prepare(o *Options, stop func(k, id int) bool) (int, bool) {
	id := p.prepareBase(o)
	for k, r := range o.Replace {
		key := subKey{in: id, src: r.Re.Source, with: r.With}
		if out, ok := p.subs[key]; ok {
			id = out
			continue
		}
		if stop != nil && stop(k, id) {
			return id, false
		}
		out, err := r.Re.sub(p.m, p.texts[id], r.With)
		if p.m.stop() != nil {
			return id, false
		}
		if err != nil {
			continue // as Prepare: a failed substitution leaves the text
		}
		if p.subs == nil {
			p.subs = map[subKey]int{}
		}
		next := p.intern(out, id)
		p.subs[key] = next
		id = next
	}
	return id, true
}

// found is Regex.found on the prepared text id (s), remembered per text and
// pattern: templates share keywords (a company name, a VAT number) and
// most share their text. A failed test (a match timeout) is not remembered.
func (p *preparer) found(id int, r *Regex, s string) (bool, error) {
	key := findKey{in: id, src: r.Source}
	if ok, hit := p.finds[key]; hit {
		return ok, nil
	}
	ok, err := r.found(p.m, s)
	if err != nil {
		return false, err
	}
	if p.finds == nil {
		p.finds = map[findKey]bool{}
	}
	p.finds[key] = ok
	return ok, nil
}

// removeAccents is unicodedata.normalize('NFKD', s).encode('ascii',
// 'ignore'): decomposed and stripped to ASCII.
func removeAccents(s string) string {
	d := norm.NFKD.String(s)
	var b strings.Builder
	for _, r := range d {
		if r < 128 {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// KeywordTrace records a keyword check.
type KeywordTrace struct {
	Failed     []string // keywords that did not match
	ExcludeHit string   // first exclude keyword that matched
}

// Matches reports whether every keyword matches the prepared text and no
// exclude keyword does.
func (t *Template) Matches(prepared string) (bool, KeywordTrace) {
	return t.matches(prepared, func(r *Regex, s string) (bool, error) { return r.found(nil, s) })
}

// matches is Matches with the keyword test passed in (Set.Match shares
// results between templates).
func (t *Template) matches(prepared string, found func(*Regex, string) (bool, error)) (bool, KeywordTrace) {
	var kt KeywordTrace
	for _, k := range t.Keywords {
		if ok, err := found(k, prepared); err != nil || !ok {
			kt.Failed = append(kt.Failed, k.Source)
		}
	}
	if len(kt.Failed) > 0 {
		return false, kt
	}
	for _, k := range t.ExcludeKeywords {
		if ok, err := found(k, prepared); err == nil && ok {
			kt.ExcludeHit = k.Source
			return false, kt
		}
	}
	return true, kt
}

// Match returns the first template, highest priority first, whose keywords
// all match text and whose exclude keywords do not (invoice2data's choice).
// The trace lists every template tried. Each template's keywords are tested
// on its own prepared text, as invoice2data does; templates that prepare
// alike share one preparation, and a template whose keywords are all
// proven absent from its prepared text (absence.go) is not prepared.
func (s *Set) Match(text string) (*Template, []TemplateTrace) {
	return s.match(nil, text, true, true)
}

// Choose returns the template Match returns, without the trace: it stops
// testing a template at its first keyword that fails and skips preparing
// one when any keyword is proven absent, so it costs less where no one
// reads the trace.
func (s *Set) Choose(text string) *Template {
	t, _ := s.match(nil, text, false, true)
	return t
}

// match is Match (trace) or Choose under the budget m (nil: none; Run
// reads m's stop); skip false is the plain selection, every template
// visited prepared, which tests compare against.
func (s *Set) match(m *meter, text string, trace, skip bool) (*Template, []TemplateTrace) {
	var tr []TemplateTrace
	p := preparer{m: m, text: text}
	for i, t := range s.templates {
		if t.DocIntake.Embedded == EmbeddedRequire {
			continue // chosen by party id or name only: it has no text to match
		}
		if m.stopped() {
			return nil, tr
		}
		m.named(t.Name)
		m.at("options and keywords")
		var stop func(k, id int) bool
		if skip && i < len(s.plans) && s.plans[i] != nil {
			pl := s.plans[i]
			stop = func(k, id int) bool { return pl.rejects(k, p.texts[id], trace) }
		}
		id, prepared := p.prepare(&t.Options, stop)
		if !trace {
			if prepared && t.chosen(&p, id) {
				return t, nil
			}
			continue
		}
		var ok bool
		var kt KeywordTrace
		if prepared {
			ok, kt = t.matches(p.texts[id], func(r *Regex, s string) (bool, error) { return p.found(id, r, s) })
		} else {
			// Every keyword is proven absent: what matches records then
			// (no exclude keyword is tested).
			for _, k := range t.Keywords {
				kt.Failed = append(kt.Failed, k.Source)
			}
		}
		tr = append(tr, TemplateTrace{Name: t.Name, File: t.File, Priority: t.Priority, Matched: ok, Keywords: kt})
		if ok {
			return t, tr
		}
	}
	return nil, tr
}

// chosen is matches on the prepared text id without the trace: false at
// the first keyword that fails or exclude keyword that matches.
func (t *Template) chosen(p *preparer, id int) bool {
	s := p.texts[id]
	for _, k := range t.Keywords {
		if ok, err := p.found(id, k, s); err != nil || !ok {
			return false
		}
	}
	for _, k := range t.ExcludeKeywords {
		if ok, err := p.found(id, k, s); err == nil && ok {
			return false
		}
	}
	return true
}

// Extract runs the template's fields, lines and tables on text (the PDF's
// layout text, pages joined by form feeds) and returns invoice2data's
// output. It does not require the keywords to match (Result.Matched says
// whether they do); use Set.Match or Order for template choice. The error
// is non-nil only when ctx ends or the budget (ExtractOptions.Budget) runs
// out, a *BudgetError; the result so far comes with it.
func (t *Template) Extract(ctx context.Context, text string, opts *ExtractOptions) (*Result, error) {
	if opts == nil {
		opts = &ExtractOptions{}
	}
	m := opts.meter
	if m == nil {
		m = newMeter(ctx, t.Name, opts.Budget)
	}
	m.named(t.Name)
	res, err := t.extract(ctx, m, text, opts)
	res.Usage = m.usage
	return res, err
}

// extract is Extract under the budget m.
func (t *Template) extract(ctx context.Context, m *meter, text string, opts *ExtractOptions) (*Result, error) {
	tr := opts.Trace
	prepared, _ := t.prepare(m, text)
	res := &Result{Template: t.Name, Fields: NewObject(), text: prepared, rawValues: map[string][]string{}, failed: map[string]string{}}
	m.at("keywords")
	res.Matched, res.Keywords = t.matches(prepared, func(r *Regex, s string) (bool, error) { return r.found(m, s) })
	res.Excluded = res.Keywords.ExcludeHit != ""
	if tr != nil {
		tr.Template = t.Name
		tr.Prepared = prepared
	}
	out := res.Fields
	out.Set("issuer", t.Issuer)
	for _, f := range t.Fields {
		if m.stopped() {
			return res, m.result()
		}
		m.at("field " + f.Name)
		var ft *FieldTrace
		if tr != nil {
			tr.Fields = append(tr.Fields, FieldTrace{Name: f.Name, Parser: string(f.Kind), Type: f.Type, Group: f.Group})
			ft = &tr.Fields[len(tr.Fields)-1]
		}
		content := t.fieldContent(ctx, m, f, prepared, opts.Area, res)
		var v any
		switch f.Kind {
		case ParserStatic:
			v = f.Value
			if s, ok := v.(string); ok && f.Type != "" {
				cv, err := t.coerce(f.Name, s, f.Type, f.Format)
				if err != nil {
					res.Errors = append(res.Errors, err.Error())
				}
				v = cv
			}
		case ParserRegex:
			v = t.regexField(m, f, content, res, ft)
		case ParserLines:
			v = t.linesField(m, f.Name, f.Lines, content, res, tr)
		}
		if ft != nil {
			ft.Value = v
		}
		if truthy(v) {
			out.Set(f.Name, v)
		}
	}
	if c, ok := out.Get("currency"); ok {
		res.printedCurrency = c
	}
	out.Set("currency", t.Options.Currency)
	if t.Lines != nil {
		// The legacy plugin sets "lines" even when no row was found.
		m.at("lines")
		out.Set("lines", t.linesField(m, "lines", t.Lines, prepared, res, tr))
	}
	for i, ts := range t.Tables {
		m.at(fmt.Sprintf("tables[%d]", i))
		t.table(m, i, ts, prepared, res, tr)
	}
	if m.stopped() {
		return res, m.result()
	}
	normalizeUoM(out)
	required := t.RequiredFields
	if required == nil {
		required = []string{"date", "amount", "invoice_number", "issuer"}
	}
	for _, r := range required {
		if !out.Has(r) {
			res.Missing = append(res.Missing, r)
		}
	}
	res.OK = len(res.Missing) == 0
	if res.OK {
		out.Set("desc", "Invoice from "+t.Issuer)
	}
	return res, nil
}

// fieldContent is the text field f reads: its area's, prepared, when it
// has one and the caller can crop (an area that fails is an error on the
// field, which then reads the whole text), else the prepared text.
func (t *Template) fieldContent(ctx context.Context, m *meter, f *Field, prepared string, crop AreaFunc, res *Result) string {
	if f.Area == nil || crop == nil {
		return prepared
	}
	actx, cancel := m.areaContext(ctx)
	area, err := crop(actx, *f.Area)
	cancel()
	if m.stopped() {
		return prepared // the caller stops
	}
	if err != nil {
		res.Errors = append(res.Errors, fmt.Sprintf("field %s: area: %v", f.Name, err))
		return prepared
	}
	content, _ := t.prepare(m, area)
	m.at("field " + f.Name)
	return content
}

// regexField is invoice2data's regex parser: findall over every regex,
// type coercion, then group, or de-duplication with a single value
// unwrapped from its list.
func (t *Template) regexField(m *meter, f *Field, content string, res *Result, ft *FieldTrace) any {
	var found []string
	for _, re := range f.Regexes {
		if ft != nil {
			ft.Regexes = append(ft.Regexes, re.Source)
		}
		ms, err := re.findAll(m, content, -1)
		if m.stop() != nil {
			return nil // Extract returns the stop
		}
		if err != nil {
			// A match timeout is an error on the field, not "no match".
			res.fail(f.Name, err)
			if ft != nil {
				ft.Err = err.Error()
			}
		}
		if re.NumGroups() > 1 {
			if len(ms) > 0 {
				res.Errors = append(res.Errors, fmt.Sprintf("field %s: regex %q has more than one capturing group", f.Name, re.Source))
				if ft != nil {
					ft.Err = "regex has more than one capturing group"
				}
				return nil
			}
			continue
		}
		for _, m := range ms {
			g := 0
			if re.NumGroups() == 1 {
				g = 1
			}
			s, _ := m.group(content, g)
			found = append(found, s)
		}
	}
	for _, rp := range f.Replace {
		for i, s := range found {
			if out, err := rp.Re.sub(m, s, rp.With); err == nil {
				found[i] = out
			}
		}
	}
	if m.stop() != nil {
		return nil
	}
	res.rawValues[f.Name] = found
	if ft != nil {
		ft.Matches = found
	}
	vals := make([]any, len(found))
	for i, s := range found {
		vals[i] = s
		if f.Type != "" {
			v, err := t.coerce(f.Name, s, f.Type, f.Format)
			if err != nil {
				res.Errors = append(res.Errors, err.Error())
				if ft != nil {
					ft.Err = err.Error()
				}
			}
			vals[i] = v
		}
	}
	return finish(f.Name, f.Group, vals, res)
}

// finish applies a group, or removes duplicates (keeping order) when there is
// none, and unwraps single values.
func finish(name, group string, vals []any, res *Result) any {
	if group != "" {
		kept := vals[:0:0]
		for _, v := range vals {
			if truthy(v) {
				kept = append(kept, v)
			}
		}
		if len(kept) == 0 {
			return kept
		}
		v, err := applyGroup(group, kept)
		if err != nil {
			res.Errors = append(res.Errors, fmt.Sprintf("field %s: %v", name, err))
			return nil
		}
		return v
	}
	var out []any
	for _, v := range vals {
		dup := false
		for _, o := range out {
			if c, ok := compareValues(o, v); ok && c == 0 && sameKind(o, v) {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, v)
		}
	}
	if len(out) == 1 {
		return out[0]
	}
	return out
}

func sameKind(a, b any) bool { return fmt.Sprintf("%T", a) == fmt.Sprintf("%T", b) }

func applyGroup(group string, vals []any) (any, error) {
	switch group {
	case "sum":
		return sumValues(vals)
	case "min", "max":
		best := vals[0]
		for _, v := range vals[1:] {
			c, ok := compareValues(v, best)
			if !ok {
				return nil, fmt.Errorf("cannot compare %T and %T", v, best)
			}
			if (group == "min" && c < 0) || (group == "max" && c > 0) {
				best = v
			}
		}
		return best, nil
	case "first":
		return vals[0], nil
	case "last":
		return vals[len(vals)-1], nil
	case "join":
		parts := make([]string, len(vals))
		for i, v := range vals {
			parts[i] = pyStr(v)
		}
		return strings.Join(parts, " "), nil
	}
	return nil, fmt.Errorf("unsupported grouping method %q", group)
}

// pyStr is Python's str() for extracted values.
func pyStr(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case Float:
		return pyRepr(x.F)
	case nil:
		return "None"
	}
	return fmt.Sprint(v)
}

// linesField runs a lines parser: every rule's blocks in order, rows
// appended. A row still open at the end of a block (its first line at the
// bottom of a page, the rest on the next) is continued by the next block's
// lines that come before any first_line, so it stays one row.
func (t *Template) linesField(m *meter, name string, spec *LinesSpec, content string, res *Result, tr *Trace) any {
	var rows []any
	for ri, r := range spec.Rules {
		var open *Object
		var ruleRows []any
		rest := content
		for blocks := 0; ; blocks++ {
			sm, err := r.Start.search(m, rest)
			if m.stop() != nil {
				return rows // Extract returns the stop
			}
			if err != nil {
				res.fail(name, err)
			}
			if err == nil && sm == nil && blocks == 0 {
				// The commonest authoring failure: say which block's start
				// never matched, not just that no rows came out.
				tr.missingBlock(name, ri, r, "start")
			}
			if err != nil || sm == nil {
				break
			}
			rest = rest[sm[1]:]
			em, err := r.End.search(m, rest)
			if m.stop() != nil {
				return rows
			}
			if err != nil {
				res.fail(name, err)
			}
			if err != nil || em == nil {
				res.Errors = append(res.Errors, fmt.Sprintf("field %s: lines block end %q not found", name, r.End.Source))
				if err == nil {
					tr.missingBlock(name, ri, r, "end")
				}
				break
			}
			blockEnd := em[0]
			if r.EndMatch {
				blockEnd = em[1]
			}
			var bt *BlockTrace
			if tr != nil {
				tr.Blocks = append(tr.Blocks, BlockTrace{Field: name, Rule: ri, Start: r.Start.Source, End: r.End.Source})
				bt = &tr.Blocks[len(tr.Blocks)-1]
			}
			var done []any
			done, open = t.parseBlock(m, r, rest[:blockEnd], bt, open, func(err error) { res.fail(name, err) })
			if m.stop() != nil {
				return rows
			}
			ruleRows = append(ruleRows, done...)
			rest = rest[em[1]:]
			if em[1] == 0 && sm[1] == sm[0] {
				break // empty start and end matches would loop forever
			}
		}
		if open != nil && open.Len() > 0 {
			ruleRows = append(ruleRows, open)
		}
		t.coerceRows(name, r, ruleRows, res)
		rows = append(rows, ruleRows...)
	}
	return rows
}

// firstMatch returns the first of res that matches line. A regex that
// fails (a match timeout) is reported to fail and counts as no match here;
// once the budget m is spent nothing matches (parseBlock then stops).
func firstMatch(m *meter, res []*Regex, line string, fail func(error)) (match, *Regex) {
	for _, re := range res {
		mm, err := re.search(m, line)
		if m.stop() != nil {
			return nil, nil
		}
		if err != nil && fail != nil {
			fail(err)
		}
		if err == nil && mm != nil {
			return mm, re
		}
	}
	return nil, nil
}

// fail records that a regex of field name failed (a match timeout): an
// error on that field, never "no match".
func (r *Result) fail(name string, err error) {
	if r.failed == nil {
		r.failed = map[string]string{}
	}
	if _, ok := r.failed[name]; !ok {
		r.failed[name] = err.Error()
		r.Errors = append(r.Errors, fmt.Sprintf("field %s: %v", name, err))
	}
}

// parseBlock reads one block's rows. open is a row left open by the
// previous block of the same rule; the row still open at the end of this
// block is returned separately so that the next block can continue it.
func (t *Template) parseBlock(m *meter, r *LinesRule, block string, bt *BlockTrace, open *Object, fail func(error)) (rows []any, _ *Object) {
	cur := open
	firstFound := open != nil
	trace := func(line, kind string, re *Regex) {
		if bt != nil {
			lt := LineTrace{Text: line, Kind: kind}
			if re != nil {
				lt.Pattern = re.Source
			}
			bt.Lines = append(bt.Lines, lt)
		}
	}
	parts := []string{block}
	if r.LineSeparator != nil {
		parts = splitRegex(m, r.LineSeparator, block)
	}
	for _, line := range parts {
		if m.stopped() {
			return rows, cur
		}
		if strings.Trim(line, "\r\n") == "" {
			continue
		}
		if r.FirstLine != nil {
			if mm, re := firstMatch(m, r.FirstLine, line, fail); mm != nil {
				if cur != nil && cur.Len() > 0 {
					rows = append(rows, cur)
				}
				cur = NewObject()
				for i, gn := range re.GroupNames() {
					if gn == "" {
						continue
					}
					v, _ := mm.group(line, i+1)
					cur.Set(gn, strings.TrimSpace(v))
				}
				firstFound = true
				trace(line, "first_line", re)
				continue
			}
		}
		if !firstFound {
			trace(line, "ignored (before first_line)", nil)
			continue
		}
		if r.LastLine != nil {
			if mm, re := firstMatch(m, r.LastLine, line, fail); mm != nil {
				cur = appendGroups(cur, re, mm, line, r.JoinWith)
				if cur.Len() > 0 {
					rows = append(rows, cur)
				}
				cur = nil
				firstFound = false
				trace(line, "last_line", re)
				continue
			}
		}
		if mm, re := firstMatch(m, r.SkipLine, line, fail); mm != nil {
			trace(line, "skip_line", re)
			continue
		}
		if mm, re := firstMatch(m, r.Line, line, fail); mm != nil {
			cur = appendGroups(cur, re, mm, line, r.JoinWith)
			trace(line, "line", re)
			continue
		}
		trace(line, "no match", nil)
	}
	return rows, cur
}

// coerceRows applies a rule's types to its rows, keeping each typed value's
// source text in the row for the canonical order (which reads numbers
// strictly and treats blanks as missing).
func (t *Template) coerceRows(name string, r *LinesRule, rows []any, res *Result) {
	for _, row := range rows {
		o := row.(*Object)
		o.format = r.Format
		for _, k := range o.Keys() {
			typ, ok := r.Types[k]
			if !ok {
				continue
			}
			v, _ := o.Get(k)
			s, _ := v.(string)
			if o.raw == nil {
				o.raw = map[string]string{}
			}
			o.raw[k] = s
			cv, err := t.coerce(name+"."+k, s, typ, r.Format)
			if err != nil {
				res.Errors = append(res.Errors, err.Error())
			}
			o.Set(k, cv)
		}
	}
}

// appendGroups adds a line's named groups to the current row, joining with
// sep (a newline unless the block says join: space) onto values already
// there (parse_current_row).
func appendGroups(cur *Object, re *Regex, m match, line, sep string) *Object {
	if cur == nil {
		cur = NewObject()
	}
	for i, gn := range re.GroupNames() {
		if gn == "" {
			continue
		}
		v, _ := m.group(line, i+1)
		v = strings.TrimSpace(v)
		prev, _ := cur.Get(gn)
		ps, _ := prev.(string)
		if ps != "" {
			if v != "" {
				if cur.joined == nil {
					cur.joined = map[string]bool{}
				}
				cur.joined[gn] = true
			}
			v = ps + sep + v
		}
		cur.Set(gn, v)
	}
	return cur
}

func splitRegex(m *meter, re *Regex, s string) []string {
	ms, err := re.findAll(m, s, -1)
	if err != nil || len(ms) == 0 {
		return []string{s}
	}
	var out []string
	last := 0
	for _, m := range ms {
		if m[1] == m[0] && (m[0] == 0 || m[0] == len(s)) {
			continue
		}
		out = append(out, s[last:m[0]])
		last = m[1]
	}
	return append(out, s[last:])
}

// table is the tables plugin: the body regex on every line between start
// and end; each named group collects values; types by the table's types or
// by name prefix (date…, …date, amount…); a group reduces, otherwise one
// value stays a scalar and several a list. Fields already in the output are
// not overwritten.
func (t *Template) table(m *meter, idx int, ts *TableSpec, content string, res *Result, tr *Trace) {
	name := fmt.Sprintf("tables[%d]", idx)
	body, ok := tableBody(m, name, ts, content, res, tr)
	if !ok {
		return
	}
	var bt *BlockTrace
	if tr != nil {
		tr.Blocks = append(tr.Blocks, BlockTrace{Field: fmt.Sprintf("tables[%d]", idx), Start: ts.Start.Source, End: ts.End.Source})
		bt = &tr.Blocks[len(tr.Blocks)-1]
	}
	collected, ok := tableRows(m, name, ts, body, res, bt)
	if !ok {
		return // Extract returns the stop
	}
	out := res.Fields
	for _, k := range collected.Keys() {
		if out.Has(k) {
			continue
		}
		raw, _ := collected.Get(k)
		if v := t.tableValue(k, raw.([]string), ts, res); truthy(v) {
			out.Set(k, v)
		}
	}
}

// tableBody returns the text between the table's start and end; ok is
// false when either is not found (traced as such), fails (recorded in res)
// or the budget stops the search.
func tableBody(m *meter, name string, ts *TableSpec, content string, res *Result, tr *Trace) (body string, ok bool) {
	sm, err := ts.Start.search(m, content)
	if m.stop() != nil {
		return "", false // Extract returns the stop
	}
	if err != nil {
		res.fail(name, err)
	}
	if err != nil || sm == nil {
		if err == nil && tr != nil {
			tr.Blocks = append(tr.Blocks, BlockTrace{Field: name, Start: ts.Start.Source, End: ts.End.Source, NotFound: "start"})
		}
		return "", false
	}
	rest := content[sm[1]:]
	em, err := ts.End.search(m, rest)
	if m.stop() != nil {
		return "", false
	}
	if err != nil {
		res.fail(name, err)
	}
	if err != nil || em == nil {
		if err == nil && tr != nil {
			tr.Blocks = append(tr.Blocks, BlockTrace{Field: name, Start: ts.Start.Source, End: ts.End.Source, NotFound: "end"})
		}
		return "", false
	}
	return rest[:em[0]], true
}

// tableRows runs the body regex on every line of body and collects the
// texts of each named group, in line order; ok is false when the budget
// stops it.
func tableRows(m *meter, name string, ts *TableSpec, body string, res *Result, bt *BlockTrace) (collected *Object, ok bool) {
	collected = NewObject()
	for _, line := range splitRegex(m, ts.LineSeparator, body) {
		if strings.Trim(line, "\r\n") == "" {
			continue
		}
		mm, err := ts.Body.search(m, line)
		if m.stop() != nil {
			return nil, false
		}
		if err != nil {
			res.fail(name, err)
		}
		if err != nil || mm == nil {
			if bt != nil {
				bt.Lines = append(bt.Lines, LineTrace{Text: line, Kind: "no match"})
			}
			continue
		}
		if bt != nil {
			bt.Lines = append(bt.Lines, LineTrace{Text: line, Kind: "body", Pattern: ts.Body.Source})
		}
		for i, gn := range ts.Body.GroupNames() {
			if gn == "" {
				continue
			}
			v, _ := mm.group(line, i+1)
			prev, _ := collected.Get(gn)
			list, _ := prev.([]string)
			collected.Set(gn, append(list, v))
		}
	}
	return collected, true
}

// tableValue types the texts a table collected for field k (by the
// table's types, the field's type or the name's prefix: date…, …date,
// amount…) and reduces them by the field's group; without one, one value
// stays a scalar and several a list. Values that do not convert are
// recorded in res.Errors.
func (t *Template) tableValue(k string, strs []string, ts *TableSpec, res *Result) any {
	tf := ts.Fields[k]
	typ := ts.Types[k]
	if typ == "" {
		typ = tf.Type
	}
	if typ == "" {
		switch {
		case strings.HasPrefix(k, "date") || strings.HasSuffix(k, "date"):
			typ = "date"
		case strings.HasPrefix(k, "amount"):
			typ = "float"
		}
	}
	vals := make([]any, len(strs))
	for i, s := range strs {
		vals[i] = s
		if typ != "" {
			v, err := t.coerce(k, s, typ, ValueFormat{})
			if err != nil {
				res.Errors = append(res.Errors, err.Error())
			}
			vals[i] = v
		}
	}
	switch {
	case tf.Group != "":
		return finish(k, tf.Group, vals, res)
	case len(vals) == 1:
		return vals[0]
	default:
		return vals
	}
}

// unece maps printed units to UN/ECE Rec 20 codes, filled into lines rows
// that have a uom but no unece_code (invoice2data's normalize_lines_uom).
var unece = map[string]string{
	"l": "LTR", "ltr": "LTR", "lt": "LTR", "ℓ": "LTR", "liter": "LTR", "litre": "LTR", "liters": "LTR", "litres": "LTR",
	"ml": "MLT", "millilitre": "MLT", "milliliter": "MLT",
	"kg": "KGM", "kgm": "KGM", "kgs": "KGM", "kilogram": "KGM", "kilograms": "KGM",
	"g": "GRM", "gr": "GRM", "grm": "GRM", "gram": "GRM", "grams": "GRM",
	"m": "MTR", "mtr": "MTR", "meter": "MTR", "metre": "MTR", "meters": "MTR", "metres": "MTR",
	"cm": "CMT", "mm": "MMT", "km": "KMT",
	"pcs": "H87", "pc": "H87", "piece": "H87", "pieces": "H87", "ea": "H87", "each": "H87", "ps": "H87", "st": "H87",
	"stk": "H87", "stuk": "H87", "stuks": "H87", "stück": "H87", "stueck": "H87", "stueckliste": "H87", "unit": "H87",
	"units": "H87", "stk.": "H87", "x": "H87",
	"set": "SET", "sets": "SET",
	"h": "HUR", "hr": "HUR", "hrs": "HUR", "hour": "HUR", "hours": "HUR", "uur": "HUR", "uren": "HUR",
	"min": "MIN", "minute": "MIN", "minutes": "MIN",
	"d": "DAY", "day": "DAY", "days": "DAY", "dag": "DAY", "dagen": "DAY",
	"month": "MON", "months": "MON", "maand": "MON", "maanden": "MON", "mnd": "MON",
	"year": "ANN", "years": "ANN", "jaar": "ANN",
}

func normalizeUoM(out *Object) {
	for _, key := range []string{"lines", "tax_lines"} {
		v, _ := out.Get(key)
		rows, _ := v.([]any)
		for _, r := range rows {
			row, ok := r.(*Object)
			if !ok {
				continue
			}
			if c, _ := row.Get("unece_code"); truthy(c) {
				continue
			}
			u, _ := row.Get("uom")
			us, _ := u.(string)
			if code, ok := unece[strings.ToLower(strings.TrimFunc(us, unicode.IsSpace))]; ok {
				row.Set("unece_code", code)
			}
		}
	}
}
