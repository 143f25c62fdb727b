package template

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/docintake/docintake/pkg/repotest"
)

// adversarialTemplates are templates whose replacements can create their
// keywords, or nearly: each case of absence.go's rule once on either side
// of its edge.
var adversarialTemplates = map[string]string{
	// Reordered groups join "M" and "akro": provable only from "M" or
	// "akro" alone, each copied whole.
	"reorder.yml": `keywords: [Makro]
options: {replace: [['(M)x(akro)', '\1\2']]}`,
	// Adjacent groups around a literal: the runs are contiguous.
	"amount.yml": `keywords: ['12,50', Total]
options: {replace: [['(\d+)\.(\d{2})', '\1,\2'], ['TOT(al)', 'Tot\1']]}`,
	// An empty replacement joins the text around it.
	"empty.yml": `keywords: [abc]
options: {replace: [['-', '']]}`,
	// The replacement writes a keyword character (t).
	"sharedchar.yml": `keywords: [total]
options: {replace: [[TOT, tot]]}`,
	// Case-insensitive keyword; the replacement writes the Kelvin sign.
	"fold.yml": "keywords: ['(?i)kelvin']\noptions: {replace: [[Q, \"\u212a\"], [x, y]]}",
	// Exclude keywords do not change the proof.
	"exclude.yml": `keywords: [Invoice]
exclude_keywords: [Credit]
options: {replace: [[Inv0ice, INVOICE], ['\s+', ' ']]}`,
	// Group 0 and a nested optional group, which may write nothing.
	"group0.yml": `keywords: [abc, xyz]
options: {replace: [[ab, '\g<0>c'], ['x(q)?', '\1yz']]}`,
	// A backtracking pattern with a group reference: not provable; one
	// without a reference is.
	"backtrack.yml": `keywords: [bc]
options: {replace: [['(?<=a)(b)', '\1c']]}`,
	"backtrack2.yml": `keywords: [pq]
options: {replace: [['(?<=p)r', q]]}`,
	// Alternation and concatenation in the keyword; an escape in the
	// replacement writes a newline.
	"alt.yml": `keywords: ['(?i)(foo|bar)\s+No', 'end\nline']
options: {replace: [[o, '0'], [';', '\n']]}`,
	"plain.yml": `keywords: [plain]`,
}

