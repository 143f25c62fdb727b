package processor_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/opentrans/opentranstest"
	"github.com/stretchr/testify/require"
)

// Issue 28 with issue 27's review: an approved order is delivered as the
// processor delivers one, through its PO's duplicate and revision decision
// (pkg/podelivery), and recorded as the PO's delivery. The test orders
// (orderPDF) print N-2 (S-200) at 0.25 EUR; a price list of 0.30 ± 5 % flags
// it, and a client with flags: review holds the order.

// holdFlaggedOrders makes the test client hold flagged orders and flags
// every test order's S-200 line.
func (b *bundle) holdFlaggedOrders() {
	b.t.Helper()
	require.NoError(b.t, b.st.SetFlagPolicy(b.t.Context(), clientID, document.FlagsReview))
	b.prices("", "S-200,EUR,0.30,,C62,,,5\n")
}

// approveAsRead approves a held document with the order as read.
func (b *bundle) approveAsRead(d document.Document, who string) (document.Document, error) {
	b.t.Helper()
	rd, err := b.review().Held(b.t.Context(), d)
	require.NoError(b.t, err)
	return b.review().Approve(b.t.Context(), d, rd.Result.Order, "price agreed by phone", who)
}

// nutsQty is the test order with line 2 (N-2) ordering qty.
func nutsQty(id, qty string) []byte {
	return orderPDF(id, replace("N-2      Nuts       20      0.25", "N-2      Nuts       "+qty+"      0.25"))
}

// A held order whose PO was delivered before with other content is, once
// approved, its revision: an XSD-valid ORDERCHANGE with sequence 1 whose
// history names the earlier delivery and the change; and a later copy of
// the approved order is its duplicate, not another review.
func TestApprovedRevisionIsOrderChange(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.addArticles()
	b.start()
	first := b.waitState(b.upload(nutsQty("APR-1", "20"), docOpts{}), document.StateProcessedSuccess, 20*time.Second)

	b.holdFlaggedOrders()
	held := b.waitState(b.upload(nutsQty("APR-1", "12"), docOpts{}), document.StateProcessedRejected, 20*time.Second)
	approved, err := b.approveAsRead(held, "operator:alice")
	require.NoError(t, err)
	require.Equal(t, document.StateProcessedSuccess, approved.State)
	xml := b.read(approved.ResultPath)
	opentranstest.Validate(t, xml)
	require.Contains(t, string(xml), "<ORDERCHANGE ")
	require.Contains(t, string(xml), "<ORDERCHANGE_SEQUENCE_ID>1</ORDERCHANGE_SEQUENCE_ID>")
	require.Equal(t, []string{"APR-1"}, xmlTexts(t, xml, "ORDERCHANGE_INFO", "ORDER_ID"))
	require.Equal(t, []string{"10", "12"}, xmlTexts(t, xml, "ORDER_ITEM", "QUANTITY"), "the full changed order")
	note := fmt.Sprintf("revision 1 of order APR-1 (buyer ACME), changes %s: line 2 quantity 20 → 12", first.LogID)
	require.Contains(t, xmlTexts(t, xml, "ORDERCHANGE_INFO", "REMARKS"), note)
	detail := b.eventTo(approved, document.StateProcessedSuccess)
	require.True(t, strings.HasPrefix(detail, note+"; approved in review by operator:alice"), detail)

	// The approval is the PO's latest delivery: a copy of it is ignored as
	// its duplicate (even though it is flagged again), a copy of the first
	// version is a further revision.
	dup := b.waitState(b.upload(nutsQty("APR-1", "12"), docOpts{}), document.StateProcessedIgnored, 20*time.Second)
	require.True(t, strings.HasPrefix(b.eventTo(dup, document.StateProcessedIgnored), "duplicate of "+approved.LogID+" "),
		b.eventTo(dup, document.StateProcessedIgnored))
	statuses := map[string]string{}
	for _, j := range b.deliverJobs(3) {
		statuses[j.GetLogId()] = j.GetStatus()
	}
	require.Equal(t, map[string]string{first.LogID: "success", approved.LogID: "success", dup.LogID: "ignored"}, statuses)
}

