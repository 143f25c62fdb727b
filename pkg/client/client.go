package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Options configure a Client. The zero value is usable.
type Options struct {
	// HTTPClient sends the requests; nil uses a client without an overall
	// timeout (an upload of a large file may take long; cancel through the
	// context instead).
	HTTPClient *http.Client
	// MaxAttempts bounds the tries of one call: the first one plus retries
	// after 429, 503 and connection errors. 0 means 6; 1 disables retries.
	MaxAttempts int
	// MaxRetryWait caps one wait between attempts, including a server's
	// Retry-After. 0 means 2 minutes.
	MaxRetryWait time.Duration
	// UserAgent is sent on every request; empty sends "docintake-go-client/1".
	UserAgent string
}

// Client calls the docintake API of one client (one access token). It is
// safe for concurrent use.
type Client struct {
	base    string
	token   string
	http    *http.Client
	tries   int
	maxWait time.Duration
	ua      string
	// backoff is the wait before retry n (1-based) after a connection error
	// or a 429/503 without Retry-After; tests shorten it.
	backoff func(n int) time.Duration
}

// New returns a client for the API at baseURL (for example
// "http://127.0.0.1:8080", including INTAKE_BASE_PATH when the service has
// one) authenticating with the access token.
func New(baseURL, token string, opts *Options) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("docintake client: base URL %q must be an absolute http(s) URL", baseURL)
	}
	if token == "" {
		return nil, errors.New("docintake client: access token is empty")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	c := &Client{base: strings.TrimRight(baseURL, "/"), token: token, http: o.HTTPClient,
		tries: o.MaxAttempts, maxWait: o.MaxRetryWait, ua: o.UserAgent, backoff: expBackoff}
	if c.http == nil {
		c.http = &http.Client{}
	}
	if c.tries <= 0 {
		c.tries = 6
	}
	if c.maxWait <= 0 {
		c.maxWait = 2 * time.Minute
	}
	if c.ua == "" {
		c.ua = "docintake-go-client/1"
	}
	return c, nil
}

// expBackoff is 0.5s, 1s, 2s, … capped at 30s, each ±25% so that many
// clients failing together do not come back together.
func expBackoff(n int) time.Duration {
	d := min(500*time.Millisecond<<min(n-1, 6), 30*time.Second)
	return d*3/4 + rand.N(d/2+1)
}

// Error is an error answer of the API. Code is the API's stable
// machine-readable code (see the Code… constants); Details names the
// fields of a validation_failed answer.
type Error struct {
	StatusCode int
	Code       string
	Message    string
	Details    map[string]string
	// RetryAfter is the server's Retry-After on 429/503, 0 if none.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "docintake: %d %s", e.StatusCode, e.Code)
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	for _, k := range sortedKeys(e.Details) {
		fmt.Fprintf(&b, "; %s: %s", k, e.Details[k])
	}
	return b.String()
}

// Error codes of the API (the code field of every error body).
const (
	CodeUnauthorized           = "unauthorized"
	CodeValidationFailed       = "validation_failed"
	CodeNotAPDF                = "not_a_pdf"
	CodeTemplateNotFound       = "template_not_found"
	CodeDuplicateMessageID     = "duplicate_message_id"
	CodePayloadTooLarge        = "payload_too_large"
	CodeUnsupportedContentType = "unsupported_content_type"
	CodeDocumentNotFound       = "document_not_found"
	CodeNotFound               = "not_found"
	CodeMethodNotAllowed       = "method_not_allowed"
	CodeUnavailable            = "unavailable"
	CodeInternalError          = "internal_error"
	// CodeRateLimited: the client's upload rate is exhausted (429 with
	// Retry-After; Upload and UploadJSON wait and retry).
	CodeRateLimited = "rate_limited"
	// Codes of the template endpoints and of reprocess.
	CodeTemplateInvalid  = "template_invalid"
	CodeSamplesFailed    = "samples_failed"
	CodeTemplateConflict = "template_conflict"
	CodeConflict         = "conflict"
	// CodeTemplateNameReserved: a template may not be named generic, the
	// built-in reader's name (TemplateGeneric).
	CodeTemplateNameReserved = "template_name_reserved"
	// CodeTemplateNameInvalid: a template name is 1 to 100 ASCII letters,
	// digits, '-', '_' or '.', starting with a letter or digit.
	CodeTemplateNameInvalid = "template_name_invalid"
	// Limits on a client's templates (docs/templates.md): a template or
	// its samples over their size (413), one template too many, or more
	// or longer regexes than a template may hold (422).
	CodeTemplateTooLarge        = "template_too_large"
	CodeSamplesTooLarge         = "samples_too_large"
	CodeTemplateLimitReached    = "template_limit_reached"
	CodeTemplateTooManyPatterns = "template_too_many_patterns"
	CodeTemplatePatternsTooLong = "template_patterns_too_long"
	// Codes of the price list endpoints (docs/orders.md): a CSV with
	// problems (details per line and column), a buyer that is no party id,
	// no such list, a list over 16 MiB.
	CodePriceListInvalid      = "price_list_invalid"
	CodePriceListBuyerInvalid = "price_list_buyer_invalid"
	CodePriceListNotFound     = "price_list_not_found"
	CodePriceListTooLarge     = "price_list_too_large"
)

