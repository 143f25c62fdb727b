package system_test

import (
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/docintake/docintake/pkg/system"
	"github.com/stretchr/testify/require"
)

// Issue 27: the clients file takes review: hold (default off) and
// review_timeout (default 4 h); a bad value names the entry.
func TestClientsFileReview(t *testing.T) {
	t.Parallel()
	st := storetest.Store(t)
	applyClientsFile(t, st, "clients:\n  - id: a\n  - id: b\n    review: hold\n  - id: c\n    review: hold\n    review_timeout: 30m\n")
	want := map[string]struct {
		review  document.Review
		timeout time.Duration
	}{"a": {document.ReviewOff, 4 * time.Hour}, "b": {document.ReviewHold, 4 * time.Hour}, "c": {document.ReviewHold, 30 * time.Minute}}
	for id, w := range want {
		c, err := st.Client(t.Context(), id)
		require.NoError(t, err)
		require.Equal(t, w.review, c.Review, id)
		require.Equal(t, w.timeout, c.ReviewWait(), id)
	}

	_, err := system.LoadClientsFile(writeClientsFile(t, "clients:\n  - id: a\n    review: later\n"))
	require.ErrorContains(t, err, "clients[0] (a)")
	require.ErrorContains(t, err, `review must be off or hold, not "later"`)
	_, err = system.LoadClientsFile(writeClientsFile(t, "clients:\n  - id: a\n    review: hold\n    review_timeout: soon\n"))
	require.ErrorContains(t, err, "clients[0] (a)")
	require.ErrorContains(t, err, `review_timeout "soon"`)
}
