package mailintake_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/intake"
	"github.com/docintake/docintake/pkg/mailbox"
	"github.com/docintake/docintake/pkg/mailbox/mailboxtest"
	"github.com/docintake/docintake/pkg/objectstore"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/docintake/docintake/services/mailintake"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
)

// templates resolves the buyers' party ids as the catalogue would.
type templates map[string]string

func (ts templates) Resolve(_, name, partyID string) (string, bool) {
	if name != "" {
		return name, true
	}
	t, ok := ts[partyID]
	return t, ok
}

type env struct {
	dc   *dovecot
	pool *pgxpool.Pool
	st   *store.Store
	svc  *intake.Service
	mb   mailbox.Mailbox
	tune mailintake.Tuning
	log  *zap.Logger // nil: the test's
}

func setup(t *testing.T) env {
	t.Helper()
	dc := startDovecot(t)
	e := intakeEnv(t)
	pwFile := filepath.Join(t.TempDir(), "imap-password")
	require.NoError(t, os.WriteFile(pwFile, []byte(dc.Password+"\n"), 0o600))
	mb := mailbox.Mailbox{ID: "orders-acme", Client: "acme", Folder: "INBOX", ProcessedFolder: "Processed", ErrorFolder: "Not processed",
		IMAP:    mailbox.IMAP{Host: "127.0.0.1", Port: dc.Port, Security: mailbox.SecurityNone, Username: dc.User, PasswordFile: pwFile},
		Senders: map[string]string{"buyer.example": "CONTOSO", "po@other.example": "OTHER"}}
	require.NoError(t, mb.Validate())
	e.dc, e.mb = dc, mb
	return e
}

// intakeEnv is the intake of a test without its mailbox: PostgreSQL, the
// client acme, intake.Service on a file object store.
func intakeEnv(t *testing.T) env {
	t.Helper()
	pool := storetest.Pool(t)
	st := store.New(pool)
	require.NoError(t, st.UpsertClient(t.Context(), document.Client{ID: "acme", Name: "ACME"}))
	objs, err := objectstore.NewFS(t.TempDir())
	require.NoError(t, err)
	svc := &intake.Service{Store: st, Objects: objs, Templates: templates{"CONTOSO": "contoso-po", "OTHER": "other-po"},
		SubjectPrefix: "mailintake-test"}
	return env{pool: pool, st: st, svc: svc}
}

// pass runs the intake until its first pass over the mailbox is done,
// then stops it; it returns the pass's error and Run's.
func (e env) pass(t *testing.T, hooks mailintake.Hooks) (passErr, runErr error) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	passes := make(chan error, 1)
	hooks.AfterPass = func(_ string, err error) {
		select {
		case passes <- err:
		default:
		}
	}
	log := e.log
	if log == nil {
		log = zaptest.NewLogger(t)
	}
	done := make(chan error, 1)
	go func() {
		done <- mailintake.Run(ctx, mailintake.Deps{Mailboxes: []mailbox.Mailbox{e.mb}, Store: e.st, Intake: e.svc,
			Logger: log, Registry: prometheus.NewRegistry(), Hooks: hooks, Tuning: e.tune})
	}()
	passErr = <-passes
	cancel()
	return passErr, <-done
}

// documents are the client's documents: message id → "filename subject party".
func (e env) documents(t *testing.T) map[string]string {
	return storetest.QueryMap[string, string](t, e.pool,
		`SELECT message_id, filename || ' | ' || subject || ' | ' || coalesce(party_id, '') FROM documents WHERE client_id = 'acme'`)
}

func pdfBytes(name string) []byte { return []byte("%PDF-1.4\n% " + name + "\n%%EOF\n") }

type part struct {
	ctype, filename string
	body            []byte
}

// mailBytes builds a multipart/mixed mail with a text body and parts,
// each base64-encoded as mail clients send attachments.
func mailBytes(from, messageID, subject string, parts ...part) []byte {
	ps := make([]mailboxtest.Part, len(parts))
	for i, p := range parts {
		ps[i] = mailboxtest.Part{ContentType: p.ctype, Filename: p.filename, Body: p.body}
	}
	return mailboxtest.Mail(from, messageID, subject, ps...)
}

