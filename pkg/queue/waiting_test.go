package queue_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/docintake/docintake/pkg/queue"
	"github.com/docintake/docintake/pkg/queue/queuetest"
)

// waitingBundle is a stream whose processor consumer gives up after two
// deliveries and redelivers after ackWait, on a server two connections
// share (one plays a processor that dies).
type waitingBundle struct {
	cfg  queue.Config
	js   jetstream.JetStream
	pub  *queue.Publisher
	url  string
	cons jetstream.Consumer
}

func setupWaiting(t *testing.T, ackWait time.Duration) *waitingBundle {
	t.Helper()
	url := queuetest.Server(t).ClientURL()
	_, js := queuetest.Connect(t, url)
	cfg := queuetest.Config(t)
	cfg.Processor.MaxDeliver = 2
	cfg.Processor.AckWait = ackWait
	cfg = queuetest.Ensure(t, js, &cfg)
	cons, err := js.Consumer(t.Context(), cfg.Stream, cfg.Processor.Durable)
	require.NoError(t, err)
	return &waitingBundle{cfg: cfg, js: js, pub: queue.NewPublisher(js, cfg.Stream), url: url, cons: cons}
}

func (b *waitingBundle) publish(t *testing.T, ids ...string) {
	t.Helper()
	for _, id := range ids {
		require.NoError(t, b.pub.Publish(t.Context(), b.cfg.ProcessSubject("acme"), testMsgID(id, 1), []byte(id)))
	}
}

// fetch takes one message from cons (waiting up to 5s for it).
func fetch(t *testing.T, cons jetstream.Consumer) jetstream.Msg {
	t.Helper()
	batch, err := cons.Fetch(1, jetstream.FetchMaxWait(5*time.Second))
	require.NoError(t, err)
	var got []jetstream.Msg
	for m := range batch.Messages() {
		got = append(got, m)
	}
	require.Len(t, got, 1)
	return got[0]
}

func (b *waitingBundle) queue(t *testing.T) queue.Queue {
	t.Helper()
	q, err := queue.Waiting(t.Context(), b.js, b.cfg.Stream, b.cfg.Processor.Durable, b.cfg.SubjectPrefix+".process.>", false)
	require.NoError(t, err)
	require.True(t, q.Complete)
	return q
}

func ids(jobs []queue.WaitingJob) []string {
	out := []string{}
	for _, j := range jobs {
		out = append(out, fmt.Sprintf("%s delivered=%t", j.MsgID, j.Delivered))
	}
	return out
}

// exhaust naks msg (its last allowed delivery) and pulls until the consumer
// has given it up: the pull that would redeliver it finds MaxDeliver
// reached instead, drops it from ack-pending and leaves it in the stream.
func (b *waitingBundle) exhaust(t *testing.T, msg jetstream.Msg, wantAckPending int) {
	t.Helper()
	require.NoError(t, msg.Nak())
	waitFor(t, 10*time.Second, func() error {
		batch, err := b.cons.FetchNoWait(1)
		if err != nil {
			return err
		}
		for m := range batch.Messages() {
			return fmt.Errorf("unexpected delivery %s", m.Headers().Get(jetstream.MsgIDHeader))
		}
		info, err := b.cons.Info(t.Context())
		if err != nil {
			return err
		}
		if info.NumAckPending != wantAckPending {
			return fmt.Errorf("%d ack-pending, want %d", info.NumAckPending, wantAckPending)
		}
		return nil
	})
}

// A job pulled and not acked (a worker or a fair window holds it) is still
// the consumer's: Waiting lists it as delivered next to the undelivered
// ones, and nothing is exhausted.
func TestWaitingListsHeldJobs(t *testing.T) {
	t.Parallel()
	b := setupWaiting(t, time.Minute)
	b.publish(t, "L1", "L2")
	fetch(t, b.cons) // L1, held

	q := b.queue(t)
	require.Equal(t, []string{"L1:process:1 delivered=true", "L2:process:1 delivered=false"}, ids(q.Jobs))
	require.Zero(t, q.Exhausted)
	require.Equal(t, q.Jobs, q.Held())

	q, err := queue.Waiting(t.Context(), b.js, b.cfg.Stream, b.cfg.Processor.Durable, b.cfg.SubjectPrefix+".process.>", true)
	require.NoError(t, err)
	require.Equal(t, []string{"L2:process:1 delivered=false"}, ids(q.Jobs), "undelivered only")
}

