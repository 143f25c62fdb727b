package pdftext

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// ocrDPI is the resolution pages are rendered at for tesseract; 300 dpi is
// what tesseract's documentation recommends for body text.
const ocrDPI = 300

// DefaultOCRPageTimeout is the budget for rendering and recognising one page
// when Options.OCRPageTimeout is zero (and INTAKE_OCR_PAGE_TIMEOUT's
// default). tesseract needs 1–3 s of one core for a dense A4 page at 300
// dpi; 10 s leaves room for a busy host and still lets a 20 s document
// deadline read the other pages of a document with one pathological page.
const DefaultOCRPageTimeout = 10 * time.Second

// errPageBudget is the cause of a page context that ran out of its OCR
// budget, which tells it apart from the document's deadline.
var errPageBudget = errors.New("ocr page budget exceeded")

// ocrRunner runs tesseract on rendered pages. Pages are rendered by
// pdftoppm when the caller has the PDF on disk (pdftotext and ocr engines)
// and by pdfium inside the wasm instance otherwise.
type ocrRunner struct {
	tesseract   string
	pdftoppm    string // "" when not installed
	pdfimages   string // "" when not installed
	langs       string
	pageTimeout time.Duration
	sb          sandbox

	// budgetFor, when set, overrides pageTimeout for page n. Tests use it to
	// give one page of a document a budget it cannot meet.
	budgetFor func(n int) time.Duration
}

func newOCRRunner(opts Options) (*ocrRunner, error) {
	t, err := exec.LookPath("tesseract")
	if err != nil {
		return nil, fmt.Errorf("ocr: tesseract: %w: %w", ErrUnavailable, err)
	}
	r := &ocrRunner{tesseract: t, langs: opts.OCRLanguages, pageTimeout: opts.OCRPageTimeout, sb: newSandbox(opts)}
	if r.pageTimeout <= 0 {
		r.pageTimeout = DefaultOCRPageTimeout
	}
	r.pdftoppm, _ = exec.LookPath("pdftoppm")
	r.pdfimages, _ = exec.LookPath("pdfimages")
	return r, nil
}

// ocrResult is the OCR of one page. Read is false when the page was not
// read: it has no image (a blank page stays blank), pdftoppm is missing, or
// its budget ran out, which Warning then says.
type ocrResult struct {
	Text    string
	Read    bool
	Warning string
}

// apply puts the result into page i of t: the OCR text when the page was
// read, and the warning, if any, into t.Warnings.
func (res ocrResult) apply(t *Text, i int) {
	if res.Read {
		t.Pages[i] = Page{Number: t.Pages[i].Number, Text: res.Text, Engine: EngineOCR}
	}
	if res.Warning != "" {
		t.Warnings = append(t.Warnings, res.Warning)
	}
}

// pageBudget derives the context of page n: the page budget, within the
// document's deadline.
func (r *ocrRunner) pageBudget(ctx context.Context, n int) (context.Context, context.CancelFunc, time.Duration) {
	d := r.pageTimeout
	if r.budgetFor != nil {
		d = r.budgetFor(n)
	}
	pctx, cancel := context.WithTimeoutCause(ctx, d, errPageBudget)
	return pctx, cancel, d
}

// skipped turns an error of page n's work into a skipped page when the page
// ran out of its own budget while the document still had time; any other
// error is returned as it is.
func skipped(ctx, pctx context.Context, n int, budget time.Duration, err error) (ocrResult, error) {
	if ctx.Err() == nil && errors.Is(context.Cause(pctx), errPageBudget) {
		return ocrResult{Warning: fmt.Sprintf(
			"page %d not read: OCR took longer than the page budget of %s (INTAKE_OCR_PAGE_TIMEOUT)", n, budget)}, nil
	}
	return ocrResult{}, err
}

