package template

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

// MatchTimeout bounds one match of a pattern that needs the backtracking
// engine (lookaround, backreferences); a pattern takes the value it has when
// it is compiled (0 or less: no limit of its own). RE2 patterns run in
// linear time and need no limit. A timed-out match is an error on the field
// that ran it, never "no match". The run's budget (DefaultBudget) caps it
// further: no match runs longer than what is left of the budget.
var MatchTimeout = 2 * time.Second

// Regex is a compiled template pattern written in Python's re syntax. Patterns
// that RE2 can express run on Go's regexp after translation; the rest run on
// dlclark/regexp2 with MatchTimeout.
type Regex struct {
	Source string // the pattern as written in the template
	re2    *regexp.Regexp
	bt     *regexp2.Regexp
	// clones are copies of bt, each used by one match at a time:
	// regexp2 reads a Regexp's MatchTimeout field on every match, so
	// setting it per match (to what is left of a run's budget) on a
	// shared one would race with other documents' matches.
	clones  *sync.Pool
	timeout time.Duration // MatchTimeout when compiled
	names   []string      // group names by index (index 0: whole match)
	// kind says how found can answer without running the regex engine
	// (see foundKind); literal is the string of foundLiteral, fold the
	// pattern runes of foundFold.
	kind    foundKind
	literal string
	fold    []rune
	// need, when set, lists literals one of which every match contains:
	// a text holding none of them is answered "no match" without the
	// engine (see requiredLiterals).
	need []needle
}

// foundKind classifies what a pattern's mere presence test amounts to.
// Keyword selection tests every keyword of every template on every
// document, and Go's regexp searches patterns without a literal prefix
// (case-insensitive words, a lone $) by trying each position in turn.
type foundKind uint8

const (
	foundRegex   foundKind = iota // run the regex
	foundLiteral                  // one fixed string: a substring test
	foundFold                     // one string under (?i): a case-folded substring test
	foundAlways                   // $, ^, an empty pattern: matches every text
)

// Backtracking reports whether the pattern runs on the backtracking engine.
func (r *Regex) Backtracking() bool { return r.bt != nil }

// CompileRegex compiles a Python-syntax pattern. It returns an error naming
// the construct that neither engine supports.
func CompileRegex(src string) (*Regex, error) {
	tr, needBT, err := translatePython(src)
	if err != nil {
		return nil, err
	}
	if !needBT {
		re, err := regexp.Compile(tr)
		if err == nil {
			r := &Regex{Source: src, re2: re, names: re.SubexpNames()}
			r.classify(tr)
			r.need = requiredLiterals(tr, re)
			return r, nil
		}
		// Fall through: some Python syntax is only valid for the backtracker.
	}
	expr := pythonForRegexp2(src)
	bt, err := regexp2.Compile(expr, regexp2.None)
	if err != nil {
		return nil, fmt.Errorf("regex %q: %w", src, err)
	}
	timeout := MatchTimeout
	if timeout <= 0 {
		timeout = regexp2.DefaultMatchTimeout
	}
	bt.MatchTimeout = timeout
	clones := &sync.Pool{New: func() any { return regexp2.MustCompile(expr, regexp2.None) }}
	nums := bt.GetGroupNumbers()
	names := make([]string, 0, len(nums))
	for _, n := range nums {
		name := bt.GroupNameFromNumber(n)
		if _, err := strconv.Atoi(name); err == nil {
			name = ""
		}
		names = append(names, name)
	}
	return &Regex{Source: src, bt: bt, clones: clones, timeout: timeout, names: names}, nil
}

// NumGroups is the number of capturing groups.
func (r *Regex) NumGroups() int { return len(r.names) - 1 }

// GroupNames returns the names of groups 1..n ("" for unnamed groups).
func (r *Regex) GroupNames() []string { return r.names[1:] }

// match is one match: byte offsets per group, -1 when the group did not
// participate (as Go's regexp reports them).
type match []int

