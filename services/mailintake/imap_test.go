package mailintake_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/mailbox"
	"github.com/docintake/docintake/services/mailintake"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
)

// runUntil runs the intake in the background and returns a channel of
// its passes' errors and a stop function that waits for Run.
func (e env) runUntil(t *testing.T) (<-chan error, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	passes := make(chan error, 100)
	hooks := mailintake.Hooks{AfterPass: func(_ string, err error) {
		select {
		case passes <- err:
		default:
		}
	}}
	done := make(chan error, 1)
	go func() {
		done <- mailintake.Run(ctx, mailintake.Deps{Mailboxes: []mailbox.Mailbox{e.mb}, Store: e.st, Intake: e.svc,
			Logger: zaptest.NewLogger(t), Registry: prometheus.NewRegistry(), Hooks: hooks, Tuning: e.tune})
	}()
	return passes, func() { cancel(); <-done }
}

// waitDocuments waits until the client has n documents (a generous
// deadline: the machine may be loaded).
func (e env) waitDocuments(t *testing.T, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return len(e.documents(t)) >= n }, 2*time.Minute, 50*time.Millisecond)
}

// A mail delivered while the poller waits in IDLE is read at once: the
// poll interval is an hour, so only the server's EXISTS can bring it in
// before the deadline.
func TestIdlePicksUpNewMail(t *testing.T) {
	e := setup(t)
	e.tune = mailintake.Tuning{PollInterval: time.Hour}
	passes, stop := e.runUntil(t)
	defer stop()
	require.NoError(t, <-passes) // the empty folder read; IDLE follows
	e.dc.appendMail(t, "INBOX", mailBytes("jane@buyer.example", "idle-1@buyer.example", "PO idle", part{"application/pdf", "a.pdf", pdfBytes("a")}))
	e.waitDocuments(t, 1)
	require.Equal(t, map[string]string{"idle-1@buyer.example#1": "a.pdf | PO idle | CONTOSO"}, e.documents(t))
	require.Eventually(t, func() bool { return e.dc.count(t, "Processed") == 1 }, 2*time.Minute, 50*time.Millisecond)
}

// oauthFake is an OAuth2 token endpoint (client credentials, RFC 6749
// 4.4) and an introspection endpoint (RFC 7662) on loopback: Dovecot's
// oauth2 passdb asks the latter whether an XOAUTH2 token is valid.
type oauthFake struct {
	URL, ClientID, Secret, User string
	mu                          sync.Mutex
	valid                       map[string]bool
	issued                      int
}

func newOAuthFake(t *testing.T, user string) *oauthFake {
	f := &oauthFake{ClientID: "imap-app", Secret: "s3cret-oauth-W4", User: user, valid: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		if r.PostForm.Get("grant_type") != "client_credentials" || r.PostForm.Get("client_id") != f.ClientID ||
			r.PostForm.Get("client_secret") != f.Secret || r.PostForm.Get("scope") != "https://outlook.office365.com/.default" {
			graphJSON(w, 401, map[string]string{"error": "invalid_client", "error_description": "AADSTS7000215: Invalid client secret provided."})
			return
		}
		tok := f.issue()
		graphJSON(w, 200, map[string]any{"token_type": "Bearer", "expires_in": 3599, "access_token": tok})
	})
	mux.HandleFunc("POST /introspect", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		_ = r.ParseForm()
		if !f.valid[r.PostForm.Get("token")] {
			_ = json.NewEncoder(w).Encode(map[string]any{"active": false})
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"active": true, "username": f.User})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

// issue returns a new valid token, as if fetched by another program.
func (f *oauthFake) issue() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.issued++
	tok := fmt.Sprintf("imap-access-token-%d", f.issued)
	f.valid[tok] = true
	return tok
}

func (f *oauthFake) tokensIssued() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.issued
}

