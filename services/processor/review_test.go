package processor_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/lifecycle"
	"github.com/docintake/docintake/pkg/opentrans"
	"github.com/docintake/docintake/pkg/opentrans/opentranstest"
	"github.com/docintake/docintake/pkg/resultjson"
	"github.com/stretchr/testify/require"
)

// Issue 27's review queue, with real PostgreSQL, JetStream and S3.

// withoutOrderID is a test order whose order number line is missing: the
// template rejects it document_id_missing, which a person can fix.
func withoutOrderID(lines []string) []string {
	return append(lines[:1:1], lines[2:]...)
}

// hold makes the test client hold fixable rejections for review.
func (b *bundle) hold(timeout time.Duration) {
	b.t.Helper()
	require.NoError(b.t, b.st.SetReview(b.t.Context(), clientID, document.ReviewHold, timeout))
}

// approvable starts a processor for a client that holds for review (with
// the article mappings) and returns a held document with its reading.
func approvable(t *testing.T) (*bundle, document.Document, lifecycle.Review, lifecycle.Reading) {
	t.Helper()
	b := setup(t, nil)
	b.hold(time.Hour)
	b.addArticles()
	b.start()
	d := b.heldDoc()
	r := b.review()
	rd, err := r.Held(t.Context(), d)
	require.NoError(t, err)
	return b, d, r, rd
}

func (b *bundle) review() lifecycle.Review {
	return lifecycle.Review{Store: b.st, Objects: b.objects, Pinned: b.tmpls.Pinned, Prefix: b.qcfg.SubjectPrefix}
}

// heldDoc uploads an order without order number to a client that holds
// for review and waits until it is held.
func (b *bundle) heldDoc() document.Document {
	b.t.Helper()
	d := b.waitState(b.upload(orderPDF("", withoutOrderID), docOpts{}), document.StateProcessedRejected, 20*time.Second)
	_, held, err := b.st.ReviewUntil(b.t.Context(), d.ID)
	require.NoError(b.t, err)
	require.True(b.t, held, "held for review: %+v", b.events(d))
	return d
}

func hasEvent(ev []document.Event, actor, substr string) bool {
	for _, e := range ev {
		if (actor == "" || e.Actor == actor) && strings.Contains(e.Detail, substr) {
			return true
		}
	}
	return false
}

// A held rejection has no deliver job (the lost-deliver-job sweep, which
// runs every 100 ms and gives up on a job after 300 ms, leaves it alone);
// after the client's review timeout the sweeper releases it with the
// rejection's delivery, as it would have been queued without the hold.
func TestReviewHoldReleasedAfterTimeout(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"INTAKE_SWEEP_INTERVAL": "100ms", "INTAKE_STUCK_AFTER": "300ms"})
	b.hold(2 * time.Second)
	b.start()
	d := b.heldDoc()
	require.Equal(t, document.ReasonDocumentIDMissing, d.StatusReason)
	require.True(t, hasEvent(b.events(d), "processor", "held for review until"), "%+v", b.events(d))
	queue, err := b.st.ReviewQueue(t.Context(), clientID, 10)
	require.NoError(t, err)
	require.Len(t, queue, 1)
	require.Equal(t, d.LogID, queue[0].LogID)

	job := b.deliverJobs(1)[0]
	// The one deliver job is the release's: the review timeout passed, the
	// hold ended, and no sweep re-enqueued a "lost" job before.
	require.Equal(t, d.ID, job.GetDocumentId())
	require.Equal(t, string(document.StateProcessedRejected), job.GetState())
	ev := b.events(d)
	require.True(t, hasEvent(ev, "sweeper", "review timeout passed"), "%+v", ev)
	require.False(t, hasEvent(ev, "", "deliver job re-enqueued"), "a held document is not swept as undelivered: %+v", ev)
	var held, released time.Time
	for _, e := range ev {
		if strings.Contains(e.Detail, "held for review until") {
			held = e.At
		}
		if strings.Contains(e.Detail, "review timeout passed") {
			released = e.At
		}
	}
	require.GreaterOrEqual(t, released.Sub(held), 2*time.Second, "released after the client's review_timeout")
	_, stillHeld, err := b.st.ReviewUntil(t.Context(), d.ID)
	require.NoError(t, err)
	require.False(t, stillHeld)
}

// Without review: hold a fixable rejection is delivered at once, as before.
func TestReviewOffDeliversRejection(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.start()
	d := b.waitState(b.upload(orderPDF("", withoutOrderID), docOpts{}), document.StateProcessedRejected, 20*time.Second)
	job := b.deliverJobs(1)[0]
	require.Equal(t, d.ID, job.GetDocumentId())
	_, held, err := b.st.ReviewUntil(t.Context(), d.ID)
	require.NoError(t, err)
	require.False(t, held)
	require.False(t, hasEvent(b.events(d), "", "held for review"))
}

