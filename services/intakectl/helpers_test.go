package intakectl_test

import (
	"os"
	"path/filepath"
	"testing"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for dir := wd; dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir
		}
	}
	t.Fatal("go.work not found")
	return ""
}

// sharedDir returns ../shared/<parts> beside the repository; without it the
// test skips, except under CI=true.
func sharedDir(t *testing.T, parts ...string) string {
	t.Helper()
	p := filepath.Join(append([]string{repoRoot(t), "..", "shared"}, parts...)...)
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing; CI needs ../shared beside the repository", p)
		}
		t.Skipf("%s not found (the shared corpus lives beside the repository); skipping", p)
	}
	return p
}