func (m match) group(s string, i int) (string, bool) {
	if 2*i+1 >= len(m) || m[2*i] < 0 {
		return "", false
	}
	return s[m[2*i]:m[2*i+1]], true
}

// search returns the first match in s or nil. m (nil: none) is the run's
// budget: a spent budget or a done context is the error.
func (r *Regex) search(m *meter, s string) (match, error) {
	if r.re2 != nil {
		if err := m.search(); err != nil {
			return nil, err
		}
		if !r.mayMatch(s) {
			return nil, nil
		}
		return r.re2.FindStringSubmatchIndex(s), nil
	}
	ms, err := r.findAll(m, s, 1)
	if err != nil || len(ms) == 0 {
		return nil, err
	}
	return ms[0], nil
}

// classify sets kind from the translated pattern's syntax tree (groups
// do not matter to a presence test).
func (r *Regex) classify(tr string) {
	if lit, complete := r.re2.LiteralPrefix(); complete {
		r.kind, r.literal = foundLiteral, lit
		return
	}
	re, err := syntax.Parse(tr, syntax.Perl)
	if err != nil {
		return
	}
	re = re.Simplify()
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginText, syntax.OpEndText, syntax.OpBeginLine, syntax.OpEndLine:
		// Each of these matches at the start or the end of any text.
		r.kind = foundAlways
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			r.kind, r.fold = foundFold, append([]rune(nil), re.Rune...)
		}
	}
}

// containsFold reports whether s contains pat with runes compared as Go's
// regexp compares a case-folded literal: equal, or in one another's
// unicode.SimpleFold orbit. Candidates are found with strings.IndexAny on
// the first rune's orbit, which visits rune starts as ranging over s does
// (an ASCII byte is always a rune of its own, even in invalid UTF-8).
func containsFold(s string, pat []rune) bool {
	if len(pat) == 0 {
		return true
	}
	first := foldOrbit(pat[0])
	for i := 0; i < len(s); {
		j := strings.IndexAny(s[i:], first)
		if j < 0 {
			return false
		}
		i += j
		if hasPrefixFold(s[i:], pat) {
			return true
		}
		_, n := utf8.DecodeRuneInString(s[i:])
		i += n
	}
	return false
}

// foldOrbit is r and every rune case-folding to it, as a string.
func foldOrbit(r rune) string {
	orbit := string(r)
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		orbit += string(f)
	}
	return orbit
}

// hasPrefixFold reports whether s starts with pat under sameFold.
func hasPrefixFold(s string, pat []rune) bool {
	j := 0
	for _, p := range pat {
		if j == len(s) {
			return false
		}
		c, n := utf8.DecodeRuneInString(s[j:])
		if !sameFold(c, p) {
			return false
		}
		j += n
	}
	return true
}

func sameFold(a, b rune) bool {
	if a == b {
		return true
	}
	for f := unicode.SimpleFold(b); f != b; f = unicode.SimpleFold(f) {
		if f == a {
			return true
		}
	}
	return false
}

// found reports whether r matches somewhere in s, as search(s) != nil does,
// without computing the groups: keyword selection tests hundreds of
// keywords per document and needs only yes or no.
func (r *Regex) found(m *meter, s string) (bool, error) {
	if err := m.search(); err != nil {
		return false, err
	}
	switch r.kind {
	case foundLiteral:
		return strings.Contains(s, r.literal), nil
	case foundFold:
		return containsFold(s, r.fold), nil
	case foundAlways:
		return true, nil
	}
	if r.re2 != nil {
		return r.mayMatch(s) && r.re2.MatchString(s), nil
	}
	ms, err := r.findBT(m, s, 1)
	return len(ms) > 0, err
}

// findAll returns up to n matches (n < 0: all), non-overlapping, like
// Python's finditer.
func (r *Regex) findAll(m *meter, s string, n int) ([]match, error) {
	if err := m.search(); err != nil {
		return nil, err
	}
	if r.re2 == nil {
		return r.findBT(m, s, n)
	}
	if !r.mayMatch(s) {
		return []match{}, nil
	}
	idx := r.re2.FindAllStringSubmatchIndex(s, n)
	out := make([]match, len(idx))
	for i, m := range idx {
		out[i] = m
	}
	return out, nil
}