func adversarialSet(t *testing.T) *Set {
	t.Helper()
	var tpls []*Template
	for name, yml := range adversarialTemplates {
		tpl, err := Parse(name, []byte(yml))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(tpl.Problems) > 0 {
			t.Fatalf("%s: %v", name, tpl.Problems)
		}
		tpls = append(tpls, tpl)
	}
	set, err := NewSet(tpls...)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// TestKeywordAbsenceRule checks absence.go's rule on its edges: which
// keywords get a proof, and that it holds exactly when the literal is
// missing from the text before the replacements.
func TestKeywordAbsenceRule(t *testing.T) {
	t.Parallel()
	set := adversarialSet(t)
	cases := []struct {
		template, keyword string
		provable          bool
		text              string // a text the proof, when stated, rejects
	}{
		{"reorder", "Makro", true, "Mxakr0"},     // no "akro" to copy
		{"amount", "12,50", true, "Total 12.49"}, // "12" and "50" can only be copied
		{"amount", "Total", true, "TOTAL"},       // the core "al" ("Tot" is written)
		{"empty", "abc", false, ""},
		{"sharedchar", "total", true, "TOTAL"},  // the core "al"
		{"fold", "(?i)kelvin", true, "KELV1N"},  // the core "ELVIN" (k folds to the Kelvin sign)
		{"exclude", "Invoice", true, "Inv0ice"}, // the core "nvoice"
		{"group0", "abc", true, "a b c"},        // "ab" is only copied, "c" written after it
		{"group0", "xyz", true, "q only"},       // "x" is removed, "yz" written
		{"backtrack", "bc", false, ""},          // a group copy on the backtracking engine
		{"backtrack2", "pq", true, "r only"},    // the core "p"
		{"alt", "(?i)(foo|bar)\\s+No", true, "FOO N0"},
		{"alt", "end\\nline", true, "end;lin"}, // "\n" is written: the cores "end" and "line"
	}
	for _, c := range cases {
		tpl, _ := set.ByName(c.template)
		var i int
		for i = range set.templates {
			if set.templates[i] == tpl {
				break
			}
		}
		var a *absence
		if pl := set.plans[i]; pl != nil && pl.steps[0] != nil {
			for j, k := range tpl.Keywords {
				if k.Source == c.keyword {
					a = pl.steps[0].keywords[j]
				}
			}
		}
		if (a != nil) != c.provable {
			t.Errorf("%s, keyword %q: proof stated %v, want %v", c.template, c.keyword, a != nil, c.provable)
			continue
		}
		if a == nil {
			continue
		}
		if c.text != "" {
			if !a.holds(c.text) {
				t.Errorf("%s, keyword %q: the proof does not reject %q", c.template, c.keyword, c.text)
			}
			k := tpl.Keywords[slicesIndexSource(tpl.Keywords, c.keyword)]
			if ok, _ := k.found(nil, tpl.Prepare(c.text)); ok {
				t.Errorf("%s, keyword %q: matches the prepared %q the proof rejects", c.template, c.keyword, c.text)
			}
		}
	}
}

func slicesIndexSource(ks []*Regex, src string) int {
	for i, k := range ks {
		if k.Source == src {
			return i
		}
	}
	return -1
}

// checkSelection requires Set.Match and Set.Choose to choose as the plain
// selection does (and as the reference of prepare_test.go), with the same
// trace, and every proof each plan states on text to be right: a keyword
// proven absent after k replacements does not match the prepared text. It
// returns the number of proofs that rejected a keyword.
func checkSelection(t *testing.T, set *Set, name, text string) int {
	t.Helper()
	got, gotTrace := set.Match(text)
	plain, plainTrace := set.match(nil, text, true, false)
	ref, refTrace := refMatch(set, text)
	if got != plain || got != ref || !reflect.DeepEqual(gotTrace, plainTrace) || !reflect.DeepEqual(gotTrace, refTrace) {
		t.Fatalf("%s: Set.Match chose %v, the plain selection %v, the reference %v (or the traces differ)", name, got, plain, ref)
	}
	if c := set.Choose(text); c != got {
		t.Fatalf("%s: Set.Choose chose %v, Set.Match %v", name, c, got)
	}
	rejected := 0
	for i, tpl := range set.templates {
		pl := set.plans[i]
		if pl == nil {
			continue
		}
		prepared := tpl.Prepare(text)
		s := tpl.Options.prepareBase(text)
		for k, step := range pl.steps {
			if step != nil {
				for j, a := range step.keywords {
					if a == nil || !a.holds(s) {
						continue
					}
					rejected++
					if ok, _ := tpl.Keywords[j].found(nil, prepared); ok {
						t.Fatalf("%s, template %s, keyword %q: proven absent after %d replacements, yet it matches the prepared text",
							name, tpl.Name, tpl.Keywords[j].Source, k)
					}
				}
			}
			r := tpl.Options.Replace[k]
			if out, err := r.Re.sub(nil, s, r.With); err == nil {
				s = out
			}
		}
	}
	return rejected
}

// fragments returns pieces to build texts from: the templates' keywords
// and replacements as written, the cores their proofs look for, and
// characters on the edges (case folds, invalid UTF-8, whitespace).
func fragments(sets ...*Set) []string {
	out := []string{" ", "  ", "\n", "\t", ".", ",", "-", "12", "3.45", "\u212a", "\u017f", "\xff", "\xc3", "é", "€", "Mx", "akro", "K"}
	for _, set := range sets {
		for i, tpl := range set.templates {
			for _, k := range append(append([]*Regex(nil), tpl.Keywords...), tpl.ExcludeKeywords...) {
				out = append(out, k.Source, strings.ToUpper(k.Source), strings.ToLower(k.Source))
			}
			for _, r := range tpl.Options.Replace {
				out = append(out, r.Re.Source, r.With)
			}
			if pl := set.plans[i]; pl != nil {
				for _, step := range pl.steps {
					if step == nil {
						continue
					}
					for _, a := range step.keywords {
						out = append(out, cores(a)...)
					}
				}
			}
		}
	}
	return out
}

func cores(a *absence) []string {
	if a == nil {
		return nil
	}
	var out []string
	for _, c := range a.cores {
		out = append(out, c.text)
	}
	for _, s := range append(append([]*absence(nil), a.any...), a.all...) {
		out = append(out, cores(s)...)
	}
	return out
}

// generatedTexts mixes fragments at random (a fixed seed: failures repeat).
func generatedTexts(frags []string, n int) []string {
	rng := rand.New(rand.NewPCG(1, 2))
	texts := make([]string, n)
	for i := range texts {
		var b strings.Builder
		for range 1 + rng.IntN(16) {
			f := frags[rng.IntN(len(frags))]
			if rng.IntN(4) == 0 && len(f) > 1 {
				// A piece of a fragment: half a keyword, a literal
				// cut inside a UTF-8 sequence.
				lo := rng.IntN(len(f))
				f = f[lo : lo+1+rng.IntN(len(f)-lo)]
			}
			b.WriteString(f)
		}
		texts[i] = b.String()
	}
	return texts
}

// TestAbsenceGenerated runs checkSelection on generated texts for the
// adversarial templates and the repository's deploy templates: it needs no
// corpus.
func TestAbsenceGenerated(t *testing.T) {
	t.Parallel()
	adv := adversarialSet(t)
	deploy, err := Load(filepath.Join(repotest.Root(t), "deploy", "templates"))
	if err != nil {
		t.Fatal(err)
	}
	rejected := 0
	for i, text := range generatedTexts(fragments(adv, deploy), 20000) {
		for _, set := range []*Set{adv, deploy} {
			rejected += checkSelection(t, set, fmt.Sprintf("generated text %d %q", i, text), text)
		}
	}
	if rejected == 0 {
		t.Error("no proof ever rejected a keyword: the texts no longer exercise the rule")
	}
	t.Logf("%d keywords rejected by a proof", rejected)
}

// TestAbsenceCorpus runs checkSelection on every text of the shared corpus
// (PDFs through pdftotext -layout, invoice2data's .txt tests) and on texts
// generated from invoice2data's templates, for invoice2data's 215 templates
// plus its test templates, the deploy templates and the adversarial ones.
func TestAbsenceCorpus(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("all templates × all corpus texts: skipped with -short")
	}
	i2d, deploy := allSets(t)
	adv := adversarialSet(t)
	texts := corpusTexts(t)
	for i, text := range generatedTexts(fragments(i2d), 3000) {
		texts[fmt.Sprintf("generated text %d %q", i, text)] = text
	}
	rejected := 0
	for name, text := range texts {
		for _, set := range []*Set{i2d, deploy, adv} {
			rejected += checkSelection(t, set, name, text)
		}
	}
	if rejected == 0 {
		t.Error("no proof ever rejected a keyword: the corpus no longer exercises the rule")
	}
	t.Logf("%d texts, %d keywords rejected by a proof", len(texts), rejected)
}