// A processor that dies holding a job leaves it ack-pending: the server
// still counts it (it is redelivered to the next pull after AckWait), so
// Waiting lists it as held before and after the redelivery.
func TestWaitingDeadHolderStillHeld(t *testing.T) {
	t.Parallel()
	b := setupWaiting(t, time.Second)
	b.publish(t, "L1")
	dead, js := queuetest.Connect(t, b.url)
	cons, err := js.Consumer(t.Context(), b.cfg.Stream, b.cfg.Processor.Durable)
	require.NoError(t, err)
	fetch(t, cons)
	dead.Close()

	q := b.queue(t)
	require.Equal(t, []string{"L1:process:1 delivered=true"}, ids(q.Held()))

	again := fetch(t, b.cons) // after AckWait
	meta, err := again.Metadata()
	require.NoError(t, err)
	require.Equal(t, uint64(2), meta.NumDelivered, "redelivered once AckWait expired")
	q = b.queue(t)
	require.Equal(t, []string{"L1:process:1 delivered=true"}, ids(q.Held()))
	require.Zero(t, q.Exhausted)
}

// A job the consumer gave up on at MaxDeliver stays in the work-queue
// stream (until the processor's advisory handler deletes it) and is no
// longer ack-pending, but the ack floor the server reports stays below it
// (the consumer store moves its floor on acks only): the count tells, and
// Held drops it, so a sweeper recovers its document.
func TestWaitingExhausted(t *testing.T) {
	t.Parallel()
	b := setupWaiting(t, time.Minute)
	b.publish(t, "L1")
	require.NoError(t, fetch(t, b.cons).Nak())
	b.exhaust(t, fetch(t, b.cons), 0)

	info, err := b.cons.Info(t.Context())
	require.NoError(t, err)
	require.Zero(t, info.NumAckPending)
	require.Equal(t, uint64(1), info.Delivered.Stream)
	require.Zero(t, info.AckFloor.Stream, "the reported floor stays below the exhausted job")
	s, err := b.js.Stream(t.Context(), b.cfg.Stream)
	require.NoError(t, err)
	_, err = s.GetMsg(t.Context(), 1)
	require.NoError(t, err, "the exhausted job is still in the stream")

	q := b.queue(t)
	require.Equal(t, []string{"L1:process:1 delivered=true"}, ids(q.Jobs))
	require.Equal(t, 1, q.Exhausted)
	require.Empty(t, q.Held())

	// The next ack with nothing else pending moves the floor past it: it is
	// then not listed at all.
	b.publish(t, "L2")
	require.NoError(t, fetch(t, b.cons).DoubleAck(t.Context()))
	info, err = b.cons.Info(t.Context())
	require.NoError(t, err)
	require.Equal(t, uint64(2), info.AckFloor.Stream)
	q = b.queue(t)
	require.Empty(t, q.Jobs)
	require.Zero(t, q.Exhausted)
}

// A job exhausted while an older one is still held stays above the ack
// floor and looks held; only the count tells (two delivered jobs in the
// stream, one ack-pending), so Held drops every delivered job: better a
// held job's document swept twice than an exhausted one's never.
func TestWaitingExhaustedAboveFloor(t *testing.T) {
	t.Parallel()
	b := setupWaiting(t, time.Minute)
	b.publish(t, "L1", "L2")
	held := fetch(t, b.cons) // L1
	require.Equal(t, "L1:process:1", held.Headers().Get(jetstream.MsgIDHeader))
	require.NoError(t, fetch(t, b.cons).Nak()) // L2
	b.exhaust(t, fetch(t, b.cons), 1)
	b.publish(t, "L3") // after: the pull that exhausts L2 would take it

	q := b.queue(t)
	require.Equal(t, []string{"L1:process:1 delivered=true", "L2:process:1 delivered=true", "L3:process:1 delivered=false"}, ids(q.Jobs))
	require.Equal(t, 1, q.Exhausted)
	require.Equal(t, []string{"L3:process:1 delivered=false"}, ids(q.Held()))

	// Once the older job is acked the floor passes the exhausted one.
	require.NoError(t, held.DoubleAck(t.Context()))
	waitFor(t, 10*time.Second, func() error {
		q := b.queue(t)
		if got := ids(q.Held()); len(got) != 1 || q.Exhausted != 0 {
			return fmt.Errorf("held %v, %d exhausted", got, q.Exhausted)
		}
		return nil
	})
	require.Equal(t, []string{"L3:process:1 delivered=false"}, ids(b.queue(t).Jobs))
}