// findBT is findAll on the backtracking engine, each match (the first and
// every next one) limited by runBT. The caller counted the search.
func (r *Regex) findBT(m *meter, s string, n int) ([]match, error) {
	// regexp2 reports rune offsets; byteAt maps them back to byte offsets.
	// Each rune's width is read from s: an invalid byte is one U+FFFD rune
	// of one byte, not of U+FFFD's three.
	runes := make([]rune, 0, len(s))
	byteAt := make([]int, 0, len(s)+1)
	for i, c := range s {
		runes = append(runes, c)
		byteAt = append(byteAt, i)
	}
	byteAt = append(byteAt, len(s))
	bt := r.clones.Get().(*regexp2.Regexp)
	defer r.clones.Put(bt)
	var out []match
	found, err := r.runBT(m, bt, func() (*regexp2.Match, error) { return bt.FindRunesMatch(runes) })
	for err == nil && found != nil && (n < 0 || len(out) < n) {
		out = append(out, r.groups(found, byteAt))
		if n >= 0 && len(out) == n {
			break
		}
		if err = m.check(); err == nil {
			prev := found
			found, err = r.runBT(m, bt, func() (*regexp2.Match, error) { return bt.FindNextMatch(prev) })
		}
	}
	return out, err
}

// runBT runs one match on bt (a clone of r's) with r's timeout, cut to
// what is left of m's budget. The timeout's error names the pattern but
// not the text (regexp2's quotes the whole input: a document in every log
// line and event). A timeout cut by the budget is the budget's error.
func (r *Regex) runBT(m *meter, bt *regexp2.Regexp, run func() (*regexp2.Match, error)) (*regexp2.Match, error) {
	m.backtrack()
	d, capped := m.matchTimeout(r.timeout)
	bt.MatchTimeout = d
	found, err := run()
	if err == nil {
		return found, nil
	}
	if stop := m.timedOut(capped); stop != nil {
		return nil, stop
	}
	return nil, fmt.Errorf("regex %q: match timeout after %v", r.Source, d)
}

// groups converts one regexp2 match to byte offsets.
func (r *Regex) groups(found *regexp2.Match, byteAt []int) match {
	mm := make(match, 2*len(r.names))
	for i := range mm {
		mm[i] = -1
	}
	for gi, g := range found.Groups() {
		if gi >= len(r.names) || len(g.Captures) == 0 {
			continue
		}
		mm[2*gi] = byteAt[g.Index]
		mm[2*gi+1] = byteAt[g.Index+g.Length]
	}
	return mm
}

