// Package templatetest holds test helpers for pkg/template and its users:
// locating the shared corpus and turning PDFs into layout text.
package templatetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/docintake/docintake/pkg/repotest"

	"github.com/docintake/docintake/pkg/pdftext"
	"github.com/docintake/docintake/pkg/template"
)

// SharedDir returns ../shared relative to the repository root (the directory
// holding go.work). When it is absent the test is skipped, or failed when
// CI=true.
func SharedDir(t testing.TB) string {
	t.Helper()
	return repotest.Shared(t)
}

// RepoRoot returns the directory holding go.work above the test's working
// directory.
func RepoRoot(t testing.TB) string {
	t.Helper()
	return repotest.Root(t)
}

var (
	engineOnce sync.Once
	engine     pdftext.Engine
	engineErr  error
)

// PDFText returns the pdftotext -layout text of a PDF (pages joined by form
// feeds), the reader invoice2data's golden files were made with. A .txt
// file is read as text, as invoice2data does.
func PDFText(t testing.TB, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Ext(path) == ".txt" {
		return string(data)
	}
	engineOnce.Do(func() {
		engine, engineErr = pdftext.New(pdftext.Options{Engine: pdftext.EnginePdftotext})
	})
	if engineErr != nil {
		t.Fatalf("templatetest: pdftotext engine: %v", engineErr)
	}
	txt, err := engine.Extract(context.Background(), data)
	if err != nil {
		t.Fatalf("templatetest: extract %s: %v", path, err)
	}
	return txt.String()
}

// AreaFunc crops a region of the PDF at path through the pdftotext engine's
// ExtractRegion, the path the processor and intakectl take (invoice2data's
// -f -l -r -x -y -W -H -layout), so the golden test exercises it.
func AreaFunc(path string) template.AreaFunc {
	return func(ctx context.Context, a template.Area) (string, error) {
		data, err := os.ReadFile(path)
		if err != nil {
			return "", err
		}
		engineOnce.Do(func() {
			engine, engineErr = pdftext.New(pdftext.Options{Engine: pdftext.EnginePdftotext})
		})
		if engineErr != nil {
			return "", fmt.Errorf("templatetest: pdftotext engine: %w", engineErr)
		}
		t, err := engine.ExtractRegion(ctx, data, pdftext.Region(a))
		if err != nil {
			return "", err
		}
		return t.String(), nil
	}
}
