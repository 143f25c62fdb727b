// Package mailintake is the mailbox intake service: it polls every
// configured mailbox and turns the PDFs that buyers mail to it into
// documents. Reading a mailbox (the IMAP and Graph sources, MIME parsing,
// the exactly-once handling of one mail) is pkg/mailbox's; this package
// runs it: a poller per mailbox with its lock, passes, IDLE or polling,
// backoff, health and metrics, and a supervisor that follows the
// mailboxes table.
//
// # One reader per mailbox
//
// Every replica runs a poller per mailbox; the one that holds the
// mailbox's PostgreSQL advisory lock (on a connection of its own) reads it,
// the others stand by and try again each interval. Replicas may therefore
// be added freely.
package mailintake

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/docintake/docintake/pkg/intake"
	"github.com/docintake/docintake/pkg/mailbox"
	"github.com/docintake/docintake/pkg/store"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"
)

// Deps are what the mailbox intake runs on. Store, Intake and Logger are
// required; no mailboxes is a service with nothing to do.
type Deps struct {
	Mailboxes []mailbox.Mailbox
	// Load, when set, replaces Mailboxes: the mailboxes are reloaded
	// every PollInterval (StoredMailboxes: the mailboxes table), and
	// pollers start and stop as they are added and removed.
	Load     func(context.Context) ([]mailbox.Mailbox, error)
	Store    *store.Store
	Intake   *intake.Service
	Logger   *zap.Logger
	Registry *prometheus.Registry // nil: metrics register nowhere
	// Getenv reads the secrets' *_env variables; nil is os.Getenv.
	Getenv func(string) string
	Tuning Tuning
	Hooks  Hooks
}

// Tuning holds the intake's timings and bounds; zero fields take the
// defaults of DefaultTuning (Read: mailbox.DefaultTuning's).
type Tuning struct {
	PollInterval time.Duration // between passes over a folder, and standby retries
	MaxBackoff   time.Duration // longest wait after failed passes
	// Read bounds the reading of each mail (size limits, retries of a
	// failing mail; MaxPDFBytes is INTAKE_MAX_UPLOAD_BYTES).
	Read mailbox.Tuning
}

// DefaultTuning is production's.
var DefaultTuning = Tuning{PollInterval: time.Minute, MaxBackoff: 10 * time.Minute, Read: mailbox.DefaultTuning}

// withDefaults fills the timings; mailbox.NewReader fills Read's zero
// fields.
func (t Tuning) withDefaults() Tuning {
	d := DefaultTuning
	if t.PollInterval <= 0 {
		t.PollInterval = d.PollInterval
	}
	if t.MaxBackoff <= 0 {
		t.MaxBackoff = d.MaxBackoff
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