// sub replaces every match of r in s with repl written in Python's
// replacement syntax (\1, \g<1>, \g<name>), as re.sub does.
func (r *Regex) sub(m *meter, s, repl string) (string, error) {
	if r.re2 != nil {
		// Counted as one search by subAll or here.
		if err := m.check(); err != nil {
			return s, err
		}
		// Most replace options do not match most documents: a match-only
		// scan (no groups) settles that before collecting matches.
		if !r.mayMatch(s) || !r.re2.MatchString(s) {
			return s, nil
		}
		if !strings.Contains(repl, `\`) {
			// No group references or escapes: repl is literal, as expand
			// would write it, and the groups are not needed.
			if err := m.search(); err != nil {
				return s, err
			}
			idx := r.re2.FindAllStringIndex(s, -1)
			var b strings.Builder
			last := 0
			for _, m := range idx {
				b.WriteString(s[last:m[0]])
				b.WriteString(repl)
				last = m[1]
			}
			b.WriteString(s[last:])
			return b.String(), nil
		}
	}
	return r.subAll(m, s, repl)
}

// subAll is sub through the general path: every match with its groups,
// each replacement expanded.
func (r *Regex) subAll(m *meter, s, repl string) (string, error) {
	ms, err := r.findAll(m, s, -1)
	if err != nil {
		return s, err
	}
	if len(ms) == 0 {
		return s, nil
	}
	var b strings.Builder
	last := 0
	for _, m := range ms {
		b.WriteString(s[last:m[0]])
		b.WriteString(r.expand(s, m, repl))
		last = m[1]
	}
	b.WriteString(s[last:])
	return b.String(), nil
}

func (r *Regex) groupIndex(name string) int {
	if n, err := strconv.Atoi(name); err == nil {
		return n
	}
	for i, nm := range r.names {
		if nm == name && i > 0 {
			return i
		}
	}
	return -1
}

func (r *Regex) expand(s string, m match, repl string) string {
	var b strings.Builder
	r.walkRepl(repl, func(c byte) { b.WriteByte(c) }, func(g int) {
		v, _ := m.group(s, g)
		b.WriteString(v)
	})
	return b.String()
}

// walkRepl reads repl in Python's replacement syntax, in order: lit gets
// each byte written as it is (escapes decoded), group each group reference
// (an index past the last group writes nothing, as m.group reports). expand
// writes through it and replShape analyses through it, so the analysis
// sees exactly what expand writes.
func (r *Regex) walkRepl(repl string, lit func(byte), group func(int)) {
	for i := 0; i < len(repl); i++ {
		c := repl[i]
		if c != '\\' || i+1 == len(repl) {
			lit(c)
			continue
		}
		i++
		switch d := repl[i]; {
		case d == 'g' && i+1 < len(repl) && repl[i+1] == '<':
			end := strings.IndexByte(repl[i:], '>')
			if end < 0 {
				lit('\\')
				lit('g')
				continue
			}
			name := repl[i+2 : i+end]
			if g := r.groupIndex(name); g >= 0 {
				group(g)
			}
			i += end
		case d >= '0' && d <= '9':
			j := i + 1
			if j < len(repl) && repl[j] >= '0' && repl[j] <= '9' {
				j++
			}
			g, _ := strconv.Atoi(repl[i:j])
			group(g)
			i = j - 1
		case d == 'n':
			lit('\n')
		case d == 't':
			lit('\t')
		case d == 'r':
			lit('\r')
		case d == '\\':
			lit('\\')
		default:
			lit('\\')
			lit(d)
		}
	}
}

// translatePython rewrites a Python pattern into RE2 syntax. needBT reports
// constructs RE2 lacks (lookaround, backreferences, atomic groups, possessive
// quantifiers, conditionals, verbose mode), which go to the backtracker.
//
// Differences handled: \w \d \W \D are Unicode in Python 3 and ASCII in RE2;
// {,n} means {0,n} in Python and is a literal in RE2; \Z is \z; \uXXXX and
// \UXXXXXXXX escapes; the (?u) flag.
func translatePython(src string) (out string, needBT bool, err error) {
	var b strings.Builder
	src, prefix, ascii, needBT := pythonFlags(src)
	if needBT {
		return "", true, nil
	}
	b.WriteString(prefix)
	inClass := false
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '\\' && i+1 < len(src):
			i, needBT, err = translateEscape(&b, src, i+1, ascii, inClass)
			if err != nil || needBT {
				return "", needBT, err
			}
		case inClass:
			if c == ']' {
				inClass = false
			}
			b.WriteByte(c)
		case c == '[':
			inClass = true
			b.WriteByte(c)
			// A ']' right after '[' or '[^' is a literal in both syntaxes.
			if i+1 < len(src) && src[i+1] == '^' {
				b.WriteByte('^')
				i++
			}
			if i+1 < len(src) && src[i+1] == ']' {
				b.WriteString(`\]`)
				i++
			}
		case c == '(' && strings.HasPrefix(src[i:], "(?"):
			if backtrackingGroup(src[i+2:]) {
				return "", true, nil
			}
			b.WriteByte(c)
		case c == '{' && strings.HasPrefix(src[i:], "{,"):
			b.WriteString("{0,")
			i++
		case (c == '*' || c == '+' || c == '?' || c == '}') && i+1 < len(src) && src[i+1] == '+':
			// Possessive quantifier (Python 3.11).
			return "", true, nil
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), false, nil
}

// pythonFlags takes a leading global flags group ((?aiLmsux)) off src.
// prefix is the group as RE2 reads it (without Python's a and u flags),
// ascii reports (?a) (\w and the like stay ASCII), and needBT reports the
// flags RE2 lacks (verbose x, locale L). Without such a group src is
// returned as it is.
func pythonFlags(src string) (rest, prefix string, ascii, needBT bool) {
	if !strings.HasPrefix(src, "(?") {
		return src, "", false, false
	}
	end := strings.IndexByte(src, ')')
	if end <= 0 {
		return src, "", false, false
	}
	flags := src[2:end]
	if strings.Trim(flags, "aiLmsux") != "" {
		return src, "", false, false
	}
	if strings.ContainsRune(flags, 'x') || strings.ContainsRune(flags, 'L') {
		return src, "", false, true
	}
	if f := strings.NewReplacer("a", "", "u", "").Replace(flags); f != "" {
		prefix = "(?" + f + ")"
	}
	return src[end+1:], prefix, strings.ContainsRune(flags, 'a'), false
}

// translateEscape writes the RE2 form of the escape whose letter is at
// src[i] and returns the index of the escape's last byte. needBT reports a
// backreference; err a truncated \u or \U escape.
func translateEscape(b *strings.Builder, src string, i int, ascii, inClass bool) (last int, needBT bool, err error) {
	d := src[i]
	switch d {
	case 'w', 'W', 'd', 'D', 's', 'S':
		if ascii {
			b.WriteByte('\\')
			b.WriteByte(d)
			return i, false, nil
		}
		b.WriteString(unicodeClass(d, inClass))
	case 'Z':
		b.WriteString(`\z`)
	case 'u', 'U':
		n := 4
		if d == 'U' {
			n = 8
		}
		if i+n >= len(src) {
			return i, false, fmt.Errorf("regex %q: truncated \\%c escape", src, d)
		}
		b.WriteString(`\x{` + src[i+1:i+1+n] + `}`)
		i += n
	case '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return i, true, nil
	case '0':
		b.WriteString(`\x00`)
	default:
		b.WriteByte('\\')
		b.WriteByte(d)
	}
	return i, false, nil
}

// backtrackingGroup reports whether the group whose text after "(?" is
// rest is one RE2 lacks: lookaround, a named backreference, an atomic
// group, a conditional or a comment.
func backtrackingGroup(rest string) bool {
	switch {
	case strings.HasPrefix(rest, "="), strings.HasPrefix(rest, "!"),
		strings.HasPrefix(rest, "<="), strings.HasPrefix(rest, "<!"),
		strings.HasPrefix(rest, "P="), strings.HasPrefix(rest, ">"),
		strings.HasPrefix(rest, "("), strings.HasPrefix(rest, "#"):
		return true
	}
	return false
}

// pySpace is Python 3's \s for str patterns: ASCII whitespace plus \x1c-\x1f,
// \x85 and Unicode spaces (pdftotext emits U+00A0 for no-break spaces).
const pySpace = `\t-\r\x1c-\x20\x85\p{Z}`

func unicodeClass(d byte, inClass bool) string {
	switch d {
	case 's':
		if inClass {
			return pySpace
		}
		return `[` + pySpace + `]`
	case 'S':
		if inClass {
			return `\S` // RE2 cannot negate a union inside a class; ASCII is close enough
		}
		return `[^` + pySpace + `]`
	case 'w':
		if inClass {
			return `\p{L}\p{N}_`
		}
		return `[\p{L}\p{N}_]`
	case 'd':
		return `\p{Nd}`
	case 'D':
		return `\P{Nd}`
	default: // 'W'
		if inClass {
			return `\W` // RE2 cannot negate a union inside a class; ASCII is close enough
		}
		return `[^\p{L}\p{N}_]`
	}
}

// pythonForRegexp2 adapts a Python pattern to regexp2 (.NET syntax): named
// backreferences (?P=name) become \k<name> and {,n} becomes {0,n}.
func pythonForRegexp2(src string) string {
	var b strings.Builder
	for i := 0; i < len(src); i++ {
		switch {
		case src[i] == '\\' && i+1 < len(src):
			if src[i+1] == 'Z' {
				b.WriteString(`\z`)
			} else {
				b.WriteString(src[i : i+2])
			}
			i++
		case strings.HasPrefix(src[i:], "(?P="):
			end := strings.IndexByte(src[i:], ')')
			if end < 0 {
				b.WriteString(src[i:])
				return b.String()
			}
			b.WriteString(`\k<` + src[i+4:i+end] + `>`)
			i += end
		case strings.HasPrefix(src[i:], "(?P<"):
			b.WriteString("(?<")
			i += 3
		case strings.HasPrefix(src[i:], "{,"):
			b.WriteString("{0,")
			i++
		default:
			b.WriteByte(src[i])
		}
	}
	return b.String()
}

// needle is one literal of Regex.need: text compared exactly, or, when fold
// is set, its runes under case folding as the regex engine compares them.
type needle struct {
	text string
	fold []rune
}

func (n needle) in(s string) bool {
	if n.fold != nil {
		return containsFold(s, n.fold)
	}
	return strings.Contains(s, n.text)
}

// mayMatch is false only when s holds none of the literals every match
// needs. Go's regexp skips ahead only to a literal prefix, and none under
// (?i); without one its backtracker tries each position of the text, so a
// rule like (?i)(\binvoice\b|rechnung) costs far more than three substring
// tests on the many documents where it does not match.
func (r *Regex) mayMatch(s string) bool {
	if r.need == nil {
		return true
	}
	for _, n := range r.need {
		if n.in(s) {
			return true
		}
	}
	return false
}

// maxNeedles bounds the alternatives a prefilter tests.
const maxNeedles = 8

// requiredLiterals returns literals one of which every match of the
// translated pattern tr contains, read from the syntax tree Go's regexp
// compiles (parsed with the same flags, simplified), or nil when there are
// none worth testing: no literal of two or more bytes is required, or the
// pattern has a literal prefix of two or more, which Go's regexp already
// searches for before it runs the engine.
func requiredLiterals(tr string, re *regexp.Regexp) []needle {
	t, err := syntax.Parse(tr, syntax.Perl)
	if err != nil {
		return nil
	}
	need, ok := required(t.Simplify())
	if !ok {
		return nil
	}
	prefix, _ := re.LiteralPrefix()
	if minLen(need) < 2 || len(prefix) >= 2 {
		return nil
	}
	return need
}

// required is requiredLiterals' walk: ok says every match of re contains
// one of need.
func required(re *syntax.Regexp) (need []needle, ok bool) {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return []needle{{text: string(re.Rune), fold: append([]rune(nil), re.Rune...)}}, true
		}
		return []needle{{text: string(re.Rune)}}, true
	case syntax.OpCapture, syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpConcat:
		// Every part is in every match: take the part whose literals
		// are the longest.
		for _, sub := range re.Sub {
			if n, ok := required(sub); ok && (need == nil || minLen(n) > minLen(need)) {
				need = n
			}
		}
		return need, need != nil
	case syntax.OpAlternate:
		// A match is one alternative's: each must require a literal.
		for _, sub := range re.Sub {
			n, ok := required(sub)
			if !ok || len(need)+len(n) > maxNeedles {
				return nil, false
			}
			need = append(need, n...)
		}
		return need, true
	}
	return nil, false
}

// minLen is the length in bytes of the shortest literal of need.
func minLen(need []needle) int {
	short := -1
	for _, n := range need {
		if short < 0 || len(n.text) < short {
			short = len(n.text)
		}
	}
	return short
}