// filePage OCRs page n (1-based) of file, a PDF in dir (the extraction's
// private directory), when the page contains an image: it renders the page
// with pdftoppm, cropped to region when region is not nil, and recognises
// it, both within the page budget. A page over its budget is skipped with a
// warning; the document's deadline and other failures are errors. This is
// the OCR fallback of engines that have the PDF on disk.
func (r *ocrRunner) filePage(ctx context.Context, dir, file string, n int, region *Region) (ocrResult, error) {
	if r.pdftoppm == "" {
		return ocrResult{}, nil
	}
	if r.pdfimages != "" {
		has, err := r.hasImage(ctx, dir, file, n)
		if err != nil || !has {
			// pdfimages failing on a page pdftotext could read is not worth
			// failing the document for; the page just stays empty.
			return ocrResult{}, ctxOrNil(ctx)
		}
	}
	pctx, cancel, budget := r.pageBudget(ctx, n)
	defer cancel()
	img, err := r.render(pctx, dir, file, n, region)
	if err != nil {
		return skipped(ctx, pctx, n, budget, err)
	}
	text, err := r.recognize(pctx, dir, img)
	if err != nil {
		return skipped(ctx, pctx, n, budget, err)
	}
	return ocrResult{Text: text, Read: true}, nil
}

// imagePage OCRs page n from its rendering img (a PNG at ocrDPI), cropped
// to region when region is not nil, within the page budget. This is the OCR
// fallback of engines that render pages themselves (pdfium).
func (r *ocrRunner) imagePage(ctx context.Context, dir string, n int, img []byte, region *Region) (ocrResult, error) {
	if region != nil {
		cropped, empty, err := cropPNG(img, *region, ocrDPI)
		if err != nil {
			return ocrResult{}, fmt.Errorf("crop page %d: %w: %w", n, ErrUnreadable, err)
		}
		if empty {
			return ocrResult{Read: true}, nil
		}
		img = cropped
	}
	pctx, cancel, budget := r.pageBudget(ctx, n)
	defer cancel()
	text, err := r.recognize(pctx, dir, img)
	if err != nil {
		return skipped(ctx, pctx, n, budget, err)
	}
	return ocrResult{Text: text, Read: true}, nil
}

// recognize OCRs one PNG image and lays the recognised words out as
// `pdftotext -layout` does (see layoutWords). dir is the private working
// directory of the current extraction.
func (r *ocrRunner) recognize(ctx context.Context, dir string, img []byte) (string, error) {
	out, err := r.sb.run(ctx, dir, r.tesseract, []string{"stdin", "stdout", "-l", r.langs, "tsv"}, img)
	if err != nil {
		return "", fmt.Errorf("tesseract: %w", err)
	}
	return layoutWords(parseTSV(out)), nil
}

// ocrWord is one word of tesseract's TSV output with its box in image
// pixels (y grows downwards) and tesseract's confidence (0–100).
type ocrWord struct {
	text                     string
	left, top, width, height float64
	conf                     float64
}

func (w ocrWord) bottom() float64 { return w.top + w.height }
func (w ocrWord) right() float64  { return w.left + w.width }

// parseTSV reads the words (level 5 rows) of tesseract's TSV output, in
// tesseract's reading order; rows that do not parse are skipped.
func parseTSV(tsv []byte) []ocrWord {
	var words []ocrWord
	sc := bufio.NewScanner(bytes.NewReader(tsv))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 12 || f[0] != "5" {
			continue
		}
		text := strings.TrimSpace(f[11])
		var b [4]float64
		ok := text != ""
		for i := range b {
			v, err := strconv.Atoi(f[6+i])
			ok = ok && err == nil && v >= 0
			b[i] = float64(v)
		}
		conf, err := strconv.ParseFloat(f[10], 64)
		if !ok || err != nil || b[2] <= 0 || b[3] <= 0 {
			continue
		}
		words = append(words, ocrWord{text: text, left: b[0], top: b[1], width: b[2], height: b[3], conf: conf})
	}
	return words
}

