package pdftexttest

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/docintake/docintake/pkg/repotest"
)

var (
	residentOnce sync.Once
	residentBin  string
	residentErr  string
)

// ResidentBin returns the pdftext-resident helper for tests: the one named
// by INTAKE_PDF_RESIDENT_BIN (make test passes bin/'s), else one built with
// g++ and pkg-config poppler-cpp from the source in pkg/pdftext/resident
// into a cache directory under the system temp dir, keyed by the source and
// flags, so packages and runs share one build. Without that toolchain the
// test is skipped, or failed under CI=true.
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
	residentOnce.Do(func() { residentBin, residentErr = buildResident(src) })
	if residentErr != "" && os.Getenv("CI") == "true" {
		t.Fatalf("pdftext-resident: %s", residentErr)
	}
	return residentBin, residentErr
}

func buildResident(src string) (bin, problem string) {
	for _, tool := range []string{"g++", "pkg-config"} {
		if _, err := exec.LookPath(tool); err != nil {
			return "", tool + " not installed"
		}
	}
	out, err := exec.Command("pkg-config", "--cflags", "--libs", "poppler-cpp").Output()
	if err != nil {
		return "", "pkg-config poppler-cpp: libpoppler-cpp-dev not installed"
	}
	flags := strings.Fields(string(out))
	code, err := os.ReadFile(src)
	if err != nil {
		return "", err.Error()
	}
	// The same flags as the Makefile's: the export makes the helper's own
	// cmsOpenProfileFromMem take liblcms2's place (see the source).
	compile := append([]string{"-O2", "-std=c++17", "-Wl,--export-dynamic-symbol=cmsOpenProfileFromMem"}, flags...)
	// The cached build is keyed by the source and every compiler argument,
	// so a change of either builds anew.
	sum := sha256.Sum256(append(code, strings.Join(compile, "\x00")...))
	dir := filepath.Join(os.TempDir(), "docintake-pdftext-resident-"+hex.EncodeToString(sum[:8]))
	bin = filepath.Join(dir, "pdftext-resident")
	if ours(dir) && ours(bin) {
		return bin, ""
	}
	tmp, err := os.MkdirTemp("", "docintake-pdftext-resident-build-*")
	if err != nil {
		return "", err.Error()
	}
	// Readable and executable by everyone: helpers run as nobody under root.
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", err.Error()
	}
	args := append([]string{"-o", filepath.Join(tmp, "pdftext-resident"), src}, compile...)
	if out, err := exec.Command("g++", args...).CombinedOutput(); err != nil {
		os.RemoveAll(tmp)
		return "", "g++: " + err.Error() + ": " + string(out)
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another test binary built it first, or the name is taken by a
		// directory that is not ours: use it only in the first case.
		if ours(dir) && ours(bin) {
			os.RemoveAll(tmp)
			return bin, ""
		}
		return filepath.Join(tmp, "pdftext-resident"), ""
	}
	return bin, ""
}

// ours reports whether path is owned by us and writable by no one else: a
// file in the shared temp dir that another user cannot have planted.
func ours(path string) bool {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&os.ModeSymlink != 0 || fi.Mode().Perm()&0o022 != 0 {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}
