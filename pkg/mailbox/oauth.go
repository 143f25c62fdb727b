package mailbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// tokenSource hands out OAuth2 access tokens: one read from a file or a
// variable at each use (something else keeps it fresh), or one fetched
// from a token endpoint (client credentials or a refresh token) and kept
// until shortly before it expires. Secrets and tokens appear in no error
// and no log.
type tokenSource struct {
	static       secret // a ready token; the rest is unused when set
	url          string
	clientID     string
	clientSecret secret
	refresh      secret // set: grant refresh_token; else client_credentials
	scope        string
	getenv       func(string) string
	http         *http.Client

	mu      sync.Mutex
	token   string
	renewAt time.Time
}

// newIMAPTokens is the token source of an XOAUTH2 mailbox; nil for a
// password login.
func newIMAPTokens(c IMAP, getenv func(string) string) *tokenSource {
	if c.Auth != AuthXOAUTH2 || c.OAuth2 == nil {
		return nil
	}
	o := c.OAuth2
	t := &tokenSource{
		static: secret{File: o.TokenFile, Env: o.TokenEnv}, url: o.TokenURL, clientID: o.ClientID,
		clientSecret: secret{File: o.ClientSecretFile, Env: o.ClientSecretEnv},
		refresh:      secret{File: o.RefreshTokenFile, Env: o.RefreshTokenEnv}, scope: o.Scope,
		getenv: getenv, http: newHTTPClient(),
	}
	if t.url == "" && o.TenantID != "" {
		t.url = fmt.Sprintf(entraTokenURL, url.PathEscape(o.TenantID))
	}
	if t.scope == "" && !t.refresh.set() {
		t.scope = exchangeIMAPScope
	}
	return t
}

// newHTTPClient is the client of token endpoints and Graph: it follows no
// redirect, so neither a secret in a form nor a bearer token is ever sent
// to a host it was not configured for.
func newHTTPClient() *http.Client {
	return &http.Client{
		Timeout:       5 * time.Minute, // a 64 MiB attachment on a slow link
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// get returns a valid access token.
func (t *tokenSource) get(ctx context.Context) (string, error) {
	if t.static.set() {
		return t.static.read("oauth2.token", t.getenv)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.token != "" && time.Now().Before(t.renewAt) {
		return t.token, nil
	}
	tok, life, err := t.fetch(ctx)
	if err != nil {
		return "", err
	}
	// Renew ahead of expiry: 5 minutes, or half of a short lifetime.
	t.token, t.renewAt = tok, time.Now().Add(life-min(5*time.Minute, life/2))
	return tok, nil
}

// invalidate forgets tok after a server refused it (revoked, or expired
// early); the next get fetches a new one.
func (t *tokenSource) invalidate(tok string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.token == tok {
		t.token = ""
	}
}

// tokenResponse is RFC 6749's answer, success (5.1) or error (5.2).
type tokenResponse struct {
	AccessToken string          `json:"access_token"`
	TokenType   string          `json:"token_type"`
	ExpiresIn   json.RawMessage `json:"expires_in"` // a number; some endpoints send a string
	Error       string          `json:"error"`
	Description string          `json:"error_description"`
}

// fetch asks the token endpoint for a token and its lifetime.
func (t *tokenSource) fetch(ctx context.Context) (string, time.Duration, error) {
	form, err := t.form()
	if err != nil {
		return "", 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url, strings.NewReader(form.Encode()))
	if err != nil {
		return "", 0, fmt.Errorf("token endpoint: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := t.http.Do(req)
	if err != nil {
		return "", 0, fmt.Errorf("token endpoint %s: %w", redactURL(t.url), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", 0, fmt.Errorf("token endpoint %s: %w", redactURL(t.url), err)
	}
	var tr tokenResponse
	jerr := json.Unmarshal(body, &tr)
	if resp.StatusCode != http.StatusOK || jerr != nil || tr.AccessToken == "" {
		return "", 0, fmt.Errorf("token endpoint %s: HTTP %d: %s", redactURL(t.url), resp.StatusCode, tr.explain())
	}
	if tr.TokenType != "" && !strings.EqualFold(tr.TokenType, "bearer") {
		return "", 0, fmt.Errorf("token endpoint %s: token type %q is not Bearer", redactURL(t.url), tr.TokenType)
	}
	return tr.AccessToken, tr.lifetime(), nil
}

// form is the token request: client credentials, or a refresh token.
func (t *tokenSource) form() (url.Values, error) {
	f := url.Values{"client_id": {t.clientID}}
	if t.scope != "" {
		f.Set("scope", t.scope)
	}
	if t.clientSecret.set() {
		s, err := t.clientSecret.read("oauth2.client_secret", t.getenv)
		if err != nil {
			return nil, err
		}
		f.Set("client_secret", s)
	}
	if !t.refresh.set() {
		f.Set("grant_type", "client_credentials")
		return f, nil
	}
	r, err := t.refresh.read("oauth2.refresh_token", t.getenv)
	if err != nil {
		return nil, err
	}
	f.Set("grant_type", "refresh_token")
	f.Set("refresh_token", r)
	return f, nil
}

// explain is the endpoint's error code and description (RFC 6749 5.2),
// which carry no secret; the rest of the body is not repeated.
func (tr tokenResponse) explain() string {
	if tr.Error == "" {
		return "no access token in the answer"
	}
	d := tr.Description
	if len(d) > 300 {
		d = d[:300] + "…"
	}
	return strings.TrimSpace(tr.Error + " " + d)
}

// lifetime is expires_in, or an hour when the endpoint leaves it out.
func (tr tokenResponse) lifetime() time.Duration {
	s := strings.Trim(string(tr.ExpiresIn), `"`)
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return time.Hour
	}
	return time.Duration(n) * time.Second
}

// redactURL drops a URL's query, where a misconfigured one might carry a
// secret, for errors.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(invalid URL)"
	}
	u.RawQuery, u.User, u.Fragment = "", nil, ""
	return u.String()
}

// xoauth2 is the SASL XOAUTH2 mechanism of Gmail and Microsoft 365: the
// user and the bearer token in the initial response. A refusal comes as
// a challenge holding a JSON error, answered with an empty response, after
// which the server ends the exchange with NO.
type xoauth2 struct {
	user, token string
	serverError []byte
}

func (x *xoauth2) Start() (string, []byte, error) {
	return "XOAUTH2", []byte("user=" + x.user + "\x01auth=Bearer " + x.token + "\x01\x01"), nil
}

func (x *xoauth2) Next(challenge []byte) ([]byte, error) {
	x.serverError = challenge
	return []byte{}, nil
}

// explain adds the server's JSON error (status, scope: no secret) to the
// refusal.
func (x *xoauth2) explain(err error) error {
	if len(x.serverError) == 0 {
		return fmt.Errorf("xoauth2: %w", err)
	}
	var e struct {
		Status string `json:"status"`
		Scope  string `json:"scope"`
	}
	if json.Unmarshal(bytes.TrimSpace(x.serverError), &e) != nil || e.Status == "" {
		return fmt.Errorf("xoauth2: %w", err)
	}
	// The server's final answer to the exchange's empty response (a NO,
	// or Dovecot's BAD for go-imap's "=") says less than the challenge.
	return fmt.Errorf("xoauth2: the server refused the access token (status %s, scope %q)", e.Status, e.Scope)
}
