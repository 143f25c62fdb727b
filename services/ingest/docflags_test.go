package ingest_test

import (
	"net/http"
	"testing"

	"github.com/docintake/docintake/pkg/store"
	"github.com/stretchr/testify/require"
)

// The document details carry the flags of the document's current attempt
// as an additive extension (absent when none), valid against openapi.yaml.
func TestDocumentDetailsFlags(t *testing.T) {
	t.Parallel()
	b := setup(t)
	d := dlqDocument(t, b.st, "intake", "m-flags")
	r := b.do(t, b.req(t, http.MethodGet, "/documents/"+d.LogID, "tok-acme", "", nil))
	require.Equal(t, http.StatusOK, r.status)
	require.NotContains(t, r.body, "flags")

	require.NoError(t, b.st.PutDocumentFlags(t.Context(), d.ID, 1, []store.DocumentFlag{{Kind: "price", Line: 2, Position: "2",
		Article: "S-200", Expected: "0.30", Printed: "0.25", Message: "line 2 (S-200): price 0.25 EUR per C62 is 16.67 % below the price list's 0.30"}}))
	r = b.do(t, b.req(t, http.MethodGet, "/documents/"+d.LogID, "tok-acme", "", nil))
	require.Equal(t, http.StatusOK, r.status)
	require.Equal(t, []any{map[string]any{"kind": "price", "line": 2.0, "position": "2", "article": "S-200", "expected": "0.30",
		"printed": "0.25", "message": "line 2 (S-200): price 0.25 EUR per C62 is 16.67 % below the price list's 0.30"}}, r.body["flags"])
}
