package store

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/jackc/pgx/v5/pgconn"
)

// Group commit of uploads. Every upload is one INSERT of its document, its
// creating event and its job, and PostgreSQL makes each such statement
// durable with a WAL flush of its own: under load the flushes and the
// per-statement work (plan start-up, constraint set-up, protocol) were about
// half of PostgreSQL's CPU per upload (`make bench`, BENCHMARKS.md). So
// concurrent CreateDocument calls of one Store share statements: a call that
// finds fewer than maxCreateStatements statements running starts one with
// every call queued so far (its own included); a call that finds them all
// busy queues, and the next statement to finish takes the queue in one go.
// A lone upload therefore waits for nothing, and under load the groups grow
// by themselves with the arrival rate, as in any group commit.
const (
	// maxCreateStatements is how many group statements one Store runs at
	// a time: more overlap the network round trips, fewer make the groups
	// larger.
	maxCreateStatements = 2
	// maxCreateGroup bounds one statement's size (its arrays are bound
	// parameters, and the rows of one group commit together).
	maxCreateGroup = 64
	// createGroupTimeout bounds a group statement, which runs on behalf of
	// several requests and so under none of their contexts.
	createGroupTimeout = 30 * time.Second
)

// createGroupSQL inserts a group of documents given as column arrays, with
// each new document's creating event and job, in one statement (atomic
// without BEGIN/COMMIT). A document whose (client, message id) exists is
// skipped and comes back in none of the arrays: ord (1-based positions in
// the input) with the new rows' ids and timestamps, then the outbox rows
// written (outboxWritten).
const createGroupSQL = `WITH input AS (
		SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::bytea[], $6::bigint[], $7::text[],
			$8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[],
			$14::text[], $15::text[], $16::bytea[], $17::text[], $19::text[])
		WITH ORDINALITY AS i(id, log_id, client_id, message_id, file_sha256, file_size, filename,
			subject, template, party_id, result_mode, source_key, source_path,
			ob_subject, ob_msg_id, ob_payload, ob_headers, note, ord)),
	ins AS (
		INSERT INTO documents (id, log_id, client_id, message_id, file_sha256, file_size, filename, subject,
			template, party_id, result_mode, source_key, source_path, state)
		SELECT id, log_id, client_id, message_id, file_sha256, file_size, filename, subject,
			template, party_id, result_mode, source_key, source_path, $18 FROM input ORDER BY ord
		ON CONFLICT (client_id, message_id) DO NOTHING
		RETURNING id, state, created_at, updated_at),
	ev AS (INSERT INTO document_events (document_id, from_state, to_state, actor, detail)
		SELECT ins.id, NULL, ins.state, 'ingest', i.note FROM ins JOIN input i ON i.id = ins.id),
	ob AS (INSERT INTO outbox (subject, msg_id, payload, headers)
		SELECT i.ob_subject, i.ob_msg_id, i.ob_payload, i.ob_headers::jsonb FROM ins JOIN input i ON i.id = ins.id
		RETURNING id, msg_id)
	SELECT coalesce(array_agg(i.ord ORDER BY i.ord), '{}'), coalesce(array_agg(ins.id::text ORDER BY i.ord), '{}'),
		coalesce(array_agg(ins.created_at ORDER BY i.ord), '{}'), coalesce(array_agg(ins.updated_at ORDER BY i.ord), '{}'),
		` + outboxWritten + `
	FROM ins JOIN input i ON i.id = ins.id`

// createCall is one CreateDocument waiting for its group.
type createCall struct {
	ctx  context.Context // the caller's, for the values a group's statement runs with
	d    document.Document
	note string // the creating event's detail ("" none)
	job  OutboxRow
	ob   outboxBatch   // job, encoded once
	done chan struct{} // closed when the fields below are set

	// Neither created nor err nor alone: the message id is taken, and the
	// conflict path answers.
	got     document.Document // created: the new row
	created bool
	alone   bool  // the group statement failed on the server: retry the call on its own
	err     error // the group could not be written; the rows may or may not be
}

// creates is a Store's queue of CreateDocument calls (shared by the copies
// WithTx makes, which do not use it).
type creates struct {
	mu      sync.Mutex
	queue   []*createCall
	running int // group statements in flight

	queued  func(n int)                 // called under mu with the queue's length after each enqueue (tests)
	observe atomic.Pointer[func(n int)] // ObserveCreateGroups
}

