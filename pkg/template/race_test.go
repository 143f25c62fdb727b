//go:build race

package template_test

// raceEnabled skips reports that only measure (the pdfium golden comparison
// runs the wasm engine, which the race detector slows tenfold).
const raceEnabled = true
