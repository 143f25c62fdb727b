package repotest_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/docintake/docintake/pkg/repotest"
)

func TestRoot(t *testing.T) {
	t.Parallel()
	root := repotest.Root(t)
	if _, err := os.Stat(filepath.Join(root, "go.work")); err != nil {
		t.Fatalf("Root %s has no go.work", root)
	}
	if _, err := os.Stat(filepath.Join(root, "pkg", "repotest", "repotest.go")); err != nil {
		t.Fatalf("Root %s is not this repository", root)
	}
}
