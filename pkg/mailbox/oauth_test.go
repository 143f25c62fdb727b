package mailbox

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// tokenEndpoint records the forms it was sent and answers with answer.
type tokenEndpoint struct {
	mu    sync.Mutex
	forms []url.Values
}

func newTokenEndpoint(t *testing.T, status int, answer string) (*tokenEndpoint, string) {
	te := &tokenEndpoint{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		te.mu.Lock()
		te.forms = append(te.forms, r.PostForm)
		te.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(answer))
	}))
	t.Cleanup(srv.Close)
	return te, srv.URL + "/token"
}

func secretFile(t *testing.T, value string) string {
	p := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(p, []byte(value+"\n"), 0o600))
	return p
}

// Client credentials (RFC 6749 4.4): one request for many logins while the
// token lives, Exchange's scope by default, a new request once a server
// refused the token.
func TestTokenSourceClientCredentials(t *testing.T) {
	te, tokenURL := newTokenEndpoint(t, 200, `{"token_type":"Bearer","expires_in":"3599","access_token":"tok-1"}`)
	ts := newIMAPTokens(IMAP{Auth: AuthXOAUTH2, OAuth2: &OAuth2{TokenURL: tokenURL, ClientID: "app", ClientSecretFile: secretFile(t, "sec")}}, os.Getenv)
	for range 2 {
		tok, err := ts.get(t.Context())
		require.NoError(t, err)
		require.Equal(t, "tok-1", tok)
	}
	require.Len(t, te.forms, 1)
	require.Equal(t, url.Values{"grant_type": {"client_credentials"}, "client_id": {"app"}, "client_secret": {"sec"},
		"scope": {"https://outlook.office365.com/.default"}}, te.forms[0])
	ts.invalidate("tok-1")
	_, err := ts.get(t.Context())
	require.NoError(t, err)
	require.Len(t, te.forms, 2)
}

// A refresh token (Gmail) is sent with the refresh_token grant; the
// endpoint's error code reaches the error, the secrets do not.
func TestTokenSourceRefreshTokenError(t *testing.T) {
	te, tokenURL := newTokenEndpoint(t, 400, `{"error":"invalid_grant","error_description":"Token has been expired or revoked."}`)
	getenv := func(k string) string { return map[string]string{"REFRESH": "1//refresh-Zt5"}[k] }
	ts := newIMAPTokens(IMAP{Auth: AuthXOAUTH2, OAuth2: &OAuth2{TokenURL: tokenURL + "?key=abc", ClientID: "app.apps",
		ClientSecretFile: secretFile(t, "gsec-Y2"), RefreshTokenEnv: "REFRESH"}}, getenv)
	_, err := ts.get(t.Context())
	require.ErrorContains(t, err, "HTTP 400: invalid_grant Token has been expired or revoked.")
	for _, s := range []string{"1//refresh-Zt5", "gsec-Y2", "key=abc"} {
		require.NotContains(t, err.Error(), s)
	}
	require.Equal(t, url.Values{"grant_type": {"refresh_token"}, "client_id": {"app.apps"}, "client_secret": {"gsec-Y2"},
		"refresh_token": {"1//refresh-Zt5"}}, te.forms[0])
}

// A token file is read at each use: a rotated token needs no restart.
func TestTokenSourceFile(t *testing.T) {
	p := secretFile(t, "first")
	ts := newIMAPTokens(IMAP{Auth: AuthXOAUTH2, OAuth2: &OAuth2{TokenFile: p}}, os.Getenv)
	tok, err := ts.get(t.Context())
	require.NoError(t, err)
	require.Equal(t, "first", tok)
	require.NoError(t, os.WriteFile(p, []byte("second"), 0o600))
	tok, _ = ts.get(t.Context())
	require.Equal(t, "second", tok)
}

// XOAUTH2's initial response is Google's and Microsoft's documented
// "user=" U ^A "auth=Bearer " T ^A ^A.
func TestXOAUTH2InitialResponse(t *testing.T) {
	mech, ir, err := (&xoauth2{user: "orders@acme.example", token: "ya29.tok"}).Start()
	require.NoError(t, err)
	require.Equal(t, "XOAUTH2", mech)
	require.Equal(t, "user=orders@acme.example\x01auth=Bearer ya29.tok\x01\x01", string(ir))
}

// Retry-After is honoured in seconds or as a date, within the bound;
// without it the wait doubles.
func TestGraphRetryWait(t *testing.T) {
	r := graphRetry{Attempts: 8, FirstBackoff: time.Second, MaxRetryAfter: time.Minute}
	require.Equal(t, 7*time.Second, r.wait("7", 1))
	require.Equal(t, time.Minute, r.wait("3600", 1))
	require.Equal(t, time.Second, r.wait("", 1))
	require.Equal(t, 4*time.Second, r.wait("", 3))
	require.Equal(t, time.Minute, r.wait("soon", 20))
	// A date: the time left until it, bounded by the clock read around the
	// call (no allowance for a slow machine needed), and never below 0 or
	// above the bound.
	at := time.Now().Add(30 * time.Second).Truncate(time.Second) // an HTTP date has whole seconds
	before := time.Now()
	d := r.wait(at.UTC().Format(http.TimeFormat), 1)
	after := time.Now()
	require.LessOrEqual(t, d, at.Sub(before))
	require.GreaterOrEqual(t, d, at.Sub(after))
	require.Zero(t, r.wait(time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat), 1), "a date passed")
	require.Equal(t, time.Minute, r.wait(time.Now().Add(time.Hour).UTC().Format(http.TimeFormat), 1))
}
