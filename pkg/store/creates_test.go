package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/stretchr/testify/require"
)

var errRollback = errors.New("roll back")

// occupyCreates fills both of s's group-statement slots with uploads that
// wait in ON CONFLICT for a transaction holding acme's message id "held",
// so that the next CreateDocument calls queue. queued receives the queue's
// length at every enqueue. release ends the holding transaction (commit or
// roll back) and waits for the two occupying calls, which then answer as
// uploads of "held" with content heldContent.
func occupyCreates(t *testing.T, s *store.Store, queued <-chan int) (release func(commit bool) []createResult) {
	t.Helper()
	ctx := t.Context()
	written, finish, done := make(chan error, 1), make(chan bool), make(chan error, 1)
	go func() {
		done <- s.WithTx(ctx, func(tx *store.Store) error {
			d, job := newDoc("acme", "held", heldContent)
			_, _, err := tx.CreateDocument(ctx, d, job)
			written <- err
			if !<-finish {
				return errRollback
			}
			return nil
		})
	}()
	require.NoError(t, <-written)
	results := make([]createResult, 2)
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, job := newDoc("acme", "held", heldContent)
			results[i] = create(ctx, s, d, job)
		}()
		// Each occupying call takes a slot in the critical section that
		// queued it, so once it has queued the slot is taken.
		require.Equal(t, 1, <-queued)
	}
	return func(commit bool) []createResult {
		finish <- commit
		if err := <-done; commit {
			require.NoError(t, err)
		} else {
			require.ErrorIs(t, err, errRollback)
		}
		wg.Wait()
		return results
	}
}

const heldContent = "held pdf"

type createResult struct {
	d       document.Document // what was given
	got     document.Document
	created bool
	err     error
}

func create(ctx context.Context, s *store.Store, d document.Document, job store.OutboxRow) createResult {
	got, created, err := s.CreateDocument(ctx, d, job)
	return createResult{d: d, got: got, created: created, err: err}
}

// queueCreates starts one CreateDocument per document and returns once all
// of them have queued (the queue holds len(docs) calls), with a function
// that waits for their results.
func queueCreates(t *testing.T, s *store.Store, queued <-chan int, docs []document.Document, jobs []store.OutboxRow) func() []createResult {
	t.Helper()
	results := make([]createResult, len(docs))
	var wg sync.WaitGroup
	for i := range docs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = create(t.Context(), s, docs[i], jobs[i])
		}()
	}
	for n := range queued {
		if n == len(docs) {
			break
		}
	}
	return func() []createResult { wg.Wait(); return results }
}

func queueHook(s *store.Store) <-chan int {
	queued := make(chan int, 1024)
	s.OnCreateQueued(func(n int) { queued <- n })
	return queued
}

