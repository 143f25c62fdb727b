package store_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/store"
	"github.com/stretchr/testify/require"
)

func sweepJob(d document.Document, seq int) store.OutboxRow {
	return store.OutboxRow{Subject: "intake.process." + d.ClientID, MsgID: fmt.Sprintf("%s:process:%d", d.LogID, seq)}
}

// Two sweepers running at once claim disjoint documents (SKIP LOCKED) and
// together re-enqueue each stuck document exactly once.
func TestSweepStuckConcurrent(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	const n = 40
	for i := range n {
		d, job := newDoc("acme", fmt.Sprintf("m-%d", i), fmt.Sprint(i))
		_, _, err := s.CreateDocument(ctx, d, job)
		require.NoError(t, err)
	}
	// Swept documents move their updated_at past this deadline, so the
	// loops below end once every document was taken.
	opts := store.SweepOptions{ReceivedBefore: time.Now(), DueBefore: time.Now(), Limit: 7}
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 2 {
		wg.Go(func() {
			<-start
			for {
				docs, err := s.SweepStuck(ctx, opts, sweepJob)
				if err != nil {
					t.Error(err)
					return
				}
				if len(docs) == 0 {
					return
				}
				mu.Lock()
				for _, d := range docs {
					seen[d.ID]++
				}
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	require.Len(t, seen, n)
	for id, c := range seen {
		require.Equal(t, 1, c, id)
		p, err := s.Processing(ctx, id)
		require.NoError(t, err)
		require.Equal(t, 2, p.ProcessSeq)
	}
	pending, err := s.PendingOutbox(ctx)
	require.NoError(t, err)
	require.Equal(t, 2*n, pending, "one new job per document, next to the original")
}

func TestSweepStuckSelection(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	mk := func(msg string) document.Document {
		d, job := newDoc("acme", msg, msg)
		d, _, err := s.CreateDocument(ctx, d, job)
		require.NoError(t, err)
		return d
	}
	fresh := mk("fresh")
	deferredDue := mk("deferred-due")
	deferredLater := mk("deferred-later")
	done := mk("done")
	reason := document.ReasonMappingNotResolved
	for _, c := range []struct {
		d  document.Document
		at time.Time
	}{{deferredDue, time.Now().Add(-time.Minute)}, {deferredLater, time.Now().Add(time.Hour)}} {
		_, err := s.TransitionDeferred(ctx, store.Change{DocumentID: c.d.ID, From: document.StateReceived,
			To: document.StateDeferredForRetry, Reason: &reason, Actor: "test"}, store.Deferral{RetryAt: c.at})
		require.NoError(t, err)
	}
	_, err := s.Transition(ctx, succeeded(store.Change{DocumentID: done.ID, From: document.StateReceived, To: document.StateProcessedSuccess, Actor: "test"}, done.LogID))
	require.NoError(t, err)

	// Nothing overdue by then: no candidates, and the sweeper need not read
	// the broker.
	none := store.SweepOptions{ReceivedBefore: time.Now().Add(-time.Hour), DueBefore: time.Now().Add(-time.Hour)}
	has, err := s.HasStuck(ctx, none)
	require.NoError(t, err)
	require.False(t, has)
	docs, err := s.SweepStuck(ctx, none, sweepJob)
	require.NoError(t, err)
	require.Empty(t, docs)

	// Received documents younger than the deadline stay; only the overdue
	// deferral is taken.
	o := store.SweepOptions{ReceivedBefore: time.Now().Add(-time.Hour), DueBefore: time.Now()}
	has, err = s.HasStuck(ctx, o)
	require.NoError(t, err)
	require.True(t, has)
	docs, err = s.SweepStuck(ctx, o, sweepJob)
	require.NoError(t, err)
	require.Len(t, docs, 1)
	require.Equal(t, deferredDue.ID, docs[0].ID)
	ev, err := s.Events(ctx, deferredDue.ID)
	require.NoError(t, err)
	require.Equal(t, "sweeper", ev[len(ev)-1].Actor)
	require.Contains(t, ev[len(ev)-1].Detail, "process job 2")

	// With a deadline in the future every waiting document is stuck, the
	// processed one never.
	docs, err = s.SweepStuck(ctx, store.SweepOptions{ReceivedBefore: time.Now().Add(time.Hour), DueBefore: time.Now().Add(2 * time.Hour)}, sweepJob)
	require.NoError(t, err)
	var ids []string
	for _, d := range docs {
		ids = append(ids, d.ID)
	}
	require.ElementsMatch(t, []string{fresh.ID, deferredDue.ID, deferredLater.ID}, ids)
}

func TestProcessingBookkeeping(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	d, job := newDoc("acme", "m", "x")
	d, _, err := s.CreateDocument(ctx, d, job)
	require.NoError(t, err)
	n, err := s.RecordFailure(ctx, d.ID, document.StateReceived, "processor", "boom")
	require.NoError(t, err)
	require.Equal(t, 1, n)
	_, err = s.RecordFailure(ctx, d.ID, document.StateDLQ, "processor", "boom")
	require.Equal(t, document.ECONFLICT, document.ErrorKind(err), "the document is not in dlq")
	_, err = s.Transition(ctx, store.Change{DocumentID: d.ID, From: document.StateReceived, To: document.StateDLQ, Actor: "processor"})
	require.NoError(t, err)

	d, err = s.Requeue(ctx, store.Change{DocumentID: d.ID, From: document.StateDLQ, To: document.StateReceived, Actor: "operator:x"}, sweepJob)
	require.NoError(t, err)
	require.Equal(t, document.StateReceived, d.State)
	p, err := s.Processing(ctx, d.ID)
	require.NoError(t, err)
	require.Equal(t, store.Processing{ProcessSeq: 2}, p, "failures reset, next job number")
	_, err = s.Requeue(ctx, store.Change{DocumentID: d.ID, From: document.StateDLQ, To: document.StateReceived, Actor: "operator:x"}, sweepJob)
	require.Equal(t, document.ECONFLICT, document.ErrorKind(err))
	pending, err := s.PendingOutbox(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, pending, "upload job and one requeue job; the failed requeue rolled back its row")

	counts, err := s.CountByState(ctx)
	require.NoError(t, err)
	require.Equal(t, map[document.State]int{document.StateReceived: 1}, counts)
	_, ok, err := s.OldestCreated(ctx, document.StateReceived)
	require.NoError(t, err)
	require.True(t, ok)
	_, ok, err = s.OldestCreated(ctx, document.StateDLQ)
	require.NoError(t, err)
	require.False(t, ok)
	list, err := s.DocumentsInState(ctx, document.StateReceived, 10)
	require.NoError(t, err)
	require.Len(t, list, 1)
}

// HasUndelivered sees a document waiting for its webhook without a delivery
// row once it is older than the deadline, and nothing else.
func TestHasUndelivered(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	d, job := newDoc("acme", "u", "u")
	d, _, err := s.CreateDocument(ctx, d, job)
	require.NoError(t, err)
	later := time.Now().Add(time.Hour)
	has, err := s.HasUndelivered(ctx, later)
	require.NoError(t, err)
	require.False(t, has, "received: its outcome is not there yet")

	_, err = s.Transition(ctx, succeeded(store.Change{DocumentID: d.ID, From: document.StateReceived, To: document.StateProcessedSuccess, Actor: "test"}, d.LogID))
	require.NoError(t, err)
	has, err = s.HasUndelivered(ctx, time.Now().Add(-time.Hour))
	require.NoError(t, err)
	require.False(t, has, "processed too recently")
	has, err = s.HasUndelivered(ctx, later)
	require.NoError(t, err)
	require.True(t, has)
	docs, err := s.SweepUndelivered(ctx, later, []string{d.ID}, 0, "", func(document.Document) store.OutboxRow { panic("skipped") })
	require.NoError(t, err)
	require.Empty(t, docs, "the skip list still applies to the sweep itself")
}
