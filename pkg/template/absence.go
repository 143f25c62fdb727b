package template

import (
	"regexp/syntax"
	"unicode"
	"unicode/utf8"
)

// Set.Match spends most of its time preparing texts: before a template's
// keywords are tested, its options.replace substitutions run over the whole
// text, and a template with a long list (a family of Dutch receipt
// templates has a dozen each, some with patterns Go's regexp can only scan
// position by position) costs far more than its keyword tests. Yet a
// keyword that is a literal (a company name, a VAT number) absent from the
// text can rarely be created by such substitutions. This file proves that
// from the text before the substitutions, so the substitutions can be
// skipped.
//
// # The rule
//
// Let C be a string, s a text that does not contain C, and s' = sub(s)
// for one replacement (pattern P, replacement W). s' is s with each match
// of P replaced by W's expansion: literal bytes of W and copies of P's
// groups. Cut s' into pieces: the unchanged segments of s between matches,
// and per match the parts of W's expansion, in order. Call a part a
// barrier when it always writes at least one byte and none of its bytes
// can be a byte of C; a part that may write nothing and whose bytes cannot
// be bytes of C is transparent. An occurrence of C in s' cannot contain a
// byte of a barrier or a transparent part, so it lies inside one run of
// pieces between barriers (transparent parts dropped: when one writes
// nothing it is gone, when it writes something it splits the run, and a
// part of a run is a run too). If every such run is a contiguous substring
// of s, C occurs in s, which it does not: C is not in s'. A run is
// contiguous in s when
//
//   - it contains no literal byte of W (a literal part is either a barrier
//     or fails the rule),
//   - its group copies are top-level elements of P's concatenation, each
//     followed by the next element (Go's regexp places the elements of a
//     concatenation side by side, so the groups' texts are adjacent in s),
//   - when it begins W, its first group begins P (so it continues the
//     segment or the run before the match), and when it ends W its last
//     group ends P (so the segment after the match continues it).
//
// Group 0 spans the whole match. A W without any barrier may write
// nothing, joining two segments of s: the rule then requires its single
// run to copy P whole, from the first element to the last. A pattern on
// the backtracking engine has no syntax tree here; its replacement passes
// only when W has no group reference (then every part is a literal byte).
//
// C is not in s' for each replacement in turn, so not in the prepared text
// when it is not in the text after the flag options (prepareBase) and every
// replacement obeys the rule; likewise when it is not in the text after the
// first k replacements and the rest obey it (absencePlan). A substitution
// that fails (a match timeout) leaves its input, which keeps C out too.
//
// A keyword regex K (RE2) cannot match a text where a literal its matches
// need is absent. That reading is Go's regexp's own syntax tree: a match of
// a literal node contains the literal (folded as Go's regexp compares runes
// under (?i), which containsFold reproduces), a match of a concatenation a
// match of each element, a match of an alternation a match of one
// alternative, a match of x+, x{n,} with n ≥ 1 or a group a match of x. A
// literal L is absent when some substring C of L obeys the rule for every
// replacement and is absent from the text after the flag options; the
// substrings tried are the longest that obey it. Bytes of C under (?i) are
// those of every rune that folds to a rune of C: an occurrence that
// containsFold finds is whole UTF-8 forms of such runes, and the same bytes
// in s begin at a rune boundary (no earlier rune can take a lead byte as
// its continuation), where containsFold finds them too. A literal
// containing U+FFFD is never proven absent (Go's regexp matches invalid
// UTF-8 as U+FFFD).
//
// A template is chosen only if every keyword matches, so one keyword proven
// absent rejects it, whatever its exclude keywords. Set.Match's trace lists
// every keyword that failed, so there the substitutions are skipped only
// when every keyword is proven absent; the trace is then what the tests
// would have written.

// byteSet is a set of bytes.
type byteSet [4]uint64

func (b *byteSet) add(c byte) { b[c>>6] |= 1 << (c & 63) }