// A mail with three PDFs (and a spreadsheet) becomes three documents with
// the mail's Message-ID plus the index, its subject, each attachment's
// name and the sender domain's party; the mail goes to Processed.
func TestThreePDFsBecomeThreeDocuments(t *testing.T) {
	e := setup(t)
	e.dc.appendMail(t, "INBOX", mailBytes("jane@buyer.example", "po-1@buyer.example", "PO 4711",
		part{"application/pdf", "a.pdf", pdfBytes("a")}, part{"application/vnd.ms-excel", "lines.xls", []byte("xls")},
		part{"application/pdf", "b.pdf", pdfBytes("b")}, part{"application/octet-stream", "c.PDF", pdfBytes("c")}))
	passErr, runErr := e.pass(t, mailintake.Hooks{})
	require.NoError(t, passErr)
	require.NoError(t, runErr)
	require.Equal(t, map[string]string{
		"po-1@buyer.example#1": "a.pdf | PO 4711 | CONTOSO",
		"po-1@buyer.example#2": "b.pdf | PO 4711 | CONTOSO",
		"po-1@buyer.example#3": "c.PDF | PO 4711 | CONTOSO",
	}, e.documents(t))
	require.Equal(t, 0, e.dc.count(t, "INBOX"))
	require.Equal(t, 1, e.dc.count(t, "Processed"))
}

// A PDF inside a .zip and one inside a forwarded mail count; the zip's
// other file does not.
func TestZipAndForwardedMail(t *testing.T) {
	e := setup(t)
	forwarded := mailBytes("po@other.example", "inner@other.example", "Original PO", part{"application/pdf", "inner.pdf", pdfBytes("inner")})
	e.dc.appendMail(t, "INBOX", mailBytes("po@other.example", "fwd-1@other.example", "Fwd: Original PO",
		part{"application/zip", "orders.zip", mailboxtest.Zip(t, map[string][]byte{"dir/zipped.pdf": pdfBytes("zipped"), "readme.txt": []byte("hi")})},
		part{"message/rfc822", "original.eml", forwarded}))
	passErr, _ := e.pass(t, mailintake.Hooks{})
	require.NoError(t, passErr)
	require.Equal(t, map[string]string{
		"fwd-1@other.example#1": "zipped.pdf | Fwd: Original PO | OTHER",
		"fwd-1@other.example#2": "inner.pdf | Fwd: Original PO | OTHER",
	}, e.documents(t))
	require.Equal(t, 1, e.dc.count(t, "Processed"))
}

// A mail without a PDF is moved to the error folder with its reason; no
// document is made. (A mail from a sender with no party_id is routed:
// route_test.go.)
func TestMailWithoutPDFGoesToErrorFolder(t *testing.T) {
	e := setup(t)
	e.dc.appendMail(t, "INBOX", mailBytes("jane@buyer.example", "nopdf@buyer.example", "Hello", part{"image/png", "logo.png", []byte("\x89PNG")}))
	passErr, _ := e.pass(t, mailintake.Hooks{})
	require.NoError(t, passErr)
	require.Empty(t, e.documents(t))
	require.Equal(t, 0, e.dc.count(t, "INBOX"))
	require.Equal(t, 1, e.dc.count(t, "Not processed"))
	reasons := storetest.QueryMap[string, string](t, e.pool, `SELECT message_id, outcome || ': ' || reason FROM mailbox_mails`)
	require.Equal(t, "failed: no PDF attachment (other attachments: logo.png (image/png))", reasons["nopdf@buyer.example"])
}

// The same mail read twice (a restart, a replay of the day's mail, or a
// server that renumbered the folder) makes no second document.
func TestSameMailTwiceNoDuplicate(t *testing.T) {
	e := setup(t)
	raw := mailBytes("jane@buyer.example", "po-2@buyer.example", "PO 2", part{"application/pdf", "a.pdf", pdfBytes("a")})
	e.dc.appendMail(t, "INBOX", raw)
	passErr, _ := e.pass(t, mailintake.Hooks{})
	require.NoError(t, passErr)
	e.dc.appendMail(t, "INBOX", raw) // the replay: the mail is back in the folder
	passErr, _ = e.pass(t, mailintake.Hooks{})
	require.NoError(t, passErr)
	// A new UIDVALIDITY: the stored position (far ahead) no longer counts.
	pos, ok, err := e.st.MailboxPosition(t.Context(), e.mb.ID)
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, e.st.SetMailboxPosition(t.Context(), e.mb.ID, store.MailboxPosition{UIDValidity: pos.UIDValidity + 1, LastUID: 1000}))
	e.dc.appendMail(t, "INBOX", raw)
	passErr, _ = e.pass(t, mailintake.Hooks{})
	require.NoError(t, passErr)

	require.Equal(t, map[string]string{"po-2@buyer.example#1": "a.pdf | PO 2 | CONTOSO"}, e.documents(t))
	require.Equal(t, 3, e.dc.count(t, "Processed"))
	outcomes := storetest.QueryMap[string, int](t, e.pool, `SELECT outcome, count(*)::int FROM mailbox_attachments GROUP BY outcome`)
	require.Equal(t, map[string]int{"created": 1, "replayed": 2}, outcomes)
}

