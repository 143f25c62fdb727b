package processor

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/jobs"
	"github.com/docintake/docintake/pkg/store"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
)

// sweepLoop runs sweep every interval until ctx is done. JetStream acks a
// publish before it is on disk unless sync_interval is always, and a broker
// can lose a stream; PostgreSQL is the source of truth, so documents that
// wait for a job nobody will deliver are found there.
func (w *worker) sweepLoop(ctx context.Context, interval, stuckAfter time.Duration) error {
	if interval <= 0 {
		return nil
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if _, err := w.sweep(ctx, stuckAfter); err != nil && ctx.Err() == nil {
			w.log.Warn("sweep failed", zap.Error(err))
		}
	}
}

// sweep re-enqueues documents in received whose state has not moved for
// stuckAfter, and deferred documents whose retry is overdue by stuckAfter,
// each with a new process job that supersedes the old one. Replicas sweep
// concurrently without taking the same document (store.SweepStuck claims
// rows with SKIP LOCKED). Outbox rows never marked sent need no sweep of
// their own: the relay re-reads unsent rows on every poll.
func (w *worker) sweep(ctx context.Context, stuckAfter time.Duration) (int, error) {
	total := 0
	for {
		now := time.Now()
		docs, err := w.st.SweepStuck(ctx, store.SweepOptions{ReceivedBefore: now.Add(-stuckAfter), DueBefore: now.Add(-stuckAfter)},
			func(d document.Document, seq int) store.OutboxRow {
				m := jobs.Process(w.prefix, d, seq, now)
				return store.OutboxRow{Subject: m.Subject, MsgID: m.MsgID, Payload: m.Payload}
			})
		total += len(docs)
		for _, d := range docs {
			w.log.Warn("re-enqueued stuck document", zap.String("log_id", d.LogID), zap.Stringer("state", d.State),
				zap.Time("since", d.UpdatedAt))
		}
		if len(docs) > 0 {
			w.metrics.swept.Add(float64(len(docs)))
			w.relay.Notify()
		}
		if err != nil || len(docs) < 100 {
			return total, err
		}
	}
}

// maxDeliveriesSubject is where JetStream announces that a consumer reached
// MaxDeliver for a message without an ack (server constant
// JSAdvisoryConsumerMaxDeliveryExceedPre).
func maxDeliveriesSubject(stream, consumer string) string {
	return fmt.Sprintf("$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.%s.%s", stream, consumer)
}

// maxDeliveriesAdvisory is the part of the advisory we read.
type maxDeliveriesAdvisory struct {
	Stream     string `json:"stream"`
	Consumer   string `json:"consumer"`
	StreamSeq  uint64 `json:"stream_seq"`
	Deliveries uint64 `json:"deliveries"`
}

// watchMaxDeliveries moves the document of every job that reached
// MaxDeliver without an outcome (its worker was killed, or hung past
// AckWait, each time) to dlq and deletes the message, which a work-queue
// stream would otherwise keep forever. Replicas share the advisories
// through a queue group, so each is handled once. Advisories are not
// persisted: one published while no processor listens is missed, and the
// sweeper re-enqueues that document later instead.
func (w *worker) watchMaxDeliveries(ctx context.Context, nc *nats.Conn, js jetstream.JetStream, stream, consumer string) error {
	work := context.WithoutCancel(ctx)
	sub, err := nc.QueueSubscribe(maxDeliveriesSubject(stream, consumer), "docintake-processor-advisories", func(m *nats.Msg) {
		var adv maxDeliveriesAdvisory
		if err := json.Unmarshal(m.Data, &adv); err != nil {
			w.log.Warn("undecodable max deliveries advisory", zap.Error(err))
			return
		}
		actx, cancel := context.WithTimeout(work, 30*time.Second)
		defer cancel()
		if err := w.maxDeliveries(actx, js, adv); err != nil {
			w.log.Warn("max deliveries advisory not handled", zap.Uint64("stream_seq", adv.StreamSeq), zap.Error(err))
		}
	})
	if err != nil {
		return fmt.Errorf("processor: subscribe max deliveries advisories: %w", err)
	}
	<-ctx.Done()
	// Drain lets an advisory being handled finish.
	if err := sub.Drain(); err != nil {
		w.log.Warn("drain advisory subscription", zap.Error(err))
	}
	return nil
}

func (w *worker) maxDeliveries(ctx context.Context, js jetstream.JetStream, adv maxDeliveriesAdvisory) error {
	s, err := js.Stream(ctx, adv.Stream)
	if err != nil {
		return err
	}
	raw, err := s.GetMsg(ctx, adv.StreamSeq)
	if err != nil {
		return fmt.Errorf("get message %d: %w", adv.StreamSeq, err)
	}
	// An undecodable job or an unknown document has nothing to move; the
	// message is deleted all the same.
	if job, perr := jobs.ParseProcess(raw.Data); perr == nil {
		doc, err := w.st.Document(ctx, job.GetDocumentId())
		switch {
		case document.ErrorKind(err) == document.ENOTFOUND:
		case err != nil:
			return err
		case pending(doc.State):
			log := w.log.With(zap.String("log_id", doc.LogID), zap.String("client_id", doc.ClientID))
			detail := fmt.Sprintf("job %d delivered %d times without an outcome (worker killed or stuck each time)",
				job.GetAttempt(), adv.Deliveries)
			if err := w.toDLQ(ctx, log, doc, noReason(), detail); err != nil {
				return err
			}
		}
	}
	if err := s.DeleteMsg(ctx, adv.StreamSeq); err != nil {
		return fmt.Errorf("delete message %d: %w", adv.StreamSeq, err)
	}
	return nil
}
