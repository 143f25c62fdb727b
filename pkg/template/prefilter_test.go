package template

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// allRegexes collects every *Regex reachable from v (fields, keywords,
// lines and tables rules, replacements, docintake rules).
func allRegexes(v any) []*Regex {
	var out []*Regex
	seen := map[uintptr]bool{}
	var walk func(reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if v.IsNil() || seen[v.Pointer()] {
				return
			}
			seen[v.Pointer()] = true
			if r, ok := v.Interface().(*Regex); ok {
				out = append(out, r)
				return
			}
			walk(v.Elem())
		case reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Struct:
			for i := range v.NumField() {
				walk(v.Field(i))
			}
		case reflect.Slice, reflect.Array:
			for i := range v.Len() {
				walk(v.Index(i))
			}
		case reflect.Map:
			for it := v.MapRange(); it.Next(); {
				walk(it.Value())
			}
		}
	}
	walk(reflect.ValueOf(v))
	return out
}

// TestRequiredLiterals checks which patterns get a required-literal
// prefilter, and that the prefilter never refuses a text the engine
// matches: case folding beyond ASCII (Kelvin sign, long s), alternatives,
// repeats, literals after a prefix, invalid UTF-8.
func TestRequiredLiterals(t *testing.T) {
	t.Parallel()
	cases := map[string][]string{
		`(?i)(\binvoice\b|rechnung|\bfacture\b)`: {"invoice", "rechnung", "facture"},
		`(?i)\bcredit note\b`:                    {"credit note"},
		`\n.*\bTAX\s+\$?([\d,]+\.\d{2})`:         {"TAX"},
		`(?i)kelvin|strasse`:                     {"kelvin", "strasse"},
		`x?(?:ab){2,}`:                           {"ab"},
		`PO #\s+(\d+)`:                           nil, // Go's regexp searches the prefix itself
		`VENDOR\s+SHIP TO`:                       nil,
		`a|b`:                                    nil, // one byte: not worth a test
		`(?i)invoice|\d+`:                        nil, // an alternative without a literal
		`x*yy?`:                                  nil,
		`(?:total)?\d+`:                          nil,
	}
	texts := []string{"", "INVOICE", "Rechnung 1", "Facture", "\u212aELVIN", "stra\u017f\u017fe", "STRASSE", "Stra\u00dfe",
		"credit\xffnote", "CREDIT NOTE", "abab x", "ababx", "\n x TAX 1.00", "in\xffvoice", "PO # 12", "xy"}
	for src, want := range cases {
		r, err := CompileRegex(src)
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		var got []string
		for _, n := range r.need {
			if n.fold != nil {
				n.text = strings.ToLower(n.text) // the parser keeps folded runes upper case
			}
			got = append(got, n.text)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%q: required literals %q, want %q", src, got, want)
		}
		for _, s := range texts {
			engine := r.re2.FindStringSubmatchIndex(s)
			if engine != nil && !r.mayMatch(s) {
				t.Errorf("%q in %q: the prefilter refuses a text the engine matches", src, s)
			}
			if m, _ := r.search(nil, s); !slices.Equal(m, engine) {
				t.Errorf("%q in %q: search %v, the engine %v", src, s, m, engine)
			}
		}
	}
}

// TestPrefilterMatchesEngine proves the required-literal prefilter changes
// no result: every regex of invoice2data's templates and the deploy
// templates, on every corpus text, gives search, findAll and found the
// engine's own answers.
func TestPrefilterMatchesEngine(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("all templates × all corpus texts: skipped with -short")
	}
	i2d, deploy := allSets(t)
	var res []*Regex
	for _, set := range []*Set{i2d, deploy} {
		for _, tpl := range set.templates {
			for _, r := range allRegexes(tpl) {
				if r.need != nil {
					res = append(res, r)
				}
			}
		}
	}
	texts := corpusTexts(t)
	refused := 0
	for _, r := range res {
		for name, s := range texts {
			want := r.re2.FindAllStringSubmatchIndex(s, -1)
			got, _ := r.findAll(nil, s, -1)
			if len(got) != len(want) {
				t.Fatalf("%q in %s: findAll %d matches, the engine %d", r.Source, name, len(got), len(want))
			}
			for i := range got {
				if !slices.Equal(got[i], want[i]) {
					t.Fatalf("%q in %s: match %d %v, the engine %v", r.Source, name, i, got[i], want[i])
				}
			}
			first, _ := r.search(nil, s)
			if !slices.Equal(first, r.re2.FindStringSubmatchIndex(s)) {
				t.Fatalf("%q in %s: search differs from the engine", r.Source, name)
			}
			if ok, _ := r.found(nil, s); ok != (want != nil) {
				t.Fatalf("%q in %s: found %v, the engine %v", r.Source, name, ok, want != nil)
			}
			if !r.mayMatch(s) {
				refused++
			}
		}
	}
	t.Logf("%d regexes with a prefilter × %d texts: %d refused without the engine", len(res), len(texts), refused)
	if refused == 0 {
		t.Error("the prefilter never refused a text: the corpus no longer exercises it")
	}
}
