package template

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/opentrans"
	"github.com/docintake/docintake/pkg/order"
)

// DefaultPriority is invoice2data's priority for templates that set none.
const DefaultPriority = 5

// Template is one loaded template: the invoice2data part (issuer, keywords,
// fields, lines, tables, options, priority, required_fields) and the
// docintake block. A Template is immutable after loading and safe for
// concurrent use.
type Template struct {
	Name            string // docintake.name, default: file name without extension
	File            string
	Issuer          string
	Keywords        []*Regex
	ExcludeKeywords []*Regex
	Priority        int
	Fields          []*Field
	Lines           *LinesSpec   // top-level lines plugin (output key "lines")
	Tables          []*TableSpec // tables plugin
	Options         Options
	// RequiredFields are invoice2data's required_fields; nil means the
	// default (date, amount, invoice_number, issuer) for plain invoice2data
	// templates and none for templates with a docintake block.
	RequiredFields []string
	DocIntake      DocIntake
	// Problems lists what did not compile or was not understood. Load fails
	// on any problem; LoadWith(Lenient) keeps the template and disables the
	// broken parts.
	Problems []*LoadError
	// Warnings are YAML pitfalls that load but probably do not mean what
	// the author wrote: an unquoted regex cut short by " #" (the rest
	// became a comment).
	Warnings []*LoadError
	// nameLine and partyLine locate docintake.name and docintake.party_ids
	// for duplicate errors (0: the name is the file name).
	nameLine, partyLine int
}

// where locates a template's name or party ids: "file:line: key" or the
// file alone when the key is not written.
func (t *Template) where(line int, key string) string {
	if line == 0 {
		return t.File + " (name from the file name)"
	}
	return fmt.Sprintf("%s:%d: %s", t.File, line, key)
}

// Options are invoice2data's template options.
type Options struct {
	RemoveWhitespace bool
	RemoveAccents    bool
	Lowercase        bool
	Currency         string // default EUR
	// CurrencySet is true when the template states options.currency; only
	// then does the canonical order carry it when no currency is printed.
	CurrencySet      bool
	DateFormats      []string
	Languages        []string
	DecimalSeparator string // default "."
	Replace          []Replacement
}

// Replacement is one options.replace (or field replace) entry: a Python
// regex and its replacement (\1, \g<name> allowed).
type Replacement struct {
	Re   *Regex
	With string
}

// FieldKind is a field's parser.
type FieldKind string

// Field parsers.
const (
	ParserRegex  FieldKind = "regex"
	ParserStatic FieldKind = "static"
	ParserLines  FieldKind = "lines"
)

// Field is one entry of fields.
type Field struct {
	Name    string // output key (static_ prefix and sum_ prefix removed)
	Kind    FieldKind
	Regexes []*Regex
	Type    string // int, float, date or ""
	Group   string // sum, min, max, first, last, join or ""
	Legacy  bool   // string/list form: typed by name prefix
	Value   any    // static value
	Lines   *LinesSpec
	Area    *Area
	Replace []Replacement
	Line    int
	// Format overrides the template's date_formats and decimal_separator
	// for this field.
	Format ValueFormat
}

// ValueFormat is how dates and numbers are written: a field's or a lines
// block's own date_formats and decimal_separator, falling back to the
// template options where unset.
type ValueFormat struct {
	DateFormats      []string
	DecimalSeparator string
}

// Area is a pdftotext crop (invoice2data's area option): page range and a
// rectangle at a resolution.
type Area struct {
	FirstPage, LastPage int
	X, Y, W, H          int
	Resolution          int
}

// LinesSpec is a lines parser: one or more rules, each a block definition.
type LinesSpec struct {
	Rules []*LinesRule
}

// LinesRule is one block definition of the lines parser.
type LinesRule struct {
	Start, End    *Regex
	Line          []*Regex
	FirstLine     []*Regex
	LastLine      []*Regex
	SkipLine      []*Regex
	Types         map[string]string
	LineSeparator *Regex
	// EndMatch includes the text matched by end in the block (so the last
	// line can be the end marker itself).
	EndMatch bool
	// Format overrides the template's date_formats and decimal_separator
	// for this block's types.
	Format ValueFormat
	// JoinWith joins a value continued on several lines (a wrapped
	// description): "\n" by default as invoice2data does, " " with
	// join: space.
	JoinWith string
}

// TableSpec is one entry of tables.
type TableSpec struct {
	Start, End, Body *Regex
	LineSeparator    *Regex
	Types            map[string]string
	Fields           map[string]TableField
}

// TableField is a tables[].fields entry.
type TableField struct{ Group, Type string }

// DocIntake is the docintake block.
type DocIntake struct {
	PartyIDs        []string
	DocumentType    order.DocumentType // default order
	Required        []string           // canonical requirements: vat_id, buyer_vat_id, supplier_vat_id, delivery_address, order_id, date, items
	Rules           []*Rule
	Mappings        []Mapping
	IgnoredFeedback bool
	Present         bool // the template has a docintake block
	// Checks are the arithmetic checks (checks:), all on by default.
	Checks Checks
	// DateFallback "receipt" dates an order without a printed date by the
	// day it was received (with a remark); "" rejects it.
	DateFallback string
	// AllowNonPositiveQuantity accepts quantities of 0 or below (returns,
	// cancellations); by default such a line is rejected.
	AllowNonPositiveQuantity bool
	// DefaultUnit is the unit of lines that print none (default_unit, a
	// unit opentrans.UnitCode knows); "" writes such lines in pieces with
	// a remark on the order saying the unit was not printed.
	DefaultUnit string
	// Embedded is docintake.embedded: what a structured attachment
	// (Order-X, UBL, Factur-X, …) does for this template; see structured.go.
	Embedded EmbeddedMode
	// Fallback is docintake.fallback: FallbackGeneric asks the processor to
	// try the generic reader (pkg/generic) when this template finds
	// nothing (FallsBack); "" never falls back. The engine itself does not
	// run the reader: pkg/generic imports this package.
	Fallback string
}

