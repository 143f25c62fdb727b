package pdftext

import (
	"bytes"
	"image/png"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/docintake/docintake/pkg/pdftext/pdftexttest"
	"github.com/stretchr/testify/require"
)

// requirePopplerRender skips without pdfinfo, pdftotext and pdftoppm
// (poppler-utils), except under CI=true, which installs them.
func requirePopplerRender(t *testing.T) {
	t.Helper()
	for _, bin := range []string{"pdfinfo", "pdftotext", "pdftoppm"} {
		if _, err := exec.LookPath(bin); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is missing: CI installs poppler-utils", bin)
			}
			t.Skipf("%s not installed (apt-get install poppler-utils); skipping", bin)
		}
	}
}

// A page of ordinary size is described with its words where they were
// drawn and rendered at the default resolution.
func TestRenderOrdinaryPage(t *testing.T) {
	t.Parallel()
	requirePopplerRender(t)
	pdf := orderPDF()
	l, err := RenderLayout(t.Context(), pdf, RenderOptions{})
	require.NoError(t, err)
	require.Equal(t, 2, l.PageCount)
	require.Len(t, l.Pages, 2)
	require.Empty(t, l.Notes)
	p := l.Pages[0]
	require.Equal(t, 1, p.Number)
	require.InDelta(t, pdftexttest.A4Width, p.Width, 0.01)
	require.InDelta(t, pdftexttest.A4Height, p.Height, 0.01)
	require.Equal(t, float64(DefaultRenderDPI), p.DPI)
	var po Word
	for _, w := range p.Words {
		if w.Text == "PO-4711" {
			po = w
		}
	}
	// orderPDF draws "PO-4711" at x 200 pt with its baseline 120 pt below
	// the top edge, in 10 pt Helvetica.
	require.InDelta(t, 200, po.X0, 0.5)
	require.Less(t, po.Y0, 120.0)
	require.Greater(t, po.Y1, 117.0)
	require.Contains(t, l.Pages[1].PageText(), "Musterstraße")

	img, err := RenderPage(t.Context(), pdf, 1, p.DPI, RenderOptions{})
	require.NoError(t, err)
	cfg, err := png.DecodeConfig(bytes.NewReader(img))
	require.NoError(t, err)
	// 595 × 842 pt at 110 dpi.
	require.InDelta(t, 595.0/72*110, cfg.Width, 1)
	require.InDelta(t, 842.0/72*110, cfg.Height, 1)
}

// A hostile document cannot make the review page unbounded: of 2,000
// pages the first MaxPages are described (and the notes say so), and a
// 30,000 × 30,000 pt page is drawn at a resolution that keeps its image
// within MaxPixels, as the notes say.
func TestRenderLimits(t *testing.T) {
	t.Parallel()
	requirePopplerRender(t)
	t.Run("2000 pages", func(t *testing.T) {
		t.Parallel()
		pages := make([][]string, 2000)
		for i := range pages {
			pages[i] = []string{"page"}
		}
		l, err := RenderLayout(t.Context(), pdftexttest.PDF(pages...), RenderOptions{MaxPages: 5})
		require.NoError(t, err)
		require.Equal(t, 2000, l.PageCount)
		require.Len(t, l.Pages, 5)
		require.Len(t, l.Notes, 1)
		require.Contains(t, l.Notes[0], "2000 pages; the first 5 are shown")
		_, err = RenderPage(t.Context(), pdftexttest.PDF(pages...), 6, DefaultRenderDPI, RenderOptions{MaxPages: 5})
		require.ErrorContains(t, err, "outside the limits")
	})
	t.Run("30000 pt page", func(t *testing.T) {
		t.Parallel()
		pdf := pdftexttest.Build(pdftexttest.Page{Width: 30000, Height: 30000,
			Texts: []pdftexttest.Text{{X: 72, Y: 72, Size: 400, S: "HUGE ORDER"}}})
		opts := RenderOptions{MaxPixels: 1_000_000}
		l, err := RenderLayout(t.Context(), pdf, opts)
		require.NoError(t, err)
		require.Len(t, l.Pages, 1)
		p := l.Pages[0]
		// sqrt(1e6) pixels over 30000/72 inches: 2.4 dpi.
		require.InDelta(t, 2.4, p.DPI, 0.01)
		require.Contains(t, p.Note, "drawn at 2.4 dpi")
		require.Equal(t, []string{p.Note}, l.Notes)
		img, err := RenderPage(t.Context(), pdf, 1, p.DPI, opts)
		require.NoError(t, err)
		cfg, err := png.DecodeConfig(bytes.NewReader(img))
		require.NoError(t, err)
		require.LessOrEqual(t, cfg.Width*cfg.Height, 1_000_000)
		require.Greater(t, cfg.Width, 900)
	})
	t.Run("a page too large to draw", func(t *testing.T) {
		t.Parallel()
		pdf := pdftexttest.Build(pdftexttest.Page{Width: 30000, Height: 30000})
		l, err := RenderLayout(t.Context(), pdf, RenderOptions{MaxPixels: 100})
		require.NoError(t, err)
		require.Zero(t, l.Pages[0].DPI)
		require.Contains(t, l.Notes[0], "too large to draw")
	})
	t.Run("time limit", func(t *testing.T) {
		t.Parallel()
		_, err := RenderPage(t.Context(), orderPDF(), 1, 100, RenderOptions{Timeout: 1})
		require.ErrorIs(t, err, ErrTimeout)
	})
}

// A document poppler cannot read is ErrUnreadable, not a crash.
func TestRenderUnreadable(t *testing.T) {
	t.Parallel()
	requirePopplerRender(t)
	_, err := RenderLayout(t.Context(), []byte("%PDF-1.4\nnot really"), RenderOptions{})
	require.ErrorIs(t, err, ErrUnreadable)
	require.False(t, strings.Contains(err.Error(), "panic"))
}
