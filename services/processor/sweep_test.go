package processor_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/jobs"
	"github.com/docintake/docintake/pkg/queue"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"
)

// sweptBy reports whether the sweeper wrote an event for the document.
func (b *bundle) sweptBy(d document.Document) bool {
	return slices.ContainsFunc(b.events(d), func(e document.Event) bool { return e.Actor == "sweeper" })
}

// A document whose job waits in the processor consumer behind others (here:
// the consumer may have one job out, and a client holds it) is late, not
// lost: the sweeper leaves it alone, while it re-enqueues an equally stuck
// document whose job was taken and never answered. Both are candidates of
// the same sweep (the queued one is older), so the skip is checked at the
// moment the other is swept.
func TestSweeperSkipsQueuedJob(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"INTAKE_SWEEP_INTERVAL": "100ms", "INTAKE_STUCK_AFTER": "300ms",
		"INTAKE_PROCESSOR_ACK_WAIT": "1m"})
	q := b.qcfg
	q.Processor.MaxAckPending = 1
	require.NoError(t, queue.Ensure(t.Context(), b.js, q))
	taken := b.upload(orderPDF("Q-1", nil), docOpts{})
	queued := b.upload(orderPDF("Q-2", nil), docOpts{})
	_, err := b.st.Pool().Exec(t.Context(), `UPDATE documents SET updated_at = now() - interval '1 hour' WHERE id = $1`, queued.ID)
	require.NoError(t, err)
	cons, err := b.js.Consumer(t.Context(), q.Stream, q.Processor.Durable)
	require.NoError(t, err)
	batch, err := cons.Fetch(1, jetstream.FetchMaxWait(5*time.Second))
	require.NoError(t, err)
	var held []string
	for m := range batch.Messages() {
		held = append(held, m.Headers().Get(jetstream.MsgIDHeader)) // taken and never acked
	}
	require.Equal(t, []string{taken.LogID + ":process:1"}, held)

	b.start()
	waitFor(t, 20*time.Second, func() error {
		if !b.sweptBy(taken) {
			return fmt.Errorf("%s not swept yet", taken.LogID)
		}
		return nil
	})
	require.False(t, b.sweptBy(queued), "a job still queued in the consumer is not re-enqueued: %+v", b.events(queued))
	got, err := b.st.Document(t.Context(), queued.ID)
	require.NoError(t, err)
	require.Equal(t, document.StateReceived, got.State)
}

// A deliver job lost before the dispatcher recorded a delivery (here: taken
// from the stream and acked by nobody's dispatcher) is re-enqueued by the
// sweeper with a new webhook id; a deliver job still in the stream (taken
// and put back, as the dispatcher does when the client has no free slot) is
// not, so the client is not called twice.
func TestSweeperRepublishesLostDeliverJob(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"INTAKE_SWEEP_INTERVAL": "100ms", "INTAKE_STUCK_AFTER": "300ms"})
	b.addArticles()
	b.start()
	kept := b.waitState(b.upload(orderPDF("D-1", nil), docOpts{}), document.StateProcessedSuccess, 20*time.Second)
	lost := b.waitState(b.upload(orderPDF("D-2", nil), docOpts{}), document.StateProcessedSuccess, 20*time.Second)

	cons, err := b.js.Consumer(t.Context(), b.qcfg.Stream, b.qcfg.Dispatcher.Durable)
	require.NoError(t, err)
	batch, err := cons.Fetch(2, jetstream.FetchMaxWait(5*time.Second))
	require.NoError(t, err)
	first := map[string]string{} // document id → webhook id of its first deliver job
	for m := range batch.Messages() {
		j, err := jobs.ParseDeliver(m.Data())
		require.NoError(t, err)
		first[j.GetDocumentId()] = j.GetDeliveryId()
		if j.GetDocumentId() == lost.ID {
			require.NoError(t, m.Ack()) // gone from the stream, no delivery row: lost
		} else {
			require.NoError(t, m.NakWithDelay(time.Hour)) // still in the stream
		}
	}
	require.Len(t, first, 2)

	again := b.deliverJobs(1)[0]
	require.Equal(t, lost.ID, again.GetDocumentId())
	require.NotEqual(t, first[lost.ID], again.GetDeliveryId(), "a new delivery, with its own webhook id")
	require.True(t, b.sweptBy(lost))
	require.False(t, b.sweptBy(kept), "a deliver job still in the stream is not sent twice: %+v", b.events(kept))
}
