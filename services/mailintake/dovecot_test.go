package mailintake_test

import (
	"testing"

	"github.com/docintake/docintake/pkg/mailbox/mailboxtest"
	"github.com/emersion/go-imap/v2/imapclient"
)

// dovecot is a Dovecot IMAP server of one test (mailboxtest: its own
// config, passwd-file user and maildir in a temporary directory, on a free
// loopback port, stopped when the test ends).
type dovecot struct{ *mailboxtest.Dovecot }

// startDovecot starts the server, or skips the test when Dovecot is not
// installed (fails under CI=true, where deploy/dev/testenv.sh installs it).
func startDovecot(t *testing.T) *dovecot {
	t.Helper()
	return startDovecotWith(t, nil)
}

// startDovecotWith starts the server with extra config (given the
// server's directory, readable by its processes), e.g. another passdb.
func startDovecotWith(t *testing.T, extra func(dir string) string) *dovecot {
	t.Helper()
	return &dovecot{mailboxtest.StartDovecot(t, extra)}
}

// client logs in as the test user.
func (d *dovecot) client(t *testing.T) *imapclient.Client { return d.Client(t) }

// appendMail puts raw into folder over IMAP, as a mail server delivering
// it would.
func (d *dovecot) appendMail(t *testing.T, folder string, raw []byte) { d.Append(t, folder, raw) }

// count is how many mails folder holds (0 for a folder that does not
// exist).
func (d *dovecot) count(t *testing.T, folder string) int { return d.Messages(t, folder) }