func (b *byteSet) addRange(lo, hi int) {
	for c := lo; c <= hi; c++ {
		b.add(byte(c))
	}
}

func (b *byteSet) union(o byteSet) {
	for i := range b {
		b[i] |= o[i]
	}
}

func (b byteSet) meets(o byteSet) bool {
	return b[0]&o[0] != 0 || b[1]&o[1] != 0 || b[2]&o[2] != 0 || b[3]&o[3] != 0
}

// addRune adds the bytes of r's UTF-8 form. Every byte from 0x80 stands for
// every non-ASCII rune, and for invalid UTF-8 a class with U+FFFD matches.
func (b *byteSet) addRune(r rune) {
	if r < utf8.RuneSelf {
		b.add(byte(r))
		return
	}
	b.addRange(utf8.RuneSelf, 0xff)
}

// matchBytes is every byte a match of re can contain.
func matchBytes(re *syntax.Regexp) byteSet {
	var b byteSet
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			b.addRune(r)
			if re.Flags&syntax.FoldCase != 0 {
				for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
					b.addRune(f)
				}
			}
		}
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			if lo < utf8.RuneSelf {
				b.addRange(int(lo), int(min(hi, utf8.RuneSelf-1)))
			}
			if hi >= utf8.RuneSelf {
				b.addRune(hi)
			}
		}
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		b.addRange(0, 0xff)
	default:
		for _, sub := range re.Sub {
			b.union(matchBytes(sub))
		}
	}
	return b
}

// nonEmpty reports whether every match of re has at least one byte.
func nonEmpty(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpLiteral, syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return true
	case syntax.OpCapture, syntax.OpPlus:
		return nonEmpty(re.Sub[0])
	case syntax.OpRepeat:
		return re.Min >= 1 && nonEmpty(re.Sub[0])
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if nonEmpty(sub) {
				return true
			}
		}
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			if !nonEmpty(sub) {
				return false
			}
		}
		return len(re.Sub) > 0
	}
	return false
}

// outPart is one part of a replacement's expansion: a literal byte or a
// group copy.
type outPart struct {
	lit      bool
	bytes    byteSet // what it can write
	nonEmpty bool    // it always writes a byte
	// from and to are the elements of the pattern's top-level
	// concatenation the part copies (from = to for a group, 0 and the last
	// for group 0); from < 0: not a top-level group.
	from, to int
}

// replShape is a replacement's expansion as parts, and the number of
// elements of its pattern's top-level concatenation.
type replShape struct {
	parts []outPart
	elems int
	ok    bool // false: the rule cannot be applied (see the comment above)
}

// shapeOf reads a replacement's expansion through walkRepl, the reader
// expand writes with.
func shapeOf(r Replacement) replShape {
	var tree *syntax.Regexp
	if r.Re.re2 != nil {
		t, err := syntax.Parse(r.Re.re2.String(), syntax.Perl)
		if err != nil {
			return replShape{}
		}
		tree = t
	}
	var elems []*syntax.Regexp
	if tree != nil {
		elems = []*syntax.Regexp{tree}
		if tree.Op == syntax.OpConcat {
			elems = tree.Sub
		}
	}
	sh := replShape{elems: len(elems), ok: true}
	r.Re.walkRepl(r.With, func(c byte) {
		p := outPart{lit: true, nonEmpty: true}
		p.bytes.add(c)
		sh.parts = append(sh.parts, p)
	}, func(g int) {
		if g > r.Re.NumGroups() {
			return // writes nothing
		}
		if tree == nil {
			sh.ok = false
			return
		}
		p := outPart{from: -1, to: -1}
		if g == 0 {
			p = outPart{bytes: matchBytes(tree), nonEmpty: nonEmpty(tree), from: 0, to: len(elems) - 1}
		} else if c := findCapture(tree, g); c != nil {
			p.bytes = matchBytes(c)
			for i, e := range elems {
				if e == c {
					// A top-level element takes part in every match;
					// a nested group may not, and then writes nothing.
					p.from, p.to, p.nonEmpty = i, i, nonEmpty(c)
				}
			}
		} else {
			sh.ok = false
		}
		sh.parts = append(sh.parts, p)
	})
	return sh
}