// FallbackGeneric is the docintake.fallback value naming the built-in
// generic reader (generic.Name).
const FallbackGeneric = "generic"

// FallsBack reports whether out, this template's outcome, should be retried
// with the template's docintake.fallback: the template found nothing of
// the order (rejected unknown_format, document_id_missing or
// cannot_parse_items). Other rejections (a rule fired, a VAT id or address
// missing, not an order) are the template's verdict and stand.
func (t *Template) FallsBack(out *Outcome) bool {
	if t == nil || t.DocIntake.Fallback == "" || out == nil || out.Status != OutcomeRejected {
		return false
	}
	switch out.Reason {
	case document.ReasonUnknownFormat, document.ReasonDocumentIDMissing, document.ReasonCannotParseItems:
		return true
	}
	return false
}

// RuleAction is what a rule does when it fires.
type RuleAction string

// Rule actions.
const (
	ActionIgnore RuleAction = "ignore"
	ActionReject RuleAction = "reject"
)

// Rule is one docintake.rules entry: when Match (a regex) is found in the
// text, or in the field Field when set, the document is ignored or rejected.
type Rule struct {
	Match  *Regex
	Field  string
	Action RuleAction
	Reason document.Reason // reject: default derived from document_type
}

// Mapping declares that a canonical field is looked up in a mapping table:
// the value of From (e.g. buyer_article_id, delivery_address) is the key in
// table Kind, and the result is written to To (e.g. supplier_article_id,
// delivery_id). Item fields are looked up per item.
type Mapping struct {
	From, Kind, To string
	Optional       bool // a miss leaves To unchanged instead of MAPPING_NOT_RESOLVED
}

// LoadError locates a template problem: file, line and key path.
type LoadError struct {
	File string
	Line int
	Path string
	Err  error
	// Ignorable marks a problem invoice2data runs past: a key it does not
	// know (it ignores the key) or a field regex with several groups (it
	// fails only on a document where the regex matches). LoadOptions
	// SkipBroken loads a template with such problems; any other problem
	// keeps the file out.
	Ignorable bool
}

func (e *LoadError) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc += ":" + strconv.Itoa(e.Line)
	}
	if e.Path != "" {
		loc += ": " + e.Path
	}
	return loc + ": " + e.Err.Error()
}

func (e *LoadError) Unwrap() error { return e.Err }

// LoadOptions tune LoadWith.
type LoadOptions struct {
	// Lenient keeps templates with problems (uncompilable regexes, unknown
	// keys, bad values) and disables the broken parts, as invoice2data would
	// keep running; duplicate names are allowed (ByName returns the first).
	// YAML syntax errors and templates without keywords still fail.
	Lenient bool
	// SkipBroken loads a collection as invoice2data's loader does: a file
	// that does not load (YAML syntax, no keywords, a regex that does not
	// compile, a value that is not understood) is left out with a warning
	// naming the file and why, and the others load. Problems invoice2data
	// runs past (LoadError.Ignorable) load with a warning; a duplicate name
	// is a warning (ByName returns the first), a party id claimed twice
	// leaves the later file out. LoadWith then fails only when a directory
	// cannot be listed.
	SkipBroken bool
}

// Set is a loaded templates directory. It is immutable and safe for
// concurrent use.
type Set struct {
	templates []*Template // priority order (highest first), then load order
	byName    map[string]*Template
	byParty   map[string]*Template
	warnings  []string
	// plans holds each template's keyword absence proofs (absence.go), by
	// index in templates.
	plans []*absencePlan
}

// Warnings lists what a lenient load let pass (each template problem, a
// duplicate name or party id with both files) and the YAML pitfalls of
// every template (see Template.Warnings).
func (s *Set) Warnings() []string { return append([]string(nil), s.warnings...) }

// Load reads every *.yml, *.yaml and *.json file under dir (recursively,
// skipping NAME.samples folders) and validates it strictly. Errors name the file, line and key path; duplicate
// names or party_ids across files are errors naming both files.
func Load(dir string) (*Set, error) { return LoadWith(LoadOptions{}, dir) }

