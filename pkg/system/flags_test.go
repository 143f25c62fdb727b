package system_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/docintake/docintake/pkg/system"
	"github.com/stretchr/testify/require"
)

// What a client's flagged orders get comes from the clients file: deliver
// when absent, review to hold them; anything else is refused naming the
// entry.
func TestClientsFileFlags(t *testing.T) {
	t.Parallel()
	write := func(body string) string {
		p := filepath.Join(t.TempDir(), "clients.yaml")
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}
	specs, err := system.LoadClientsFile(write("clients:\n  - id: a\n  - id: b\n    flags: review\n  - id: c\n    flags: deliver\n"))
	require.NoError(t, err)
	st := storetest.Store(t)
	require.NoError(t, system.ApplyClients(t.Context(), st, specs))
	for id, want := range map[string]document.FlagPolicy{"a": document.FlagsDeliver, "b": document.FlagsReview, "c": document.FlagsDeliver} {
		p, err := st.FlagPolicy(t.Context(), id)
		require.NoError(t, err)
		require.Equal(t, want, p, id)
	}
	// Removed from the file: back to the default.
	specs, err = system.LoadClientsFile(write("clients:\n  - id: b\n"))
	require.NoError(t, err)
	require.NoError(t, system.ApplyClients(t.Context(), st, specs))
	p, err := st.FlagPolicy(t.Context(), "b")
	require.NoError(t, err)
	require.Equal(t, document.FlagsDeliver, p)

	_, err = system.LoadClientsFile(write("clients:\n  - id: a\n    flags: hold\n"))
	require.ErrorContains(t, err, "clients[0] (a)")
	require.ErrorContains(t, err, `flags must be deliver or review, not "hold"`)
}
