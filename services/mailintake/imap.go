package mailintake

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
)

// conn is a logged-in IMAP connection, closed when its context ends (the
// client's commands take none).
type conn struct {
	c    *imapclient.Client
	stop func() bool
}

// dial connects and logs in as the mailbox says.
func (p *poller) dial(ctx context.Context) (*conn, error) {
	cfg := p.mb.IMAP
	pw, err := cfg.password(p.d.Getenv)
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port))
	opts := &imapclient.Options{
		Dialer:    &net.Dialer{Timeout: 30 * time.Second},
		TLSConfig: &tls.Config{ServerName: cfg.Host, MinVersion: tls.VersionTLS12},
	}
	var c *imapclient.Client
	switch cfg.Security {
	case SecurityTLS:
		c, err = imapclient.DialTLS(addr, opts)
	case SecurityStartTLS:
		c, err = imapclient.DialStartTLS(addr, opts)
	default:
		c, err = imapclient.DialInsecure(addr, opts)
	}
	if err != nil {
		return nil, fmt.Errorf("imap connect %s: %w", addr, err)
	}
	cn := &conn{c: c, stop: context.AfterFunc(ctx, func() { _ = c.Close() })}
	if err := c.Login(cfg.Username, pw).Wait(); err != nil {
		cn.close()
		return nil, fmt.Errorf("imap login %s as %s: %w", addr, cfg.Username, err)
	}
	return cn, nil
}

func (c *conn) close() {
	c.stop()
	_ = c.c.Logout().Wait()
	_ = c.c.Close()
}

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
func (c *conn) size(uid uint32) (size int64, messageID string, ok bool, err error) {
	msgs, err := c.c.Fetch(imap.UIDSetNum(imap.UID(uid)), &imap.FetchOptions{RFC822Size: true, UID: true, Envelope: true}).Collect()
	if err != nil || len(msgs) == 0 {
		return 0, "", false, wrapIMAP("fetch size", err)
	}
	if msgs[0].Envelope != nil {
		messageID = msgs[0].Envelope.MessageID
	}
	return msgs[0].RFC822Size, messageID, true, nil
}

// body fetches a whole mail without setting \Seen.
func (c *conn) body(uid uint32) ([]byte, error) {
	section := &imap.FetchItemBodySection{Peek: true}
	msgs, err := c.c.Fetch(imap.UIDSetNum(imap.UID(uid)), &imap.FetchOptions{UID: true, BodySection: []*imap.FetchItemBodySection{section}}).Collect()
	if err != nil {
		return nil, wrapIMAP("fetch", err)
	}
	if len(msgs) == 0 || len(msgs[0].BodySection) == 0 {
		return nil, fmt.Errorf("imap fetch: mail uid %d is gone", uid)
	}
	return msgs[0].BodySection[0].Bytes, nil
}

// move moves a mail to folder (MOVE, or COPY + EXPUNGE where the server
// lacks it).
func (c *conn) move(uid uint32, folder string) error {
	_, err := c.c.Move(imap.UIDSetNum(imap.UID(uid)), folder).Wait()
	return wrapIMAP("move to "+strconv.Quote(folder), err)
}

func wrapIMAP(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("imap %s: %w", op, err)
}
