package system_test

import (
	"testing"

	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/docintake/docintake/pkg/system"
	"github.com/stretchr/testify/require"
)

// route_unaddressed (issue 29) comes from the clients file and is off when
// absent, so the contract's 422 for an upload without template and
// party_id stays the default; taking it out of the file turns it off.
func TestClientsFileRouteUnaddressed(t *testing.T) {
	t.Parallel()
	st := storetest.Store(t)
	applyClientsFile(t, st, "clients:\n  - id: a\n  - id: b\n    route_unaddressed: true\n")
	for id, want := range map[string]bool{"a": false, "b": true} {
		c, err := st.Client(t.Context(), id)
		require.NoError(t, err)
		require.Equal(t, want, c.RouteUnaddressed, id)
	}
	applyClientsFile(t, st, "clients:\n  - id: b\n")
	c, err := st.Client(t.Context(), "b")
	require.NoError(t, err)
	require.False(t, c.RouteUnaddressed)

	_, err = system.LoadClientsFile(writeClientsFile(t, "clients:\n  - id: a\n    route_unaddressed: maybe\n"))
	require.ErrorContains(t, err, "clients file")
}