// An operator's corrected order is decided as the processor decides one:
// refused while its amounts do not close (each failed check named), then
// approved: XSD-valid openTRANS with the corrections (and the mapped
// articles), processed_success with its delivery, and an event naming
// every change and the operator.
func TestReviewApprove(t *testing.T) {
	t.Parallel()
	b, d, r, rd := approvable(t)
	require.Equal(t, document.ReasonDocumentIDMissing, rd.Reason)
	read := rd.Result.Order
	require.Empty(t, read.OrderID)
	require.Len(t, read.Items, 2)
	require.Equal(t, "10", read.Items[0].Quantity)

	fixed := read
	fixed.Items = append([]resultjson.Item(nil), read.Items...)
	fixed.OrderID = "PO-77"
	fixed.Items[0].Quantity = "12"
	fixed.Items[0].LineAmount = "18.00" // 12 × 1.50
	fixed.Items[1].LineAmount = "5.00"  // 20 × 0.25
	fixed.Totals.NetAmount = "24.00"    // the lines make 23.00

	_, err := r.Approve(t.Context(), d, fixed, "", "operator:alice")
	require.Equal(t, document.EINVALID, document.ErrorKind(err))
	require.ErrorContains(t, err, "does not close")
	require.ErrorContains(t, err, "net_total")
	cur, err := b.st.Document(t.Context(), d.ID)
	require.NoError(t, err)
	require.Equal(t, document.StateProcessedRejected, cur.State, "a refused approval changes nothing")

	fixed.Totals.NetAmount = "23.00"
	got, err := r.Approve(t.Context(), d, fixed, "", "operator:alice")
	require.NoError(t, err)
	require.Equal(t, document.StateProcessedSuccess, got.State)
	job := b.deliverJobs(1)[0]
	require.Equal(t, string(document.StateProcessedSuccess), job.GetState())

	xml := b.read(got.ResultPath)
	opentranstest.Validate(t, xml)
	o, err := opentrans.Read(strings.NewReader(string(xml)))
	require.NoError(t, err)
	require.Equal(t, "PO-77", o.ID)
	require.Equal(t, "12", o.Items[0].Quantity)
	require.Equal(t, "S-100", o.Items[0].SupplierArticleID, "mappings applied as the processor applies them")

	ev := b.events(d)
	last := ev[len(ev)-1]
	require.Equal(t, "operator:alice", last.Actor)
	require.Equal(t, document.StateProcessedSuccess, last.To)
	for _, want := range []string{`order_id: "" → "PO-77"`, `items[0].quantity: "10" → "12"`, `totals.net_amount: "" → "23.00"`} {
		require.Contains(t, last.Detail, want)
	}
	_, err = r.Approve(t.Context(), d, fixed, "", "operator:bob")
	require.Equal(t, document.ECONFLICT, document.ErrorKind(err), "approved once")
}

// A difference the operator confirms with a comment is accepted; the
// comment is on the event.
func TestReviewApproveConfirmedDifference(t *testing.T) {
	t.Parallel()
	b, d, r, rd := approvable(t)
	fixed := rd.Result.Order
	fixed.OrderID = "PO-78"
	fixed.Totals.NetAmount, fixed.Items[0].LineAmount, fixed.Items[1].LineAmount = "20.50", "15.00", "5.00"
	got, err := r.Approve(t.Context(), d, fixed, "freight 0.50 agreed by phone", "operator:alice")
	require.NoError(t, err)
	require.Equal(t, document.StateProcessedSuccess, got.State)
	require.True(t, hasEvent(b.events(d), "operator:alice", "comment: freight 0.50 agreed by phone"))
}

// Two operators approve the same document at once: exactly one wins, the
// other is told (ECONFLICT), and only one success delivery is queued.
func TestReviewConcurrentApprovals(t *testing.T) {
	t.Parallel()
	b, d, r, rd := approvable(t)
	fixed := rd.Result.Order
	fixed.OrderID = "PO-79"
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, who := range []string{"operator:alice", "operator:bob"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = r.Approve(t.Context(), d, fixed, "", who)
		}()
	}
	wg.Wait()
	wins := 0
	for _, err := range errs {
		if err == nil {
			wins++
		} else {
			require.Equal(t, document.ECONFLICT, document.ErrorKind(err), "%v", err)
		}
	}
	require.Equal(t, 1, wins, "%v", errs)
	require.Len(t, b.deliverJobs(1), 1)
}

// Release delivers the rejection now; the hold is over, so a later
// approval is refused.
func TestReviewRelease(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.hold(time.Hour)
	b.start()
	d := b.heldDoc()
	r := b.review()
	_, err := r.Release(t.Context(), d, "operator:alice")
	require.NoError(t, err)
	job := b.deliverJobs(1)[0]
	require.Equal(t, string(document.StateProcessedRejected), job.GetState())
	require.True(t, hasEvent(b.events(d), "operator:alice", "released by an operator"))
	_, err = r.Release(t.Context(), d, "operator:bob")
	require.Equal(t, document.ECONFLICT, document.ErrorKind(err))
}
