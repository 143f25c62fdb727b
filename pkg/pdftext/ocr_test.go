package pdftext

import (
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/pdftext/pdftexttest"
	"github.com/stretchr/testify/require"
)

// ocrTestTimeout is generous: tesseract takes seconds per page and the test
// machine is shared; the deadline itself is tested elsewhere.
const ocrTestTimeout = 2 * time.Minute

// scannedPDF has a text page and a page that is only an image of text, as
// a scanned order is.
func scannedPDF() []byte {
	img := pdftexttest.TextImage([]string{"PURCHASE ORDER 2024", "Quantity 25 pieces"}, 4)
	b := img.Bounds()
	// 4 image pixels per point would be 288 dpi; draw it at 150 dpi so the
	// 300 dpi rendering upsamples it slightly, as a real scan would be.
	// A page just larger than the image keeps tesseract's work small.
	w, h := float64(b.Dx())*72/150, float64(b.Dy())*72/150
	return pdftexttest.Build(
		pdftexttest.Page{Width: 300, Height: 100, Texts: []pdftexttest.Text{{X: 20, Y: 40, S: "Cover letter"}}},
		pdftexttest.Page{Width: w + 40, Height: h + 40, Images: []pdftexttest.Image{{X: 20, Y: 20, W: w, H: h, Img: img}}},
	)
}

func TestOCRImageOnlyPage(t *testing.T) {
	t.Parallel()
	requireTool(t, "tesseract")
	ocr, err := newOCRRunner(Options{OCRLanguages: "eng"}.withDefaults())
	require.NoError(t, err)
	shared := sharedPdfium(t)
	engines := map[string]Engine{
		// Same warm pool, with OCR switched on.
		EnginePdfium: &pdfiumEngine{opts: Options{Timeout: ocrTestTimeout, MaxOutputBytes: DefaultMaxOutputBytes}, ocr: ocr, pool: shared.pool},
	}
	if ocr.pdftoppm != "" {
		e, err := New(Options{Engine: EnginePdftotext, OCR: true, OCRLanguages: "eng", Timeout: ocrTestTimeout})
		require.NoError(t, err)
		engines[EnginePdftotext] = e
	}
	for name, eng := range engines {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := eng.Extract(t.Context(), scannedPDF())
			require.NoError(t, err)
			require.Len(t, got.Pages, 2)
			require.Equal(t, []string{name, EngineOCR}, got.Engines())
			require.Contains(t, got.Pages[0].Text, "Cover letter")
			require.Equal(t, EngineOCR, got.Pages[1].Engine)
			require.Contains(t, got.Pages[1].Text, "PURCHASE ORDER 2024")
			require.Contains(t, got.Pages[1].Text, "Quantity 25 pieces")
		})
	}
}

func TestOCRLeavesBlankPagesAlone(t *testing.T) {
	t.Parallel()
	requireTool(t, "tesseract")
	requireTool(t, "pdftotext")
	eng, err := New(Options{Engine: EnginePdftotext, OCR: true})
	require.NoError(t, err)
	got, err := eng.Extract(t.Context(), pdftexttest.Build(pdftexttest.Page{}))
	require.NoError(t, err)
	require.Equal(t, []string{EnginePdftotext}, got.Engines())
}

func TestOCREngine(t *testing.T) {
	t.Parallel()
	requireTool(t, "tesseract")
	requireTool(t, "pdftoppm")
	eng, err := New(Options{Engine: EngineOCR, OCRLanguages: "eng", Timeout: ocrTestTimeout})
	require.NoError(t, err)
	got, err := eng.Extract(t.Context(), scannedPDF())
	require.NoError(t, err)
	require.Len(t, got.Pages, 2)
	require.Equal(t, []string{EngineOCR}, got.Engines())
	require.Contains(t, got.Pages[0].Text, "Cover letter")
	require.Contains(t, got.Pages[1].Text, "PURCHASE ORDER 2024")
}