// layoutWords places OCRed words on a character grid the way
// `pdftotext -layout` places the characters of a text PDF, so that a label
// and its value printed on one line share a line even when tesseract read
// them as separate blocks or lines, and columns line up:
//
//  1. noise is dropped: letters or digits in a box under 0.4 × the median
//     word height and words whose box lies inside a larger word's (ghosts
//     of words tesseract also reads at their true size), and words without
//     a letter or digit that are table rules read as "|" or "_", or that
//     tesseract is all but unsure of (confidence under 10);
//  2. words form rows by their boxes, not by tesseract's lines: a word joins
//     the row whose vertical band overlaps its box by at least 0.3 × the
//     smaller height, unless it overlaps a word of that row horizontally
//     (then it is a line above or below, set close); the band is the
//     median top and bottom of the row's words, so a row does not grow
//     into its neighbours. Ink boxes are about 0.7 of the font boxes
//     pdftotext compares baselines with (within half their height), hence
//     0.3: a value set a little lower stays on its label's line, a cell
//     printed most of a line lower is a row of its own, and a full stop or
//     hyphen joins its line;
//  3. each word's characters are spread evenly over its box and the row is
//     rendered like the pdfium engine's rows (renderRow): the column of a
//     word after a wide gap is its x divided by the page's median character
//     width, other words are separated by one space;
//  4. one blank line per extra median row pitch between rows.
func layoutWords(words []ocrWord) string {
	words = dropNoise(words)
	if len(words) == 0 {
		return "\n"
	}
	rows := groupRows(words)
	var cws, pitches []float64
	xmin := math.Inf(1)
	for _, w := range words {
		cws = append(cws, w.width/float64(utf8.RuneCountInString(w.text)))
		xmin = math.Min(xmin, w.left)
	}
	for i := 1; i < len(rows); i++ {
		pitches = append(pitches, rows[i].mid()-rows[i-1].mid())
	}
	medW := median(cws)
	pitch := math.Max(median(pitches), 1)
	var b strings.Builder
	for i, r := range rows {
		if i > 0 {
			for n := int(math.Round((r.mid()-rows[i-1].mid())/pitch)) - 1; n > 0 && n < 50; n-- {
				b.WriteByte('\n')
			}
		}
		b.WriteString(renderWords(r.words, xmin, medW))
		b.WriteByte('\n')
	}
	return b.String()
}

// dropNoise is layoutWords' rule 1.
func dropNoise(words []ocrWord) []ocrWord {
	var hs []float64
	for _, w := range words {
		if hasAlnum(w.text) {
			hs = append(hs, w.height)
		}
	}
	minH := 0.4 * median(hs)
	out := words[:0:0]
	for i, w := range words {
		if a := hasAlnum(w.text); (a && w.height < minH) || (!a && (w.conf < 10 || tableRule(w.text))) || insideOther(words, i) {
			continue
		}
		out = append(out, w)
	}
	return out
}

// tableRule reports whether s is only strokes tesseract reads from the
// lines of a table or box.
func tableRule(s string) bool {
	return strings.Trim(s, "|¦│_~=—") == ""
}

// insideOther reports whether word i is a ghost of a larger word: its text
// is part of the other's and most of its box (80 %), or its centre, lies
// inside the other's. tesseract sometimes reads "(D)" a second time as "D)" in a box
// inside the first. A different word inside another's box is kept: that is
// a box tesseract drew too wide.
func insideOther(words []ocrWord, i int) bool {
	w := words[i]
	area := w.width * w.height
	for j, o := range words {
		if j == i || o.width*o.height <= area || !strings.Contains(o.text, w.text) {
			continue
		}
		dx := math.Min(o.right(), w.right()) - math.Max(o.left, w.left)
		dy := math.Min(o.bottom(), w.bottom()) - math.Max(o.top, w.top)
		cx, cy := w.left+w.width/2, w.top+w.height/2
		centred := cx > o.left && cx < o.right() && cy > o.top && cy < o.bottom()
		if dx > 0 && dy > 0 && (dx*dy >= 0.8*area || centred) {
			return true
		}
	}
	return false
}

// ocrRow is a row of words; top and bottom are the medians of its words',
// start the vertical centre of its first word.
type ocrRow struct {
	words              []ocrWord
	top, bottom, start float64
}

func (r *ocrRow) mid() float64 { return (r.top + r.bottom) / 2 }