// Concurrent uploads share one statement, and each still gets the answer it
// would get alone: created, the original of a repeated message id, or
// duplicate_message_id, also for two copies of one message id in the same
// group.
func TestCreateDocumentGroupCommit(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	var mu sync.Mutex
	handed := map[string]store.OutboxRow{}
	s.HandOutboxTo(func(rows []store.OutboxRow) {
		mu.Lock()
		defer mu.Unlock()
		for _, r := range rows {
			// Called on the goroutine that ran the group: no FailNow here.
			if _, twice := handed[r.MsgID]; twice {
				t.Errorf("row %s handed over twice", r.MsgID)
			}
			handed[r.MsgID] = r
		}
	})
	pre, preJob := newDoc("acme", "pre", "pre pdf")
	preGot, created, err := s.CreateDocument(ctx, pre, preJob)
	require.NoError(t, err)
	require.True(t, created)

	var sizes []int
	s.ObserveCreateGroups(func(n int) {
		mu.Lock()
		defer mu.Unlock()
		sizes = append(sizes, n)
	})
	queued := queueHook(s)
	release := occupyCreates(t, s, queued)

	var docs []document.Document
	var jobs []store.OutboxRow
	add := func(client, message, content string) {
		d, job := newDoc(client, message, content)
		d.PartyID, d.ResultMode = "", ""
		if len(docs)%2 == 0 {
			d.PartyID, d.ResultMode = "buyer-7", document.ResultMode("no_items")
		}
		docs, jobs = append(docs, d), append(jobs, job)
	}
	for _, m := range []string{"n1", "n2", "n3", "n4", "n5"} {
		add("acme", m, "pdf "+m)
	}
	add("globex", "n1", "pdf n1") // another client's same message id
	add("acme", "dup", "same")
	add("acme", "dup", "same")
	add("acme", "dup", "other")
	add("acme", "pre", "pre pdf")   // a retry of an earlier upload
	add("acme", "pre", "other pdf") // and a clash with it
	wait := queueCreates(t, s, queued, docs, jobs)

	held := release(true)
	for _, r := range held {
		require.NoError(t, r.err)
		require.False(t, r.created, "the held message id was written by the transaction")
	}
	results := wait()

	dupOriginal := ""
	for _, r := range results {
		switch r.d.MessageID {
		case "pre":
			if string(r.d.FileSHA256) == string(pre.FileSHA256) {
				require.NoError(t, r.err)
				require.False(t, r.created)
				require.Equal(t, preGot.LogID, r.got.LogID)
			} else {
				e, ok := document.AsError(r.err)
				require.True(t, ok, "%v", r.err)
				require.Equal(t, "duplicate_message_id", e.Code)
			}
		case "dup":
			if r.created {
				require.Empty(t, dupOriginal, "one copy of a message id is created")
				dupOriginal = r.d.LogID
			}
		default:
			require.NoError(t, r.err)
			require.True(t, r.created, r.d.MessageID)
			// The answer is the row as stored.
			stored, err := s.Document(ctx, r.d.ID)
			require.NoError(t, err)
			require.True(t, stored.CreatedAt.Equal(r.got.CreatedAt) && stored.UpdatedAt.Equal(r.got.UpdatedAt))
			r.got.CreatedAt, r.got.UpdatedAt = stored.CreatedAt, stored.UpdatedAt
			require.Equal(t, stored, r.got)
			ev, err := s.Events(ctx, r.d.ID)
			require.NoError(t, err)
			require.Len(t, ev, 1)
			require.Equal(t, document.StateReceived, ev[0].To)
		}
	}
	require.NotEmpty(t, dupOriginal)
	var dupSum []byte
	for _, r := range results {
		if r.d.LogID == dupOriginal {
			dupSum = r.d.FileSHA256
		}
	}
	for _, r := range results {
		if r.d.MessageID != "dup" || r.created {
			continue
		}
		if string(r.d.FileSHA256) == string(dupSum) {
			require.NoError(t, r.err)
			require.Equal(t, dupOriginal, r.got.LogID)
		} else {
			e, ok := document.AsError(r.err)
			require.True(t, ok, "%v", r.err)
			require.Equal(t, "duplicate_message_id", e.Code)
		}
	}

	// Exactly the created documents have a job, each handed to the relay
	// once with the id it was stored under.
	rows := storetest.QueryMap[string, int64](t, s.Pool(), `SELECT msg_id, id FROM outbox`)
	want := map[string]bool{preJob.MsgID: true}
	for i, r := range results {
		if r.created {
			want[jobs[i].MsgID] = true
		}
	}
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []int{1, 1, len(docs)}, sizes, "the two occupying statements, then the queue (the transaction's is no group)")
	require.Len(t, rows, len(want)+1, "the created documents' jobs and the held document's")
	for msgID := range want {
		require.Contains(t, rows, msgID)
		require.Contains(t, handed, msgID)
		require.Equal(t, rows[msgID], handed[msgID].ID)
	}
}

// A row the server refuses fails its own upload only: the group's
// statement is rolled back and each call is retried on its own.
func TestCreateDocumentGroupBadRow(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	queued := queueHook(s)
	release := occupyCreates(t, s, queued)

	var docs []document.Document
	var jobs []store.OutboxRow
	for _, c := range []string{"acme", "nobody", "globex"} { // "nobody" is no client: a foreign key violation
		d, job := newDoc(c, "m", "pdf")
		docs, jobs = append(docs, d), append(jobs, job)
	}
	wait := queueCreates(t, s, queued, docs, jobs)
	held := release(false)
	for _, r := range held {
		require.NoError(t, r.err)
	}
	require.True(t, held[0].created != held[1].created, "the holding transaction rolled back: one of the two writes the row")
	for _, r := range wait() {
		if r.d.ClientID == "nobody" {
			require.Equal(t, document.EINVALID, document.ErrorKind(r.err), "%v", r.err)
			continue
		}
		require.NoError(t, r.err)
		require.True(t, r.created)
	}
	var n int
	require.NoError(t, s.Pool().QueryRow(ctx, `SELECT count(*) FROM documents WHERE message_id = 'm'`).Scan(&n))
	require.Equal(t, 2, n)
	pending, err := s.PendingOutbox(ctx)
	require.NoError(t, err)
	require.Equal(t, 3, pending, "the two created here and the held one")
}
