// Package mailbox reads a client's orders mailbox and turns the PDFs that
// buyers mail to it into documents, exactly as an upload would: each PDF
// attachment (also inside a .zip or an attached mail) goes through
// intake.Service with message_id "<Message-ID>#<n>", the mail's subject,
// the attachment's file name and the party_id its sender maps to.
//
// It holds what every user of a mailbox shares: the mailboxes' settings
// (the INTAKE_MAILBOXES_FILE shape and its stored form), the IMAP and
// Microsoft Graph sources, MIME parsing, the handling of one mail, and the
// operator's Check and Replay. The service that polls mailboxes
// (services/mailintake: locks, passes, backoff, health, metrics) and the
// operator CLI (`intakectl mailboxes test|replay`) both build on it, so
// neither imports the other.
//
// # Exactly once
//
// A reader lists a folder by UID, oldest first. For each mail it submits
// every PDF (intake commits document and job before it answers), records
// the outcomes in PostgreSQL (mailbox_mails, mailbox_attachments), and only
// then moves the mail to the processed folder (or, when a PDF was refused or
// there is none, to the error folder) and advances the folder's position
// (UIDVALIDITY + last UID). A crash anywhere before the move reads the mail
// again: intake answers a repeated (client, message_id) with the document
// it already made, so the same PDF never becomes two documents. A server
// that renumbers the folder (a new UIDVALIDITY) is read from the start, by
// the same idempotency. A replay after an outage is a move of the mails
// back into the folder.
package mailbox

import (
	"context"
	"os"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/intake"
	"github.com/docintake/docintake/pkg/store"
	"go.uber.org/zap"
)

// Deps are what reading a mailbox needs. Store and Intake are needed to
// read mails (Check needs neither); Logger and Getenv default to a silent
// logger and os.Getenv.
type Deps struct {
	Store  *store.Store
	Intake *intake.Service
	Logger *zap.Logger
	// Getenv reads the secrets' *_env variables.
	Getenv func(string) string
	Tuning Tuning
	// Counter counts what reading mails does (the service's metrics); nil
	// counts nothing.
	Counter Counter
	// BeforeMove, when set, runs after a mail's documents are committed and
	// before the mail is moved; its error is returned as it is and leaves
	// the mail in the folder, as a crash there would (the service's tests).
	BeforeMove func(mailboxID string, uid uint32) error
}

// Tuning bounds the reading of mails; zero fields take DefaultTuning's.
type Tuning struct {
	MaxFailures  int   // reads of a mail that may fail before it goes to the error folder
	MaxMailBytes int64 // larger mails go to the error folder unread
	// MaxPDFBytes is the largest PDF accepted (INTAKE_MAX_UPLOAD_BYTES,
	// as for uploads); 0 keeps Limits.MaxPDFBytes.
	MaxPDFBytes int64
	Limits      Limits
}

// DefaultTuning is production's.
var DefaultTuning = Tuning{MaxFailures: 5, MaxMailBytes: 64 << 20, Limits: DefaultLimits}

func (t Tuning) withDefaults() Tuning {
	d := DefaultTuning
	if t.MaxFailures <= 0 {
		t.MaxFailures = d.MaxFailures
	}
	if t.MaxMailBytes <= 0 {
		t.MaxMailBytes = d.MaxMailBytes
	}
	if t.Limits == (Limits{}) {
		t.Limits = d.Limits
	}
	if t.MaxPDFBytes > 0 {
		t.Limits.MaxPDFBytes = t.MaxPDFBytes
	}
	return t
}

// Counter receives what reading mails counts, by mailbox id: mails
// finished (store.MailProcessed, store.MailFailed), PDFs submitted (the
// store.Attachment* outcomes) and errors by kind (no_pdf, malformed,
// too_large, refused, retry).
type Counter interface {
	Mail(mailboxID, outcome string)
	Document(mailboxID, outcome string)
	Error(mailboxID, kind string)
}

type noCounter struct{}

func (noCounter) Mail(string, string)     {}
func (noCounter) Document(string, string) {}
func (noCounter) Error(string, string)    {}

// Reader reads one mailbox: its source (IMAP or Graph), its open session
// and the handling of each mail. It holds no lock: the service's poller
// reads only while it holds the mailbox's, and Replay takes one of its own.
// A Reader is used by one goroutine at a time.
type Reader struct {
	d     Deps
	mb    Mailbox
	log   *zap.Logger
	count Counter
	src   source  // IMAP or Graph (source.go), made at the first Session
	sess  Session // open until Drop
}

// NewReader returns mb's reader; its log lines name the mailbox and the
// client.
func NewReader(d Deps, mb Mailbox) *Reader {
	if d.Getenv == nil {
		d.Getenv = os.Getenv
	}
	if d.Logger == nil {
		d.Logger = zap.NewNop()
	}
	d.Tuning = d.Tuning.withDefaults()
	r := &Reader{d: d, mb: mb, count: d.Counter,
		log: d.Logger.With(zap.String("mailbox", mb.ID), zap.String("client", mb.Client))}
	if r.count == nil {
		r.count = noCounter{}
	}
	return r
}

// Logger is the reader's logger (with the mailbox and the client).
func (p *Reader) Logger() *zap.Logger { return p.log }

// Handle reads mail uid of the session's folder (listed by Pending under
// uidValidity), makes its documents for client and moves it; an error
// leaves it in the folder for the next pass.
func (p *Reader) Handle(ctx context.Context, s Session, client document.Client, uidValidity, uid uint32) error {
	mr := mailRead{p: p, c: s, client: client, row: store.MailboxMail{MailboxID: p.mb.ID, UIDValidity: uidValidity, UID: uid}}
	return mr.handle(ctx)
}