// LoadWith loads templates from several directories with options.
func LoadWith(opts LoadOptions, dirs ...string) (*Set, error) {
	var files []string
	for _, dir := range dirs {
		fs, err := Files(dir)
		if err != nil {
			return nil, err
		}
		files = append(files, fs...)
	}
	s := &Set{byName: map[string]*Template{}, byParty: map[string]*Template{}}
	var errs []error
	for _, f := range files {
		err := s.load(f, opts)
		switch {
		case err == nil:
		case opts.SkipBroken:
			// One line per file, so that a reader of stderr sees which
			// file is missing from the set and why.
			s.warnings = append(s.warnings, fmt.Sprintf("%s: skipped, it does not load: %s", f, strings.ReplaceAll(err.Error(), "\n", "; ")))
		default:
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	s.sort()
	return s, nil
}

// load reads, parses and adds one file. Its error is what keeps the file
// out of the set under opts.
func (s *Set) load(f string, opts LoadOptions) error {
	data, err := os.ReadFile(f)
	if err != nil {
		return fmt.Errorf("template: %w", err)
	}
	t, err := Parse(f, data)
	if err != nil {
		return err
	}
	for _, w := range t.Warnings {
		s.warnings = append(s.warnings, w.Error())
	}
	var blocking []error
	var passed []string
	for _, p := range t.Problems {
		switch {
		case opts.Lenient:
			passed = append(passed, p.Error())
		case opts.SkipBroken && p.Ignorable:
			passed = append(passed, p.Error()+" (loaded anyway, as invoice2data does)")
		default:
			blocking = append(blocking, p)
		}
	}
	if len(blocking) > 0 {
		return errors.Join(blocking...)
	}
	if opts.SkipBroken {
		for _, id := range t.DocIntake.PartyIDs {
			if prev, ok := s.byParty[id]; ok {
				return fmt.Errorf("template: party_id %q is also claimed by %s", id, prev.where(prev.partyLine, "docintake.party_ids"))
			}
		}
	}
	s.warnings = append(s.warnings, passed...)
	return errors.Join(s.add(t, opts.Lenient || opts.SkipBroken)...)
}

// add indexes t by name and party ids. A duplicate name or party id is an
// error naming both places; lenient makes a duplicate name a warning (the
// first template keeps the name), as invoice2data loads its collection.
func (s *Set) add(t *Template, lenient bool) []error {
	var errs []error
	s.templates = append(s.templates, t)
	if prev, ok := s.byName[t.Name]; ok {
		dup := fmt.Errorf("template: duplicate name %q in %s and %s", t.Name, prev.where(prev.nameLine, "docintake.name"), t.where(t.nameLine, "docintake.name"))
		if !lenient {
			return append(errs, dup)
		}
		s.warnings = append(s.warnings, dup.Error()+" (the first is chosen by name)")
		return nil
	}
	s.byName[t.Name] = t
	for _, id := range t.DocIntake.PartyIDs {
		if prev, ok := s.byParty[id]; ok {
			errs = append(errs, fmt.Errorf("template: duplicate party_id %q in %s and %s", id, prev.where(prev.partyLine, "docintake.party_ids"), t.where(t.partyLine, "docintake.party_ids")))
			continue
		}
		s.byParty[id] = t
	}
	return errs
}

// sort puts the templates in matching order (highest priority first, then
// load order) and states each one's keyword absence proofs.
func (s *Set) sort() {
	sort.SliceStable(s.templates, func(i, j int) bool { return s.templates[i].Priority > s.templates[j].Priority })
	s.plans = make([]*absencePlan, len(s.templates))
	for i, t := range s.templates {
		s.plans[i] = planFor(t)
	}
}

// Templates returns the templates in matching order (highest priority first).
func (s *Set) Templates() []*Template { return append([]*Template(nil), s.templates...) }

// ByName returns the template named name.
func (s *Set) ByName(name string) (*Template, bool) { t, ok := s.byName[name]; return t, ok }

// ByPartyID returns the template that lists id in docintake.party_ids.
func (s *Set) ByPartyID(id string) (*Template, bool) { t, ok := s.byParty[id]; return t, ok }

// Parse parses one template file (YAML or JSON; JSON is read as YAML, which
// accepts it). Fatal problems (syntax, no keywords) are returned as error;
// the rest are collected in Template.Problems.
func Parse(file string, data []byte) (*Template, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		if line, path, hint, ok := locateFlowError(data); ok {
			return nil, &LoadError{File: file, Line: line, Path: path, Err: fmt.Errorf("%s (%w)", hint, err)}
		}
		return nil, &LoadError{File: file, Err: err}
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, &LoadError{File: file, Line: 1, Err: errors.New("template must be a mapping")}
	}
	p := &parser{file: file, json: strings.EqualFold(filepath.Ext(file), ".json"), source: strings.Split(string(data), "\n")}
	t := p.template(doc.Content[0])
	if len(t.Keywords) == 0 && len(p.fatal) == 0 {
		p.fatal = append(p.fatal, &LoadError{File: file, Line: doc.Content[0].Line, Path: "keywords", Err: errors.New("at least one keyword is required")})
	}
	if len(p.fatal) > 0 {
		return nil, errors.Join(p.fatal...)
	}
	t.Problems, t.Warnings = p.problems, p.warnings
	return t, nil
}

type parser struct {
	file     string
	json     bool     // a .json template: scalars as json.load reads them
	source   []string // the file's lines, for pitfalls yaml.v3 does not keep
	problems []*LoadError
	warnings []*LoadError
	fatal    []error
}

func (p *parser) problem(n *yaml.Node, path, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	p.problems = append(p.problems, &LoadError{File: p.file, Line: line, Path: path, Err: fmt.Errorf(format, args...)})
}

// ignorable records a problem invoice2data runs past (LoadError.Ignorable).
func (p *parser) ignorable(n *yaml.Node, path, format string, args ...any) {
	p.problem(n, path, format, args...)
	p.problems[len(p.problems)-1].Ignorable = true
}

// pairs iterates a mapping node's key/value pairs.
func pairs(n *yaml.Node) [][2]*yaml.Node {
	var out [][2]*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		out = append(out, [2]*yaml.Node{n.Content[i], n.Content[i+1]})
	}
	return out
}

func resolve(n *yaml.Node) *yaml.Node {
	if n != nil && n.Kind == yaml.AliasNode {
		return n.Alias
	}
	return n
}

func (p *parser) str(n *yaml.Node, path string) (string, bool) {
	n = resolve(n)
	if n.Kind != yaml.ScalarNode {
		p.problem(n, path, "must be a string")
		return "", false
	}
	return n.Value, true
}

