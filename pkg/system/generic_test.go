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

// The clients file takes unknown_party: reject (the default) or generic,
// and names the entry of any other value.
func TestClientsFileUnknownParty(t *testing.T) {
	t.Parallel()
	write := func(body string) string {
		p := filepath.Join(t.TempDir(), "clients.yaml")
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}
	specs, err := system.LoadClientsFile(write("clients:\n  - id: a\n  - id: b\n    unknown_party: generic\n  - id: c\n    unknown_party: reject\n"))
	require.NoError(t, err)
	require.Equal(t, []string{"", "generic", "reject"}, []string{specs[0].UnknownParty, specs[1].UnknownParty, specs[2].UnknownParty})
	st := storetest.Store(t)
	require.NoError(t, system.ApplyClients(t.Context(), st, specs))
	for id, want := range map[string]document.UnknownParty{"a": document.UnknownPartyReject, "b": document.UnknownPartyGeneric,
		"c": document.UnknownPartyReject} {
		c, err := st.Client(t.Context(), id)
		require.NoError(t, err)
		require.Equal(t, want, c.UnknownParty, id)
	}

	_, err = system.LoadClientsFile(write("clients:\n  - id: a\n    unknown_party: maybe\n"))
	require.ErrorContains(t, err, "clients[0] (a)")
	require.ErrorContains(t, err, `unknown_party must be reject or generic, not "maybe"`)
}
