package config_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// adapters are the packages at the edge: they own their defaults as
// constants and take values through their options, so the dependency runs
// from pkg/config (the application) to them, never back.
var adapters = []string{"queue", "objectstore", "webhook"}

// TestAdaptersDoNotImportConfig fails when an adapter package depends on
// pkg/config, directly or through another package (go list -deps of its
// non-test build).
func TestAdaptersDoNotImportConfig(t *testing.T) {
	t.Parallel()
	const cfg = "github.com/docintake/docintake/pkg/config"
	for _, a := range adapters {
		out, err := exec.Command("go", "list", "-deps", "github.com/docintake/docintake/pkg/"+a).CombinedOutput()
		require.NoError(t, err, "go list -deps %s: %s", a, out)
		for _, dep := range strings.Fields(string(out)) {
			require.NotEqual(t, cfg, dep, "pkg/%s depends on pkg/config: give the adapter its own Default* constant and have pkg/config hand the value down", a)
		}
	}
}
