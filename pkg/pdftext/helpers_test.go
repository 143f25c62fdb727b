package pdftext

import (
	"os/exec"
	"sync"
	"testing"
)

func requireTool(t testing.TB, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("skipping: %s not installed", name)
	}
}

var (
	pdfiumOnce sync.Once
	pdfiumEng  *pdfiumEngine
	pdfiumErr  error
)

// sharedPdfium returns one pdfium engine for the whole test binary; starting
// a pool instantiates wasm modules, which is too slow to do per test. It is
// closed in TestMain.
func sharedPdfium(t testing.TB) *pdfiumEngine {
	t.Helper()
	pdfiumOnce.Do(func() {
		opts := Options{Engine: EnginePdfium, Workers: 2}.withDefaults()
		pdfiumEng, pdfiumErr = newPdfium(opts, nil)
	})
	if pdfiumErr != nil {
		t.Fatalf("start pdfium: %v", pdfiumErr)
	}
	return pdfiumEng
}
