package intakectl_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/mailbox/mailboxtest"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
)

// mailboxEnv is a database with the client acme, a Dovecot with its
// password in a file, and intakectl's environment for both.
type mailboxEnv struct {
	dc     *mailboxtest.Dovecot
	pool   *pgxpool.Pool
	env    map[string]string
	pwFile string
}

func newMailboxEnv(t *testing.T) mailboxEnv {
	t.Helper()
	dc := mailboxtest.StartDovecot(t, nil)
	url, pool := schemaPool(t)
	require.NoError(t, store.New(pool).UpsertClient(t.Context(), document.Client{ID: "acme"}))
	pw := filepath.Join(t.TempDir(), "imap-password")
	require.NoError(t, os.WriteFile(pw, []byte(dc.Password+"\n"), 0o600))
	return mailboxEnv{dc: dc, pool: pool, pwFile: pw,
		env: map[string]string{"INTAKE_DATABASE_URL": url, "INTAKE_DATA_DIR": t.TempDir(), "WRONG_IMAP_PASSWORD": "not-it-42"}}
}

func (m mailboxEnv) addArgs(id string, extra ...string) []string {
	return append([]string{"mailboxes", "add", "--id", id, "--client", "acme", "--host", "127.0.0.1", "--port", strconv.Itoa(m.dc.Port),
		"--security", "none", "--username", m.dc.User, "--sender", "buyer.example=CONTOSO"}, extra...)
}

// add, list, test and remove: a mailbox needs an existing client and
// valid settings; test logs in and lists the folders without printing or
// logging a password; remove says when the mailbox is gone.
func TestMailboxesAddListTestRemove(t *testing.T) {
	t.Parallel()
	m := newMailboxEnv(t)
	r := runEnv(t, m.env, "mailboxes", "add", "--id", "x", "--client", "nobody", "--host", "127.0.0.1", "--security", "none",
		"--username", "u", "--password-file", m.pwFile)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, `client "nobody"`)
	r = runEnv(t, m.env, "mailboxes", "add", "--id", "x", "--client", "acme", "--host", "imap.invalid", "--security", "none",
		"--username", "u", "--password-file", m.pwFile)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "imap.security none is allowed only for a loopback host")

	r = runEnv(t, m.env, m.addArgs("orders-acme", "--password-file", m.pwFile)...)
	require.Equal(t, 0, r.code, r.stderr)
	r = runEnv(t, m.env, m.addArgs("orders-wrong", "--password-env", "WRONG_IMAP_PASSWORD")...)
	require.Equal(t, 0, r.code, r.stderr)

	r = runEnv(t, m.env, "mailboxes", "list", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var rows []struct {
		ID, Client, Server, Folder, Source string
		Senders                            int
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rows))
	require.Len(t, rows, 2)
	require.Equal(t, "orders-acme", rows[0].ID)
	require.Equal(t, "127.0.0.1:"+strconv.Itoa(m.dc.Port)+" (none)", rows[0].Server)
	require.Equal(t, [3]string{"acme", "INBOX", "cli"}, [3]string{rows[0].Client, rows[0].Folder, rows[0].Source})
	require.Equal(t, 1, rows[0].Senders)

	r = runEnv(t, m.env, "mailboxes", "test", "orders-acme")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "mailbox orders-acme: logged in to 127.0.0.1:"+strconv.Itoa(m.dc.Port)+" as orders")
	require.Regexp(t, `folder\s+INBOX\s+yes\s+0\s+0`, r.stdout)
	require.Regexp(t, `processed_folder\s+Processed\s+no \(made at the first pass\)`, r.stdout)
	require.NotContains(t, r.stdout+r.stderr, m.dc.Password)

	r = runEnv(t, m.env, "mailboxes", "test", "orders-wrong")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "imap login 127.0.0.1:"+strconv.Itoa(m.dc.Port)+" as orders")
	require.NotContains(t, r.stdout+r.stderr, "not-it-42")

	r = runEnv(t, m.env, "mailboxes", "remove", "orders-wrong")
	require.Equal(t, 0, r.code, r.stderr)
	r = runEnv(t, m.env, "mailboxes", "remove", "orders-wrong")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "mailbox orders-wrong is not configured")
	r = runEnv(t, m.env, "mailboxes", "list")
	require.Equal(t, 0, r.code, r.stderr)
	require.NotContains(t, r.stdout, "orders-wrong")
	require.Contains(t, r.stdout, "orders-acme")
}

// replay makes the documents of a day's mails in the processed folder that
// have none, and a second replay makes nothing; status lists the mailbox.
func TestMailboxesReplayAndStatus(t *testing.T) {
	t.Parallel()
	m := newMailboxEnv(t)
	r := runEnv(t, m.env, m.addArgs("orders-acme", "--password-file", m.pwFile)...)
	require.Equal(t, 0, r.code, r.stderr)
	require.NoError(t, m.dc.Client(t).Create("Processed", nil).Wait())
	day := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	m.dc.AppendAt(t, "Processed", mailboxtest.Mail("jane@buyer.example", "r@buyer.example", "PO 9",
		mailboxtest.Part{ContentType: "application/pdf", Filename: "r.pdf", Body: []byte("%PDF-1.4\n% r\n%%EOF\n")}), day)

	r = runEnv(t, m.env, "mailboxes", "replay", "orders-acme", "--since", "2026-11-26")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "1 mails of 2026-11-26 to 2026-11-26: 1 documents made, 0 already recorded (skipped)")
	docs := storetest.QueryMap[string, string](t, m.pool, `SELECT message_id, filename || ' | ' || subject FROM documents`)
	require.Equal(t, map[string]string{"r@buyer.example#1": "r.pdf | PO 9"}, docs)
	r = runEnv(t, m.env, "mailboxes", "replay", "orders-acme", "--since", "2026-11-26", "--until", "2026-11-27")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "1 mails of 2026-11-26 to 2026-11-27: 0 documents made, 1 already recorded (skipped)")
	r = runEnv(t, m.env, "mailboxes", "replay", "orders-acme", "--since", "2026-11-27", "--until", "2026-11-26")
	require.Equal(t, 2, r.code)

	r = runEnv(t, m.env, "status", "--json")
	var rep struct {
		Mailboxes []struct {
			ID, Client, Health string
		} `json:"mailboxes"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep), r.stdout)
	require.Equal(t, []struct{ ID, Client, Health string }{{"orders-acme", "acme", "never"}}, rep.Mailboxes)
	r = runEnv(t, m.env, "status")
	require.True(t, strings.Contains(r.stdout, "orders-acme") && strings.Contains(r.stdout, "never"), r.stdout)
}
