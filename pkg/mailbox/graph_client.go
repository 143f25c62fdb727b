package mailbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"
)

// graphClient calls Microsoft Graph for one mailbox: the bearer token of
// client credentials, throttling (429, 503, 504) waited out as Retry-After
// says (else with a doubling backoff), a refused token renewed once.
type graphClient struct {
	base   string // DefaultGraphBaseURL or base_url, no trailing slash
	user   string // path segment of /users/{user}
	tokens *tokenSource
	http   *http.Client
	log    *zap.Logger
	// The throttling bounds (graphRetry outside tests).
	retry graphRetry
}

// graphRetry bounds the waits of throttled requests.
type graphRetry struct {
	Attempts      int           // tries of one request
	FirstBackoff  time.Duration // without Retry-After; doubles per try
	MaxRetryAfter time.Duration // longest wait a server may ask for
}

var defaultGraphRetry = graphRetry{Attempts: 8, FirstBackoff: time.Second, MaxRetryAfter: 5 * time.Minute}

// Bounds of what one answer may hold: JSON (a page, an attachment with
// its base64 content up to graphInlineBytes) and a raw $value.
const (
	graphMaxJSON     = 32 << 20
	graphInlineBytes = 3 << 20 // larger file attachments are read raw through /$value
)

func newGraphClient(g Graph, getenv func(string) string, log *zap.Logger) *graphClient {
	base := strings.TrimRight(g.BaseURL, "/")
	if base == "" {
		base = DefaultGraphBaseURL
	}
	tokenURL := g.TokenURL
	if tokenURL == "" {
		tokenURL = fmt.Sprintf(entraTokenURL, url.PathEscape(g.TenantID))
	}
	hc := newHTTPClient()
	return &graphClient{base: base, user: url.PathEscape(g.User), http: hc, log: log, retry: defaultGraphRetry,
		tokens: &tokenSource{url: tokenURL, clientID: g.ClientID, scope: graphScope, getenv: getenv, http: hc,
			clientSecret: secret{File: g.ClientSecretFile, Env: g.ClientSecretEnv}}}
}

// userURL is the URL of path under the mailbox's user.
func (c *graphClient) userURL(path string) string { return c.base + "/users/" + c.user + path }

// graphError is an answer of Graph other than success, with the code and
// message of its error body.
type graphError struct {
	Method, URL string
	Status      int
	Code        string
	Message     string
}

func (e *graphError) Error() string {
	return fmt.Sprintf("graph %s %s: HTTP %d %s: %s", e.Method, e.URL, e.Status, e.Code, e.Message)
}

func graphStatus(err error) int {
	var ge *graphError
	if errors.As(err, &ge) {
		return ge.Status
	}
	return 0
}

// own tells whether link (a nextLink or deltaLink from an answer) points
// below the configured base URL: the bearer token is sent nowhere else.
func (c *graphClient) own(link string) bool {
	return strings.HasPrefix(link, c.base+"/")
}

// call sends one request and returns a 2xx answer, whose body the caller
// closes; any other answer is a *graphError.
func (c *graphClient) call(ctx context.Context, method, rawURL string, body any) (*http.Response, error) {
	if !c.own(rawURL) {
		return nil, fmt.Errorf("graph: refusing %s, which is not below base_url %s", redactURL(rawURL), c.base)
	}
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return nil, fmt.Errorf("graph %s: %w", method, err)
		}
	}
	renewed := false
	for try := 1; ; try++ {
		resp, tok, err := c.send(ctx, method, rawURL, payload)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode/100 == 2 {
			return resp, nil
		}
		gerr := readGraphError(method, rawURL, resp)
		switch {
		case resp.StatusCode == http.StatusUnauthorized && !renewed:
			// An expired or revoked token: one more try with a new one.
			renewed = true
			c.tokens.invalidate(tok)
			continue
		case throttled(resp.StatusCode) && try < c.retry.Attempts:
			wait := c.retry.wait(resp.Header.Get("Retry-After"), try)
			c.log.Info("graph throttled", zap.Int("status", resp.StatusCode), zap.String("code", gerr.Code), zap.Duration("retry_in", wait))
			if !sleep(ctx, wait) {
				return nil, ctx.Err()
			}
			continue
		}
		return nil, gerr
	}
}

// send makes one HTTP request with a valid bearer token, which it
// returns (to be dropped if refused).
func (c *graphClient) send(ctx context.Context, method, rawURL string, payload []byte) (*http.Response, string, error) {
	tok, err := c.tokens.get(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("graph token: %w", err)
	}
	var rd io.Reader
	if payload != nil {
		rd = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, rawURL, rd)
	if err != nil {
		return nil, "", fmt.Errorf("graph %s: %w", method, err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Accept", "application/json")
	// Immutable ids stay the same when a message is moved, so the id a
	// mail was listed with still names it after a crash mid-move; the page
	// size applies to the delta pages (the server may send fewer).
	req.Header.Set("Prefer", `IdType="ImmutableId", odata.maxpagesize=50`)
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, "", fmt.Errorf("graph %s %s: %w", method, redactURL(rawURL), err)
	}
	return resp, tok, nil
}

func throttled(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable || status == http.StatusGatewayTimeout
}

// wait is how long to wait before try+1: the server's Retry-After
// (seconds, or an HTTP date), bounded, else a doubling backoff.
func (r graphRetry) wait(retryAfter string, try int) time.Duration {
	if s, err := strconv.Atoi(strings.TrimSpace(retryAfter)); err == nil && s >= 0 {
		return min(time.Duration(s)*time.Second, r.MaxRetryAfter)
	}
	if t, err := http.ParseTime(retryAfter); err == nil {
		return min(max(time.Until(t), 0), r.MaxRetryAfter)
	}
	return Backoff(r.FirstBackoff, r.MaxRetryAfter, try-1)
}

// readGraphError reads Graph's {"error": {"code", "message"}} and closes
// the body.
func readGraphError(method, rawURL string, resp *http.Response) *graphError {
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var body struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	_ = json.Unmarshal(b, &body)
	msg := body.Error.Message
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	return &graphError{Method: method, URL: redactURL(rawURL), Status: resp.StatusCode, Code: body.Error.Code, Message: msg}
}

// getJSON GETs rawURL into v.
func (c *graphClient) getJSON(ctx context.Context, rawURL string, v any) error {
	return c.callJSON(ctx, http.MethodGet, rawURL, nil, v)
}

// callJSON sends body and decodes the answer into v (when not nil).
func (c *graphClient) callJSON(ctx context.Context, method, rawURL string, body, v any) error {
	resp, err := c.call(ctx, method, rawURL, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := readAtMost(resp.Body, graphMaxJSON)
	if err != nil {
		return fmt.Errorf("graph %s %s: %w", method, redactURL(rawURL), err)
	}
	if v == nil {
		return nil
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("graph %s %s: the answer is no JSON of the expected shape: %w", method, redactURL(rawURL), err)
	}
	return nil
}

// getRaw GETs rawURL's bytes (a /$value), at most limit of them.
func (c *graphClient) getRaw(ctx context.Context, rawURL string, limit int64) ([]byte, error) {
	resp, err := c.call(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := readAtMost(resp.Body, limit)
	if err != nil {
		return nil, fmt.Errorf("graph GET %s: %w", redactURL(rawURL), err)
	}
	return b, nil
}

// readAtMost reads r to its end, failing beyond limit bytes.
func readAtMost(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("the answer is larger than %d bytes", limit)
	}
	return b, nil
}
