package pdftext

import (
	"os"
	"testing"

	"github.com/docintake/docintake/pkg/pdftext/pdftexttest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pdftexttest.CleanupResident()
	if pdfiumEng != nil {
		_ = pdfiumEng.Close()
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}
