package mailbox

import (
	"context"
	"time"

	"go.uber.org/zap"
)

// source is where a mailbox's mails come from: an IMAP folder, or a mail
// folder of Microsoft Graph. The reader, the bookkeeping in PostgreSQL and
// the exactly-once rules are the same for both; a source only lists,
// reads and moves mails.
type source interface {
	open(ctx context.Context) (Session, error)
}

// Session is a source's connection while the service's poller holds the
// mailbox's lock; it stays open between passes (an IMAP session waits in
// IDLE). Reader.Session opens it, Reader.Drop closes it. A session that
// can tell when its mails arrived also has
// Arrivals(ctx, uids) (map[uint32]time.Time, error).
//
// Mails are named by the key of their mailbox_mails rows: a UIDVALIDITY
// and a UID. IMAP has both; Graph gets a UID per message id from
// PostgreSQL (mailbox_items) under UIDVALIDITY 0, which IMAP never uses.
type Session interface {
	// Pending lists the folder's mails to read from the stored position
	// on, oldest first.
	Pending(ctx context.Context) (uidValidity uint32, uids []uint32, err error)
	// size is a mail's size and Message-ID (so that a mail too large to
	// read is still named); ok is false when the mail is gone.
	size(ctx context.Context, uid uint32) (n int64, messageID string, ok bool, err error)
	// load reads and parses a mail. Its MessageID is never empty (one is
	// derived from the mail when it has none), even with an error
	// wrapping ErrMalformed.
	load(ctx context.Context, uid uint32, lim Limits) (Mail, error)
	// move moves a mail to folder.
	move(ctx context.Context, uid uint32, folder string) error
	// CaughtUp is called once every pending mail is finished: a source
	// whose position is not a UID (Graph's delta link) stores it here.
	CaughtUp(ctx context.Context) error
	// wait returns after d, or earlier when the server says the folder
	// changed (IMAP IDLE); an error means the session is broken.
	wait(ctx context.Context, d time.Duration) error
	close()
}

// newSource returns the mailbox's source as its configuration says.
func (p *Reader) newSource() source {
	if p.mb.Graph != nil {
		return newGraphSource(p)
	}
	return &imapSource{p: p, tokens: newIMAPTokens(p.mb.IMAP, p.d.Getenv)}
}

// Session returns the open session, or opens one (the source, made at the
// first call, is kept: a Graph mailbox's token stays cached).
func (p *Reader) Session(ctx context.Context) (Session, error) {
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

// Drop closes the session (after an error, or when the lock is given up);
// the next Session opens a new one.
func (p *Reader) Drop() {
	if p.sess != nil {
		p.sess.close()
		p.sess = nil
	}
}

// Wait returns after d, or earlier when the open session sees the folder
// change; false when ctx ended. A session that fails while waiting is
// dropped and the rest of d is slept, so a server that breaks IDLE is
// still polled, never hammered.
func (p *Reader) Wait(ctx context.Context, d time.Duration) bool {
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
		p.Drop()
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

// Backoff is the wait after failures in a row: base doubled per failure up
// to limit (a failing mailbox's next pass, a throttled Graph call without
// Retry-After).
func Backoff(base, limit time.Duration, failures int) time.Duration {
	d := base
	for range min(failures, 20) {
		d *= 2
		if d >= limit {
			return limit
		}
	}
	return d
}
