package system_test

import (
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
	st := storetest.Store(t)
	specs := applyClientsFile(t, st, "clients:\n  - id: a\n  - id: b\n    unknown_party: generic\n  - id: c\n    unknown_party: reject\n")
	require.Equal(t, []string{"", "generic", "reject"}, []string{specs[0].UnknownParty, specs[1].UnknownParty, specs[2].UnknownParty})
	for id, want := range map[string]document.UnknownParty{"a": document.UnknownPartyReject, "b": document.UnknownPartyGeneric,
		"c": document.UnknownPartyReject} {
		c, err := st.Client(t.Context(), id)
		require.NoError(t, err)
		require.Equal(t, want, c.UnknownParty, id)
	}

	_, err := system.LoadClientsFile(writeClientsFile(t, "clients:\n  - id: a\n    unknown_party: maybe\n"))
	require.ErrorContains(t, err, "clients[0] (a)")
	require.ErrorContains(t, err, `unknown_party must be reject or generic, not "maybe"`)
}
