package processor_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/document"
	"github.com/stretchr/testify/require"
)

// A template whose lines block backtracks catastrophically (issue 25
// finding 1) costs its document INTAKE_TEMPLATE_BUDGET per attempt, not
// MatchTimeout per line: each attempt fails naming the template and the
// time limit, the document goes to dlq after INTAKE_PROCESSOR_MAX_FAILURES,
// and the worker serves the next document.
func TestHostileTemplateFailsOnItsBudget(t *testing.T) {
	t.Parallel()
	// pdfium reads in-process: the time is the template's, not a helper's.
	b := setup(t, map[string]string{"INTAKE_TEMPLATE_BUDGET": "300ms", "INTAKE_PROCESSOR_MAX_FAILURES": "2", "INTAKE_PDF_ENGINE": "pdfium"})
	tpl := useAcmeVariant(t, b, "acme-hostile", "    end: Total\n", "    end: Total\n    skip_line: '(?=(a+)+b)a+'\n")
	require.Contains(t, tpl, "skip_line")
	b.addArticles()
	b.start()
	// 30 lines after the first item row (lines before it are not read):
	// each sends skip_line into exponential backtracking.
	hostile := func(ls []string) []string {
		i := slices.Index(ls, "Items")
		return slices.Insert(ls, i+2, slices.Repeat([]string{strings.Repeat("a", 40) + "!"}, 30)...)
	}
	d := b.upload(orderPDF("H-1", hostile), docOpts{template: "acme-hostile"})
	d = b.waitState(d, document.StateDLQ, 60*time.Second)
	ev := b.events(d)
	last := ev[len(ev)-1].Detail
	require.Contains(t, last, "2 failed attempts")
	require.Contains(t, last, "template acme-hostile: time limit exceeded")
	require.Contains(t, last, "budget of 300ms per document")
	require.NotContains(t, last, strings.Repeat("a", 40), "the document's text stays out of the reason")

	ok := b.upload(orderPDF("H-2", nil), docOpts{template: "acme-hostile"})
	b.waitState(ok, document.StateProcessedSuccess, 20*time.Second)
}

// useAcmeVariant puts the test template acme.yml, named name (its party id
// upper-cased) and changed by oldnew's replacements, into b's catalogue as
// INTAKE_TEMPLATES_DIR does, and returns the template's text.
func useAcmeVariant(t *testing.T, b *bundle, name string, oldnew ...string) string {
	t.Helper()
	acme, err := os.ReadFile(filepath.Join("testdata", "templates", "acme.yml"))
	require.NoError(t, err)
	oldnew = append(oldnew, "name: acme", "name: "+name, "party_ids: [ACME]", "party_ids: ["+strings.ToUpper(name)+"]")
	tpl := strings.NewReplacer(oldnew...).Replace(string(acme))
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".yml"), []byte(tpl), 0o644))
	tm, err := catalogue.Open(t.Context(), b.st, zaptest.NewLogger(t), catalogue.Options{Dirs: []string{dir}})
	require.NoError(t, err)
	t.Cleanup(tm.Close)
	b.tmpls = tm
	return tpl
}