// strList accepts a string or a list of strings.
func (p *parser) strList(n *yaml.Node, path string) []string {
	n = resolve(n)
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return nil
		}
		return []string{n.Value}
	case yaml.SequenceNode:
		var out []string
		for i, c := range n.Content {
			if s, ok := p.str(c, fmt.Sprintf("%s[%d]", path, i)); ok {
				out = append(out, s)
			}
		}
		return out
	}
	p.problem(n, path, "must be a string or a list of strings")
	return nil
}

func (p *parser) regex(n *yaml.Node, path, src string) *Regex {
	re, err := CompileRegex(src)
	if err != nil {
		p.problem(n, path, "%v", err)
		return nil
	}
	if n != nil && n.Style == 0 && n.Kind == yaml.ScalarNode && strings.HasPrefix(n.LineComment, "#") && p.oneSpaceComment(n) {
		// "regex: PO # (\d+)" is the regex "PO" and a comment.
		p.warnings = append(p.warnings, &LoadError{File: p.file, Line: n.Line, Path: path, Err: fmt.Errorf(
			"unquoted value %q is followed by %q on the same line: YAML reads \" #\" as the start of a comment; quote the value if the rest belongs to it",
			src, n.LineComment)})
	}
	return re
}

// oneSpaceComment reports whether a plain scalar is followed by exactly one
// space and "#" on its line: "PO # (\d+)" reads like a value, while a
// comment set apart by two or more spaces is one by intent.
func (p *parser) oneSpaceComment(n *yaml.Node) bool {
	if n.Line < 1 || n.Line > len(p.source) || strings.Contains(n.Value, "\n") {
		return false
	}
	line := []rune(p.source[n.Line-1])
	end := n.Column - 1 + len([]rune(n.Value))
	return end >= 0 && end+2 <= len(line) && line[end] == ' ' && line[end+1] == '#'
}

// oneValueRegexes reports a field regex with more than one capturing group
// where one value is expected (invoice2data fails on it at run time).
func (p *parser) oneValueRegexes(n *yaml.Node, path, field string, res []*Regex) {
	for _, re := range res {
		if re.NumGroups() > 1 {
			p.ignorable(n, path, "field %s: regex %q has %d capturing groups, but a field takes one value; make the others non-capturing with (?:…)",
				field, re.Source, re.NumGroups())
		}
	}
}

func (p *parser) regexList(n *yaml.Node, path string) []*Regex {
	var out []*Regex
	n = resolve(n)
	for i, s := range p.strList(n, path) {
		pp, nn := path, n
		if n.Kind == yaml.SequenceNode {
			pp, nn = fmt.Sprintf("%s[%d]", path, i), n.Content[i]
		}
		if re := p.regex(nn, pp, s); re != nil {
			out = append(out, re)
		}
	}
	return out
}

func (p *parser) boolean(n *yaml.Node, path string) bool {
	n = resolve(n)
	if n.Kind == yaml.SequenceNode {
		// invoice2data tests options for truth, so [True] means true.
		return len(n.Content) > 0
	}
	if n.Kind == yaml.ScalarNode {
		switch typ, v := yamlScalar(n, p.json); typ {
		case "bool":
			return v.(bool)
		case "null":
			// invoice2data tests options for truth: None is false.
			return false
		}
	}
	p.problem(n, path, "must be true or false")
	return false
}

// ignoredKeys are invoice2data keys that select its PDF reader or name the
// template; docintake chooses the reader itself.
var ignoredKeys = map[string]bool{"input_module": true, "template_name": true}

func (p *parser) template(root *yaml.Node) *Template {
	t := &Template{File: p.file, Priority: DefaultPriority, Options: Options{Currency: "EUR", DecimalSeparator: "."}}
	t.Name = strings.TrimSuffix(filepath.Base(p.file), filepath.Ext(p.file))
	t.DocIntake.DocumentType = order.TypeOrder
	t.DocIntake.Checks = defaultChecks
	var fieldsNode, optionsNode *yaml.Node
	var rawKeywords []string
	issuerSet := false
	for _, kv := range pairs(root) {
		k, v := kv[0].Value, resolve(kv[1])
		switch k {
		case "issuer":
			if s, ok := p.str(v, k); ok {
				t.Issuer, issuerSet = s, true
			}
		case "keywords":
			rawKeywords = p.strList(v, k)
			t.Keywords = p.regexList(v, k)
			if len(t.Keywords) < len(rawKeywords) {
				p.fatal = append(p.fatal, &LoadError{File: p.file, Line: v.Line, Path: k, Err: errors.New("a keyword does not compile, so the template could never be chosen")})
			}
		case "exclude_keywords":
			t.ExcludeKeywords = p.regexList(v, k)
		case "priority":
			if typ, i := yamlScalar(v, p.json); typ == "int" {
				t.Priority = int(i.(int64))
			} else {
				p.problem(v, k, "must be an integer")
			}
		case "required_fields":
			t.RequiredFields = append([]string{}, p.strList(v, k)...)
		case "fields":
			fieldsNode = v
		case "lines":
			t.Lines = p.lines(v, k)
		case "tables":
			t.Tables = p.tables(v, k)
		case "options":
			optionsNode = v
		case "docintake":
			p.docintake(v, k, t)
		default:
			if !ignoredKeys[k] {
				p.ignorable(kv[0], k, "unknown key")
			}
		}
	}
	if optionsNode != nil {
		p.options(optionsNode, "options", &t.Options)
	}
	if t.Options.RemoveWhitespace {
		// The text loses its spaces, so the keywords must too (as
		// invoice2data's loader does).
		t.Keywords = p.despace(t.Keywords, "keywords")
		t.ExcludeKeywords = p.despace(t.ExcludeKeywords, "exclude_keywords")
	}
	if fieldsNode != nil {
		t.Fields = p.fields(fieldsNode, "fields")
	}
	if !issuerSet && len(rawKeywords) > 0 {
		t.Issuer = rawKeywords[0]
	}
	if t.DocIntake.Present && t.RequiredFields == nil {
		t.RequiredFields = []string{}
	}
	return t
}