func findCapture(re *syntax.Regexp, g int) *syntax.Regexp {
	if re.Op == syntax.OpCapture && re.Cap == g {
		return re
	}
	for _, sub := range re.Sub {
		if c := findCapture(sub, g); c != nil {
			return c
		}
	}
	return nil
}

// keeps reports whether the replacement cannot create an occurrence of a
// string whose bytes are among cb (see the rule above).
func (sh *replShape) keeps(cb byteSet) bool {
	if !sh.ok {
		return false
	}
	var run []outPart
	head, barriers := true, false
	contiguous := func(tail bool) bool {
		if len(run) == 0 {
			return true
		}
		if head && run[0].from != 0 || tail && run[len(run)-1].to != sh.elems-1 {
			return false
		}
		for i, p := range run {
			if p.from < 0 || i > 0 && p.from != run[i-1].to+1 {
				return false
			}
		}
		return true
	}
	for _, p := range sh.parts {
		meets := p.bytes.meets(cb)
		switch {
		case p.lit && meets:
			return false
		case !meets && !p.nonEmpty:
			continue // transparent
		case meets:
			run = append(run, p)
			continue
		}
		if !contiguous(false) {
			return false
		}
		run, head, barriers = run[:0], false, true
	}
	if !barriers && len(run) == 0 {
		return false // may write nothing
	}
	return contiguous(true)
}

// absence is a condition on the text after the flag options under which a
// keyword cannot match the prepared text.
type absence struct {
	cores []needle   // any of them absent: the literal is absent
	any   []*absence // a concatenation: one element absent suffices
	all   []*absence // an alternation: every alternative must be absent
}

// holds reports whether the condition holds on base.
func (a *absence) holds(base string) bool {
	for _, c := range a.cores {
		if !c.in(base) {
			return true
		}
	}
	for _, s := range a.any {
		if s.holds(base) {
			return true
		}
	}
	if len(a.all) == 0 {
		return false
	}
	for _, s := range a.all {
		if !s.holds(base) {
			return false
		}
	}
	return true
}

// keywordAbsence returns the condition under which keyword k cannot match
// after the replacements shapes, or nil when none can be stated.
func keywordAbsence(k *Regex, shapes []replShape) *absence {
	if k.re2 == nil {
		return nil
	}
	t, err := syntax.Parse(k.re2.String(), syntax.Perl)
	if err != nil {
		return nil
	}
	return absenceOf(t, shapes)
}

func absenceOf(re *syntax.Regexp, shapes []replShape) *absence {
	switch re.Op {
	case syntax.OpLiteral:
		return literalAbsence(re.Rune, re.Flags&syntax.FoldCase != 0, shapes)
	case syntax.OpCapture, syntax.OpPlus:
		return absenceOf(re.Sub[0], shapes)
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return absenceOf(re.Sub[0], shapes)
		}
	case syntax.OpConcat:
		var a absence
		for _, sub := range re.Sub {
			if s := absenceOf(sub, shapes); s != nil {
				a.any = append(a.any, s)
			}
		}
		if len(a.any) > 0 {
			return &a
		}
	case syntax.OpAlternate:
		var a absence
		for _, sub := range re.Sub {
			s := absenceOf(sub, shapes)
			if s == nil {
				return nil
			}
			a.all = append(a.all, s)
		}
		if len(a.all) > 0 {
			return &a
		}
	}
	return nil
}

