package pdftexttest

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/docintake/docintake/pkg/repotest"
)

// SharedDir returns ../shared relative to the repository root (the
// directory holding go.work). When it is absent the test is skipped, or
// failed when CI=true.
func SharedDir(t testing.TB) string {
	t.Helper()
	return filepath.Dir(repotest.Shared(t, "corpus"))
}

// CorpusTextPDFs lists the corpus PDFs that have a text layer, which the
// pdfium engine is measured on: orders/, other/ and
// invoice2data/tests/**.pdf, sorted.
func CorpusTextPDFs(t testing.TB) []string {
	t.Helper()
	c := filepath.Join(SharedDir(t), "corpus")
	var files []string
	for _, pat := range []string{"orders/*.pdf", "other/*.pdf"} {
		m, err := filepath.Glob(filepath.Join(c, pat))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	err := filepath.WalkDir(filepath.Join(c, "invoice2data", "tests"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(p) == ".pdf" {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	return files
}
