package system_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/docintake/docintake/pkg/system"
	"github.com/stretchr/testify/require"
)

// A client's duplicate window (issue 28) comes from the clients file: 90
// days when absent, 0 turns the check off, a negative number is refused.
func TestClientsFileDuplicateWindow(t *testing.T) {
	t.Parallel()
	write := func(body string) string {
		p := filepath.Join(t.TempDir(), "clients.yaml")
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}
	specs, err := system.LoadClientsFile(write("clients:\n  - id: a\n  - id: b\n    duplicate_window_days: 30\n  - id: c\n    duplicate_window_days: 0\n"))
	require.NoError(t, err)
	st := storetest.Store(t)
	require.NoError(t, system.ApplyClients(t.Context(), st, specs))
	for id, want := range map[string]int{"a": 90, "b": 30, "c": 0} {
		days, err := st.DuplicateWindow(t.Context(), id)
		require.NoError(t, err)
		require.Equal(t, want, days, id)
	}
	// Removed from the file: back to the default.
	specs, err = system.LoadClientsFile(write("clients:\n  - id: b\n"))
	require.NoError(t, err)
	require.NoError(t, system.ApplyClients(t.Context(), st, specs))
	days, err := st.DuplicateWindow(t.Context(), "b")
	require.NoError(t, err)
	require.Equal(t, 90, days)

	_, err = system.LoadClientsFile(write("clients:\n  - id: a\n    duplicate_window_days: -1\n"))
	require.ErrorContains(t, err, "clients[0] (a)")
	require.ErrorContains(t, err, "duplicate_window_days must be 0 or more")
}
