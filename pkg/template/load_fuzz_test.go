package template_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docintake/docintake/pkg/template"
)

// FuzzLoad loads a template directory of two fuzzed files (one YAML, one
// JSON): no panic, and a refusal names the file it is about, since
// start-up stops with that message (DESIGN.md: "file, line and reason").
func FuzzLoad(f *testing.F) {
	f.Add("keywords: [ACME]\ndocintake: {name: a, party_ids: [P1]}\n", `{"keywords": ["X"], "docintake": {"name": "b"}}`)
	f.Add("keywords: [ACME]\ndocintake: {name: same}\n", `{"keywords": ["X"], "docintake": {"name": "same"}}`)
	f.Add("keywords: [A]\ndocintake: {party_ids: [P]}\n", `{"keywords": ["B"], "docintake": {"party_ids": ["P"]}}`)
	// Alias expansion bomb ("billion laughs"): refused, not expanded.
	f.Add("a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"+
		"d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"+
		"keywords: *f\n", "{")
	f.Add("keywords: ['(?<=x)a{1000}{1000}']\nfields: {x: '((a*)*)*b'}\n", `[]`)
	f.Add("\t- !!binary x\n", "\xff\xfe{}")
	f.Fuzz(func(t *testing.T, yml, js string) {
		dir := t.TempDir()
		for name, data := range map[string]string{"one.yml": yml, "two.json": js} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		set, err := template.Load(dir)
		if err != nil {
			if msg := err.Error(); !strings.Contains(msg, "one.yml") && !strings.Contains(msg, "two.json") {
				t.Fatalf("error names no file: %v", err)
			}
			return
		}
		if set == nil {
			t.Fatal("Load returned neither a set nor an error")
		}
	})
}