func (p *parser) despace(res []*Regex, path string) []*Regex {
	out := make([]*Regex, 0, len(res))
	for _, re := range res {
		src := strings.ReplaceAll(re.Source, " ", "")
		if nr := p.regex(nil, path, src); nr != nil {
			out = append(out, nr)
		}
	}
	return out
}

func (p *parser) options(n *yaml.Node, path string, o *Options) {
	if n.Kind != yaml.MappingNode {
		p.problem(n, path, "must be a mapping")
		return
	}
	for _, kv := range pairs(n) {
		k, v := kv[0].Value, resolve(kv[1])
		kp := path + "." + k
		switch k {
		case "remove_whitespace":
			o.RemoveWhitespace = p.boolean(v, kp)
		case "remove_accents":
			o.RemoveAccents = p.boolean(v, kp)
		case "lowercase":
			o.Lowercase = p.boolean(v, kp)
		case "currency":
			if s, ok := p.str(v, kp); ok {
				o.Currency, o.CurrencySet = s, true
			}
		case "date_formats":
			o.DateFormats = p.dateFormats(v, kp)
		case "languages":
			o.Languages = p.strList(v, kp)
			for _, l := range o.Languages {
				if len(l) != 2 {
					p.problem(v, kp, "language code %q must have 2 letters", l)
				}
			}
		case "decimal_separator":
			o.DecimalSeparator = p.decimalSeparator(v, kp)
		case "replace":
			o.Replace = p.replacements(v, kp)
		default:
			p.ignorable(kv[0], kp, "unknown option")
		}
	}
}

func (p *parser) dateFormats(v *yaml.Node, path string) []string {
	fs := p.strList(v, path)
	for i, f := range fs {
		if compileStrptime(f) == nil {
			p.problem(v, fmt.Sprintf("%s[%d]", path, i), "unsupported strptime directive in %q", f)
		}
	}
	return fs
}

func (p *parser) decimalSeparator(v *yaml.Node, path string) string {
	s, ok := p.str(v, path)
	if !ok {
		return ""
	}
	if s != "." && s != "," {
		p.problem(v, path, "decimal_separator must be \".\" or \",\", not %q", s)
		return ""
	}
	return s
}

func (p *parser) replacements(n *yaml.Node, path string) []Replacement {
	if n.Kind != yaml.SequenceNode {
		p.problem(n, path, "must be a list of [pattern, replacement] pairs")
		return nil
	}
	var out []Replacement
	for i, c := range n.Content {
		c = resolve(c)
		ip := fmt.Sprintf("%s[%d]", path, i)
		if c.Kind != yaml.SequenceNode || len(c.Content) != 2 {
			p.problem(c, ip, "a replace must be a list of exactly 2 elements")
			continue
		}
		pat, ok1 := p.str(c.Content[0], ip)
		with, ok2 := p.str(c.Content[1], ip)
		if !ok1 || !ok2 {
			continue
		}
		if re := p.regex(c.Content[0], ip, pat); re != nil {
			out = append(out, Replacement{Re: re, With: with})
		}
	}
	return out
}

var validGroups = map[string]bool{"sum": true, "min": true, "max": true, "first": true, "last": true, "join": true}
var validTypes = map[string]bool{"int": true, "float": true, "date": true}

func (p *parser) fields(n *yaml.Node, path string) []*Field {
	if n.Kind != yaml.MappingNode {
		p.problem(n, path, "must be a mapping")
		return nil
	}
	var out []*Field
	for _, kv := range pairs(n) {
		k, v := kv[0].Value, resolve(kv[1])
		kp := path + "." + k
		f := &Field{Name: k, Line: kv[0].Line}
		switch {
		case v.Kind == yaml.MappingNode:
			if !p.fieldSettings(v, kp, f) {
				continue
			}
		case strings.HasPrefix(k, "static_"):
			f.Kind, f.Name, f.Value = ParserStatic, strings.TrimPrefix(k, "static_"), p.nodeValue(v)
		default:
			// Legacy string/list form, typed by the field name as
			// invoice2data does.
			f.Kind, f.Legacy = ParserRegex, true
			f.Regexes = p.regexList(v, kp)
			p.oneValueRegexes(v, kp, k, f.Regexes)
			switch {
			case strings.HasPrefix(k, "sum_amount") && v.Kind == yaml.SequenceNode:
				f.Name, f.Type, f.Group = k[4:], "float", "sum"
			case strings.HasPrefix(k, "date") || strings.HasSuffix(k, "date"):
				f.Type = "date"
			case strings.HasPrefix(k, "amount"):
				f.Type = "float"
			}
		}
		out = append(out, f)
	}
	return out
}

