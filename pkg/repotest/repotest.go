// Package repotest holds what tests across the repository share: locating
// the repository and the shared reference material beside it (../shared:
// spec, openTRANS schemas, corpus), and measuring the process's CPU in
// benchmarks.
//
// The shared directory is not part of a plain clone: tests that need it skip
// with a clear message when it is absent, except under CI=true, where its
// absence is a failure so CI can never pass by skipping them.
package repotest

import (
	"os"
	"path/filepath"
	"testing"
)

// Root returns the repository root: the nearest directory above the test's
// working directory that holds go.work.
func Root(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("repotest: no go.work above the test's directory")
		}
		dir = parent
	}
}

// Shared returns ../shared/<parts...> beside the repository. When that path
// is missing the test is skipped, or failed when CI=true.
func Shared(t testing.TB, parts ...string) string {
	t.Helper()
	p := filepath.Join(append([]string{Root(t), "..", "shared"}, parts...)...)
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing: CI runs with ../shared beside the repository", p)
		}
		t.Skipf("%s not found (the shared reference material lives beside the repository, in ../shared); skipping", p)
	}
	return p
}
