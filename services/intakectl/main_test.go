package intakectl_test

import (
	"os"
	"testing"

	"github.com/docintake/docintake/pkg/pdftext/pdftexttest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pdftexttest.CleanupResident() // a helper built for TestExtractArea
	os.Exit(code)
}
