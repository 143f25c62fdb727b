package mailintake

import (
	"context"
	"time"

	"go.uber.org/zap"
)

// source is where a mailbox's mails come from: an IMAP folder, or a mail
// folder of Microsoft Graph. The poller, the bookkeeping in PostgreSQL and
// the exactly-once rules are the same for both; a source only lists,
// reads and moves mails.
type source interface {
	open(ctx context.Context) (session, error)
}

// session is a source's connection while the poller holds the mailbox's
// lock; it stays open between passes (an IMAP session waits in IDLE).
//
// Mails are named by the key of their mailbox_mails rows: a UIDVALIDITY
// and a UID. IMAP has both; Graph gets a UID per message id from
// PostgreSQL (mailbox_items) under UIDVALIDITY 0, which IMAP never uses.
type session interface {
	// pending lists the folder's mails to read from the stored position
	// on, oldest first.
	pending(ctx context.Context) (uidValidity uint32, uids []uint32, err error)
	// size is a mail's size and Message-ID (so that a mail too large to
	// read is still named); ok is false when the mail is gone.
	size(ctx context.Context, uid uint32) (n int64, messageID string, ok bool, err error)
	// load reads and parses a mail. Its MessageID is never empty (one is
	// derived from the mail when it has none), even with an error
	// wrapping ErrMalformed.
	load(ctx context.Context, uid uint32, lim Limits) (Mail, error)
	// move moves a mail to folder.
	move(ctx context.Context, uid uint32, folder string) error
	// caughtUp is called once every pending mail is finished: a source
	// whose position is not a UID (Graph's delta link) stores it here.
	caughtUp(ctx context.Context) error
	// wait returns after d, or earlier when the server says the folder
	// changed (IMAP IDLE); an error means the session is broken.
	wait(ctx context.Context, d time.Duration) error
	close()
}

// newSource returns the mailbox's source as its configuration says.
func (p *poller) newSource() source {
	if p.mb.Graph != nil {
		return newGraphSource(p)
	}
	return &imapSource{p: p, tokens: newIMAPTokens(p.mb.IMAP, p.d.Getenv)}
}

// session returns the open session, or opens one.
func (p *poller) session(ctx context.Context) (session, error) {
	if p.sess != nil {
		return p.sess, nil
	}
	if p.src == nil {
		p.src = p.newSource()
	}
	s, err := p.src.open(ctx)
	if err != nil {
		return nil, err
	}
	p.sess = s
	return s, nil
}

// dropSession closes the session (after an error, or when the lock is
// given up); the next pass opens a new one.
func (p *poller) dropSession() {
	if p.sess != nil {
		p.sess.close()
		p.sess = nil
	}
}

// wait returns after d, or earlier when the open session sees the folder
// change; false when ctx ended. A session that fails while waiting is
// dropped and the rest of d is slept, so a server that breaks IDLE is
// still polled, never hammered.
func (p *poller) wait(ctx context.Context, d time.Duration) bool {
	start := time.Now()
	if p.sess != nil {
		err := p.sess.wait(ctx, d)
		if ctx.Err() != nil {
			return false
		}
		if err == nil {
			return true
		}
		p.log.Warn("waiting for new mail failed", zap.Error(err))
		p.dropSession()
		d -= time.Since(start)
	}
	return sleep(ctx, d)
}

// sleep waits d; false when ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
