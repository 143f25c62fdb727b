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

// ageDocs makes documents look stuck since an hour ago.
func (b *bundle) ageDocs(docs ...document.Document) {
	b.t.Helper()
	for _, d := range docs {
		_, err := b.st.Pool().Exec(b.t.Context(), `UPDATE documents SET updated_at = now() - interval '1 hour' WHERE id = $1`, d.ID)
		require.NoError(b.t, err)
	}
}

// holdOne fetches the next process job and holds it unacked, as a
// processor's fair window does; it returns the job's message id.
func (b *bundle) holdOne(cons jetstream.Consumer) string {
	b.t.Helper()
	batch, err := cons.Fetch(1, jetstream.FetchMaxWait(5*time.Second))
	require.NoError(b.t, err)
	var held []string
	for m := range batch.Messages() {
		held = append(held, m.Headers().Get(jetstream.MsgIDHeader))
	}
	require.Len(b.t, held, 1)
	return held[0]
}

// processConsumer applies mutate to the processor consumer's configuration
// and returns the consumer.
func (b *bundle) processConsumer(mutate func(c *queue.ConsumerConfig)) jetstream.Consumer {
	b.t.Helper()
	q := b.qcfg
	mutate(&q.Processor)
	require.NoError(b.t, queue.Ensure(b.t.Context(), b.js, q))
	cons, err := b.js.Consumer(b.t.Context(), q.Stream, q.Processor.Durable)
	require.NoError(b.t, err)
	return cons
}

// The sweeper leaves alone a document whose process job the consumer still
// holds: pulled and not acked (a worker or a fair window has it; here the
// test, and the consumer may have only that one out), or not delivered yet
// (queued behind it). It re-enqueues an equally stuck document whose job is
// gone from the stream. All three are candidates of the same sweep (the
// held and the queued one are older), so the skip is checked at the moment
// the lost one is swept.
func TestSweeperSkipsHeldJobs(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"INTAKE_SWEEP_INTERVAL": "100ms", "INTAKE_STUCK_AFTER": "300ms",
		"INTAKE_PROCESSOR_ACK_WAIT": "1m"})
	cons := b.processConsumer(func(c *queue.ConsumerConfig) { c.MaxAckPending = 1 })
	held := b.upload(orderPDF("Q-1", nil), docOpts{})
	queued := b.upload(orderPDF("Q-2", nil), docOpts{})
	lost := b.upload(orderPDF("Q-3", nil), docOpts{})
	b.ageDocs(held, queued)
	require.Equal(t, held.LogID+":process:1", b.holdOne(cons))
	s, err := b.js.Stream(t.Context(), b.qcfg.Stream)
	require.NoError(t, err)
	raw, err := s.GetMsg(t.Context(), 3)
	require.NoError(t, err)
	require.Equal(t, lost.LogID+":process:1", raw.Header.Get(jetstream.MsgIDHeader))
	require.NoError(t, s.DeleteMsg(t.Context(), 3)) // a broker that lost it

	b.start()
	waitFor(t, 20*time.Second, func() error {
		if !b.sweptBy(lost) {
			return fmt.Errorf("%s not swept yet", lost.LogID)
		}
		return nil
	})
	require.False(t, b.sweptBy(held), "a job held unacked is not re-enqueued: %+v", b.events(held))
	require.False(t, b.sweptBy(queued), "a job still queued in the consumer is not re-enqueued: %+v", b.events(queued))
	for _, d := range []document.Document{held, queued} {
		got, err := b.st.Document(t.Context(), d.ID)
		require.NoError(t, err)
		require.Equal(t, document.StateReceived, got.State)
	}
}

// A job the consumer gave up on at MaxDeliver whose advisory nobody heard
// (no processor ran) stays in the work-queue stream, no longer ack-pending
// but above the ack floor JetStream reports, where it looks like a held
// job. The sweeper tells from the counts that some delivered job is not
// held and then counts none as held: the exhausted job's document is
// re-enqueued, and so (as a harmless duplicate) is the held one's; the
// undelivered one is still left alone.
func TestSweeperRecoversExhaustedJob(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"INTAKE_SWEEP_INTERVAL": "100ms", "INTAKE_STUCK_AFTER": "300ms",
		"INTAKE_PROCESSOR_ACK_WAIT": "1m"})
	cons := b.processConsumer(func(c *queue.ConsumerConfig) { c.MaxAckPending, c.MaxDeliver = 1, 1 })
	exhausted := b.upload(orderPDF("X-1", nil), docOpts{})
	held := b.upload(orderPDF("X-2", nil), docOpts{})
	queued := b.upload(orderPDF("X-3", nil), docOpts{})
	b.ageDocs(exhausted, held, queued)

	batch, err := cons.Fetch(1, jetstream.FetchMaxWait(5*time.Second))
	require.NoError(t, err)
	for m := range batch.Messages() {
		require.Equal(t, exhausted.LogID+":process:1", m.Headers().Get(jetstream.MsgIDHeader))
		require.NoError(t, m.Nak())
	}
	// The pull after the nak finds the job's one delivery spent, gives it
	// up and hands out the next job, which the test then holds.
	var got []string
	waitFor(t, 10*time.Second, func() error {
		batch, err := cons.FetchNoWait(1)
		if err != nil {
			return err
		}
		for m := range batch.Messages() {
			got = append(got, m.Headers().Get(jetstream.MsgIDHeader))
		}
		if len(got) == 0 {
			return fmt.Errorf("nothing delivered yet")
		}
		return nil
	})
	require.Equal(t, []string{held.LogID + ":process:1"}, got)
	info, err := cons.Info(t.Context())
	require.NoError(t, err)
	require.Equal(t, 1, info.NumAckPending, "the exhausted job is no longer ack-pending")
	require.Zero(t, info.AckFloor.Stream, "but still above the reported ack floor")

	b.start()
	waitFor(t, 20*time.Second, func() error {
		if !b.sweptBy(exhausted) {
			return fmt.Errorf("%s not swept yet", exhausted.LogID)
		}
		return nil
	})
	require.True(t, b.sweptBy(held), "while exhausted jobs cannot be told apart, no delivered job counts as held")
	require.False(t, b.sweptBy(queued), "an undelivered job is still queued: %+v", b.events(queued))
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
