package processor_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/opentrans"
	"github.com/docintake/docintake/pkg/opentrans/opentranstest"
	"github.com/docintake/docintake/pkg/order"
	"github.com/stretchr/testify/require"
)

// Issue 28: "or, per client, as an ORDER marked as a revision in its
// remarks". A client whose ERP takes no ORDERCHANGE (revisions: order)
// gets a revised PO as an XSD-valid ORDER with the whole changed order,
// whose last ORDER_INFO remark names the sequence number, the earlier
// delivery and what changed; copies are still duplicates.
func TestRevisionAsOrder(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.addArticles()
	require.NoError(t, b.st.SetRevisionFormat(t.Context(), clientID, document.RevisionsOrder))
	b.start()

	first := b.waitState(b.upload(nutsQty("RVO-1", "20"), docOpts{}), document.StateProcessedSuccess, 20*time.Second)
	second := b.waitState(b.upload(nutsQty("RVO-1", "12"), docOpts{}), document.StateProcessedSuccess, 20*time.Second)
	xml := b.read(second.ResultPath)
	opentranstest.Validate(t, xml)
	require.NotContains(t, string(xml), "ORDERCHANGE")
	o, err := opentrans.Read(bytes.NewReader(xml))
	require.NoError(t, err)
	require.Equal(t, order.TypeOrder, o.Type)
	require.Equal(t, "RVO-1", o.ID)
	require.Len(t, o.Items, 2, "the full changed order")
	require.Equal(t, "12", o.Items[1].Quantity)
	note := fmt.Sprintf("revision 1 of order RVO-1 (buyer ACME), changes %s: line 2 quantity 20 → 12", first.LogID)
	require.NotEmpty(t, o.Remarks)
	require.Equal(t, "docintake "+note, o.Remarks[len(o.Remarks)-1])
	require.True(t, strings.HasPrefix(b.eventTo(second, document.StateProcessedSuccess), note+"; "),
		b.eventTo(second, document.StateProcessedSuccess))

	// The sequence counts on; a copy of the latest is its duplicate.
	third := b.waitState(b.upload(nutsQty("RVO-1", "15"), docOpts{}), document.StateProcessedSuccess, 20*time.Second)
	o, err = opentrans.Read(bytes.NewReader(b.read(third.ResultPath)))
	require.NoError(t, err)
	require.Equal(t, order.TypeOrder, o.Type)
	require.Equal(t, fmt.Sprintf("docintake revision 2 of order RVO-1 (buyer ACME), changes %s: line 2 quantity 12 → 15", second.LogID),
		o.Remarks[len(o.Remarks)-1])
	dup := b.waitState(b.upload(nutsQty("RVO-1", "15"), docOpts{}), document.StateProcessedIgnored, 20*time.Second)
	require.True(t, strings.HasPrefix(b.eventTo(dup, document.StateProcessedIgnored), "duplicate of "+third.LogID+" "))

	// The first delivery is a plain ORDER without a revision remark.
	o, err = opentrans.Read(bytes.NewReader(b.read(first.ResultPath)))
	require.NoError(t, err)
	for _, r := range o.Remarks {
		require.NotContains(t, r, "docintake revision")
	}
}