func (p *parser) fieldSettings(v *yaml.Node, kp string, f *Field) bool {
	var parserName string
	var linesNode *yaml.Node
	for _, kv := range pairs(v) {
		sk, sv := kv[0].Value, resolve(kv[1])
		skp := kp + "." + sk
		switch sk {
		case "parser":
			parserName, _ = p.str(sv, skp)
		case "regex":
			f.Regexes = p.regexList(sv, skp)
			p.oneValueRegexes(sv, skp, f.Name, f.Regexes)
		case "type":
			if s, ok := p.str(sv, skp); ok {
				if !validTypes[s] {
					p.problem(sv, skp, "unknown type %q (int, float, date)", s)
				} else {
					f.Type = s
				}
			}
		case "group":
			if s, ok := p.str(sv, skp); ok {
				if !validGroups[s] {
					p.problem(sv, skp, "unsupported grouping method %q (sum, min, max, first, last, join)", s)
				} else {
					f.Group = s
				}
			}
		case "value":
			f.Value = p.nodeValue(sv)
		case "replace":
			f.Replace = p.replacements(sv, skp)
		case "area":
			f.Area = p.area(sv, skp)
		case "date_formats":
			f.Format.DateFormats = p.dateFormats(sv, skp)
		case "decimal_separator":
			f.Format.DecimalSeparator = p.decimalSeparator(sv, skp)
		default:
			linesNode = v // lines settings live next to parser: lines
		}
	}
	switch parserName {
	case "regex":
		f.Kind = ParserRegex
	case "static":
		f.Kind = ParserStatic
	case "lines":
		f.Kind = ParserLines
		f.Lines = p.lines(v, kp)
		return f.Lines != nil
	case "":
		p.problem(v, kp, "field has no parser (regex, static, lines)")
		return false
	default:
		p.problem(v, kp+".parser", "unknown parser %q", parserName)
		return false
	}
	if linesNode != nil {
		for _, kv := range pairs(v) {
			switch kv[0].Value {
			case "parser", "regex", "type", "group", "value", "replace", "area", "date_formats", "decimal_separator":
			default:
				p.ignorable(kv[0], kp+"."+kv[0].Value, "unknown key for parser %s", parserName)
			}
		}
	}
	return true
}

func (p *parser) area(n *yaml.Node, path string) *Area {
	var m map[string]int
	if err := n.Decode(&m); err != nil {
		p.problem(n, path, "must be a mapping of integers (f, l, x, y, r, W, H)")
		return nil
	}
	a := &Area{FirstPage: m["f"], LastPage: m["l"], X: m["x"], Y: m["y"], W: m["W"], H: m["H"], Resolution: m["r"]}
	return a
}

var linesKeys = map[string]bool{"parser": true, "start": true, "end": true, "line": true, "first_line": true, "last_line": true,
	"skip_line": true, "types": true, "rules": true, "end_match": true, "line_separator": true,
	"date_formats": true, "decimal_separator": true, "join": true}

func (p *parser) lines(n *yaml.Node, path string) *LinesSpec {
	if n.Kind != yaml.MappingNode {
		p.problem(n, path, "must be a mapping")
		return nil
	}
	var rulesNode *yaml.Node
	for _, kv := range pairs(n) {
		if kv[0].Value == "rules" {
			rulesNode = resolve(kv[1])
		} else if !linesKeys[kv[0].Value] {
			p.ignorable(kv[0], path+"."+kv[0].Value, "unknown lines key")
		}
	}
	spec := &LinesSpec{}
	if rulesNode == nil {
		if r := p.linesRule([]*yaml.Node{n}, path); r != nil {
			spec.Rules = append(spec.Rules, r)
		}
		return spec
	}
	if rulesNode.Kind != yaml.SequenceNode {
		p.problem(rulesNode, path+".rules", "must be a list")
		return nil
	}
	for i, rn := range rulesNode.Content {
		// A rule inherits the settings written next to rules.
		if r := p.linesRule([]*yaml.Node{n, resolve(rn)}, fmt.Sprintf("%s.rules[%d]", path, i)); r != nil {
			spec.Rules = append(spec.Rules, r)
		}
	}
	return spec
}

func (p *parser) linesRule(layers []*yaml.Node, path string) *LinesRule {
	r := &LinesRule{JoinWith: "\n"}
	var lineSep = `\n`
	var lineSepNode *yaml.Node
	var firstSet, lastSet bool
	top := layers[len(layers)-1]
	for _, n := range layers {
		for _, kv := range pairs(n) {
			k, v := kv[0].Value, resolve(kv[1])
			kp := path + "." + k
			switch k {
			case "start":
				if s, ok := p.str(v, kp); ok {
					r.Start = p.regex(v, kp, s)
				}
			case "end":
				if s, ok := p.str(v, kp); ok {
					r.End = p.regex(v, kp, s)
				}
			case "line":
				r.Line = p.regexList(v, kp)
			case "first_line":
				r.FirstLine, firstSet = p.regexList(v, kp), true
			case "last_line":
				r.LastLine, lastSet = p.regexList(v, kp), true
			case "skip_line":
				r.SkipLine = p.regexList(v, kp)
			case "types":
				r.Types = p.types(v, kp)
			case "end_match":
				r.EndMatch = p.boolean(v, kp)
			case "line_separator":
				if s, ok := p.str(v, kp); ok {
					lineSep, lineSepNode = s, v
				}
			case "date_formats":
				r.Format.DateFormats = p.dateFormats(v, kp)
			case "decimal_separator":
				r.Format.DecimalSeparator = p.decimalSeparator(v, kp)
			case "join":
				switch s, _ := p.str(v, kp); s {
				case "newline":
					r.JoinWith = "\n"
				case "space":
					r.JoinWith = " "
				default:
					p.problem(v, kp, "join must be newline or space, not %q", s)
				}
			case "rules", "parser":
			default:
				if n == top && len(layers) > 1 {
					p.ignorable(kv[0], kp, "unknown lines key")
				}
			}
		}
	}
	if r.Start == nil || r.End == nil {
		p.problem(top, path, "lines need start and end")
		return nil
	}
	if r.Line == nil && !firstSet {
		p.problem(top, path, "lines need line (or first_line)")
		return nil
	}
	if !firstSet && !lastSet {
		r.FirstLine = r.Line
	}
	r.LineSeparator = p.regex(lineSepNode, path+".line_separator", lineSep)
	return r
}

