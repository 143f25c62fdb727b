package ingest_test

import (
	"net/http"
	"regexp"
	"testing"

	"github.com/docintake/docintake/pkg/store"
	"github.com/stretchr/testify/require"
)

// The console's document page lists the flags of the document's current
// attempt with their expected and printed values (issue 28); a document
// without flags has no such table.
func TestOpsDocumentShowsFlags(t *testing.T) {
	t.Parallel()
	b := setupOps(t, opsToken)
	d := dlqDocument(t, b.st, "intake", "m-flags")
	page := func() string {
		res := opsRequest(t, "GET", b.url+"/ops/documents/"+d.LogID, opsToken, nil)
		require.Equal(t, http.StatusOK, res.StatusCode)
		return readBody(t, res)
	}
	require.NotContains(t, page(), `id="flags"`)

	require.NoError(t, b.st.PutDocumentFlags(t.Context(), d.ID, 1, []store.DocumentFlag{
		{Kind: "price", Line: 2, Position: "20", Article: "S-200", Expected: "0.30", Printed: "0.25",
			Message: "line 2 (position 20, S-200): price 0.25 EUR per C62 is 16.67 % below the price list's 0.30 (tolerance 5 %; price list for every buyer, line 2)"},
		{Kind: "delivery_date_before_order", Expected: "2026-02-03", Printed: "2026-02-01",
			Message: "the order's requested delivery date 2026-02-01 is before the order date 2026-02-03"},
	}))
	html := page()
	rows := regexp.MustCompile(`(?s)<tr class="flag">(.*?)</tr>`).FindAllStringSubmatch(html, -1)
	require.Len(t, rows, 2, html)
	cells := func(row string) []string {
		var out []string
		for _, m := range regexp.MustCompile(`<td[^>]*>(.*?)</td>`).FindAllStringSubmatch(row, -1) {
			out = append(out, m[1])
		}
		return out
	}
	require.Equal(t, []string{"1", "price", "2", "S-200", "0.30", "0.25",
		"line 2 (position 20, S-200): price 0.25 EUR per C62 is 16.67 % below the price list&#39;s 0.30 (tolerance 5 %; price list for every buyer, line 2)"},
		cells(rows[0][1]))
	require.Equal(t, []string{"2", "delivery_date_before_order", "order", "", "2026-02-03", "2026-02-01",
		"the order&#39;s requested delivery date 2026-02-01 is before the order date 2026-02-03"}, cells(rows[1][1]))
}
