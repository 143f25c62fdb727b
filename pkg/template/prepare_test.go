package template

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/docintake/docintake/pkg/pdftext"
	"github.com/docintake/docintake/pkg/repotest"
)

// The reference implementations below are keyword selection as it was before
// Set.Match shared work between templates: each template prepares the text
// itself (remove_whitespace as re.sub(' +', ''), every substitution through
// findAll and expand: subAll) and every keyword runs the regex engine with groups.

var refSpaceRun = regexp.MustCompile(` +`)

// refSub is the substitution as it was: subAll, the general path.
func refSub(r *Regex, s, repl string) (string, error) { return r.subAll(nil, s, repl) }

func refPrepare(t *Template, text string) string {
	s := text
	if t.Options.RemoveWhitespace {
		s = refSpaceRun.ReplaceAllString(s, "")
	}
	if t.Options.RemoveAccents {
		s = removeAccents(s)
	}
	if t.Options.Lowercase {
		s = strings.ToLower(s)
	}
	for _, r := range t.Options.Replace {
		if out, err := refSub(r.Re, s, r.With); err == nil {
			s = out
		}
	}
	return s
}

func refFound(r *Regex, s string) (bool, error) {
	if r.re2 != nil {
		// The engine itself: search skips it when a required literal is missing.
		return r.re2.FindStringSubmatchIndex(s) != nil, nil
	}
	m, err := r.search(nil, s)
	return m != nil, err
}

func refMatch(s *Set, text string) (*Template, []TemplateTrace) {
	var tr []TemplateTrace
	for _, t := range s.templates {
		if t.DocIntake.Embedded == EmbeddedRequire {
			continue
		}
		ok, kt := t.matches(refPrepare(t, text), refFound)
		tr = append(tr, TemplateTrace{Name: t.Name, File: t.File, Priority: t.Priority, Matched: ok, Keywords: kt})
		if ok {
			return t, tr
		}
	}
	return nil, tr
}

