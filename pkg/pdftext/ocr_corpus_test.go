package pdftext

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/docintake/docintake/pkg/pdftext/pdftexttest"
	"github.com/stretchr/testify/require"
)

// TestCorpusOCRLayout measures how well OCR text keeps the layout of
// `pdftotext -layout`, with the score the pdfium engine is held to
// (pdftexttest.Compare), on scanned copies of the corpus's text PDFs
// (pdftexttest.Scan at PDFTEXT_OCR_CORPUS dpi, then rendered at ocrDPI as
// the engines do). It compares the words laid on a character grid
// (recognize, the engine's method) with tesseract's own page segmentation
// for a uniform block with inter-word spaces preserved and with its plain
// text (the method before). It costs minutes of CPU, so it runs only when
// PDFTEXT_OCR_CORPUS is set (BENCHMARKS.md records the figures):
//
//	cd pkg && PDFTEXT_OCR_CORPUS=150 go test -count=1 -v -run TestCorpusOCRLayout ./pdftext/
func TestCorpusOCRLayout(t *testing.T) {
	dpi, _ := strconv.Atoi(os.Getenv("PDFTEXT_OCR_CORPUS"))
	if dpi <= 0 {
		t.Skip("set PDFTEXT_OCR_CORPUS=<scan dpi, e.g. 150> to measure OCR layout on the corpus (minutes of CPU)")
	}
	for _, tool := range []string{"tesseract", "pdftoppm", "pdftotext", "pdfinfo"} {
		requireTool(t, tool)
	}
	corpus := filepath.Join(pdftexttest.SharedDir(t), "corpus")
	ocr, err := newOCRRunner(Options{Timeout: 5 * 60e9}.withDefaults())
	require.NoError(t, err)
	plain := func(extra ...string) func(context.Context, string, []byte) (string, error) {
		return func(ctx context.Context, dir string, img []byte) (string, error) {
			args := append([]string{"stdin", "stdout", "-l", ocr.langs}, extra...)
			out, err := ocr.sb.run(ctx, dir, ocr.tesseract, args, img)
			return strings.TrimRight(string(out), "\f\n ") + "\n", err
		}
	}
	methods := []struct {
		name string
		run  func(context.Context, string, []byte) (string, error)
	}{
		{"word boxes on a grid (tsv)", ocr.recognize},
		{"psm 6 + preserve_interword_spaces", plain("--psm", "6", "-c", "preserve_interword_spaces=1")},
		{"psm 3 plain text (before)", plain()},
	}
	type agg struct {
		recall, lv, cols      []float64
		pairs, pairsSameLine  int
		colPairs, colTogether int
	}
	aggs := make([]agg, len(methods))
	for _, f := range pdftexttest.CorpusTextPDFs(t) {
		name, err := filepath.Rel(corpus, f)
		require.NoError(t, err)
		ref, err := exec.Command("pdftotext", "-layout", "-enc", "UTF-8", f, "-").Output()
		require.NoError(t, err, name)
		pdf, err := os.ReadFile(f)
		require.NoError(t, err)
		scanned, err := pdftexttest.Scan(pdf, dpi)
		require.NoError(t, err, name)
		dir := t.TempDir()
		file := filepath.Join(dir, "scan.pdf")
		require.NoError(t, os.WriteFile(file, scanned, 0o600))
		info, err := exec.Command("pdfinfo", file).Output()
		require.NoError(t, err)
		n, _ := strconv.Atoi(string(regexp.MustCompile(`(?m)^Pages:\s+(\d+)`).FindSubmatch(info)[1]))
		texts := make([]strings.Builder, len(methods))
		for p := 1; p <= n; p++ {
			img, err := ocr.render(t.Context(), dir, file, p, nil)
			require.NoError(t, err)
			for i, m := range methods {
				s, err := m.run(t.Context(), dir, img)
				require.NoError(t, err, "%s page %d %s", name, p, m.name)
				texts[i].WriteString(s + "\f")
			}
		}
		for i, m := range methods {
			s := pdftexttest.Compare(string(ref), texts[i].String())
			t.Logf("%-48s %-34s recall %.4f (%4d words) label/value %.4f (%3d pairs) columns %.4f (%4d pairs) split %q",
				name, m.name, s.WordRecall, s.RefWords, s.LabelValue, s.Pairs, s.Columns, s.ColumnPairs, s.Split)
			aggs[i].recall = append(aggs[i].recall, s.WordRecall)
			aggs[i].lv = append(aggs[i].lv, s.LabelValue)
			aggs[i].pairs += s.Pairs
			aggs[i].pairsSameLine += int(math.Round(s.LabelValue * float64(s.Pairs)))
			aggs[i].cols = append(aggs[i].cols, s.Columns)
			aggs[i].colPairs += s.ColumnPairs
			aggs[i].colTogether += int(math.Round(s.Columns * float64(s.ColumnPairs)))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n| method | documents | word recall min / mean | label/value min / mean | label/value pairs on one line | column pairs min / mean | column pairs on one line |\n|---|---|---|---|---|---|---|\n")
	for i, m := range methods {
		a := aggs[i]
		fmt.Fprintf(&b, "| %s | %d | %.4f / %.4f | %.4f / %.4f | %d of %d | %.4f / %.4f | %d of %d |\n", m.name, len(a.lv),
			minOf(a.recall), meanOf(a.recall), minOf(a.lv), meanOf(a.lv), a.pairsSameLine, a.pairs,
			minOf(a.cols), meanOf(a.cols), a.colTogether, a.colPairs)
	}
	t.Log(b.String())
	// The engine's method must keep at least as many pairs together as the
	// alternatives, and no fewer than measured when it was chosen.
	for i := 1; i < len(methods); i++ {
		require.GreaterOrEqual(t, meanOf(aggs[0].lv), meanOf(aggs[i].lv), "label/value mean vs %s", methods[i].name)
		require.GreaterOrEqual(t, meanOf(aggs[0].cols), meanOf(aggs[i].cols), "column pairs mean vs %s", methods[i].name)
	}
	require.GreaterOrEqual(t, meanOf(aggs[0].lv), corpusOCRLabelValueFloor)
	require.GreaterOrEqual(t, meanOf(aggs[0].cols), corpusOCRColumnsFloor)
}

// The grid layout's mean label/value and column-pair scores on the corpus
// scanned at 150 dpi, measured 2026-11-24 (0.9311 and 0.8613, BENCHMARKS.md),
// rounded down: a change to the layout must not keep fewer pairs together.
const (
	corpusOCRLabelValueFloor = 0.93
	corpusOCRColumnsFloor    = 0.86
)

func meanOf(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(max(len(xs), 1))
}

func minOf(xs []float64) float64 {
	m := math.Inf(1)
	for _, x := range xs {
		m = math.Min(m, x)
	}
	return m
}
