package mailbox

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"time"

	"github.com/docintake/docintake/pkg/store"
	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"go.uber.org/zap"
)

// imapSource is a mailbox's IMAP folder.
type imapSource struct {
	p      *Reader
	tokens *tokenSource // XOAUTH2's access tokens; nil for a password login
}

func (s *imapSource) open(ctx context.Context) (Session, error) { return s.dial(ctx) }

// conn is a logged-in IMAP connection, closed when its context ends (the
// client's commands take none).
type conn struct {
	p    *Reader
	c    *imapclient.Client
	stop func() bool
	// changed is signalled when the server reports a new message count
	// (EXISTS), at any time: during IDLE, or after any command.
	changed chan struct{}
}

// dial connects and logs in as the mailbox says.
func (s *imapSource) dial(ctx context.Context) (*conn, error) {
	cfg := s.p.mb.IMAP
	cn := &conn{p: s.p, changed: make(chan struct{}, 1)}
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port))
	opts := &imapclient.Options{
		Dialer:    &net.Dialer{Timeout: 30 * time.Second},
		TLSConfig: &tls.Config{ServerName: cfg.Host, MinVersion: tls.VersionTLS12},
		UnilateralDataHandler: &imapclient.UnilateralDataHandler{Mailbox: func(d *imapclient.UnilateralDataMailbox) {
			if d.NumMessages != nil {
				cn.signal()
			}
		}},
	}
	var err error
	switch cfg.Security {
	case SecurityTLS:
		cn.c, err = imapclient.DialTLS(addr, opts)
	case SecurityStartTLS:
		cn.c, err = imapclient.DialStartTLS(addr, opts)
	default:
		cn.c, err = imapclient.DialInsecure(addr, opts)
	}
	if err != nil {
		return nil, fmt.Errorf("imap connect %s: %w", addr, err)
	}
	c := cn.c
	cn.stop = context.AfterFunc(ctx, func() { _ = c.Close() })
	if err := s.login(ctx, cn.c); err != nil {
		cn.close()
		return nil, fmt.Errorf("imap login %s as %s: %w", addr, cfg.Username, err)
	}
	return cn, nil
}

// login authenticates with the password, or with SASL XOAUTH2 and an
// access token. A token the server refuses is dropped from the cache, so
// the next connect fetches a new one.
func (s *imapSource) login(ctx context.Context, c *imapclient.Client) error {
	cfg := s.p.mb.IMAP
	if s.tokens == nil {
		pw, err := cfg.password(s.p.d.Getenv)
		if err != nil {
			return err
		}
		return c.Login(cfg.Username, pw).Wait()
	}
	tok, err := s.tokens.get(ctx)
	if err != nil {
		return err
	}
	x := &xoauth2{user: cfg.Username, token: tok}
	if err := c.Authenticate(x); err != nil {
		s.tokens.invalidate(tok)
		return x.explain(err)
	}
	return nil
}

func (c *conn) signal() {
	select {
	case c.changed <- struct{}{}:
	default: // one pending signal is enough: the next pass reads everything new
	}
}

func (c *conn) close() {
	c.stop()
	_ = c.c.Logout().Wait()
	_ = c.c.Close()
}

// Pending selects the folder and lists its mails above the stored
// position. A signal of new mail from before the search is answered by
// it, so it is cleared first.
func (c *conn) Pending(ctx context.Context) (uint32, []uint32, error) {
	select {
	case <-c.changed:
	default:
	}
	pos, err := c.p.position(ctx, c)
	if err != nil {
		return 0, nil, err
	}
	uids, err := c.newUIDs(pos.LastUID)
	return pos.UIDValidity, uids, err
}

// CaughtUp has nothing to store: the position advances with each mail.
func (c *conn) CaughtUp(context.Context) error { return nil }

// selectFolder makes the processed and error folders (when missing) and
// selects the mailbox's folder.
func (c *conn) selectFolder(mb Mailbox) (*imap.SelectData, error) {
	for _, f := range []string{mb.ProcessedFolder, mb.ErrorFolder} {
		var ie *imap.Error
		if err := c.c.Create(f, nil).Wait(); err != nil && !(errors.As(err, &ie) && ie.Code == imap.ResponseCodeAlreadyExists) {
			return nil, fmt.Errorf("imap create %q: %w", f, err)
		}
	}
	sel, err := c.c.Select(mb.Folder, nil).Wait()
	if err != nil {
		return nil, fmt.Errorf("imap select %q: %w", mb.Folder, err)
	}
	return sel, nil
}