// corpusTexts returns the layout text of every text document of the shared
// corpus (invoice2data's tests, orders, other invoices, synthetic orders)
// and a few made-up texts for the edges of case folding and anchors.
func corpusTexts(t *testing.T) map[string]string {
	t.Helper()
	corpus := filepath.Join(repotest.Shared(t), "corpus")
	eng, err := pdftext.New(pdftext.Options{Engine: pdftext.EnginePdftotext})
	if err != nil {
		t.Skipf("pdftotext engine: %v", err)
	}
	defer eng.Close()
	texts := map[string]string{
		"empty":         "",
		"folds":         "KELVIN \u212a 1\u017f straSSe STRASSE Stra\u00dfe NOVOTEL novotel Van Der  Valk Hotel \n",
		"invalid utf-8": "Novo\xfftel \xff\xfe van\xc3",
		"trailing nl":   "Invoice 12.50 EUR\n",
	}
	for _, pattern := range []string{"invoice2data/tests/*/*.pdf", "invoice2data/tests/*/*.txt", "orders/*.pdf", "other/*.pdf", "synthetic/*.pdf"} {
		paths, err := filepath.Glob(filepath.Join(corpus, pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if filepath.Ext(p) == ".txt" {
				texts[p] = string(data)
				continue
			}
			txt, err := eng.Extract(context.Background(), data)
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			texts[p] = txt.String()
		}
	}
	if len(texts) < 40 {
		t.Fatalf("%d texts: the corpus is incomplete", len(texts))
	}
	return texts
}

// allSets loads invoice2data's templates (leniently, as the golden test
// does) and the repository's deploy templates.
func allSets(t *testing.T) (i2d, deploy *Set) {
	t.Helper()
	root := filepath.Join(repotest.Shared(t), "corpus", "invoice2data")
	i2d, err := LoadWith(LoadOptions{Lenient: true}, filepath.Join(root, "tests", "custom", "templates"), filepath.Join(root, "templates"))
	if err != nil {
		t.Fatal(err)
	}
	deploy, err = Load(filepath.Join(repotest.Root(t), "deploy", "templates"))
	if err != nil {
		t.Fatal(err)
	}
	return i2d, deploy
}

// TestSharedPreparationMatchesPerTemplate proves that Set.Match's shared
// preparation and keyword shortcuts change nothing: over every template of
// invoice2data's set and the repository's deploy templates, and every text of
// the corpus, the shared preparation equals the template's own, Prepare
// equals the reference, every keyword (and every substitution, options and
// field replace alike) gives the reference's answer, and Set.Match picks
// the same template with the same trace. Extraction prepares through
// Prepare and substitutes through sub, both covered here, so its results
// follow.
func TestSharedPreparationMatchesPerTemplate(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("all templates × all corpus texts: skipped with -short")
	}
	i2d, deploy := allSets(t)
	texts := corpusTexts(t)
	var shortcuts [4]int
	for _, set := range []*Set{i2d, deploy} {
		for _, tpl := range set.templates {
			for _, k := range append(append([]*Regex(nil), tpl.Keywords...), tpl.ExcludeKeywords...) {
				shortcuts[k.kind]++
			}
		}
	}
	t.Logf("%d texts; keyword tests: %d regex, %d literal, %d case-folded literal, %d always",
		len(texts), shortcuts[foundRegex], shortcuts[foundLiteral], shortcuts[foundFold], shortcuts[foundAlways])
	if shortcuts[foundLiteral] == 0 || shortcuts[foundFold] == 0 || shortcuts[foundAlways] == 0 {
		t.Errorf("a shortcut is never taken (%v): the corpus no longer exercises it", shortcuts)
	}
	matched := 0
	for name, text := range texts {
		for _, set := range []*Set{i2d, deploy} {
			p := preparer{text: text}
			for _, tpl := range set.templates {
				want := refPrepare(tpl, text)
				id, _ := p.prepare(&tpl.Options, nil)
				if got := p.texts[id]; got != want {
					t.Fatalf("%s, template %s: shared preparation differs from the template's own", name, tpl.Name)
				}
				if got := tpl.Prepare(text); got != want {
					t.Fatalf("%s, template %s: Prepare differs from the reference", name, tpl.Name)
				}
				for _, k := range append(append([]*Regex(nil), tpl.Keywords...), tpl.ExcludeKeywords...) {
					for _, s := range []string{text, want} {
						got, gerr := k.found(nil, s)
						ref, rerr := refFound(k, s)
						if got != ref || (gerr == nil) != (rerr == nil) {
							t.Fatalf("%s, template %s, keyword %q: found %v (%v), reference %v (%v)", name, tpl.Name, k.Source, got, gerr, ref, rerr)
						}
						if s != want {
							continue
						}
						if shared, _ := p.found(id, k, s); shared != ref {
							t.Fatalf("%s, template %s, keyword %q: shared result %v, reference %v", name, tpl.Name, k.Source, shared, ref)
						}
					}
				}
				var reps []Replacement
				reps = append(reps, tpl.Options.Replace...)
				for _, f := range tpl.Fields {
					reps = append(reps, f.Replace...)
				}
				for _, r := range reps {
					for _, s := range []string{text, want} {
						got, gerr := r.Re.sub(nil, s, r.With)
						ref, rerr := refSub(r.Re, s, r.With)
						if got != ref || (gerr == nil) != (rerr == nil) {
							t.Fatalf("%s, template %s, replace %q → %q differs from the reference", name, tpl.Name, r.Re.Source, r.With)
						}
					}
				}
			}
			got, gotTrace := set.Match(text)
			want, wantTrace := refMatch(set, text)
			if got != want || !reflect.DeepEqual(gotTrace, wantTrace) {
				t.Fatalf("%s: Set.Match chose %v, the reference %v (or the traces differ)", name, got, want)
			}
			if got != nil {
				matched++
			}
		}
	}
	if matched < 16 {
		t.Errorf("only %d texts matched a template: the test no longer covers extraction's inputs", matched)
	}
}

// TestFoundShortcuts checks each shortcut of Regex.found against the regex
// engine on the edges: anchors, empty patterns, case folding beyond ASCII
// (Kelvin sign, long s), groups around a literal, invalid UTF-8.
func TestFoundShortcuts(t *testing.T) {
	t.Parallel()
	patterns := map[string]foundKind{
		`$`: foundAlways, `^`: foundAlways, ``: foundLiteral, `(?m)$`: foundAlways, `(?m)^`: foundAlways, `\Z`: foundAlways,
		`Novotel`: foundLiteral, `(Novotel)`: foundLiteral, `(?i)Novotel`: foundFold, `(?i)(novotel)`: foundFold,
		`(?i)kelvin`: foundFold, `(?i)1s`: foundFold, `(?i)van\sder`: foundRegex, `(?i)strasse`: foundFold,
		`(?i)Novo.tel`: foundRegex, `Novotel|Accor`: foundRegex, `(?i)\u00e9t\u00e9`: foundFold,
	}
	texts := []string{"", "x", "novotel", "NOVOTEL!", "No votel", "\u212aelvin", "1\u017f", "STRASSE", "Stra\u00dfe",
		"Novo\xfftel", "\xff", "\u00c9T\u00c9", "ete", "van der\n"}
	for src, kind := range patterns {
		r, err := CompileRegex(src)
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		if r.kind != kind {
			t.Errorf("%q: kind %d, want %d", src, r.kind, kind)
		}
		for _, s := range texts {
			got, _ := r.found(nil, s)
			want, _ := refFound(r, s)
			if got != want {
				t.Errorf("%q in %q: found %v, the regex engine %v", src, s, got, want)
			}
		}
	}
}
