package system_test

import (
	"testing"

	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/docintake/docintake/pkg/system"
	"github.com/stretchr/testify/require"
)

// A client's duplicate window (issue 28) comes from the clients file: 90
// days when absent, 0 turns the check off, a negative number is refused.
func TestClientsFileDuplicateWindow(t *testing.T) {
	t.Parallel()
	st := storetest.Store(t)
	applyClientsFile(t, st, "clients:\n  - id: a\n  - id: b\n    duplicate_window_days: 30\n  - id: c\n    duplicate_window_days: 0\n")
	for id, want := range map[string]int{"a": 90, "b": 30, "c": 0} {
		days, err := st.DuplicateWindow(t.Context(), id)
		require.NoError(t, err)
		require.Equal(t, want, days, id)
	}
	// Removed from the file: back to the default.
	applyClientsFile(t, st, "clients:\n  - id: b\n")
	days, err := st.DuplicateWindow(t.Context(), "b")
	require.NoError(t, err)
	require.Equal(t, 90, days)

	_, err = system.LoadClientsFile(writeClientsFile(t, "clients:\n  - id: a\n    duplicate_window_days: -1\n"))
	require.ErrorContains(t, err, "clients[0] (a)")
	require.ErrorContains(t, err, "duplicate_window_days must be 0 or more")
}
