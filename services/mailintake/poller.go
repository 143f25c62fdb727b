package mailintake

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/store"
	"github.com/emersion/go-imap/v2"
	"go.uber.org/zap"
)

// poller reads one mailbox while it holds the mailbox's lock.
type poller struct {
	d       Deps
	mb      Mailbox
	metrics *metrics
	log     *zap.Logger
	lock    *store.MailboxLock
	src     source         // IMAP or Graph (source.go), made at the first pass
	sess    session        // open while the lock is held and the server answers
	hl      *mailboxHealth // health reports (health.go); nil for a command's poller
}

// run polls until ctx is done or a hook stops it.
func (p *poller) run(ctx context.Context) error {
	defer p.unlock()
	failed := 0
	for {
		err := p.turn(ctx)
		if errors.Is(err, errStop) {
			return err
		}
		wait := p.d.Tuning.PollInterval
		if err != nil && ctx.Err() == nil {
			failed++
			wait = backoff(wait, p.d.Tuning.MaxBackoff, failed)
			p.metrics.errors.WithLabelValues(p.mb.ID, "server").Inc()
			p.log.Warn("mailbox pass failed", zap.Error(err), zap.Duration("retry_in", wait))
		} else {
			failed = 0
		}
		if !p.wait(ctx, wait) {
			return nil
		}
	}
}

// backoff doubles base per failure up to limit.
func backoff(base, limit time.Duration, failures int) time.Duration {
	d := base
	for range min(failures, 20) {
		d *= 2
		if d >= limit {
			return limit
		}
	}
	return d
}

// turn takes or checks the lock and, holding it, makes one pass.
func (p *poller) turn(ctx context.Context) error {
	if p.lock != nil {
		if err := p.lock.Held(ctx); err != nil {
			p.log.Warn("mailbox lock lost", zap.Error(err))
			p.unlock()
		}
	}
	if p.lock == nil {
		l, ok, err := p.d.Store.TryMailboxLock(ctx, p.mb.ID)
		if err != nil {
			return err
		}
		if !ok {
			return nil // another replica reads this mailbox: stand by
		}
		p.lock = l
		p.log.Info("reading mailbox")
	}
	err := p.pass(ctx)
	if err != nil {
		p.dropSession()
	}
	p.hl.passed(ctx, err)
	if p.d.Hooks.AfterPass != nil {
		p.d.Hooks.AfterPass(p.mb.ID, err)
	}
	return err
}

func (p *poller) unlock() {
	p.dropSession()
	if p.lock != nil {
		p.lock.Release()
		p.lock = nil
	}
}

// pass reads the folder's new mails, oldest first, and stops at the first
// that cannot be finished now (it is retried on the next pass).
func (p *poller) pass(ctx context.Context) error {
	client, err := p.d.Store.Client(ctx, p.mb.Client)
	if err != nil {
		return fmt.Errorf("client %q: %w", p.mb.Client, err)
	}
	s, err := p.session(ctx)
	if err != nil {
		return err
	}
	uidValidity, uids, err := s.pending(ctx)
	if err != nil {
		return err
	}
	p.hl.listed(ctx, s, uidValidity, uids)
	for _, uid := range uids {
		mr := mailRead{p: p, c: s, client: client, row: store.MailboxMail{MailboxID: p.mb.ID, UIDValidity: uidValidity, UID: uid}}
		if err := mr.handle(ctx); err != nil {
			return fmt.Errorf("mail uid %d: %w", uid, err)
		}
		p.hl.finished(uid)
	}
	return s.caughtUp(ctx)
}

// position selects the folder and returns where to go on from: the stored
// position, or UID 0 for a folder never read or renumbered.
func (p *poller) position(ctx context.Context, c *conn) (store.MailboxPosition, error) {
	sel, err := c.selectFolder(p.mb)
	if err != nil {
		return store.MailboxPosition{}, err
	}
	pos, ok, err := p.d.Store.MailboxPosition(ctx, p.mb.ID)
	if err != nil {
		return pos, err
	}
	if ok && pos.UIDValidity == sel.UIDValidity {
		return pos, nil
	}
	if ok {
		// The server renumbered the folder: every mail in it is read
		// again, and intake's idempotency answers those already made.
		p.log.Warn("UIDVALIDITY changed: rereading the folder", zap.Uint32("old", pos.UIDValidity), zap.Uint32("new", sel.UIDValidity))
	}
	pos = store.MailboxPosition{UIDValidity: sel.UIDValidity}
	return pos, p.d.Store.SetMailboxPosition(ctx, p.mb.ID, pos)
}

// transient tells whether a submission error may pass when tried again
// (an outage), as opposed to intake's refusal of the document.
func transient(err error) bool {
	e, ok := document.AsError(err)
	return !ok || e.Kind == document.EUNAVAILABLE
}

// sortedUIDs returns the UIDs above last, ascending ("last+1:*" also
// answers the folder's highest UID when it is below last+1).
func sortedUIDs(all []imap.UID, last uint32) []uint32 {
	var out []uint32
	for _, u := range all {
		if uint32(u) > last {
			out = append(out, uint32(u))
		}
	}
	slices.Sort(out)
	return out
}
