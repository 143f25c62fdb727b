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
}

// maxWaitingScan bounds one Waiting call: one request per message, about
// 10 000 a second on loopback.
const maxWaitingScan = 50_000

// Waiting lists the messages on filter that the durable consumer still has
// to work off, read with an ordered consumer that does not disturb it. With
// undeliveredOnly it lists only those the consumer has not delivered yet (in
// a work-queue stream they will be delivered); otherwise also those
// delivered and not yet acked (in flight, or put back with a delay).
//
// The sweepers use it to tell a job that is only queued behind others from
// one that was lost: a job in the stream is not lost. The scan starts after
// the consumer's ack floor (or its last delivered message) and reads at
// most 50 000 messages; complete is false when it stopped there.
func Waiting(ctx context.Context, js jetstream.JetStream, stream, durable, filter string, undeliveredOnly bool) (jobs []WaitingJob, complete bool, err error) {
	cons, err := js.Consumer(ctx, stream, durable)
	if err != nil {
		return nil, false, fmt.Errorf("waiting jobs of %s: %w", durable, err)
	}
	info, err := cons.Info(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("waiting jobs of %s: %w", durable, err)
	}
	start := info.AckFloor.Stream + 1
	if undeliveredOnly {
		start = info.Delivered.Stream + 1
	}
	if info.NumPending == 0 && (undeliveredOnly || info.NumAckPending == 0) {
		return nil, true, nil
	}
	// A work-queue stream admits no second consumer on these subjects, so
	// the messages are read one by one with "next message on filter from
	// sequence" gets (each skips what was acked and deleted meanwhile).
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return nil, false, fmt.Errorf("waiting jobs of %s: %w", durable, err)
	}
	for seq := start; len(jobs) < maxWaitingScan; {
		raw, err := st.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(filter))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return jobs, true, nil
		}
		if err != nil {
			return jobs, false, fmt.Errorf("waiting jobs of %s: %w", durable, err)
		}
		jobs = append(jobs, WaitingJob{MsgID: raw.Header.Get(jetstream.MsgIDHeader), Data: raw.Data})
		seq = raw.Sequence + 1
	}
	return jobs, false, nil
}
