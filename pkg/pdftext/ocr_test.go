package pdftext

import (
	"bytes"
	"image"
	"image/png"
	"regexp"
	"strings"
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

func word(text string, left, top, width, height float64) ocrWord {
	return ocrWord{text: text, left: left, top: top, width: width, height: height, conf: 90}
}

func TestLayoutWords(t *testing.T) {
	t.Parallel()
	sp := func(n int) string { return strings.Repeat(" ", n) }
	tests := []struct {
		name  string
		words []ocrWord
		want  []string
	}{
		{
			// tesseract reads the label column as one block and the value
			// column as another: all labels first, then all values.
			// Character width 20 px, left edge 100: x 700 is column 30.
			name: "label and value read as separate blocks share a line",
			words: []ocrWord{
				word("P.O.", 100, 100, 80, 30), word("Number:", 190, 100, 140, 30), word("Date:", 100, 150, 100, 30),
				word("4977", 700, 102, 80, 28), word("03/14/2024", 700, 152, 200, 28),
			},
			want: []string{"P.O. Number:" + sp(18) + "4977", "Date:" + sp(25) + "03/14/2024"},
		},
		{
			name:  "a small mark joins the row it lies on",
			words: []ocrWord{word("Size", 100, 100, 80, 30), word("-", 190, 112, 10, 3), word("XL", 210, 100, 40, 30)},
			want:  []string{"Size - XL"},
		},
		{
			// Overlap 8 of 30 px: under 0.3, so pdftotext prints two lines
			// too.
			name:  "a cell printed most of a line lower is a row of its own",
			words: []ocrWord{word("SE_ID:", 100, 100, 120, 30), word("10,50", 700, 122, 100, 30)},
			want:  []string{"SE_ID:", sp(30) + "10,50"},
		},
		{
			// Overlap 11 of 30 px: a right-hand column set a little lower
			// (another font size) is still on the label's line, as the
			// baselines are for pdftotext.
			name:  "a value set a little lower stays on the line",
			words: []ocrWord{word("Klantnummer:", 100, 100, 240, 30), word("BIC", 700, 119, 60, 30)},
			want:  []string{"Klantnummer:" + sp(18) + "BIC"},
		},
		{
			name: "ghost words and table rules are dropped",
			words: []ocrWord{
				word("(D)", 100, 100, 60, 36), word("D)", 115, 103, 40, 26), // read twice, once inside
				{text: "|", left: 300, top: 100, width: 5, height: 30, conf: 20}, // a table rule
				word("BR:", 400, 110, 4, 5),                                      // letters in a 5 px box
				word("1,00", 500, 100, 80, 30),
			},
			want: []string{"(D)" + sp(17) + "1,00"},
		},
		{
			// tesseract's box of "kunt" covers "je" too.
			name:  "a box drawn too wide does not swallow the next word",
			words: []ocrWord{word("kunt", 100, 100, 100, 30), word("je", 170, 98, 30, 40), word("factuur", 210, 100, 140, 30)},
			want:  []string{"kunt je factuur"},
		},
		{
			name: "a symbol read with low confidence stays",
			words: []ocrWord{word("(CH)", 100, 100, 80, 36),
				{text: "+", left: 190, top: 108, width: 18, height: 19, conf: 15}, word("0,50", 220, 102, 80, 33)},
			want: []string{"(CH) + 0,50"},
		},
		{
			// Median pitch 50 px; 150 px is two missing lines.
			name: "blank lines for vertical gaps",
			words: []ocrWord{word("a", 100, 100, 20, 30), word("b", 100, 150, 20, 30),
				word("c", 100, 200, 20, 30), word("d", 100, 350, 20, 30)},
			want: []string{"a", "b", "c", "", "", "d"},
		},
		{name: "no words", want: []string{""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, lines(layoutWords(tt.words)))
		})
	}
}

func TestParseTSV(t *testing.T) {
	t.Parallel()
	tsv := "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n" +
		"4\t1\t1\t1\t1\t0\t88\t100\t294\t25\t-1\t\n" +
		"5\t1\t1\t1\t1\t1\t88\t101\t122\t24\t92.33\tContoso\n" +
		"5\t1\t1\t1\t1\t2\t223\t100\t159\t25\t96.1\t \n" + // no text
		"5\t1\t1\t1\t1\t3\t223\tx\t159\t25\t96.1\tbroken\n" +
		"5\t1\t1\t1\t1\t4\t390\t100\t0\t25\t96.1\tzero-width\n" +
		"5\t1\t2\t1\t1\t1\t400\t100\t80\t25\t61\t4977\n"
	require.Equal(t, []ocrWord{
		{text: "Contoso", left: 88, top: 101, width: 122, height: 24, conf: 92.33},
		{text: "4977", left: 400, top: 100, width: 80, height: 25, conf: 61},
	}, parseTSV([]byte(tsv)))
}