// ObserveCreateGroups has f called with the number of uploads each group
// statement writes (its calls, a repeated message id included), for the
// operators' metric of how much the group commit saves; f must not block.
// Calls inside a transaction are not groups and are not observed.
func (s *Store) ObserveCreateGroups(f func(n int)) {
	if f == nil {
		s.creates.observe.Store(nil)
		return
	}
	s.creates.observe.Store(&f)
}

// CreateDocument inserts d in state received with its creating event and the
// outbox row for the processor, in one statement shared with concurrent
// calls (see createGroupSQL). d.SourceKey (with SourcePath, its URI) names
// the stored PDF; without it CreateDocument returns EINVALID.
//
// Idempotency: (client_id, message_id) is unique. If a document with d's
// message id exists already, CreateDocument returns it with created=false when
// its file SHA-256 equals d's, and an EINVALID error with code
// duplicate_message_id when it differs. The unique index decides under
// concurrent uploads, so exactly one row is ever written.
//
// When ctx ends before the group's statement answers, CreateDocument returns
// ctx's error and the row may still be written, as with any statement whose
// answer is lost.
func (s *Store) CreateDocument(ctx context.Context, d document.Document, job OutboxRow) (document.Document, bool, error) {
	return s.CreateDocumentNoted(ctx, d, job, "")
}

// CreateDocumentNoted is CreateDocument with note as the detail of the
// creating event (how the routing chain chose the template, issue 29).
func (s *Store) CreateDocumentNoted(ctx context.Context, d document.Document, job OutboxRow, note string) (document.Document, bool, error) {
	if d.SourceKey == "" {
		// The PDF is stored before the row, so its key is always known.
		return document.Document{}, false, document.Errorf(document.EINVALID, "document %s has no source key", d.LogID)
	}
	ob, err := newOutboxBatch([]OutboxRow{job})
	if err != nil {
		return document.Document{}, false, err
	}
	c := &createCall{ctx: ctx, d: d, note: note, job: job, ob: ob, done: make(chan struct{})}
	if s.inTx {
		// Inside a transaction the row must be written on it.
		s.insertGroup(ctx, []*createCall{c}, true)
	} else {
		s.submitCreate(c)
		select {
		case <-c.done:
		case <-ctx.Done():
			return document.Document{}, false, translate(ctx.Err(), "insert document")
		}
		if c.alone {
			c = &createCall{ctx: ctx, d: d, note: note, job: job, ob: ob, done: make(chan struct{})}
			s.insertGroup(ctx, []*createCall{c}, true)
		}
	}
	switch {
	case c.err != nil:
		return document.Document{}, false, c.err
	case c.created:
		return c.got, true, nil
	}
	// The message id is taken. ON CONFLICT waited for the row's writer to
	// commit (a copy earlier in the same group was written by the same
	// statement), so this later statement sees it.
	existing, err := s.DocumentByMessageID(ctx, d.ClientID, d.MessageID)
	if err != nil {
		return document.Document{}, false, err
	}
	if !bytes.Equal(existing.FileSHA256, d.FileSHA256) {
		return document.Document{}, false, document.CodedErrorf(document.EINVALID, "duplicate_message_id",
			"message_id %q was already used for a different file", d.MessageID)
	}
	return existing, false, nil
}

// submitCreate queues c and, when a statement slot is free, runs the queue
// as one group on this goroutine. Groups that queue meanwhile are run on a
// new goroutine, so the caller answers as soon as its own group is written.
func (s *Store) submitCreate(c *createCall) {
	q := s.creates
	q.mu.Lock()
	q.queue = append(q.queue, c)
	if q.queued != nil {
		q.queued(len(q.queue))
	}
	if q.running >= maxCreateStatements {
		q.mu.Unlock()
		return
	}
	q.running++
	group := q.takeLocked()
	q.mu.Unlock()
	s.insertGroup(groupContext(group), group, false)
	if next := q.next(); next != nil {
		go func() {
			for group := next; group != nil; group = q.next() {
				s.insertGroup(groupContext(group), group, false)
			}
		}()
	}
}

// groupContext is the context of a group's statement: it runs for every
// call in the group, so no single caller's cancellation may stop it; it
// keeps the values (trace, log fields) of the group's first call.
func groupContext(group []*createCall) context.Context {
	return context.WithoutCancel(group[0].ctx)
}

