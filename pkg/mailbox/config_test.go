package mailbox_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/docintake/docintake/pkg/mailbox"
	"github.com/stretchr/testify/require"
)

func writeFile(t *testing.T, body string) string {
	p := filepath.Join(t.TempDir(), "mailboxes.yaml")
	require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
	return p
}

// The issue's example loads, with its defaults and lower-cased senders.
func TestLoadMailboxesIssueShape(t *testing.T) {
	mbs, err := mailbox.LoadMailboxes(writeFile(t, `mailboxes:
  - id: orders-acme
    client: acme
    imap: {host: imap.example.com, port: 993, security: tls, username: orders@acme.example, password_file: /run/secrets/imap}
    folder: INBOX
    processed_folder: Processed
    error_folder: Not processed
    senders: {"Buyer.example": CONTOSO, "po@other.example": OTHER}
`))
	require.NoError(t, err)
	require.Len(t, mbs, 1)
	mb := mbs[0]
	require.Equal(t, mailbox.SecurityTLS, mb.IMAP.Security)
	p, ok := mb.Party("Jane <Jane@BUYER.example>")
	require.True(t, ok)
	require.Equal(t, "CONTOSO", p)
	p, _ = mb.Party("po@other.example")
	require.Equal(t, "OTHER", p)
	_, ok = mb.Party("x@other.example")
	require.False(t, ok, "an address mapping does not cover its domain")
}

// Errors name the entry and the setting; none shows a secret.
func TestLoadMailboxesErrors(t *testing.T) {
	for name, c := range map[string]struct{ yaml, want string }{
		"security none on a remote host": {`{id: a, client: c, processed_folder: P, error_folder: E,
          imap: {host: imap.example.com, security: none, username: u, password_env: PW}}`, `entry 1 ("a"): imap.security none is allowed only for a loopback host`},
		"unknown security": {`{id: a, client: c, processed_folder: P, error_folder: E,
          imap: {host: h, security: ssl, username: u, password_env: PW}}`, `imap.security "ssl" must be tls, starttls or none`},
		"no password": {`{id: a, client: c, processed_folder: P, error_folder: E, imap: {host: h, username: u}}`,
			"give one of imap.password_file or imap.password_env"},
		"no folders": {`{id: a, client: c, imap: {host: h, username: u, password_env: PW}}`, "processed_folder and error_folder are required"},
		"bad id":     {`{id: "A B", client: c, processed_folder: P, error_folder: E, imap: {host: h, username: u, password_env: PW}}`, "id must be"},
		"misspelt key": {`{id: a, client: c, procesed_folder: P, error_folder: E, imap: {host: h, username: u, password_env: PW}}`,
			"field procesed_folder not found"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := mailbox.LoadMailboxes(writeFile(t, "mailboxes:\n  - "+c.yaml+"\n"))
			require.ErrorContains(t, err, c.want)
		})
	}
	_, err := mailbox.LoadMailboxes(writeFile(t, `mailboxes:
  - {id: a, client: c, processed_folder: P, error_folder: E, imap: {host: 127.0.0.1, security: none, username: u, password_env: PW}}
  - {id: a, client: c, processed_folder: P, error_folder: E, imap: {host: "::1", security: none, username: u, password_env: PW}}
`))
	require.ErrorContains(t, err, `entry 2: id "a" is used twice`)
}