func (r *ocrRow) add(w ocrWord) {
	r.words = append(r.words, w)
	tops := make([]float64, len(r.words))
	bottoms := make([]float64, len(r.words))
	for i, w := range r.words {
		tops[i], bottoms[i] = w.top, w.bottom()
	}
	r.top, r.bottom = median(tops), median(bottoms)
}

// fit reports how w fits the row: fits when the row's band overlaps w's box
// by at least 0.3 × the smaller height, score the overlap over the larger
// height (so a word close to two rows goes to the one of its size), and
// blocked when w overlaps a word of the row horizontally while the two are
// not level (less than half the smaller height in common): a line set
// close above or below, not a box tesseract drew too wide.
func (r *ocrRow) fit(w ocrWord) (score float64, fits, blocked bool) {
	ov := math.Min(r.bottom, w.bottom()) - math.Max(r.top, w.top)
	bh := r.bottom - r.top
	if ov < 0.3*math.Min(bh, w.height) {
		return 0, false, false
	}
	for _, o := range r.words {
		dx := math.Min(o.right(), w.right()) - math.Max(o.left, w.left)
		dy := math.Min(o.bottom(), w.bottom()) - math.Max(o.top, w.top)
		if dx > 0.3*math.Min(o.width, w.width) && dy < 0.5*math.Min(o.height, w.height) {
			return 0, true, true
		}
	}
	return ov / math.Max(bh, w.height), true, false
}

// groupRows is layoutWords' rule 2; rows come top to bottom, their words
// left to right. A word without a letter or digit that lies on a row but
// overlaps one of its words is dropped: it is a second reading of a mark
// (a hyphen) already there.
func groupRows(words []ocrWord) []*ocrRow {
	sorted := make([]ocrWord, len(words))
	copy(sorted, words)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].top+sorted[i].bottom() < sorted[j].top+sorted[j].bottom() })
	var rows []*ocrRow
	for _, w := range sorted {
		var best *ocrRow
		bestScore, onBlockedRow := 0.0, false
		// Words come by their centre, so rows are created in order of
		// start: rows that started far above this word cannot take it.
		for i := len(rows) - 1; i >= 0 && rows[i].start > w.top-2*w.height; i-- {
			score, fits, blocked := rows[i].fit(w)
			onBlockedRow = onBlockedRow || blocked
			if fits && !blocked && (best == nil || score > bestScore) {
				best, bestScore = rows[i], score
			}
		}
		if best == nil {
			if onBlockedRow && !hasAlnum(w.text) {
				continue
			}
			best = &ocrRow{start: w.top + w.height/2}
			rows = append(rows, best)
		}
		best.add(w)
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].mid() < rows[j].mid() })
	for _, r := range rows {
		sort.SliceStable(r.words, func(i, j int) bool { return r.words[i].left < r.words[j].left })
	}
	return rows
}

func hasAlnum(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0
}

// renderWords renders one row of x-sorted words with renderRow: each word's
// characters spread evenly over its box, a word break after each word. A
// word whose box starts inside the previous one's (a box tesseract drew too
// wide) starts where the previous one ends, so words never interleave.
func renderWords(words []ocrWord, xmin, medW float64) string {
	var gs []glyph
	spaceAfter := map[int]bool{}
	end := math.Inf(-1)
	for _, w := range words {
		rs := []rune(w.text)
		cw := w.width / float64(len(rs))
		start := math.Max(w.left, end)
		end = start + w.width
		for k, r := range rs {
			left := start + float64(k)*cw
			gs = append(gs, glyph{r: r, x: left, y: -w.bottom(), left: left, right: left + cw,
				bottom: -w.bottom(), top: -w.top, idx: len(gs)})
		}
		spaceAfter[len(gs)-1] = true
	}
	return renderRow(gs, spaceAfter, xmin, medW)
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := make([]float64, len(xs))
	copy(s, xs)
	sort.Float64s(s)
	return s[len(s)/2]
}