// takeLocked removes up to maxCreateGroup calls from the queue's front.
func (q *creates) takeLocked() []*createCall {
	n := min(len(q.queue), maxCreateGroup)
	group := q.queue[:n:n]
	q.queue = q.queue[n:]
	if len(q.queue) == 0 {
		q.queue = nil // let the backing array go
	}
	return group
}

// next takes the next group for a statement that has finished, or gives its
// slot back when nothing is queued.
func (q *creates) next() []*createCall {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.queue) == 0 {
		q.running--
		return nil
	}
	return q.takeLocked()
}

// insertGroup writes group with createGroupSQL and answers each call. The
// first call of each (client, message id) goes into the statement; a later
// one in the same group is answered as taken. When the server refuses the
// statement (one bad row fails the whole group), each call is marked to be
// retried alone, unless alone is set already, so that a bad row costs only
// its own upload.
func (s *Store) insertGroup(ctx context.Context, group []*createCall, alone bool) {
	defer func() {
		for _, c := range group {
			close(c.done)
		}
	}()
	type key struct{ client, message string }
	seen := make(map[key]bool, len(group))
	in := make([]*createCall, 0, len(group))
	for _, c := range group {
		k := key{c.d.ClientID, c.d.MessageID}
		if seen[k] {
			continue // taken by the first
		}
		seen[k] = true
		in = append(in, c)
	}
	n := len(in)
	var (
		ids, logIDs, clients, messages, filenames, subjects, templates, sourceKeys = make([]string, n), make([]string, n),
			make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		parties, modes, sourcePaths, notes = make([]*string, n), make([]*string, n), make([]*string, n), make([]*string, n)
		sums                               = make([][]byte, n)
		sizes                              = make([]int64, n)
		jobs                               = make([]OutboxRow, n)
		ob                                 outboxBatch
	)
	for i, c := range in {
		d := c.d
		ids[i], logIDs[i], clients[i], messages[i], sums[i], sizes[i] = d.ID, d.LogID, d.ClientID, d.MessageID, d.FileSHA256, d.FileSize
		filenames[i], subjects[i], templates[i], sourceKeys[i] = d.Filename, d.Subject, d.Template, d.SourceKey
		parties[i], modes[i], sourcePaths[i], notes[i] = nullable(d.PartyID), nullable(string(d.ResultMode)), nullable(d.SourcePath), nullable(c.note)
		jobs[i] = c.job
		ob.add(c.ob)
	}
	if !s.inTx {
		if f := s.creates.observe.Load(); f != nil {
			(*f)(len(group))
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, createGroupTimeout)
		defer cancel()
	}
	var (
		ords             []int64
		newIDs           []string
		created, updated []time.Time
		obIDs            []int64
		obMsgIDs         []string
		args             = []any{ids, logIDs, clients, messages, sums, sizes, filenames, subjects, templates, parties, modes, sourceKeys, sourcePaths}
	)
	args = append(append(args, ob.args()...), document.StateReceived, notes)
	if err := s.db.QueryRow(ctx, createGroupSQL, args...).Scan(&ords, &newIDs, &created, &updated, &obIDs, &obMsgIDs); err != nil {
		// A server's refusal rolled the statement back, and an error that
		// is safe to retry never reached the server: nothing was written,
		// so each call may be tried on its own. Any other error leaves the
		// outcome unknown, and every call reports it.
		var pgErr *pgconn.PgError
		retry := !alone && (errors.As(err, &pgErr) || pgconn.SafeToRetry(err))
		err = translate(err, "insert document")
		for _, c := range in {
			if retry {
				c.alone = true
			} else {
				c.err = err
			}
		}
		return
	}
	s.written(jobs, obIDs, obMsgIDs)
	for i, ord := range ords {
		c := in[ord-1]
		c.created = true
		c.got = document.Document{ID: newIDs[i], LogID: c.d.LogID, ClientID: c.d.ClientID, MessageID: c.d.MessageID,
			FileSHA256: c.d.FileSHA256, FileSize: c.d.FileSize, Filename: c.d.Filename, Subject: c.d.Subject,
			Template: c.d.Template, PartyID: c.d.PartyID, ResultMode: c.d.ResultMode, SourcePath: c.d.SourcePath,
			State: document.StateReceived, CreatedAt: created[i], UpdatedAt: updated[i], SourceKey: c.d.SourceKey}
	}
}