// labelValuePDF is an order header: the buyer's address, then four labels
// under it with their values in a second column far to the right, as
// purchase orders print them.
func labelValuePage() pdftexttest.Page {
	var texts []pdftexttest.Text
	for i, l := range []string{"Northwind Traders", "1 Harbour Road", "20095 Hamburg"} {
		texts = append(texts, pdftexttest.Text{X: 20, Y: 30 + 14*float64(i), S: l})
	}
	for i, lv := range [][2]string{{"P.O. Number:", "4977"}, {"Order Date:", "03/14/2024"}, {"Vendor No:", "V-1029"}, {"Terms:", "Net 30 days"}} {
		y := 90 + 14*float64(i)
		texts = append(texts, pdftexttest.Text{X: 20, Y: y, S: lv[0]}, pdftexttest.Text{X: 260, Y: y, S: lv[1]})
	}
	return pdftexttest.Page{Width: 360, Height: 160, Texts: texts}
}

// scan returns the image-only copy of pdf at 150 dpi (pdftexttest.Scan).
func scan(t *testing.T, pdf []byte) []byte {
	t.Helper()
	requireTool(t, "pdftoppm")
	requireTool(t, "pdfinfo")
	s, err := pdftexttest.Scan(pdf, 150)
	require.NoError(t, err)
	return s
}

// TestOCRKeepsLabelsWithValues: on a scanned header, tesseract reads the
// labels and the values as two blocks; its plain text put "P.O. Number:"
// and "4977" four lines apart. The OCR text keeps each label and its value
// on one line, with the values aligned in one column, as pdftotext prints
// the text PDF the scan was made from.
func TestOCRKeepsLabelsWithValues(t *testing.T) {
	t.Parallel()
	requireTool(t, "tesseract")
	pdf := scan(t, pdftexttest.Build(labelValuePage()))
	eng, err := New(Options{Engine: EngineOCR, OCRLanguages: "eng", Timeout: ocrTestTimeout})
	require.NoError(t, err)
	got, err := eng.Extract(t.Context(), pdf)
	require.NoError(t, err)
	require.Len(t, got.Pages, 1)
	require.Empty(t, got.Warnings)
	text := got.Pages[0].Text
	cols := map[int]bool{}
	for _, re := range []string{`P\.O\. Number:(\s{2,})4977`, `Order Date:(\s{2,})03/14/2024`, `Vendor No:(\s{2,})V-1029`, `Terms:(\s{2,})Net 30 days`} {
		require.Regexp(t, `(?m)^\s*`+re+`$`, text)
		line := regexp.MustCompile(`(?m)^.*` + re + `$`).FindString(text)
		cols[strings.LastIndex(line, "  ")+2] = true
	}
	require.Len(t, cols, 1, "values in one column:\n%s", text)
}

// imagePages returns a document of one small page per text, each only an
// image of its text (a scanned page).
func imagePages(texts ...string) []pdftexttest.Page {
	var pages []pdftexttest.Page
	for _, s := range texts {
		img := pdftexttest.TextImage([]string{s}, 4)
		b := img.Bounds()
		w, h := float64(b.Dx())*72/150, float64(b.Dy())*72/150
		pages = append(pages, pdftexttest.Page{Width: w + 40, Height: h + 40,
			Images: []pdftexttest.Image{{X: 20, Y: 20, W: w, H: h, Img: img}}})
	}
	return pages
}

// overBudget gives page 2 a budget no page can meet (tesseract alone needs
// more than a millisecond to start) and every other page the default.
func overBudget(r *ocrRunner) {
	r.budgetFor = func(n int) time.Duration {
		if n == 2 {
			return time.Millisecond
		}
		return DefaultOCRPageTimeout
	}
}

// TestOCRPageOverBudgetIsSkipped: a page whose OCR exceeds its budget is
// left empty with a warning naming it; the document's other pages are read,
// with each engine that OCRs.
func TestOCRPageOverBudgetIsSkipped(t *testing.T) {
	t.Parallel()
	requireTool(t, "tesseract")
	requireTool(t, "pdftoppm")
	requireTool(t, "pdftotext")
	opts := Options{OCR: true, OCRLanguages: "eng", Timeout: ocrTestTimeout}.withDefaults()
	ocr, err := newOCRRunner(opts)
	require.NoError(t, err)
	overBudget(ocr)
	pdftotextEng, err := newPdftotext(opts, ocr)
	require.NoError(t, err)
	scanned := imagePages("PURCHASE ORDER 2024", "SLOW PAGE", "Quantity 25 pieces")
	// The text engines read a first page with a text layer, OCR only the
	// others.
	mixed := append([]pdftexttest.Page{{Width: 300, Height: 100, Texts: []pdftexttest.Text{{X: 20, Y: 40, S: "PURCHASE ORDER 2024"}}}}, scanned[1:]...)
	for name, c := range map[string]struct {
		eng       Engine
		pdf       []byte
		page1     string
		skippedAs string
	}{
		EngineOCR:       {&ocrEngine{opts: opts, ocr: ocr}, pdftexttest.Build(scanned...), EngineOCR, EngineOCR},
		EnginePdftotext: {pdftotextEng, pdftexttest.Build(mixed...), EnginePdftotext, EnginePdftotext},
		EnginePdfium:    {&pdfiumEngine{opts: opts, ocr: ocr, pool: sharedPdfium(t).pool}, pdftexttest.Build(mixed...), EnginePdfium, EnginePdfium},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := c.eng.Extract(t.Context(), c.pdf)
			require.NoError(t, err)
			require.Len(t, got.Pages, 3)
			require.Equal(t, []Page{
				{Number: 1, Text: got.Pages[0].Text, Engine: c.page1},
				{Number: 2, Text: got.Pages[1].Text, Engine: c.skippedAs},
				{Number: 3, Text: got.Pages[2].Text, Engine: EngineOCR},
			}, got.Pages)
			require.Contains(t, got.Pages[0].Text, "PURCHASE ORDER 2024")
			require.Empty(t, strings.TrimSpace(got.Pages[1].Text))
			require.Contains(t, got.Pages[2].Text, "Quantity 25 pieces")
			require.Len(t, got.Warnings, 1)
			require.Contains(t, got.Warnings[0], "page 2 not read")
			require.Contains(t, got.Warnings[0], "page budget of 1ms")
		})
	}
}