// scaled returns the region's rectangle in pixels at dpi, clamped to
// non-negative coordinates. ok is false when the region crops nothing (no
// width or height): only its page range applies.
func (r Region) scaled(dpi int) (x, y, w, h int, ok bool) {
	if r.W <= 0 || r.H <= 0 {
		return 0, 0, 0, 0, false
	}
	res := r.Resolution
	if res <= 0 {
		res = 72
	}
	f := float64(dpi) / float64(res)
	px := func(v int) int { return int(math.Round(float64(v) * f)) }
	x, y = max(px(r.X), 0), max(px(r.Y), 0)
	return x, y, max(px(r.X+r.W)-x, 1), max(px(r.Y+r.H)-y, 1), true
}

// popplerArgs are pdftoppm's page range and crop options for the region at
// dpi (pdftoppm takes the crop in pixels of its own rendering).
func (r *Region) popplerArgs(dpi int) []string {
	if r == nil {
		return nil
	}
	var args []string
	if r.FirstPage > 0 {
		args = append(args, "-f", strconv.Itoa(r.FirstPage))
	}
	if r.LastPage > 0 {
		args = append(args, "-l", strconv.Itoa(r.LastPage))
	}
	if x, y, w, h, ok := r.scaled(dpi); ok {
		args = append(args, "-x", strconv.Itoa(x), "-y", strconv.Itoa(y), "-W", strconv.Itoa(w), "-H", strconv.Itoa(h))
	}
	return args
}

// cropPNG crops a page rendered at dpi to region. empty is true when the
// region lies outside the image.
func cropPNG(img []byte, region Region, dpi int) (out []byte, empty bool, err error) {
	x, y, w, h, ok := region.scaled(dpi)
	if !ok {
		return img, false, nil
	}
	src, err := png.Decode(bytes.NewReader(img))
	if err != nil {
		return nil, false, err
	}
	rect := image.Rect(x, y, x+w, y+h).Add(src.Bounds().Min).Intersect(src.Bounds())
	if rect.Empty() {
		return nil, true, nil
	}
	sub, ok := src.(interface {
		SubImage(image.Rectangle) image.Image
	})
	if !ok {
		return nil, false, fmt.Errorf("cannot crop a %T", src)
	}
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&buf, sub.SubImage(rect)); err != nil {
		return nil, false, err
	}
	return buf.Bytes(), false, nil
}

// hasImage reports whether page n lists at least one image in
// `pdfimages -list` (two header lines, then one line per image).
func (r *ocrRunner) hasImage(ctx context.Context, dir, file string, n int) (bool, error) {
	p := strconv.Itoa(n)
	out, err := r.sb.run(ctx, dir, r.pdfimages, []string{"-list", "-f", p, "-l", p, file}, nil)
	if err != nil {
		return false, err
	}
	lines := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) != "" {
			lines++
		}
	}
	return lines > 2, nil
}

// render renders page n of file at ocrDPI, cropped to region when it is not
// nil (its page range is ignored: the page is n).
func (r *ocrRunner) render(ctx context.Context, dir, file string, n int, region *Region) ([]byte, error) {
	p := strconv.Itoa(n)
	root := filepath.Join(dir, "page-"+p)
	args := []string{"-r", strconv.Itoa(ocrDPI), "-f", p, "-l", p}
	if region != nil {
		crop := *region
		crop.FirstPage, crop.LastPage = 0, 0
		args = append(args, crop.popplerArgs(ocrDPI)...)
	}
	args = append(args, "-png", "-singlefile", file, root)
	if _, err := r.sb.run(ctx, dir, r.pdftoppm, args, nil); err != nil {
		return nil, fmt.Errorf("pdftoppm: %w", err)
	}
	img, err := os.ReadFile(root + ".png")
	if err != nil {
		return nil, fmt.Errorf("read rendered page: %w", err)
	}
	_ = os.Remove(root + ".png")
	return img, nil
}

func ctxOrNil(ctx context.Context) error {
	if ctx.Err() != nil {
		return ctxErr(ctx)
	}
	return nil
}

// ocrEngine OCRs every page, ignoring any text layer (Options.Engine "ocr").
type ocrEngine struct {
	opts Options
	ocr  *ocrRunner
}

func (e *ocrEngine) Name() string { return EngineOCR }