// position selects the folder and returns where to go on from: the stored
// position, or UID 0 for a folder never read or renumbered.
func (p *Reader) position(ctx context.Context, c *conn) (store.MailboxPosition, error) {
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

// newUIDs lists the selected folder's mails above last.
func (c *conn) newUIDs(last uint32) ([]uint32, error) {
	crit := &imap.SearchCriteria{UID: []imap.UIDSet{{{Start: imap.UID(last + 1), Stop: 0}}}}
	data, err := c.c.UIDSearch(crit, nil).Wait()
	if err != nil {
		return nil, fmt.Errorf("imap search: %w", err)
	}
	return sortedUIDs(data.AllUIDs(), last), nil
}

// size is a mail's RFC822.SIZE and Message-ID (from its envelope, so a
// mail too large to read is still named); ok is false when it is gone.
func (c *conn) size(_ context.Context, uid uint32) (size int64, messageID string, ok bool, err error) {
	msgs, err := c.c.Fetch(imap.UIDSetNum(imap.UID(uid)), &imap.FetchOptions{RFC822Size: true, UID: true, Envelope: true}).Collect()
	if err != nil || len(msgs) == 0 {
		return 0, "", false, wrapIMAP("fetch size", err)
	}
	if msgs[0].Envelope != nil {
		messageID = msgs[0].Envelope.MessageID
	}
	return msgs[0].RFC822Size, messageID, true, nil
}

// load fetches a mail without setting \Seen and parses it as it streams
// (ParseReader): a large mail is never held whole.
func (c *conn) load(_ context.Context, uid uint32, lim Limits) (Mail, error) {
	section := &imap.FetchItemBodySection{Peek: true}
	cmd := c.c.Fetch(imap.UIDSetNum(imap.UID(uid)), &imap.FetchOptions{UID: true, BodySection: []*imap.FetchItemBodySection{section}})
	m, parsed, perr := parseFetched(cmd, lim)
	if err := cmd.Close(); err != nil {
		return Mail{}, wrapIMAP("fetch", err)
	}
	if !parsed {
		return Mail{}, fmt.Errorf("imap fetch: mail uid %d is gone", uid)
	}
	return m, perr
}

// parseFetched parses the body section a FETCH answers while it arrives.
func parseFetched(cmd *imapclient.FetchCommand, lim Limits) (m Mail, parsed bool, err error) {
	for msg := cmd.Next(); msg != nil; msg = cmd.Next() {
		for item := msg.Next(); item != nil; item = msg.Next() {
			if b, ok := item.(imapclient.FetchItemDataBodySection); ok && b.Literal != nil && !parsed {
				m, err = ParseReader(b.Literal, lim)
				parsed = true
			}
		}
	}
	return m, parsed, err
}

// move moves a mail to folder (MOVE, or COPY + EXPUNGE where the server
// lacks it).
func (c *conn) move(_ context.Context, uid uint32, folder string) error {
	_, err := c.c.Move(imap.UIDSetNum(imap.UID(uid)), folder).Wait()
	return wrapIMAP("move to "+strconv.Quote(folder), err)
}

// wait waits in IDLE until the server reports new mail or d passes, and
// sleeps d on a server without IDLE.
func (c *conn) wait(ctx context.Context, d time.Duration) error {
	select {
	case <-c.changed: // new mail arrived during the pass
		return nil
	default:
	}
	if !c.c.Caps().Has(imap.CapIdle) {
		sleep(ctx, d)
		return nil
	}
	idle, err := c.c.Idle()
	if err != nil {
		return wrapIMAP("idle", err)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.changed:
	case <-t.C:
	case <-ctx.Done():
	case <-c.c.Closed():
		// The IDLE goroutine ends with the connection.
		return errors.New("imap idle: the connection was closed")
	}
	if err := idle.Close(); err != nil {
		return wrapIMAP("idle done", err)
	}
	return wrapIMAP("idle", idle.Wait())
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

func wrapIMAP(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("imap %s: %w", op, err)
}