// A poller stopped after its documents are committed and before the mail is
// moved (a kill between the two) leaves the mail in the folder; the next
// run makes no duplicate and moves it.
func TestCrashBetweenSubmitAndMove(t *testing.T) {
	e := setup(t)
	e.dc.appendMail(t, "INBOX", mailBytes("jane@buyer.example", "po-3@buyer.example", "PO 3",
		part{"application/pdf", "a.pdf", pdfBytes("a")}, part{"application/pdf", "b.pdf", pdfBytes("b")}))
	crash := errors.New("killed before the move")
	passErr, runErr := e.pass(t, mailintake.Hooks{BeforeMove: func(string, uint32) error { return crash }})
	require.ErrorIs(t, passErr, crash)
	require.ErrorIs(t, runErr, crash)
	require.Len(t, e.documents(t), 2)
	require.Equal(t, 1, e.dc.count(t, "INBOX"))

	passErr, runErr = e.pass(t, mailintake.Hooks{})
	require.NoError(t, passErr)
	require.NoError(t, runErr)
	require.Equal(t, map[string]string{
		"po-3@buyer.example#1": "a.pdf | PO 3 | CONTOSO",
		"po-3@buyer.example#2": "b.pdf | PO 3 | CONTOSO",
	}, e.documents(t))
	require.Equal(t, 0, e.dc.count(t, "INBOX"))
	require.Equal(t, 1, e.dc.count(t, "Processed"))
	outcome := storetest.QueryMap[string, string](t, e.pool, `SELECT message_id, outcome FROM mailbox_mails`)
	require.Equal(t, map[string]string{"po-3@buyer.example": "processed"}, outcome)
}

// failingObjects is an object store that is down.
type failingObjects struct{ intake.Objects }

func (failingObjects) Put(context.Context, string, io.Reader, int64, string) error {
	return errors.New("object store down")
}

// A mail over the size limit is not read; one that fails for an outage
// stays in the folder and is retried, and after MaxFailures reads goes to
// the error folder with the last reason.
func TestTooLargeAndRetriedMails(t *testing.T) {
	e := setup(t)
	e.tune = mailintake.Tuning{Read: mailbox.Tuning{MaxMailBytes: 4 << 10, MaxFailures: 2}}
	e.dc.appendMail(t, "INBOX", mailBytes("jane@buyer.example", "big@buyer.example", "Big", part{"application/pdf", "big.pdf",
		append(pdfBytes("big"), bytes.Repeat([]byte("x"), 8<<10)...)}))
	passErr, _ := e.pass(t, mailintake.Hooks{})
	require.NoError(t, passErr)
	require.Equal(t, 1, e.dc.count(t, "Not processed"))

	e.svc.Objects = failingObjects{e.svc.Objects}
	e.dc.appendMail(t, "INBOX", mailBytes("jane@buyer.example", "retry@buyer.example", "Retry", part{"application/pdf", "a.pdf", pdfBytes("a")}))
	passErr, _ = e.pass(t, mailintake.Hooks{})
	require.ErrorContains(t, passErr, "object store unavailable")
	require.Equal(t, 1, e.dc.count(t, "INBOX"), "an outage leaves the mail in the folder")
	passErr, _ = e.pass(t, mailintake.Hooks{})
	require.NoError(t, passErr)
	require.Equal(t, 0, e.dc.count(t, "INBOX"))
	require.Equal(t, 2, e.dc.count(t, "Not processed"))
	reasons := storetest.QueryMap[string, string](t, e.pool, `SELECT message_id, outcome || ': ' || reason FROM mailbox_mails`)
	require.Contains(t, reasons["big@buyer.example"], "failed: the mail has ")
	require.Contains(t, reasons["retry@buyer.example"], "failed: failed 2 times, last: object store unavailable")
	require.Empty(t, e.documents(t))
}