func (e *ocrEngine) Close() error { return nil }

// Extract OCRs every page, page by page within the page budget: a page over
// its budget is left empty with a warning in Text.Warnings.
func (e *ocrEngine) Extract(ctx context.Context, pdf []byte) (*Text, error) {
	if err := screen(pdf); err != nil { // pdftoppm renders with poppler
		return nil, fmt.Errorf("ocr: %w", err)
	}
	return e.extractRegion(ctx, pdf, nil)
}

// ExtractRegion is Extract for the pages of r's range, each cropped to r's
// rectangle (scaled from r.Resolution to the OCR rendering), as pdftotext
// crops with -f -l -x -y -W -H. Page numbers stay those of the document.
func (e *ocrEngine) ExtractRegion(ctx context.Context, pdf []byte, r Region) (*Text, error) {
	if err := r.validate(); err != nil {
		return nil, err
	}
	return e.extractRegion(ctx, pdf, &r)
}

func (e *ocrEngine) extractRegion(ctx context.Context, pdf []byte, region *Region) (*Text, error) {
	if e.ocr.pdftoppm == "" {
		return nil, fmt.Errorf("ocr: pdftoppm: %w", ErrUnavailable)
	}
	return withInput(ctx, e.opts.Timeout, pdf, func(ctx context.Context, dir, file string) (*Text, error) {
		return e.extract(ctx, dir, file, region)
	})
}

func (e *ocrEngine) extract(ctx context.Context, dir, file string, region *Region) (*Text, error) {
	pagesDir := filepath.Join(dir, "pages")
	if err := helperDir(pagesDir); err != nil {
		return nil, fmt.Errorf("ocr: %w", err)
	}
	// One pdftoppm for all pages, under the document's deadline: rendering
	// costs a fraction of recognising, which is what the page budget bounds.
	args := append([]string{"-r", strconv.Itoa(ocrDPI)}, region.popplerArgs(ocrDPI)...)
	args = append(args, "-png", file, filepath.Join(pagesDir, "p"))
	if _, err := e.ocr.sb.run(ctx, dir, e.ocr.pdftoppm, args, nil); err != nil {
		return nil, fmt.Errorf("ocr: pdftoppm: %w", err)
	}
	pages, err := renderedPages(pagesDir)
	if err != nil {
		return nil, fmt.Errorf("ocr: %w", err)
	}
	if len(pages) == 0 {
		return nil, fmt.Errorf("ocr: %w: no pages rendered", ErrUnreadable)
	}
	t := &Text{}
	var total int64
	for i, p := range pages {
		img, err := os.ReadFile(p.path)
		if err != nil {
			return nil, fmt.Errorf("ocr: %w", err)
		}
		t.Pages = append(t.Pages, Page{Number: p.n, Engine: EngineOCR})
		// Already cropped by pdftoppm: no region here.
		res, err := e.ocr.imagePage(ctx, dir, p.n, img, nil)
		if err != nil {
			return nil, fmt.Errorf("ocr page %d: %w", p.n, err)
		}
		res.apply(t, i)
		total += int64(len(res.Text))
		if total > e.opts.MaxOutputBytes {
			return nil, fmt.Errorf("ocr: %w: %w", ErrUnreadable, errOutputTooLarge)
		}
	}
	return t, nil
}

// renderedPage is one of pdftoppm's p-N.png files: page n of the document.
type renderedPage struct {
	n    int
	path string
}

// renderedPages lists pdftoppm's p-N.png files in page order (pdftoppm pads
// N to the width of the page count, so sort numerically to be safe).
func renderedPages(dir string) ([]renderedPage, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var pages []renderedPage
	for _, e := range entries {
		name := e.Name()
		num := strings.TrimSuffix(strings.TrimPrefix(name, "p-"), ".png")
		n, err := strconv.Atoi(num)
		if err != nil {
			continue
		}
		pages = append(pages, renderedPage{n, filepath.Join(dir, name)})
	}
	sort.Slice(pages, func(i, j int) bool { return pages[i].n < pages[j].n })
	return pages, nil
}
