package pdftext

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/pdftext/pdftexttest"
	"github.com/stretchr/testify/require"
)

// poppler's engines read the shared corpus's two broken but readable PDFs
// (PROVENANCE.md: a page tree whose /Kids holds the Pages node itself; a
// content stream declaring /Length 9999999999) and report the repair in
// Text.Damage; no intact PDF of the corpus has any.
func TestDamageReported(t *testing.T) {
	t.Parallel()
	requireTool(t, "pdftotext")
	dir := filepath.Join(pdftexttest.SharedDir(t), "corpus")
	pt, err := New(Options{Engine: EnginePdftotext, Timeout: 10 * time.Second})
	require.NoError(t, err)
	res, err := New(Options{Engine: EngineResident, Timeout: 10 * time.Second, Workers: 1, ResidentBin: pdftexttest.ResidentBin(t)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = res.Close() })
	read := func(eng Engine, f string) *Text {
		pdf, err := os.ReadFile(f)
		require.NoError(t, err)
		txt, err := eng.Extract(t.Context(), pdf)
		require.NoError(t, err, f)
		return txt
	}
	for _, eng := range []Engine{pt, res} {
		cyclic := read(eng, filepath.Join(dir, "malformed", "bad_cyclic_pages.pdf"))
		require.Contains(t, cyclic.Damage, "Loop in Pages tree", eng.Name())
		huge := read(eng, filepath.Join(dir, "malformed", "bad_huge_length.pdf"))
		require.Contains(t, huge.Damage, "Missing 'endstream' or incorrect stream length", eng.Name())
		for _, f := range pdftexttest.CorpusTextPDFs(t) {
			require.Empty(t, read(eng, f).Damage, "%s %s", eng.Name(), f)
		}
	}
}

// damageOf keeps poppler's reports of structural repairs, without its
// prefix, and drops messages that leave the text as printed.
func TestDamageOf(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{"Loop in Pages tree", "Invalid XRef entry 12", "Unexpected end of file in flate stream"}, damageOf([]string{
		"Syntax Error: Loop in Pages tree",
		"Syntax Error: Loop in Pages tree",
		"Syntax Error (370): Unknown operator 'endstream'",
		"Syntax Error (445): Unknown operator 'xref'",
		"error (12): Invalid XRef entry 12",
		"Syntax Warning: Couldn't find a font for 'Arial'",
		"error: Unexpected end of file in flate stream",
		"",
	}))
}

// The shared corpus's flate bomb (1 MiB inflating to 1 GiB) is refused
// before poppler inflates it, by every engine built on poppler and by auto
// without its pdfium fallback; no other PDF of the corpus is.
func TestScreenRefusesFlateBomb(t *testing.T) {
	t.Parallel()
	requireTool(t, "pdftotext")
	dir := filepath.Join(pdftexttest.SharedDir(t), "corpus")
	bomb, err := os.ReadFile(filepath.Join(dir, "malformed", "bad_flate_bomb.pdf"))
	require.NoError(t, err)
	err = screen(bomb)
	require.ErrorIs(t, err, ErrUnreadable)
	require.ErrorIs(t, err, errBomb)
	for _, opts := range []Options{{Engine: EnginePdftotext}, {Engine: EngineResident, ResidentBin: pdftexttest.ResidentBin(t)},
		{Engine: EngineAuto, ResidentBin: pdftexttest.ResidentBin(t)}} {
		opts.Timeout, opts.Workers = 20*time.Second, 1
		eng, err := New(opts)
		require.NoError(t, err)
		// The refusal itself is the behaviour; how long screening takes
		// on a busy machine is a benchmark's business, not a test's.
		_, err = eng.Extract(t.Context(), bomb)
		require.ErrorIs(t, err, errBomb, opts.Engine)
		require.NotContains(t, err.Error(), "pdfium", "auto hands a bomb to no fallback")
		require.NoError(t, eng.Close())
	}
	files, err := filepath.Glob(filepath.Join(dir, "*", "*.pdf"))
	require.NoError(t, err)
	files = append(files, pdftexttest.CorpusTextPDFs(t)...)
	for _, f := range files {
		if filepath.Base(f) == "bad_flate_bomb.pdf" {
			continue
		}
		pdf, err := os.ReadFile(f)
		require.NoError(t, err)
		if err := screen(pdf); errors.Is(err, errBomb) {
			t.Errorf("%s: %v", f, err)
		}
	}
}
