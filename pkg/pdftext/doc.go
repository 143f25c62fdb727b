// Package pdftext turns a PDF into layout text, page by page, the way
// `pdftotext -layout` prints it, because that is the layout invoice2data
// templates are written against.
//
// Four engines sit behind one Engine interface:
//
//   - resident: long-lived pdftext-resident helpers (C++ against
//     libpoppler-cpp, source in ./resident, built by make build) that read
//     one PDF after another from a pipe and answer with the text of
//     `pdftotext -layout`, without an exec per document. Each helper is
//     sandboxed once at spawn (see sandbox_linux.go: rlimits, empty
//     environment, private directory, a uid of its own under root, not
//     dumpable, seccomp, own mount, network and pid namespaces where
//     allowed), killed and replaced on the per-document deadline, and
//     recycled after N documents or above an RSS limit.
//   - pdftotext (poppler-utils) as a subprocess in the same sandbox:
//     private input file, deadline with process-group kill, address-space
//     and CPU limits, capped output. The default where installed.
//   - pdfium (go-pdfium in WebAssembly, pure Go): a warm pool of wasm
//     instances with a capped linear memory and no filesystem; a deadline
//     kills the instance. Layout text is rebuilt from character positions
//     following DESIGN.md's layout rules (see layoutPage).
//   - OCR with tesseract for pages without characters that hold an image,
//     or for every page with Options.Engine "ocr". The recognised words are
//     laid on a character grid by their boxes (see layoutWords), so OCR
//     text keeps the layout too. OCR runs page by page, each page within
//     Options.OCRPageTimeout: a page over it is left empty and named in
//     Text.Warnings.
//
// "auto" uses the resident helper when it runs here, else pdftotext when
// installed, otherwise pdfium, and retries a document the first engine
// could not read with pdfium (closed again when idle).
//
// ExtractRegion crops like invoice2data's area option (pdftotext -f -l -r
// -x -y -W -H): see Region.
//
// # Usage
//
//	eng, err := pdftext.New(pdftext.DefaultOptions())
//	if err != nil { ... }
//	defer eng.Close()
//	text, err := eng.Extract(ctx, pdf)
//	switch {
//	case errors.Is(err, pdftext.ErrUnreadable), errors.Is(err, pdftext.ErrTimeout):
//		// permanent: the same PDF fails the same way next time
//	case err != nil:
//		// context cancelled or an I/O problem on this machine
//	}
//	fmt.Print(text.String()) // pages separated by form feeds
//
// Tests build fixture PDFs with package pdftexttest.
package pdftext
