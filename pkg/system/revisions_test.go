package system_test

import (
	"testing"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/docintake/docintake/pkg/system"
	"github.com/stretchr/testify/require"
)

// How a client's revisions of a delivered PO are delivered comes from the
// clients file: orderchange when absent, order for an ERP that takes no
// ORDERCHANGE; anything else is refused naming the entry.
func TestClientsFileRevisions(t *testing.T) {
	t.Parallel()
	st := storetest.Store(t)
	applyClientsFile(t, st, "clients:\n  - id: a\n  - id: b\n    revisions: order\n  - id: c\n    revisions: orderchange\n")
	for id, want := range map[string]document.RevisionFormat{"a": document.RevisionsOrderChange, "b": document.RevisionsOrder,
		"c": document.RevisionsOrderChange} {
		f, err := st.RevisionFormat(t.Context(), id)
		require.NoError(t, err)
		require.Equal(t, want, f, id)
	}
	// Removed from the file: back to the default.
	applyClientsFile(t, st, "clients:\n  - id: b\n")
	f, err := st.RevisionFormat(t.Context(), "b")
	require.NoError(t, err)
	require.Equal(t, document.RevisionsOrderChange, f)

	_, err = system.LoadClientsFile(writeClientsFile(t, "clients:\n  - id: a\n    revisions: ORDERCHANGE\n"))
	require.ErrorContains(t, err, "clients[0] (a)")
	require.ErrorContains(t, err, `revisions must be orderchange or order, not "ORDERCHANGE"`)
}
