package intakectl_test

import (
	"testing"

	"github.com/docintake/docintake/pkg/repotest"
)

func repoRoot(t *testing.T) string { return repotest.Root(t) }

// sharedDir returns ../shared/<parts> beside the repository; without it the
// test skips, except under CI=true.
func sharedDir(t *testing.T, parts ...string) string { return repotest.Shared(t, parts...) }
