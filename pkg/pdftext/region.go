package pdftext

// Region is a crop of the document: invoice2data's `area` option, which runs
// pdftotext with -f -l -r -x -y -W -H. Coordinates are pixels at Resolution
// dpi from the top-left corner of the page, as pdftotext counts them.
type Region struct {
	FirstPage, LastPage int // 1-based; 0 means the document's first / last page
	X, Y, W, H          int // pixels at Resolution
	Resolution          int // dpi; 0 means 72, pdftotext's default
}
