package system_test

import (
	"testing"

	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/docintake/docintake/pkg/system"
	"github.com/stretchr/testify/require"
)

// A dependency that is down fails Open cleanly (what was opened is closed,
// no panic), naming the problem; the orchestrator restarts the process.
func TestOpenFailsCleanly(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"INTAKE_DATABASE_URL":  storetest.SchemaURL(t),
		"INTAKE_TEMPLATES_DIR": t.TempDir(),
		"INTAKE_S3_ENDPOINT":   "http://127.0.0.1:1", // nothing listens there
		"INTAKE_S3_ACCESS_KEY": "k",
		"INTAKE_S3_SECRET_KEY": "s",
	}
	_, err := system.Open(t.Context(), "test", func(k string) string { return env[k] }, system.OpenOptions{})
	require.ErrorContains(t, err, "s3 bucket")

	_, err = system.Open(t.Context(), "test", func(string) string { return "" }, system.OpenOptions{})
	require.ErrorContains(t, err, "INTAKE_DATABASE_URL")
}
