package systemtest_test

import (
	"bytes"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/mailbox/mailboxtest"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/emersion/go-imap/v2"
	"github.com/stretchr/testify/require"
)

// This file is TestMailIntakeKill9's machinery: its mails, the moments it
// kills the intake at, and where each kill landed.

// kill9Mail is one mail of the test and the documents it must become.
type kill9Mail struct {
	id    string   // Message-ID, without the angle brackets
	raw   []byte   // as delivered
	files []string // the documents' filenames, by attachment index
}

// kill9Mails are 30 mails from a buyer's domain: one PDF; two; three and a
// spreadsheet; a zip of two PDFs and a text file; a PDF and a forwarded
// mail with one. Every PDF is distinct (about 48 KB, so that storing one
// takes a moment).
func kill9Mails(t *testing.T) []kill9Mail {
	out := make([]kill9Mail, 0, 30)
	for i := range 30 {
		id := fmt.Sprintf("kill9-%02d@buyer.example", i)
		name := func(n int) string { return fmt.Sprintf("po-%02d-%d.pdf", i, n) }
		body := func(n int) []byte {
			return fmt.Appendf(nil, "%%PDF-1.4\n%% %s %s\n%s%%%%EOF\n", id, name(n), bytes.Repeat([]byte("% padding\n"), 48<<10/10))
		}
		pdf := func(n int) mailboxtest.Part {
			return mailboxtest.Part{ContentType: "application/pdf", Filename: name(n), Body: body(n)}
		}
		var parts []mailboxtest.Part
		files := []string{name(1)}
		switch i % 6 {
		case 0, 4:
			parts = []mailboxtest.Part{pdf(1)}
		case 1:
			parts, files = []mailboxtest.Part{pdf(1), pdf(2)}, []string{name(1), name(2)}
		case 2:
			parts = []mailboxtest.Part{pdf(1), {ContentType: "application/vnd.ms-excel", Filename: "lines.xls", Body: []byte("xls")}, pdf(2), pdf(3)}
			files = []string{name(1), name(2), name(3)}
		case 3:
			zip := mailboxtest.Zip(t, map[string][]byte{name(1): body(1), name(2): body(2), "readme.txt": []byte("two orders")})
			parts, files = []mailboxtest.Part{{ContentType: "application/zip", Filename: "orders.zip", Body: zip}}, []string{name(1), name(2)}
		case 5:
			inner := mailboxtest.Mail("jane@buyer.example", "inner-"+id, "Original PO", pdf(2))
			parts = []mailboxtest.Part{pdf(1), {ContentType: "message/rfc822", Filename: "original.eml", Body: inner}}
			files = []string{name(1), name(2)}
		}
		out = append(out, kill9Mail{id: id, raw: mailboxtest.Mail("jane@buyer.example", id, fmt.Sprintf("PO %d", i), parts...), files: files})
	}
	return out
}

// killOnce starts the intake, SIGKILLs it at plan's moment and says where
// the kill landed; inWindow: with a mail's documents committed by this
// incarnation and the mail still in INBOX.
func (w *kill9World) killOnce(plan killPlan) (landed string, inWindow bool) {
	before := w.snapshot()
	w.waitLockFree()
	if plan.kind == killAtMove {
		w.gate.arm(plan.k) // before the start: the intake may move at once
		defer w.gate.disarm()
	}
	require.NoError(w.t, w.proc.Start())
	held, fired := w.await(plan, before, w.proc.Running())
	w.proc.Signal(syscall.SIGKILL, 10*time.Second)
	if held.release != nil {
		close(held.release) // the MOVE is dropped with the dead intake's connection
	}
	if !fired {
		return "the intake had finished every mail first", false
	}
	after := w.snapshot()
	if plan.kind == killAtMove {
		return w.landedAtMove(held, after), true
	}
	return landedBetween(w.want, before, after)
}

