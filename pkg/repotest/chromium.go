package repotest

import (
	"os"
	"os/exec"
	"testing"
)

// Chromium returns the system Chromium for tests that drive a headless
// browser (the ops console's): INTAKE_TEST_CHROMIUM, /usr/bin/chromium,
// /usr/bin/chromium-browser or chromium in PATH. Without one the test is
// skipped, or failed when CI=true (CI installs it: apt-get install
// chromium).
func Chromium(t testing.TB) string {
	t.Helper()
	for _, p := range []string{os.Getenv("INTAKE_TEST_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is missing; CI installs it (apt-get install chromium)")
	}
	t.Skip("chromium not installed (Debian: apt-get install chromium); skipping the browser test")
	return ""
}
