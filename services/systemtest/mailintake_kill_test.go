package systemtest_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/mailbox/mailboxtest"
	"github.com/docintake/docintake/pkg/objectstore/objectstoretest"
	"github.com/docintake/docintake/pkg/queue/queuetest"
	"github.com/docintake/docintake/pkg/repotest"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/docintake/docintake/services/systemtest/internal/sysproc"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
)

// TestMailIntakeKill9 is issue 29's "kill -9 of the intake between upload
// and move (no duplicate, nothing lost)" with a real process: bin/mailintake
// (INTAKE_CHAOS_BIN, else built) on PostgreSQL, versitygw S3 and a
// nats-server, reading a throwaway Dovecot's INBOX of 30 mails (one to three
// PDFs, zips, a forwarded mail, other attachments). The intake is SIGKILLed
// again and again at the moments of kill9Schedule and started again each
// time, then left to finish. Every attachment must then be exactly one
// document (message_id "<Message-ID>#n", the attachment's filename), every
// mail in Processed exactly once, INBOX and the error folder empty.
//
// The kills that must land between "documents committed" and "mail moved"
// are made certain by an IMAP relay in front of Dovecot (imapGate): it
// holds the intake's UID MOVE of a mail, the test kills the intake while
// the relay holds it, and checks that the mail's documents are in
// PostgreSQL and the mail still in INBOX. The kills that poll PostgreSQL
// for that state (killInWindow) land in it or just after the move,
// depending on the machine's timing; the test records which, and asserts
// only on the relay's.
func TestMailIntakeKill9(t *testing.T) {
	t.Parallel()
	w := startKill9World(t)
	w.deliver()
	windowHits, polledHits := 0, 0
	for i, plan := range kill9Schedule {
		if w.finished() {
			t.Logf("every mail processed after %d kills", i)
			break
		}
		landed, inWindow := w.killOnce(plan)
		t.Logf("kill %2d (%s): %s", i+1, plan, landed)
		if inWindow && plan.kind == killAtMove {
			windowHits++
		} else if inWindow {
			polledHits++
		}
	}
	t.Logf("%d mail records left committed by the kills (moved, not recorded: the next pass settles them)", w.committedMails())
	w.finish()
	w.assertExactlyOnce()
	t.Logf("%d kills with the UID MOVE held and %d polled kills landed with a mail's documents committed and the mail still in INBOX",
		windowHits, polledHits)
	require.NotZero(t, windowHits, "no kill landed between the documents' commit and the mail's move")
}

type killKind string

const (
	killAtStart  killKind = "right after start"
	killAtLock   killKind = "once the mailbox lock is taken"
	killGrown    killKind = "once the documents grew"
	killInWindow killKind = "once PostgreSQL shows a new mail's documents, the mail not yet processed"
	killAtMove   killKind = "with the UID MOVE held"
)

// killPlan is one kill: its moment, and for killAtMove which of the
// incarnation's moves is held (the k-th, so earlier mails finish).
type killPlan struct {
	kind killKind
	k    int
}

func (p killPlan) String() string {
	if p.kind == killAtMove {
		return fmt.Sprintf("%s, move %d", p.kind, p.k)
	}
	return string(p.kind)
}

var kill9Schedule = []killPlan{
	{kind: killAtMove, k: 1}, {kind: killGrown}, {kind: killAtStart}, {kind: killInWindow},
	{kind: killAtMove, k: 3}, {kind: killAtLock}, {kind: killGrown}, {kind: killInWindow},
	{kind: killAtMove, k: 2}, {kind: killAtStart}, {kind: killInWindow}, {kind: killGrown},
	{kind: killAtMove, k: 4}, {kind: killInWindow},
}

const (
	kill9Client  = "acme"
	kill9Mailbox = "orders-kill9"
	kill9Error   = "Not processed"
	// kill9Deadline bounds every wait for the intake; it only fails a
	// test whose intake is stuck, so it is generous for a loaded machine.
	kill9Deadline = 2 * time.Minute
)

// kill9World is the test's servers, mails and intake process.
type kill9World struct {
	t     *testing.T
	dc    *mailboxtest.Dovecot
	gate  *imapGate
	pool  *pgxpool.Pool
	proc  *sysproc.Proc
	mails []kill9Mail
	want  map[string]int // Message-ID → documents it must become
}

func startKill9World(t *testing.T) *kill9World {
	t.Helper()
	dc := mailboxtest.StartDovecot(t, nil)
	dbURL := storetest.SchemaURL(t)
	s3 := objectstoretest.S3Config(t)
	nats := queuetest.StartProcess(t)
	pool, err := pgxpool.New(context.Background(), dbURL)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	require.NoError(t, store.New(pool).UpsertClient(t.Context(), document.Client{ID: kill9Client, Name: "ACME"}))
	w := &kill9World{t: t, dc: dc, pool: pool, gate: startIMAPGate(t, dc.Addr()), mails: kill9Mails(t), want: map[string]int{}}
	for _, m := range w.mails {
		w.want[m.id] = len(m.files)
	}
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "INTAKE_") {
			env = append(env, kv)
		}
	}
	env = append(env, "INTAKE_DATABASE_URL="+dbURL, "INTAKE_NATS_URL="+nats.URL(),
		"INTAKE_S3_ENDPOINT="+s3.Endpoint, "INTAKE_S3_BUCKET="+s3.Bucket, "INTAKE_S3_ACCESS_KEY="+s3.AccessKey,
		"INTAKE_S3_SECRET_KEY="+s3.SecretKey, "INTAKE_TEMPLATES_DIR="+filepath.Join(repotest.Root(t), "deploy", "templates"),
		"INTAKE_MAILBOXES_FILE="+w.mailboxFile(), "INTAKE_METRICS_ADDR="+freeAddr(t), "INTAKE_LOG_LEVEL=info")
	logDir := t.TempDir()
	w.proc, err = sysproc.NewProc("mailintake", mailintakeBinary(t), nil, env, logDir)
	require.NoError(t, err)
	t.Cleanup(func() {
		w.proc.Signal(syscall.SIGKILL, 10*time.Second)
		w.proc.Close()
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(logDir, "mailintake.log"))
			t.Logf("mailintake's log (last 8 KB):\n%s", b[max(0, len(b)-8<<10):])
		}
	})
	return w
}

