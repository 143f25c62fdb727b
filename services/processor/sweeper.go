package processor

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/jobs"
	"github.com/docintake/docintake/pkg/lifecycle"
	"github.com/docintake/docintake/pkg/queue"
	"github.com/docintake/docintake/pkg/store"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
)

// sweepLoop runs sweep every interval until ctx is done. JetStream acks a
// publish before it is on disk unless sync_interval is always, and a broker
// can lose a stream; PostgreSQL is the source of truth, so documents that
// wait for a job nobody will deliver are found there.
func (w *worker) sweepLoop(ctx context.Context, interval, stuckAfter time.Duration, q jobQueue) error {
	every(ctx, interval, func() {
		if _, err := w.sweep(ctx, stuckAfter, q); err != nil && ctx.Err() == nil {
			w.log.Warn("sweep failed", zap.Error(err))
		}
	})
	return nil
}

// every calls fn every interval until ctx is done; interval <= 0: never.
func every(ctx context.Context, interval time.Duration, fn func()) {
	if interval <= 0 {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		fn()
	}
}

// jobQueue tells which jobs are still in the broker (queue.Waiting for the
// processor's and the dispatcher's consumers); js is nil in tests that
// check the sweep alone.
type jobQueue struct {
	js                    jetstream.JetStream
	stream                string
	processor, dispatcher string // durable consumer names
}

// heldProcess returns the log ids of documents whose process job the
// processor consumer still holds: not delivered yet (queued behind others,
// and a large backlog waits longer than INTAKE_STUCK_AFTER), or delivered
// and not acked (a worker has it, a fair window holds it up to Window jobs
// ahead of the workers, it was nak'ed with a delay for a deferred document,
// or its worker died and the server redelivers it after AckWait). None of
// these is lost. A job the consumer gave up on at MaxDeliver is not held:
// the advisory handler moves its document to dlq, and if that advisory was
// missed the sweep re-enqueues it. While such a job cannot be told from a
// held one (queue.Queue.Exhausted) no delivered job counts as held: a
// duplicate job is harmless, a document left stuck is not.
func (q jobQueue) heldProcess(ctx context.Context, prefix string) (ids []string, exhausted int, err error) {
	if q.js == nil {
		return nil, 0, nil
	}
	found, err := queue.Waiting(ctx, q.js, q.stream, q.processor, jobs.ProcessFilter(prefix), false)
	held := found.Held()
	ids = make([]string, 0, len(held))
	for _, j := range held {
		if logID, ok := jobs.ProcessMsgLogID(j.MsgID); ok {
			ids = append(ids, logID)
		}
	}
	return ids, found.Exhausted, err
}

// waitingDeliver returns the document ids of deliver jobs still in the
// stream, delivered or not (a job put back because its client had no free
// slot has no delivery row yet, and must not be sent twice; so, unlike the
// process sweep, a job the dispatcher gave up on at MaxDeliver that cannot
// be told from a held one counts as held, and is swept once the ack floor
// passes it).
// complete is false when the stream could not be read to its end: the
// list then misses jobs, and nothing may be re-sent on its strength.
func (q jobQueue) waitingDeliver(ctx context.Context, prefix string) (ids []string, complete bool, err error) {
	if q.js == nil {
		return nil, true, nil
	}
	found, err := queue.Waiting(ctx, q.js, q.stream, q.dispatcher, jobs.DeliverFilter(prefix), false)
	ids = make([]string, 0, len(found.Jobs))
	for _, j := range found.Jobs {
		if job, perr := jobs.ParseDeliver(j.Data); perr == nil {
			ids = append(ids, job.GetDocumentId())
		}
	}
	return ids, found.Complete && err == nil, err
}

// sweep re-enqueues documents in received whose state has not moved for
// stuckAfter, and deferred documents whose retry is overdue by stuckAfter,
// each with a new process job that supersedes the old one, unless the
// processor consumer still holds the job (heldProcess); and documents whose
// outcome waits for a webhook since stuckAfter without a delivery row and
// without a deliver job in the broker (the job was lost before the
// dispatcher saw it), each with a new deliver job. PostgreSQL is asked
// first: the broker is read only when it has candidates. Replicas sweep
// concurrently without taking the same document (the store claims rows with
// SKIP LOCKED). Outbox rows never published need no sweep of their own:
// the relays' polls claim them. A process broker that cannot
// be read makes the sweep skip nothing (a duplicate process job is
// harmless; a lost one is not).
func (w *worker) sweep(ctx context.Context, stuckAfter time.Duration, q jobQueue) (int, error) {
	n, err := w.sweepStuck(ctx, stuckAfter, q)
	if err != nil {
		return n, err
	}
	m, err := w.sweepUndelivered(ctx, stuckAfter, q)
	if err != nil {
		return n + m, err
	}
	k, err := w.sweepReviews(ctx) // review.go
	return n + m + k, err
}

