package mailintake

import (
	"context"
	"errors"
	"fmt"

	"github.com/docintake/docintake/pkg/mailbox"
	"github.com/docintake/docintake/pkg/store"
	"go.uber.org/zap"
)

// poller reads one mailbox while it holds the mailbox's lock.
type poller struct {
	d       Deps
	mb      mailbox.Mailbox
	metrics *metrics
	log     *zap.Logger
	lock    *store.MailboxLock
	// rd reads the mailbox (pkg/mailbox): its source and session, open
	// while the lock is held and the server answers.
	rd *mailbox.Reader
	hl *mailboxHealth // health reports (health.go)
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
			wait = mailbox.Backoff(wait, p.d.Tuning.MaxBackoff, failed)
			p.metrics.errors.WithLabelValues(p.mb.ID, "server").Inc()
			p.log.Warn("mailbox pass failed", zap.Error(err), zap.Duration("retry_in", wait))
		} else {
			failed = 0
		}
		if !p.rd.Wait(ctx, wait) {
			return nil
		}
	}
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
		p.rd.Drop()
	}
	p.hl.passed(ctx, err)
	if p.d.Hooks.AfterPass != nil {
		p.d.Hooks.AfterPass(p.mb.ID, err)
	}
	return err
}

func (p *poller) unlock() {
	p.rd.Drop()
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
	s, err := p.rd.Session(ctx)
	if err != nil {
		return err
	}
	uidValidity, uids, err := s.Pending(ctx)
	if err != nil {
		return err
	}
	if err := p.settleMoved(ctx, uidValidity, uids); err != nil {
		return err
	}
	p.hl.listed(ctx, s, uidValidity, uids)
	for _, uid := range uids {
		if err := p.rd.Handle(ctx, s, client, uidValidity, uid); err != nil {
			return fmt.Errorf("mail uid %d: %w", uid, err)
		}
		p.hl.finished(uid)
	}
	return s.CaughtUp(ctx)
}

// settleMoved records the mails an intake moved and was stopped (killed)
// before recording: their documents exist and they are no longer in the
// folder, so no pass would read them again and their records would say
// "committed" for ever. IMAP only: a Graph session (UIDVALIDITY 0) lists
// changes, not the folder, so a mail it does not list may still be there.
func (p *poller) settleMoved(ctx context.Context, uidValidity uint32, listed []uint32) error {
	if uidValidity == 0 {
		return nil
	}
	settled, err := p.d.Store.SettleMovedMails(ctx, p.mb.ID, uidValidity, listed)
	if err != nil {
		return err
	}
	if len(settled) > 0 {
		p.log.Info("mails moved before their record settled", zap.Uint32s("uids", settled))
	}
	return nil
}
