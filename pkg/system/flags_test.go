package system_test

import (
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
	st := storetest.Store(t)
	applyClientsFile(t, st, "clients:\n  - id: a\n  - id: b\n    flags: review\n  - id: c\n    flags: deliver\n")
	for id, want := range map[string]document.FlagPolicy{"a": document.FlagsDeliver, "b": document.FlagsReview, "c": document.FlagsDeliver} {
		p, err := st.FlagPolicy(t.Context(), id)
		require.NoError(t, err)
		require.Equal(t, want, p, id)
	}
	// Removed from the file: back to the default.
	applyClientsFile(t, st, "clients:\n  - id: b\n")
	p, err := st.FlagPolicy(t.Context(), "b")
	require.NoError(t, err)
	require.Equal(t, document.FlagsDeliver, p)

	_, err = system.LoadClientsFile(writeClientsFile(t, "clients:\n  - id: a\n    flags: hold\n"))
	require.ErrorContains(t, err, "clients[0] (a)")
	require.ErrorContains(t, err, `flags must be deliver or review, not "hold"`)
}
