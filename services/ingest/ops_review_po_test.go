package ingest_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/pdftext"
	"github.com/stretchr/testify/require"
)

// Issue 28: an approval goes through the PO's duplicate check. Approving a
// second held copy of an order already approved (and so delivered) ignores
// it as its duplicate, and the console says so rather than "delivered".
func TestReviewApprovalOfDeliveredPOIsDuplicate(t *testing.T) {
	t.Parallel()
	b := setupReview(t, pdftext.RenderOptions{})
	approve := func(d document.Document) *http.Response {
		form := formOf(readBody(t, opsRequest(t, "GET", b.url+"/ops/review/"+d.LogID, opsToken, nil)))
		form.Set("order_id", "G-4711")
		return opsRequest(t, "POST", b.url+"/ops/review/"+d.LogID+"/approve", opsToken, form)
	}
	first, copyDoc := b.heldGenOrder(t, "acme"), b.heldGenOrder(t, "acme")
	res := approve(first)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, "/ops/review/"+first.LogID+"?done=approved", res.Header.Get("Location"))

	res = approve(copyDoc)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, "/ops/review/"+copyDoc.LogID+"?done=duplicate", res.Header.Get("Location"))
	require.Equal(t, document.StateProcessedIgnored, docState(t, b.st, copyDoc.ID))
	evs, err := b.st.Events(t.Context(), copyDoc.ID)
	require.NoError(t, err)
	last := evs[len(evs)-1]
	require.True(t, strings.HasPrefix(last.Detail, "duplicate of "+first.LogID+" (order G-4711 "), last.Detail)
	require.Equal(t, "operator:ops-console", last.Actor)
	done := readBody(t, opsRequest(t, "GET", b.url+res.Header.Get("Location"), opsToken, nil))
	require.Contains(t, done, "ignored as its duplicate, not delivered again")
}