// mailboxFile names the INBOX of w's Dovecot, reached through the gate.
func (w *kill9World) mailboxFile() string {
	dir := w.t.TempDir()
	pw := filepath.Join(dir, "imap-password")
	file := filepath.Join(dir, "mailboxes.yaml")
	yaml := fmt.Sprintf(`mailboxes:
  - id: %s
    client: %s
    imap: {host: 127.0.0.1, port: %d, security: none, username: %s, password_file: %s}
    processed_folder: Processed
    error_folder: %s
    senders: {"buyer.example": CONTOSO}
`, kill9Mailbox, kill9Client, w.gate.Port(), w.dc.User, pw, kill9Error)
	require.NoError(w.t, os.WriteFile(pw, []byte(w.dc.Password), 0o600))
	require.NoError(w.t, os.WriteFile(file, []byte(yaml), 0o600))
	return file
}

// mailintakeBinary is make build's bin/mailintake when INTAKE_CHAOS_BIN
// names it (make test), else one built for the test.
func mailintakeBinary(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv("INTAKE_CHAOS_BIN"); dir != "" && sysproc.IsExec(filepath.Join(dir, "mailintake")) {
		return filepath.Join(dir, "mailintake")
	}
	out := filepath.Join(t.TempDir(), "mailintake")
	cmd := exec.CommandContext(t.Context(), "go", "build", "-o", out, "./cmd/mailintake")
	cmd.Dir = filepath.Join(repotest.Root(t), "services", "mailintake")
	msg, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build mailintake: %s", msg)
	return out
}

// deliver appends the mails to INBOX, oldest first.
func (w *kill9World) deliver() {
	for _, m := range w.mails {
		w.dc.Append(w.t, "INBOX", m.raw)
	}
}

// finished tells whether INBOX is empty (every mail was moved).
func (w *kill9World) finished() bool {
	return w.dc.Messages(w.t, "INBOX") == 0
}

// finish runs the intake undisturbed until every mail is in Processed and
// recorded as processed (a kill after a move and before its record leaves
// a "committed" record, which the next pass settles), then stops it as an
// operator would (SIGTERM).
func (w *kill9World) finish() {
	w.waitLockFree()
	require.NoError(w.t, w.proc.Start())
	exited := w.proc.Running()
	w.poll(exited, "every mail moved to Processed", func() bool {
		return w.dc.Messages(w.t, "INBOX") == 0 && w.dc.Messages(w.t, "Processed") >= len(w.mails)
	})
	// poll stops once INBOX is empty; the records are settled by the pass
	// that follows the start, so wait for that separately.
	deadline := time.Now().Add(kill9Deadline)
	for w.committedMails() > 0 {
		select {
		case <-exited:
			w.t.Fatal("mailintake exited by itself while the test waited for the committed records to settle")
		case <-time.After(20 * time.Millisecond): // the records are in PostgreSQL; no event tells
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("mails still recorded committed after %s", kill9Deadline)
		}
	}
	w.proc.Signal(syscall.SIGTERM, 30*time.Second)
}

// committedMails counts the mails recorded committed: documents made, move
// not recorded.
func (w *kill9World) committedMails() int {
	return storetest.QueryMap[string, int](w.t, w.pool, `SELECT outcome, count(*)::int FROM mailbox_mails
		WHERE mailbox_id = $1 AND outcome = 'committed' GROUP BY 1`, kill9Mailbox)["committed"]
}

// assertExactlyOnce checks the end state: one document per attachment,
// each mail once in Processed, nothing left in INBOX or the error folder.
func (w *kill9World) assertExactlyOnce() {
	t := w.t
	var want []string
	for _, m := range w.mails {
		for i, f := range m.files {
			want = append(want, fmt.Sprintf("%s#%d %s", m.id, i+1, f))
		}
	}
	slices.Sort(want)
	rows, err := w.pool.Query(t.Context(), `SELECT message_id || ' ' || filename FROM documents WHERE client_id = $1 ORDER BY 1`, kill9Client)
	require.NoError(t, err)
	var got []string
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		got = append(got, s)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, want, got, "one document per attachment: none missing, none twice")

	ids := make([]string, 0, len(w.mails))
	for _, m := range w.mails {
		ids = append(ids, m.id)
	}
	slices.Sort(ids)
	processed := slices.Sorted(maps.Values(w.folder("Processed")))
	require.Equal(t, ids, processed, "every mail in Processed exactly once")
	require.Empty(t, w.folder("INBOX"))
	require.Empty(t, w.folder(kill9Error), "no mail in the error folder")
	// Every mail's record says processed: one left "committed" by a kill
	// after its move was settled by the next pass (SettleMovedMails).
	require.Equal(t, map[string]int{"processed": len(w.mails)}, storetest.QueryMap[string, int](t, w.pool,
		`SELECT outcome, count(*)::int FROM mailbox_mails WHERE mailbox_id = $1 GROUP BY 1`, kill9Mailbox))
}