// literalAbsence lists the longest substrings of lit that every
// replacement keeps out (see keeps).
func literalAbsence(lit []rune, fold bool, shapes []replShape) *absence {
	for _, r := range lit {
		if r == utf8.RuneError {
			return nil
		}
	}
	bytesOf := func(rs []rune) byteSet {
		var b byteSet
		for _, r := range rs {
			for _, c := range []byte(string(r)) {
				b.add(c)
			}
			if fold {
				for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
					for _, c := range []byte(string(f)) {
						b.add(c)
					}
				}
			}
		}
		return b
	}
	kept := func(rs []rune) bool {
		cb := bytesOf(rs)
		for i := range shapes {
			if !shapes[i].keeps(cb) {
				return false
			}
		}
		return true
	}
	var a absence
	end := 0 // the end of the last core: a core ending there or before is not the longest
	for i := range lit {
		j := i
		for j < len(lit) && kept(lit[i:j+1]) {
			j++
		}
		if j > i && j > end {
			core := needle{text: string(lit[i:j])}
			if fold {
				core.fold = append([]rune(nil), lit[i:j]...)
			}
			a.cores = append(a.cores, core)
			end = j
		}
	}
	if len(a.cores) == 0 {
		return nil
	}
	return &a
}

// templateAbsence is a template's conditions, one per keyword (nil: none
// stated) for the replacements from one index on.
type templateAbsence struct {
	keywords []*absence
	all      bool // every keyword has a condition
}

// absenceFor states t's keyword conditions for the replacements shapes, or
// returns nil when no keyword has one.
func absenceFor(t *Template, shapes []replShape) *templateAbsence {
	ta := &templateAbsence{keywords: make([]*absence, len(t.Keywords)), all: true}
	some := false
	for i, k := range t.Keywords {
		ta.keywords[i] = keywordAbsence(k, shapes)
		if ta.keywords[i] == nil {
			ta.all = false
		} else {
			some = true
		}
	}
	if !some {
		return nil
	}
	return ta
}

// absencePlan is where Set.Match looks for a proof while it prepares a
// template's text: steps[k] holds the conditions on the text after the
// first k replacements for the rest of them. A proof made after some
// substitutions can drop literals the earlier ones write (a receipt
// template first rewrites misread words such as "L.p.9." to "LPG", then
// reformats amounts), and skips what remains. Steps are stated at the start
// and before each replacement that is costly to run: a check costs a few
// substring searches, as much as a replacement with a literal to look for.
type absencePlan struct {
	steps []*templateAbsence
}

// planFor returns t's plan, or nil when it has no replacements (its
// keywords are tested on the text after the flag options, as cheap as a
// proof) or no keywords (nothing can be proven absent).
func planFor(t *Template) *absencePlan {
	if len(t.Options.Replace) == 0 || len(t.Keywords) == 0 {
		return nil
	}
	shapes := make([]replShape, len(t.Options.Replace))
	for i, r := range t.Options.Replace {
		shapes[i] = shapeOf(r)
	}
	pl := &absencePlan{steps: make([]*templateAbsence, len(shapes))}
	some := false
	for k, r := range t.Options.Replace {
		if k > 0 && !r.Re.costly() {
			continue
		}
		pl.steps[k] = absenceFor(t, shapes[k:])
		some = some || pl.steps[k] != nil
	}
	if !some {
		return nil
	}
	return pl
}

// costly reports whether a substitution may scan the text position by
// position: no literal prefix for Go's regexp to search for and no
// required literal to refuse the text with.
func (r *Regex) costly() bool {
	if r.re2 == nil {
		return true
	}
	prefix, _ := r.re2.LiteralPrefix()
	return prefix == "" && r.need == nil
}

// rejects reports whether the plan proves, on the text s after the first k
// replacements, that some keyword (every keyword, with all) cannot match
// the prepared text.
func (pl *absencePlan) rejects(k int, s string, all bool) bool {
	if pl == nil || pl.steps[k] == nil {
		return false
	}
	ta := pl.steps[k]
	if all && !ta.all {
		return false
	}
	for _, a := range ta.keywords {
		switch {
		case a == nil:
		case a.holds(s):
			if !all {
				return true
			}
		case all:
			return false
		}
	}
	return all
}