func (p *parser) types(n *yaml.Node, path string) map[string]string {
	if n.Kind != yaml.MappingNode {
		p.problem(n, path, "must be a mapping of field: type")
		return nil
	}
	m := map[string]string{}
	for _, kv := range pairs(n) {
		s, ok := p.str(kv[1], path+"."+kv[0].Value)
		if !ok {
			continue
		}
		if !validTypes[s] {
			p.problem(kv[1], path+"."+kv[0].Value, "unknown type %q (int, float, date)", s)
			continue
		}
		m[kv[0].Value] = s
	}
	return m
}

func (p *parser) tables(n *yaml.Node, path string) []*TableSpec {
	if n.Kind != yaml.SequenceNode {
		p.problem(n, path, "must be a list")
		return nil
	}
	var out []*TableSpec
	for i, tn := range n.Content {
		tn = resolve(tn)
		ip := fmt.Sprintf("%s[%d]", path, i)
		if tn.Kind != yaml.MappingNode {
			p.problem(tn, ip, "must be a mapping")
			continue
		}
		ts := &TableSpec{Fields: map[string]TableField{}}
		lineSep, lineSepNode := `\n`, tn
		for _, kv := range pairs(tn) {
			k, v := kv[0].Value, resolve(kv[1])
			kp := ip + "." + k
			switch k {
			case "start", "end", "body":
				s, ok := p.str(v, kp)
				if !ok {
					continue
				}
				re := p.regex(v, kp, s)
				switch k {
				case "start":
					ts.Start = re
				case "end":
					ts.End = re
				default:
					ts.Body = re
				}
			case "types":
				ts.Types = p.types(v, kp)
			case "fields":
				if v.Kind != yaml.MappingNode {
					p.problem(v, kp, "must be a mapping")
					continue
				}
				for _, fkv := range pairs(v) {
					var tf TableField
					for _, skv := range pairs(resolve(fkv[1])) {
						s, _ := p.str(skv[1], kp+"."+fkv[0].Value+"."+skv[0].Value)
						switch skv[0].Value {
						case "group":
							if !validGroups[s] {
								p.problem(skv[1], kp+"."+fkv[0].Value+".group", "unsupported grouping method %q", s)
							}
							tf.Group = s
						case "type":
							tf.Type = s
						default:
							p.ignorable(skv[0], kp+"."+fkv[0].Value+"."+skv[0].Value, "unknown key")
						}
					}
					ts.Fields[fkv[0].Value] = tf
				}
			case "line_separator":
				if s, ok := p.str(v, kp); ok {
					lineSep, lineSepNode = s, v
				}
			case "field_separator":
			default:
				p.ignorable(kv[0], kp, "unknown table key")
			}
		}
		if ts.Start == nil || ts.End == nil || ts.Body == nil {
			p.problem(tn, ip, "a table needs start, end and body")
			continue
		}
		ts.LineSeparator = p.regex(lineSepNode, ip+".line_separator", lineSep)
		out = append(out, ts)
	}
	return out
}

func (p *parser) docintake(n *yaml.Node, path string, t *Template) {
	if n.Kind != yaml.MappingNode {
		p.problem(n, path, "must be a mapping")
		return
	}
	d := &t.DocIntake
	d.Present = true
	for _, kv := range pairs(n) {
		k, v := kv[0].Value, resolve(kv[1])
		kp := path + "." + k
		switch k {
		case "name":
			if s, ok := p.str(v, kp); ok && s != "" {
				t.Name, t.nameLine = s, v.Line
			}
		case "party_ids":
			d.PartyIDs, t.partyLine = p.strList(v, kp), v.Line
		case "document_type":
			s, _ := p.str(v, kp)
			switch order.DocumentType(s) {
			case order.TypeOrder, order.TypeOrderResponse, order.TypeInvoice:
				d.DocumentType = order.DocumentType(s)
			default:
				p.problem(v, kp, "unknown document_type %q (order, order_response, invoice)", s)
			}
		case "required":
			d.Required = p.strList(v, kp)
			for _, r := range d.Required {
				if !knownRequirements[r] {
					p.problem(v, kp, "unknown requirement %q", r)
				}
			}
		case "rules":
			d.Rules = p.rules(v, kp)
		case "mappings":
			d.Mappings = p.mappings(v, kp)
		case "ignored_feedback":
			d.IgnoredFeedback = p.boolean(v, kp)
		case "checks":
			p.checks(v, kp, &d.Checks)
		case "date_fallback":
			switch s, _ := p.str(v, kp); s {
			case "receipt", "none":
				d.DateFallback = strings.TrimSuffix(s, "none")
			default:
				p.problem(v, kp, "date_fallback must be receipt or none, not %q", s)
			}
		case "allow_nonpositive_quantity":
			d.AllowNonPositiveQuantity = p.boolean(v, kp)
		case "default_unit":
			// Refused at load when unknown: it would be written as C62
			// with a note, the silent default it is meant to replace.
			if s, ok := p.str(v, kp); ok {
				if _, known := opentrans.UnitCode(s); !known || strings.TrimSpace(s) == "" {
					p.problem(v, kp, "default_unit %q is not a known unit (a BMEcat code such as C62, KGM, MTR or a printed unit such as pcs, kg, m)", s)
				} else {
					d.DefaultUnit = strings.TrimSpace(s)
				}
			}
		case "embedded":
			d.Embedded = p.embeddedMode(v, kp)
		case "fallback":
			switch s, _ := p.str(v, kp); s {
			case FallbackGeneric, "none":
				d.Fallback = strings.TrimSuffix(s, "none")
			default:
				p.problem(v, kp, "fallback must be %s or none, not %q", FallbackGeneric, s)
			}
		default:
			p.problem(kv[0], kp, "unknown docintake key")
		}
	}
	if d.Fallback != "" && d.DocumentType != order.TypeOrder {
		// The generic reader reads purchase orders only.
		p.problem(n, path+".fallback", "fallback: %s reads orders, and document_type is %s", d.Fallback, d.DocumentType)
	}
}