// dovecotConf is Dovecot's oauth2 passdb for XOAUTH2, asking the fake's
// introspection endpoint (wiki: PasswordDatabase/oauth2).
func (f *oauthFake) dovecotConf(dir string) string {
	ext := filepath.Join(dir, "dovecot-oauth2.conf.ext")
	body := fmt.Sprintf("introspection_mode = post\nintrospection_url = %s/introspect\nforce_introspection = yes\n"+
		"username_attribute = username\nactive_attribute = active\nactive_value = true\n", f.URL)
	if err := os.WriteFile(ext, []byte(body), 0o644); err != nil {
		panic(err)
	}
	return fmt.Sprintf("auth_mechanisms = plain login xoauth2\npassdb {\n  driver = oauth2\n  mechanisms = xoauth2\n  args = %s\n}\n", ext)
}

// An IMAP mailbox logs in with SASL XOAUTH2 and a token fetched by client
// credentials, against Dovecot's oauth2 passdb. A token the server stops
// accepting fails one pass and is dropped: the next pass fetches a new
// one and reads the mail.
func TestXOAUTH2AgainstDovecot(t *testing.T) {
	oauth := newOAuthFake(t, "orders")
	e := intakeEnv(t)
	e.dc = startDovecotWith(t, oauth.dovecotConf)
	secretFile := filepath.Join(t.TempDir(), "client-secret")
	require.NoError(t, os.WriteFile(secretFile, []byte(oauth.Secret), 0o600))
	e.mb = mailbox.Mailbox{ID: "orders-acme", Client: "acme", Folder: "INBOX", ProcessedFolder: "Processed", ErrorFolder: "Not processed",
		IMAP: mailbox.IMAP{Host: "127.0.0.1", Port: e.dc.Port, Security: mailbox.SecurityNone, Username: e.dc.User,
			Auth: mailbox.AuthXOAUTH2, OAuth2: &mailbox.OAuth2{TokenURL: oauth.URL + "/token", ClientID: oauth.ClientID,
				ClientSecretFile: secretFile, Scope: "https://outlook.office365.com/.default"}},
		Senders: map[string]string{"buyer.example": "CONTOSO"}}
	require.NoError(t, e.mb.Validate())
	e.dc.appendMail(t, "INBOX", mailBytes("jane@buyer.example", "x1@buyer.example", "PO 1", part{"application/pdf", "a.pdf", pdfBytes("a")}))
	passErr, _ := e.pass(t, mailintake.Hooks{})
	require.NoError(t, passErr)
	require.Equal(t, map[string]string{"x1@buyer.example#1": "a.pdf | PO 1 | CONTOSO"}, e.documents(t))

	require.Equal(t, 1, oauth.tokensIssued())

	// A token file that something else keeps fresh, read at each login:
	// a refused token fails the pass with the server's reason, and the
	// rotated file is used at the next login, without a restart.
	tokenFile := filepath.Join(t.TempDir(), "access-token")
	require.NoError(t, os.WriteFile(tokenFile, []byte("revoked-token-Q8\n"), 0o600))
	e.mb.IMAP.OAuth2 = &mailbox.OAuth2{TokenFile: tokenFile}
	require.NoError(t, e.mb.Validate())
	e.dc.appendMail(t, "INBOX", mailBytes("jane@buyer.example", "x2@buyer.example", "PO 2", part{"application/pdf", "b.pdf", pdfBytes("b")}))
	passErr, _ = e.pass(t, mailintake.Hooks{})
	require.ErrorContains(t, passErr, "xoauth2")
	require.NotContains(t, passErr.Error(), "revoked-token-Q8")
	require.NoError(t, os.WriteFile(tokenFile, []byte(oauth.issue()+"\n"), 0o600))
	passErr, _ = e.pass(t, mailintake.Hooks{})
	require.NoError(t, passErr)
	require.Equal(t, "b.pdf | PO 2 | CONTOSO", e.documents(t)["x2@buyer.example#1"])
	require.Equal(t, 0, e.dc.count(t, "INBOX"))
}
