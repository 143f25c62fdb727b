package system_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/system"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

func zapNop() *zap.Logger { return zap.NewNop() }

// writeClientsFile writes body as a clients file in a directory of its own
// and returns its path.
func writeClientsFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "clients.yaml")
	require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
	return p
}

// applyClientsFile loads body as the clients file and applies it to st, as
// a process does at start, and returns what it loaded.
func applyClientsFile(t *testing.T, st *store.Store, body string) []system.ClientSpec {
	t.Helper()
	specs, err := system.LoadClientsFile(writeClientsFile(t, body))
	require.NoError(t, err)
	require.NoError(t, system.ApplyClients(t.Context(), st, specs))
	return specs
}