// checks reads docintake.checks: false switches every check off; a mapping
// sets tolerance and switches single checks.
func (p *parser) checks(n *yaml.Node, path string, c *Checks) {
	if n.Kind == yaml.ScalarNode {
		if !p.boolean(n, path) {
			*c = Checks{}
		}
		return
	}
	if n.Kind != yaml.MappingNode {
		p.problem(n, path, "must be false or a mapping (tolerance, line_amount, net_total, gross_total, quantity_total)")
		return
	}
	for _, kv := range pairs(n) {
		k, v := kv[0].Value, resolve(kv[1])
		kp := path + "." + k
		switch k {
		case "tolerance":
			s, ok := p.str(v, kp)
			if !ok {
				continue
			}
			if d, err := ParseAmount(s, "."); err != nil || strings.HasPrefix(d, "-") {
				p.problem(v, kp, "tolerance must be a non-negative decimal such as 0.01, not %q", s)
				continue
			}
			c.Tolerance = s
		case "line_amount":
			c.LineAmount = p.boolean(v, kp)
		case "net_total":
			c.NetTotal = p.boolean(v, kp)
		case "gross_total":
			c.GrossTotal = p.boolean(v, kp)
		case "quantity_total":
			c.QuantityTotal = p.boolean(v, kp)
		default:
			p.problem(kv[0], kp, "unknown check (tolerance, line_amount, net_total, gross_total, quantity_total)")
		}
	}
}

var knownRequirements = map[string]bool{"vat_id": true, "buyer_vat_id": true, "supplier_vat_id": true,
	"delivery_address": true, "order_id": true, "date": true, "items": true}

func (p *parser) rules(n *yaml.Node, path string) []*Rule {
	if n.Kind != yaml.SequenceNode {
		p.problem(n, path, "must be a list")
		return nil
	}
	var out []*Rule
	for i, rn := range n.Content {
		rn = resolve(rn)
		ip := fmt.Sprintf("%s[%d]", path, i)
		r := &Rule{}
		for _, kv := range pairs(rn) {
			k, v := kv[0].Value, resolve(kv[1])
			kp := ip + "." + k
			s, ok := p.str(v, kp)
			if !ok {
				continue
			}
			switch k {
			case "match":
				r.Match = p.regex(v, kp, s)
			case "field":
				r.Field = s
			case "action":
				switch RuleAction(s) {
				case ActionIgnore, ActionReject:
					r.Action = RuleAction(s)
				default:
					p.problem(v, kp, "unknown action %q (ignore, reject)", s)
				}
			case "reason":
				reason, err := document.ParseReason(s)
				if err != nil {
					p.problem(v, kp, "%v", err)
				}
				r.Reason = reason
			default:
				p.problem(kv[0], kp, "unknown rule key")
			}
		}
		if r.Match == nil || r.Action == "" {
			p.problem(rn, ip, "a rule needs match and action")
			continue
		}
		out = append(out, r)
	}
	return out
}

func (p *parser) mappings(n *yaml.Node, path string) []Mapping {
	if n.Kind != yaml.SequenceNode {
		p.problem(n, path, "must be a list")
		return nil
	}
	var out []Mapping
	for i, mn := range n.Content {
		mn = resolve(mn)
		ip := fmt.Sprintf("%s[%d]", path, i)
		var m Mapping
		for _, kv := range pairs(mn) {
			k, v := kv[0].Value, resolve(kv[1])
			kp := ip + "." + k
			switch k {
			case "field", "from":
				m.From, _ = p.str(v, kp)
			case "table", "kind":
				m.Kind, _ = p.str(v, kp)
			case "to", "into":
				m.To, _ = p.str(v, kp)
			case "optional":
				m.Optional = p.boolean(v, kp)
			default:
				p.problem(kv[0], kp, "unknown mapping key")
			}
		}
		if m.From == "" || m.Kind == "" {
			p.problem(mn, ip, "a mapping needs field and table")
			continue
		}
		if !mappableFields[m.From] {
			p.problem(mn, ip+".field", "field %q cannot be mapped", m.From)
			continue
		}
		if m.To == "" {
			m.To = m.From
		}
		if !mappableFields[m.To] {
			p.problem(mn, ip+".to", "field %q cannot be a mapping target", m.To)
			continue
		}
		out = append(out, m)
	}
	return out
}

// nodeValue converts a YAML scalar/sequence/mapping into an extracted value,
// as invoice2data's loader types it (PyYAML's YAML 1.1 rules; see
// yamlScalar): ints, floats, dates, booleans, None, strings.
func (p *parser) nodeValue(n *yaml.Node) any {
	n = resolve(n)
	switch n.Kind {
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			out = append(out, p.nodeValue(c))
		}
		return out
	case yaml.MappingNode:
		o := NewObject()
		for _, kv := range pairs(n) {
			o.Set(kv[0].Value, p.nodeValue(kv[1]))
		}
		return o
	}
	_, v := yamlScalar(n, p.json)
	return v
}