// await waits for plan's moment; false when INBOX emptied first.
func (w *kill9World) await(plan killPlan, before mailState, exited <-chan struct{}) (heldMove, bool) {
	switch plan.kind {
	case killAtStart:
		return heldMove{}, true
	case killAtMove:
		return w.awaitMove(exited)
	case killAtLock:
		return heldMove{}, w.poll(exited, string(plan.kind), w.lockHeld)
	case killGrown:
		n := total(before.docs)
		return heldMove{}, w.poll(exited, string(plan.kind), func() bool { return total(w.docCounts()) > n })
	default:
		return heldMove{}, w.poll(exited, string(plan.kind), func() bool { return w.newlyCommitted(before) })
	}
}

// awaitMove waits until the gate holds the armed UID MOVE.
func (w *kill9World) awaitMove(exited <-chan struct{}) (heldMove, bool) {
	deadline := time.NewTimer(kill9Deadline)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case h := <-w.gate.held:
			return h, true
		case <-exited:
			w.t.Fatal("mailintake exited by itself while the test waited for its UID MOVE")
		case <-deadline.C:
			w.t.Fatalf("no UID MOVE from the intake within %s", kill9Deadline)
		case <-tick.C:
			if w.finished() {
				return heldMove{}, false
			}
		}
	}
}

// poll checks cond about every millisecond until it holds (true) or INBOX
// is empty (false: nothing left to kill the intake in); the intake's exit
// or the deadline fails the test.
func (w *kill9World) poll(exited <-chan struct{}, what string, cond func() bool) bool {
	deadline := time.Now().Add(kill9Deadline)
	var checked time.Time
	for {
		if cond() {
			return true
		}
		select {
		case <-exited:
			w.t.Fatalf("mailintake exited by itself while the test waited %s", what)
		default:
		}
		if time.Since(checked) > 50*time.Millisecond {
			if w.finished() {
				return false
			}
			checked = time.Now()
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("not %s within %s", what, kill9Deadline)
		}
		time.Sleep(time.Millisecond) // polling interval: the state is in PostgreSQL and Dovecot, no event tells it
	}
}

// mailState is what PostgreSQL and Dovecot hold about the mails.
type mailState struct {
	docs     map[string]int    // Message-ID → its documents
	inbox    map[uint32]string // INBOX: UID → Message-ID
	outcomes map[string]string // Message-ID → mailbox_mails outcome
}

func (s mailState) inInbox(id string) bool {
	for _, v := range s.inbox {
		if v == id {
			return true
		}
	}
	return false
}

func (w *kill9World) snapshot() mailState {
	return mailState{docs: w.docCounts(), inbox: w.folder("INBOX"),
		outcomes: storetest.QueryMap[string, string](w.t, w.pool, `SELECT message_id, outcome FROM mailbox_mails WHERE mailbox_id = $1`, kill9Mailbox)}
}