// sweepStuck re-enqueues lost process jobs (see sweep).
func (w *worker) sweepStuck(ctx context.Context, stuckAfter time.Duration, q jobQueue) (int, error) {
	opts := func(now time.Time) store.SweepOptions {
		return store.SweepOptions{ReceivedBefore: now.Add(-stuckAfter), DueBefore: now.Add(-stuckAfter)}
	}
	if has, err := w.st.HasStuck(ctx, opts(time.Now())); err != nil || !has {
		return 0, err
	}
	held, exhausted, err := q.heldProcess(ctx, w.prefix)
	if err != nil {
		w.log.Warn("sweep: held process jobs unknown", zap.Error(err))
	}
	if exhausted > 0 {
		w.log.Warn("sweep: jobs given up at max deliveries are still in the stream; no delivered job counts as held",
			zap.Int("exhausted", exhausted))
	}
	return w.sweepBatches(ctx, "re-enqueued stuck document", func(now time.Time) ([]document.Document, error) {
		o := opts(now)
		o.SkipLogIDs = held
		return w.st.SweepStuck(ctx, o, func(d document.Document, seq int) store.OutboxRow {
			return lifecycle.Outbox(ctx, jobs.Process(w.prefix, d, seq, now))
		})
	})
}

// sweepUndelivered re-enqueues lost deliver jobs (see sweep).
func (w *worker) sweepUndelivered(ctx context.Context, stuckAfter time.Duration, q jobQueue) (int, error) {
	if has, err := w.st.HasUndelivered(ctx, time.Now().Add(-stuckAfter)); err != nil || !has {
		return 0, err
	}
	waiting, complete, err := q.waitingDeliver(ctx, w.prefix)
	if !complete {
		// A deliver job we could not see may still be queued: sending a
		// new one would call the client twice under two webhook-ids.
		w.log.Warn("sweep: queued deliver jobs unknown; lost deliver jobs are swept next time", zap.Error(err))
		return 0, nil
	}
	return w.sweepBatches(ctx, "re-enqueued lost deliver job", func(now time.Time) ([]document.Document, error) {
		return w.st.SweepUndelivered(ctx, now.Add(-stuckAfter), waiting, 100, "sweeper",
			func(d document.Document) store.OutboxRow {
				return lifecycle.Outbox(ctx, jobs.Deliver(w.prefix, d, lifecycle.NewDeliveryID(), now))
			})
	})
}

// sweepBatches calls batch (at most 100 documents each, the store's
// default) until it returns fewer, logging and counting every document.
func (w *worker) sweepBatches(ctx context.Context, what string, batch func(now time.Time) ([]document.Document, error)) (int, error) {
	total := 0
	for ctx.Err() == nil {
		docs, err := batch(time.Now())
		total += len(docs)
		for _, d := range docs {
			w.log.Warn(what, zap.String("log_id", d.LogID), zap.Stringer("state", d.State), zap.Time("since", d.UpdatedAt))
		}
		if len(docs) > 0 {
			w.metrics.swept.Add(float64(len(docs)))
		}
		if err != nil || len(docs) < 100 {
			return total, err
		}
	}
	return total, ctx.Err()
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
		case doc.State.Pending():
			log := w.log.With(zap.String("log_id", doc.LogID), zap.String("client_id", doc.ClientID))
			// The delivery count also counts deliveries into fair windows
			// that no worker started: every processor that stops sends its
			// whole window back. Only a document that workers started
			// maxFailures times without an outcome is the poison this
			// guards against; any other job is deleted below, and the
			// sweeper gives the document a fresh job.
			starts, err := w.st.AttemptStarts(ctx, doc.ID, int(job.GetAttempt()))
			if err != nil {
				return err
			}
			if starts < w.maxFailures {
				log.Warn("job given up by the broker while mostly held in windows of stopped processors; the sweeper re-enqueues it",
					zap.Uint64("deliveries", adv.Deliveries), zap.Int("starts", starts))
				break
			}
			detail := fmt.Sprintf("job %d delivered %d times and started %d times without an outcome (worker killed or stuck each time)",
				job.GetAttempt(), adv.Deliveries, starts)
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