// Two held copies of one PO approved at the same moment give one ORDER
// and one duplicate of it (the PO's row in PostgreSQL decides, as between
// two processors); a later copy, delivered without review, is a duplicate
// of the approved one too.
func TestApprovedCopiesOneOrder(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.addArticles()
	b.holdFlaggedOrders()
	b.start()
	pdf := nutsQty("APR-2", "20")
	copies := []document.Document{
		b.waitState(b.upload(pdf, docOpts{}), document.StateProcessedRejected, 20*time.Second),
		b.waitState(b.upload(pdf, docOpts{}), document.StateProcessedRejected, 20*time.Second),
	}
	got := make([]document.Document, len(copies))
	errs := make([]error, len(copies))
	var wg sync.WaitGroup
	for i, d := range copies {
		wg.Go(func() { got[i], errs[i] = b.approveAsRead(d, fmt.Sprintf("operator:%d", i)) })
	}
	wg.Wait()
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	byState := map[document.State]document.Document{}
	for _, d := range got {
		byState[d.State] = d
	}
	order, dup := byState[document.StateProcessedSuccess], byState[document.StateProcessedIgnored]
	require.NotEmpty(t, order.LogID, "one approval delivers: %+v", got)
	require.NotEmpty(t, dup.LogID, "the other is its duplicate: %+v", got)
	xml := b.read(order.ResultPath)
	opentranstest.Validate(t, xml)
	require.Contains(t, string(xml), "<ORDER ")
	require.Empty(t, dup.ResultPath, "a duplicate has no result")
	require.Empty(t, dup.StatusReason)
	detail := b.eventTo(dup, document.StateProcessedIgnored)
	require.True(t, strings.HasPrefix(detail, "duplicate of "+order.LogID+" (order APR-2 of buyer ACME, same content"), detail)
	require.Contains(t, detail, "approved in review by operator:")
	_, held, err := b.st.ReviewUntil(t.Context(), dup.ID)
	require.NoError(t, err)
	require.False(t, held)

	require.NoError(t, b.st.SetFlagPolicy(t.Context(), clientID, document.FlagsDeliver))
	later := b.waitState(b.upload(pdf, docOpts{}), document.StateProcessedIgnored, 20*time.Second)
	require.True(t, strings.HasPrefix(b.eventTo(later, document.StateProcessedIgnored), "duplicate of "+order.LogID+" "))
	statuses := map[string]string{}
	for _, j := range b.deliverJobs(3) {
		statuses[j.GetLogId()] = j.GetStatus()
	}
	require.Equal(t, map[string]string{order.LogID: "success", dup.LogID: "ignored", later.LogID: "ignored"}, statuses)
}

// A flagged order held for review that nobody decides is released by the
// client's review timeout: its rejection is delivered (webhook status
// rejected, status_reason null), never the order.
func TestFlaggedHeldReleasedByTimeout(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"INTAKE_SWEEP_INTERVAL": "100ms", "INTAKE_STUCK_AFTER": "300ms"})
	b.addArticles()
	b.holdFlaggedOrders()
	require.NoError(t, b.st.SetReview(t.Context(), clientID, document.ReviewOff, 2*time.Second))
	b.start()
	d := b.waitState(b.upload(nutsQty("TMO-1", "20"), docOpts{}), document.StateProcessedRejected, 20*time.Second)
	require.True(t, strings.HasPrefix(b.eventTo(d, document.StateProcessedRejected), "1 flag: price: "))

	job := b.deliverJobs(1)[0] // the release's: none before the timeout
	require.Equal(t, d.ID, job.GetDocumentId())
	require.Equal(t, string(document.StateProcessedRejected), job.GetState())
	require.Equal(t, "rejected", job.GetStatus())
	cur, err := b.st.Document(t.Context(), d.ID)
	require.NoError(t, err)
	require.Empty(t, cur.StatusReason, "status_reason null")
	require.Empty(t, cur.ResultPath, "the order is not delivered")
	_, held, err := b.st.ReviewUntil(t.Context(), d.ID)
	require.NoError(t, err)
	require.False(t, held)
	var heldAt, released time.Time
	for _, e := range b.events(d) {
		if strings.Contains(e.Detail, "held for review until") {
			heldAt = e.At
		}
		if e.Actor == "sweeper" && strings.Contains(e.Detail, "review timeout passed") {
			released = e.At
		}
	}
	require.False(t, released.IsZero(), "released by the sweeper: %+v", b.events(d))
	require.GreaterOrEqual(t, released.Sub(heldAt), 2*time.Second, "released after the client's review_timeout")
}
