package store

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/docintake/docintake/pkg/document"
)

// The store's SQL never spells a state out: queries that filter on a kind
// of state bind the list from the state table (statesWhere) or one state
// as a parameter, so adding a state does not mean finding every query that
// should know it.
func TestSQLSpellsNoState(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range document.States {
			if strings.Contains(string(b), "'"+string(s)+"'") {
				t.Errorf("%s spells the state '%s' in SQL: bind it (statesWhere, or the state as a parameter)", f, s)
			}
		}
	}
}

// The one CHECK that names states (documents_success_results: a success
// has both results) names exactly the states whose verdict is success; a
// migration cannot read the state table, so this test holds it to it.
func TestSuccessCheckMatchesStateTable(t *testing.T) {
	files, err := filepath.Glob("migrations/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("migrations: %v", err)
	}
	slices.Sort(files)
	check := regexp.MustCompile(`(?s)documents_success_results CHECK \(\s*state NOT IN \(([^)]*)\)`)
	var last string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if m := check.FindStringSubmatch(string(b)); m != nil {
			last = m[1]
		}
	}
	if last == "" {
		t.Fatal("no migration defines documents_success_results")
	}
	var got []string
	for _, q := range strings.Split(last, ",") {
		got = append(got, strings.Trim(strings.TrimSpace(q), "'"))
	}
	want := statesWhere(func(s document.State) bool { return s.Verdict() == document.VerdictSuccess })
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("documents_success_results names %v; the state table's success states are %v", got, want)
	}
}
