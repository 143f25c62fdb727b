package queue

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// WaitingJob is a job message still in the stream.
type WaitingJob struct {
	MsgID string
	Data  []byte
	// Delivered: the consumer handed it out and has no ack for it yet. It
	// is ack-pending (a worker has it, a fair window holds it, it was nak'ed
	// with a delay, or its worker died and the server redelivers it after
	// AckWait) unless Queue.Exhausted says some such jobs are not.
	Delivered bool
}

// Queue is what Waiting found.
type Queue struct {
	// Jobs the consumer has not delivered yet, then (when asked for) those
	// it delivered and has no ack for, in stream order.
	Jobs []WaitingJob
	// Complete is false when the scan stopped before the stream's end (an
	// error, or 50 000 messages): Jobs then misses some, and Waiting
	// returns what it read (with the error, if any).
	Complete bool
	// Exhausted counts delivered jobs in Jobs that are not ack-pending:
	// jobs the consumer gave up on at MaxDeliver, left in the work-queue
	// stream until the processor's advisory handler deletes them. JetStream
	// does not say which: the ack floor it reports moves past such a job
	// only with a later ack while no older job is pending, so until then it
	// looks like a held one, and is only told by counting (delivered jobs in
	// the stream > the consumer's ack-pending count).
	Exhausted int
}

// Held returns the jobs the consumer still holds for its workers: the
// undelivered ones, and the delivered ones unless some of those are
// exhausted (then which are is unknown, and a caller for whom a lost job is
// worse than a duplicate must not count any of them).
func (q Queue) Held() []WaitingJob {
	if q.Exhausted == 0 {
		return q.Jobs
	}
	var out []WaitingJob
	for _, j := range q.Jobs {
		if !j.Delivered {
			out = append(out, j)
		}
	}
	return out
}

// maxWaitingScan bounds one Waiting call: one request per message, about
// 10 000 a second on loopback.
const maxWaitingScan = 50_000

// Waiting lists the messages on filter that the durable consumer still has
// to work off, read without disturbing it (the work-queue stream admits no
// second consumer). With undeliveredOnly it lists only those the consumer
// has not delivered yet (in a work-queue stream they will be delivered);
// otherwise also those delivered and not acked, from the consumer's ack
// floor on (a job the consumer gave up on at MaxDeliver may still be above
// the floor; see Queue.Exhausted).
// filter must be the consumer's filter for the Exhausted count to hold.
//
// The sweepers use it to tell a job that is only queued behind others from
// one that was lost: a job the consumer still holds is not lost. The scan
// reads at most 50 000 messages.
func Waiting(ctx context.Context, js jetstream.JetStream, stream, durable, filter string, undeliveredOnly bool) (Queue, error) {
	cons, err := js.Consumer(ctx, stream, durable)
	if err != nil {
		return Queue{}, fmt.Errorf("waiting jobs of %s: %w", durable, err)
	}
	info, err := cons.Info(ctx)
	if err != nil {
		return Queue{}, fmt.Errorf("waiting jobs of %s: %w", durable, err)
	}
	delivered := info.Delivered.Stream
	start := info.AckFloor.Stream + 1
	if undeliveredOnly {
		start = delivered + 1
	}
	if info.NumPending == 0 && (undeliveredOnly || info.NumAckPending == 0) && start > delivered {
		return Queue{Complete: true}, nil
	}
	// Messages are read one by one with "next message on filter from
	// sequence" gets (each skips what was acked and deleted meanwhile).
	// Those acked after the info call are simply not found; those delivered
	// after it are above delivered and count as undelivered, which they
	// were a moment ago.
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return Queue{}, fmt.Errorf("waiting jobs of %s: %w", durable, err)
	}
	var q Queue
	held := 0
	var scanErr error
	for seq := start; len(q.Jobs) < maxWaitingScan; {
		raw, err := st.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(filter))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			q.Complete = true
			break
		}
		if err != nil {
			scanErr = fmt.Errorf("waiting jobs of %s: %w", durable, err)
			break
		}
		d := raw.Sequence <= delivered
		if d {
			held++
		}
		q.Jobs = append(q.Jobs, WaitingJob{MsgID: raw.Header.Get(jetstream.MsgIDHeader), Data: raw.Data, Delivered: d})
		seq = raw.Sequence + 1
	}
	exact := q.Complete || len(q.Jobs) == 0 || !q.Jobs[len(q.Jobs)-1].Delivered
	switch n := held - info.NumAckPending; {
	case exact && n > 0:
		q.Exhausted = n
	case !exact:
		// The scan stopped inside the delivered range: the count proves
		// nothing, so assume the worst.
		q.Exhausted = max(n, 1)
	}
	return q, scanErr
}
