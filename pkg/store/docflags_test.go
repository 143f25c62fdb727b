package store_test

import (
	"testing"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/stretchr/testify/require"
)

// A document's flags are those of its current attempt.
func TestDocumentFlags(t *testing.T) {
	t.Parallel()
	st := storetest.Store(t)
	ctx := t.Context()
	require.NoError(t, st.UpsertClient(ctx, document.Client{ID: "acme", WebhookURL: "http://127.0.0.1:1/h"}))
	d, job := newDoc("acme", "m-flags", "flags")
	_, _, err := st.CreateDocument(ctx, d, job)
	require.NoError(t, err)
	flags := []store.DocumentFlag{{Kind: "price", Line: 2, Position: "20", Article: "S-200", Expected: "0.30", Printed: "0.25", Message: "m1"},
		{Kind: "delivery_date_past", Expected: "2026-02-05", Printed: "2026-02-04", Message: "m2"}}
	require.NoError(t, st.PutDocumentFlags(ctx, d.ID, 1, flags))
	got, err := st.DocumentFlags(ctx, d.ID)
	require.NoError(t, err)
	flags[0].Seq, flags[1].Seq = 1, 2
	require.Equal(t, flags, got)
	// The same attempt run again replaces its flags.
	require.NoError(t, st.PutDocumentFlags(ctx, d.ID, 1, flags[1:]))
	got, err = st.DocumentFlags(ctx, d.ID)
	require.NoError(t, err)
	require.Equal(t, []store.DocumentFlag{{Seq: 1, Kind: "delivery_date_past", Expected: "2026-02-05", Printed: "2026-02-04", Message: "m2"}}, got)
	// Another attempt's flags are not the current attempt's.
	require.NoError(t, st.PutDocumentFlags(ctx, d.ID, 2, flags[:1]))
	got, err = st.DocumentFlags(ctx, d.ID)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, "m2", got[0].Message)
}
