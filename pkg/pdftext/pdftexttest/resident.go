package pdftexttest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/docintake/docintake/pkg/repotest"
)

var (
	residentOnce sync.Once
	residentBin  string
	residentDir  string
	residentErr  string
)

// ResidentBin returns the pdftext-resident helper for tests: the one named
// by INTAKE_PDF_RESIDENT_BIN (make test passes bin/'s), else one built once
// per test binary with g++ and pkg-config poppler-cpp from the source in
// pkg/pdftext/resident. Without that toolchain the test is skipped, or
// failed under CI=true. Call CleanupResident from TestMain.
func ResidentBin(t testing.TB) string {
	t.Helper()
	bin, problem := findResidentBin(t)
	if problem != "" {
		t.Skipf("skipping: pdftext-resident cannot be built here (%s); install g++ libpoppler-cpp-dev pkg-config or set INTAKE_PDF_RESIDENT_BIN", problem)
	}
	return bin
}

// ResidentBinIfAvailable is ResidentBin for tests that cover several
// engines: without the toolchain it returns "" instead of skipping (and
// still fails under CI=true).
func ResidentBinIfAvailable(t testing.TB) string {
	t.Helper()
	bin, _ := findResidentBin(t)
	return bin
}

func findResidentBin(t testing.TB) (string, string) {
	t.Helper()
	if p := os.Getenv("INTAKE_PDF_RESIDENT_BIN"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("INTAKE_PDF_RESIDENT_BIN: %v", err)
		}
		return p, ""
	}
	src := filepath.Join(repotest.Root(t), "pkg", "pdftext", "resident", "pdftext-resident.cpp")
	residentOnce.Do(func() { residentBin, residentDir, residentErr = buildResident(src) })
	if residentErr != "" && os.Getenv("CI") == "true" {
		t.Fatalf("pdftext-resident: %s", residentErr)
	}
	return residentBin, residentErr
}

func buildResident(src string) (bin, dir, problem string) {
	for _, tool := range []string{"g++", "pkg-config"} {
		if _, err := exec.LookPath(tool); err != nil {
			return "", "", tool + " not installed"
		}
	}
	flags, err := exec.Command("pkg-config", "--cflags", "--libs", "poppler-cpp").Output()
	if err != nil {
		return "", "", "pkg-config poppler-cpp: libpoppler-cpp-dev not installed"
	}
	dir, err = os.MkdirTemp("", "pdftext-resident-bin-*")
	if err != nil {
		return "", "", err.Error()
	}
	// Readable and executable by everyone: helpers run as nobody under root.
	if err := os.Chmod(dir, 0o755); err != nil {
		return "", dir, err.Error()
	}
	bin = filepath.Join(dir, "pdftext-resident")
	args := append([]string{"-O2", "-std=c++17", "-o", bin, src}, strings.Fields(string(flags))...)
	if out, err := exec.Command("g++", args...).CombinedOutput(); err != nil {
		return "", dir, "g++: " + err.Error() + ": " + string(out)
	}
	return bin, dir, ""
}

// CleanupResident removes a helper ResidentBin built.
func CleanupResident() {
	if residentDir != "" {
		os.RemoveAll(residentDir)
	}
}