// docCounts are the client's documents by mail.
func (w *kill9World) docCounts() map[string]int {
	return storetest.QueryMap[string, int](w.t, w.pool,
		`SELECT split_part(message_id, '#', 1), count(*)::int FROM documents WHERE client_id = $1 GROUP BY 1`, kill9Client)
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// newlyCommitted tells whether a mail that was in INBOX without all its
// documents now has them all and is not recorded processed (moved).
func (w *kill9World) newlyCommitted(before mailState) bool {
	docs := storetest.QueryMap[string, int](w.t, w.pool, `SELECT split_part(d.message_id, '#', 1), count(*)::int FROM documents d
		WHERE d.client_id = $1 AND NOT EXISTS (SELECT 1 FROM mailbox_mails m
			WHERE m.mailbox_id = $2 AND m.message_id = split_part(d.message_id, '#', 1) AND m.outcome = 'processed')
		GROUP BY 1`, kill9Client, kill9Mailbox)
	for id, n := range docs {
		if n == w.want[id] && before.docs[id] < n && before.inInbox(id) {
			return true
		}
	}
	return false
}

// landedAtMove checks the state a held UID MOVE froze: the mail still in
// INBOX, its documents all committed and recorded so.
func (w *kill9World) landedAtMove(held heldMove, after mailState) string {
	id, ok := after.inbox[held.uid]
	require.True(w.t, ok, "the mail of the held UID MOVE (uid %d) is in INBOX", held.uid)
	require.Equal(w.t, w.want[id], after.docs[id], "%s: its documents are committed before its move", id)
	require.Equal(w.t, store.MailCommitted, after.outcomes[id], "%s: recorded committed before its move", id)
	return fmt.Sprintf("%s: %d of %d documents committed, the mail in INBOX", id, after.docs[id], w.want[id])
}

// landedBetween says what the incarnation killed between before and after
// left half done; inWindow when a mail's documents were all committed (or
// the mail recorded committed) and the mail not moved.
func landedBetween(want map[string]int, before, after mailState) (string, bool) {
	var notes []string
	inWindow := false
	for _, id := range after.inbox {
		n := after.docs[id]
		committed := after.outcomes[id] == store.MailCommitted && before.outcomes[id] != store.MailCommitted
		switch {
		case n == want[id] && (before.docs[id] < n || committed):
			inWindow = true
			notes = append(notes, fmt.Sprintf("%s: %d of %d documents committed, the mail in INBOX", id, n, want[id]))
		case n > before.docs[id]:
			notes = append(notes, fmt.Sprintf("%s: between its PDFs, %d of %d documents committed", id, n, want[id]))
		}
	}
	for _, id := range before.inbox {
		if !after.inInbox(id) && after.outcomes[id] != store.MailProcessed {
			notes = append(notes, fmt.Sprintf("%s: moved, not yet recorded processed (%q)", id, after.outcomes[id]))
		}
	}
	if len(notes) == 0 {
		return "with no mail half done (listing, reading or between mails)", false
	}
	return strings.Join(notes, "; "), inWindow
}

// folder lists a folder's mails (none for a folder not made yet).
func (w *kill9World) folder(name string) map[uint32]string {
	c, err := w.dc.Login()
	require.NoError(w.t, err)
	defer c.Close()
	out := map[uint32]string{}
	list, err := c.List("", name, nil).Collect()
	require.NoError(w.t, err)
	if len(list) == 0 {
		return out
	}
	sel, err := c.Select(name, &imap.SelectOptions{ReadOnly: true}).Wait()
	require.NoError(w.t, err)
	if sel.NumMessages > 0 {
		msgs, err := c.Fetch(imap.SeqSet{{Start: 1, Stop: 0}}, &imap.FetchOptions{UID: true, Envelope: true}).Collect()
		require.NoError(w.t, err)
		for _, m := range msgs {
			out[uint32(m.UID)] = m.Envelope.MessageID
		}
	}
	require.NoError(w.t, c.Logout().Wait())
	return out
}

// lockHeld tells whether a session holds the mailbox's advisory lock
// (store.TryMailboxLock's key: a bigint, split in pg_locks).
func (w *kill9World) lockHeld() bool {
	var held bool
	err := w.pool.QueryRow(w.t.Context(), `SELECT EXISTS (SELECT 1 FROM pg_locks
		WHERE locktype = 'advisory' AND granted AND objsubid = 1
		AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND ((classid::bigint << 32) | objid::bigint) = hashtextextended(current_schema() || ':mailintake:' || $1, 0))`,
		kill9Mailbox).Scan(&held)
	require.NoError(w.t, err)
	return held
}

// waitLockFree waits until PostgreSQL has ended the killed intake's
// session, so the next one takes the lock on its first try (a standby
// retries only every poll interval, a minute).
func (w *kill9World) waitLockFree() {
	deadline := time.Now().Add(kill9Deadline)
	for w.lockHeld() {
		if time.Now().After(deadline) {
			w.t.Fatalf("the mailbox lock is still held %s after the intake's kill", kill9Deadline)
		}
		time.Sleep(5 * time.Millisecond) // polling PostgreSQL's view of the dead session
	}
}