// ErrorCode returns the API code of err (an *Error anywhere in its chain),
// or "" when err is not an API answer (a connection error, a bad file).
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// request is one API call; body builds the request body afresh for every
// attempt (nil: no body) and returns errNoRetry when it cannot.
type request struct {
	method, path string
	body         func(attempt int) (io.ReadCloser, string, error)
}

// errNoRetry wraps the error of a body that cannot be sent again (a
// non-seekable reader): the call ends with the previous attempt's error.
var errNoRetry = errors.New("request body cannot be sent again")

// bodyError marks an error reading the caller's file: not the server's
// fault, so not retried.
type bodyError struct{ err error }

func (e *bodyError) Error() string { return e.err.Error() }
func (e *bodyError) Unwrap() error { return e.err }

// do runs r with retries and decodes a 2xx JSON answer into out.
func (c *Client) do(ctx context.Context, r request, wantStatus int, out any) error {
	var last error
	for attempt := 1; ; attempt++ {
		wait, err := c.once(ctx, r, attempt, wantStatus, out)
		if err == nil {
			return nil
		}
		if errors.Is(err, errNoRetry) {
			return last
		}
		last = err
		if wait < 0 || attempt >= c.tries {
			return err
		}
		t := time.NewTimer(min(wait, c.maxWait))
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (gave up waiting to retry: %w)", err, ctx.Err())
		case <-t.C:
		}
	}
}

// once makes one attempt. wait is how long to wait before a retry, or -1
// when the error is final.
func (c *Client) once(ctx context.Context, r request, attempt, wantStatus int, out any) (wait time.Duration, err error) {
	var body io.ReadCloser
	ctype := ""
	if r.body != nil {
		if body, ctype, err = r.body(attempt); err != nil {
			return -1, err
		}
	}
	req, err := http.NewRequestWithContext(ctx, r.method, c.base+r.path, body)
	if err != nil {
		if body != nil {
			body.Close()
		}
		return -1, fmt.Errorf("docintake %s %s: %w", r.method, r.path, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("User-Agent", c.ua)
	req.Header.Set("Accept", "application/json")
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	res, err := c.http.Do(req)
	if err != nil {
		err = fmt.Errorf("docintake %s %s: %w", r.method, r.path, err)
		var be *bodyError
		if ctx.Err() != nil || errors.As(err, &be) {
			return -1, err
		}
		return c.backoff(attempt), err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 4<<20))
	if err != nil {
		return c.backoff(attempt), fmt.Errorf("docintake %s %s: read answer: %w", r.method, r.path, err)
	}
	if res.StatusCode == wantStatus {
		if err := json.Unmarshal(raw, out); err != nil {
			return -1, fmt.Errorf("docintake %s %s: decode answer: %w", r.method, r.path, err)
		}
		return 0, nil
	}
	apiErr := &Error{StatusCode: res.StatusCode}
	if json.Unmarshal(raw, apiErr) != nil || apiErr.Code == "" {
		apiErr.Code = strings.ReplaceAll(strings.ToLower(http.StatusText(res.StatusCode)), " ", "_")
		apiErr.Message = strings.TrimSpace(string(raw[:min(len(raw), 200)]))
	}
	if res.StatusCode != http.StatusTooManyRequests && res.StatusCode != http.StatusServiceUnavailable {
		return -1, apiErr
	}
	wait = c.backoff(attempt)
	if d, ok := parseRetryAfter(res.Header.Get("Retry-After"), time.Now()); ok {
		apiErr.RetryAfter, wait = d, d
	}
	return wait, apiErr
}

// UnmarshalJSON reads the API's error body {"code","message","details"}.
func (e *Error) UnmarshalJSON(b []byte) error {
	var v struct {
		Code    string            `json:"code"`
		Message string            `json:"message"`
		Details map[string]string `json:"details"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	e.Code, e.Message, e.Details = v.Code, v.Message, v.Details
	return nil
}

// parseRetryAfter reads delay-seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil && secs >= 0 {
		return time.Duration(min(secs, 86400)) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}