// A document whose own deadline ends during OCR still fails with
// ErrTimeout: the page budget does not extend it.
func TestOCRDocumentDeadlineStillFails(t *testing.T) {
	t.Parallel()
	requireTool(t, "tesseract")
	requireTool(t, "pdftoppm")
	eng, err := New(Options{Engine: EngineOCR, OCRLanguages: "eng", Timeout: 50 * time.Millisecond})
	require.NoError(t, err)
	_, err = eng.Extract(t.Context(), pdftexttest.Build(imagePages("PURCHASE ORDER 2024")...))
	require.ErrorIs(t, err, ErrTimeout)
}

// TestOCRExtractRegion: the ocr engine reads only the pages of the
// region's range, cropped to its rectangle (given at 72 dpi, like
// invoice2data's area), and keeps the document's page numbers.
func TestOCRExtractRegion(t *testing.T) {
	t.Parallel()
	requireTool(t, "tesseract")
	cover := pdftexttest.Page{Width: 360, Height: 160, Texts: []pdftexttest.Text{{X: 20, Y: 40, S: "Cover letter"}}}
	pdf := scan(t, pdftexttest.Build(cover, labelValuePage(), cover))
	eng, err := New(Options{Engine: EngineOCR, OCRLanguages: "eng", Timeout: ocrTestTimeout})
	require.NoError(t, err)
	// The value column of page 2: x from 250 pt, y from 80 pt to the bottom.
	got, err := eng.(*ocrEngine).ExtractRegion(t.Context(), pdf, Region{FirstPage: 2, LastPage: 2, X: 250, Y: 80, W: 110, H: 80})
	require.NoError(t, err)
	require.Len(t, got.Pages, 1)
	require.Equal(t, 2, got.Pages[0].Number)
	require.Equal(t, EngineOCR, got.Pages[0].Engine)
	text := got.Pages[0].Text
	for _, v := range []string{"4977", "03/14/2024", "V-1029", "Net 30 days"} {
		require.Contains(t, text, v)
	}
	for _, l := range []string{"Number", "Northwind", "Cover"} {
		require.NotContains(t, text, l)
	}
}

func TestRegionScaling(t *testing.T) {
	t.Parallel()
	// 72 dpi by default: 300/72 scales 36 pt to 150 px.
	r := &Region{FirstPage: 2, LastPage: 3, X: 36, Y: 72, W: 144, H: 36}
	require.Equal(t, []string{"-f", "2", "-l", "3", "-x", "150", "-y", "300", "-W", "600", "-H", "150"}, r.popplerArgs(300))
	// At 150 dpi, 100 px is 200 px at 300 dpi.
	r = &Region{X: 100, Y: 50, W: 100, H: 10, Resolution: 150}
	require.Equal(t, []string{"-x", "200", "-y", "100", "-W", "200", "-H", "20"}, r.popplerArgs(300))
	// No rectangle: only the page range applies.
	require.Equal(t, []string{"-l", "1"}, (&Region{LastPage: 1}).popplerArgs(300))
	require.Nil(t, (*Region)(nil).popplerArgs(300))
}

func TestCropPNG(t *testing.T) {
	t.Parallel()
	img := image.NewGray(image.Rect(0, 0, 300, 200))
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, img))
	// Rendered at 300 dpi; the region is at 150 dpi: x 20..70 → 40..140.
	out, empty, err := cropPNG(buf.Bytes(), Region{X: 20, Y: 10, W: 50, H: 200, Resolution: 150}, 300)
	require.NoError(t, err)
	require.False(t, empty)
	got, err := png.Decode(bytes.NewReader(out))
	require.NoError(t, err)
	// Clipped to the image at the bottom: y 20..200.
	require.Equal(t, 100, got.Bounds().Dx())
	require.Equal(t, 180, got.Bounds().Dy())

	_, empty, err = cropPNG(buf.Bytes(), Region{X: 400, Y: 0, W: 10, H: 10}, 72)
	require.NoError(t, err)
	require.True(t, empty, "a region beside the page crops everything")
}
