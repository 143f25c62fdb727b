// Package mailintake turns the PDFs that buyers mail to a client's orders
// mailbox into documents, exactly as an upload would: each PDF attachment
// (also inside a .zip or an attached mail) goes through intake.Service
// with message_id "<Message-ID>#<n>", the mail's subject, the attachment's
// file name and the party_id its sender maps to.
//
// # Exactly once
//
// A poller reads a folder by UID, oldest first. For each mail it submits
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
//
// # One reader per mailbox
//
// Every replica runs a poller per mailbox; the one that holds the
// mailbox's PostgreSQL advisory lock (on a connection of its own) reads it,
// the others stand by and try again each interval.
package mailintake

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/docintake/docintake/pkg/intake"
	"github.com/docintake/docintake/pkg/store"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"
)

// Deps are what the mailbox intake runs on. Store, Intake and Logger are
// required; no mailboxes is a service with nothing to do.
type Deps struct {
	Mailboxes []Mailbox
	// Load, when set, replaces Mailboxes: the mailboxes are reloaded
	// every PollInterval (StoredMailboxes: the mailboxes table), and
	// pollers start and stop as they are added and removed.
	Load     func(context.Context) ([]Mailbox, error)
	Store    *store.Store
	Intake   *intake.Service
	Logger   *zap.Logger
	Registry *prometheus.Registry // nil: metrics register nowhere
	// Getenv reads imap.password_env; nil is os.Getenv.
	Getenv func(string) string
	Tuning Tuning
	Hooks  Hooks
}

// Tuning holds the intake's timings and bounds; zero fields take the
// defaults of DefaultTuning.
type Tuning struct {
	PollInterval time.Duration // between passes over a folder, and standby retries
	MaxBackoff   time.Duration // longest wait after failed passes
	MaxFailures  int           // reads of a mail that may fail before it goes to the error folder
	MaxMailBytes int64         // larger mails go to the error folder unread
	// MaxPDFBytes is the largest PDF accepted (INTAKE_MAX_UPLOAD_BYTES,
	// as for uploads); 0 keeps Limits.MaxPDFBytes.
	MaxPDFBytes int64
	Limits      Limits
}

// DefaultTuning is production's.
var DefaultTuning = Tuning{PollInterval: time.Minute, MaxBackoff: 10 * time.Minute, MaxFailures: 5,
	MaxMailBytes: 64 << 20, Limits: DefaultLimits}

func (t Tuning) withDefaults() Tuning {
	d := DefaultTuning
	if t.PollInterval <= 0 {
		t.PollInterval = d.PollInterval
	}
	if t.MaxBackoff <= 0 {
		t.MaxBackoff = d.MaxBackoff
	}
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

// Hooks let tests observe and interrupt the pollers.
type Hooks struct {
	// AfterPass is called after every pass over a folder with its error.
	AfterPass func(mailboxID string, err error)
	// BeforeMove runs after a mail's documents are committed, before the
	// mail is moved; an error stops Run as a crash would.
	BeforeMove func(mailboxID string, uid uint32) error
}

// errStop marks an error that ends Run instead of being retried.
var errStop = errors.New("mailintake stopped")

// Run polls every mailbox until ctx is done. A mailbox whose server or
// settings fail is retried with backoff and does not stop the others.
func Run(ctx context.Context, d Deps) error {
	if d.Store == nil || d.Intake == nil || d.Logger == nil {
		return errors.New("mailintake: Deps needs Store, Intake and Logger")
	}
	if d.Getenv == nil {
		d.Getenv = os.Getenv
	}
	d.Tuning = d.Tuning.withDefaults()
	m, h := newMetrics(d.Registry), newHealth(d.Registry, d.Store)
	if d.Load != nil {
		return supervise(ctx, d, m, h)
	}
	g, ctx := errgroup.WithContext(ctx)
	for _, mb := range d.Mailboxes {
		p := newPoller(d, mb, m, h)
		g.Go(func() error { return p.run(ctx) })
	}
	err := g.Wait()
	if errors.Is(err, errStop) {
		return err
	}
	return nil
}
