// Package webhook is docintake's HTTP client for client webhooks: one POST
// per attempt, signed the Standard Webhooks way, through a dialer that
// refuses addresses a webhook URL must never reach (SSRF), never following
// redirects.
//
// It knows nothing about documents or retries: Send reports what happened
// (status code, latency, a prefix of the body, Retry-After) and the caller
// decides.
package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// DefaultTimeout bounds an attempt of a Client whose Options name no
// timeout (INTAKE_WEBHOOK_TIMEOUT's default).
const DefaultTimeout = 15 * time.Second

// Options configure a Client.
type Options struct {
	// Timeout bounds one attempt: connect, send, response headers and the
	// body prefix (INTAKE_WEBHOOK_TIMEOUT). Defaults to DefaultTimeout.
	Timeout time.Duration
	// AllowPrivate permits loopback and private (RFC 1918, ULA, CGNAT)
	// addresses, for development and tests (INTAKE_WEBHOOK_ALLOW_PRIVATE).
	// Link-local and cloud metadata addresses are refused regardless.
	AllowPrivate bool
	// UserAgent is sent on every call. Defaults to "docintake-webhook/1".
	UserAgent string
}

// Client sends webhook calls. It is safe for concurrent use.
type Client struct {
	http    *http.Client
	tr      *http.Transport
	timeout time.Duration
	ua      string
}

// New returns a client with its own connection pool.
func New(opts Options) *Client {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.UserAgent == "" {
		opts.UserAgent = "docintake-webhook/1"
	}
	d := &net.Dialer{
		Timeout: opts.Timeout,
		// Control sees the address after DNS resolution, right before the
		// connect, so a name that resolves to a forbidden address (or is
		// re-bound to one between checks) is refused too.
		Control: func(network, address string, _ syscall.RawConn) error {
			return checkDial(network, address, opts.AllowPrivate)
		},
	}
	tr := &http.Transport{
		// No proxy from the environment: a proxy would connect on our
		// behalf and bypass the address check.
		Proxy:                 nil,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConnsPerHost:   32, // above the dispatcher's calls in flight, so busy receivers reuse connections
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   opts.Timeout,
		ResponseHeaderTimeout: opts.Timeout,
	}
	return &Client{
		http: &http.Client{
			Transport: tr,
			// 3xx is a failure: following a redirect would send the signed
			// body and bearer token somewhere the client never registered.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		tr:      tr,
		timeout: opts.Timeout,
		ua:      opts.UserAgent,
	}
}

// Close releases idle connections.
func (c *Client) Close() { c.tr.CloseIdleConnections() }

// Request is one webhook call.
type Request struct {
	URL string
	// ID is the webhook-id header: the same for every attempt of one
	// delivery, so receivers can drop duplicates.
	ID        string
	Timestamp time.Time
	Body      []byte // JSON
	// BearerToken is sent as Authorization: Bearer (omitted when empty).
	BearerToken string
	// Secret is the Standard Webhooks signing secret (base64, optionally
	// prefixed "whsec_"); empty sends no webhook-signature header.
	Secret string
}

// Result is what happened to one call.
type Result struct {
	// StatusCode is the HTTP status, 0 when no response arrived.
	StatusCode int
	Latency    time.Duration
	// BodyPrefix is the first MaxBodyPrefix bytes of the response body.
	BodyPrefix []byte
	// RetryAfter is the parsed Retry-After header (0: none or unusable).
	RetryAfter time.Duration
	// Err describes why the call failed (transport error, timeout, refused
	// address, non-2xx status); nil on 2xx.
	Err error
}

// OK reports a 2xx answer.
func (r Result) OK() bool { return r.StatusCode >= 200 && r.StatusCode < 300 }

// MaxBodyPrefix is how much of a response body Send keeps.
const MaxBodyPrefix = 1024

// ErrForbiddenAddress is returned (wrapped) when a webhook URL resolves to an
// address the dialer refuses.
var ErrForbiddenAddress = errors.New("webhook: address not allowed")

// Send makes one POST. It never follows redirects. A 2xx status received
// within the timeout is success even if reading the rest of the body then
// fails; the body is read only up to MaxBodyPrefix (plus a bounded drain so
// the connection can be reused).
func (c *Client) Send(ctx context.Context, r Request) Result {
	start := time.Now()
	res := c.send(ctx, r)
	res.Latency = time.Since(start)
	return res
}

func (c *Client) send(ctx context.Context, r Request) Result {
	if err := CheckURL(r.URL); err != nil {
		return Result{Err: err}
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.URL, bytes.NewReader(r.Body))
	if err != nil {
		return Result{Err: fmt.Errorf("webhook request: %w", err)}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", c.ua)
	if r.BearerToken != "" {
		req.Header.Set("Authorization", "Bearer "+r.BearerToken)
	}
	req.Header.Set("webhook-id", r.ID)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(r.Timestamp.Unix(), 10))
	if r.Secret != "" {
		sig, err := Sign(r.Secret, r.ID, r.Timestamp, r.Body)
		if err != nil {
			return Result{Err: err}
		}
		req.Header.Set("webhook-signature", sig)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return Result{Err: fmt.Errorf("post webhook: %w", err)}
	}
	defer resp.Body.Close()
	out := Result{StatusCode: resp.StatusCode}
	// A 2xx counts even if reading the body then fails or times out.
	prefix, rerr := io.ReadAll(io.LimitReader(resp.Body, MaxBodyPrefix))
	out.BodyPrefix = prefix
	if rerr == nil {
		// Drain a little more so the connection can be reused; a huge body
		// is cut off by closing.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		out.RetryAfter, _ = ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	}
	switch {
	case out.OK():
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		out.Err = fmt.Errorf("webhook answered %d (redirects are not followed)", resp.StatusCode)
	default:
		out.Err = fmt.Errorf("webhook answered %d", resp.StatusCode)
	}
	return out
}

// CheckURL accepts absolute http and https URLs with a host and without
// user info (credentials in URLs end up in logs).
func CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("webhook url: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("webhook url %q: scheme must be http or https", u.Redacted())
	}
	if u.Host == "" || u.Hostname() == "" {
		return fmt.Errorf("webhook url %q: no host", u.Redacted())
	}
	if u.User != nil {
		return fmt.Errorf("webhook url %q: user info is not allowed", u.Redacted())
	}
	return nil
}

// Metadata endpoints that are not link-local: Alibaba's 100.100.100.200 and
// AWS's IPv6 fd00:ec2::254 (inside ULA, but never a legitimate webhook).
var metadataAddrs = []netip.Addr{
	netip.MustParseAddr("100.100.100.200"),
	netip.MustParseAddr("fd00:ec2::254"),
}

var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// IPv6 forms that carry an IPv4 address a relay or the kernel may connect
// to: IPv4-compatible (::a.b.c.d, deprecated but still routed by some
// stacks), NAT64 (RFC 6052 well-known prefix) and 6to4 (RFC 3056).
// IPv4-mapped addresses are unmapped before these are looked at.
var (
	v4Compatible = netip.MustParsePrefix("::/96")
	nat64        = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour    = netip.MustParsePrefix("2002::/16")
)

// embeddedIPv4 returns the IPv4 address inside ip when ip is one of the
// IPv6 forms above.
func embeddedIPv4(ip netip.Addr) (netip.Addr, bool) {
	if !ip.Is6() {
		return netip.Addr{}, false
	}
	b := ip.As16()
	switch {
	case v4Compatible.Contains(ip), nat64.Contains(ip):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixToFour.Contains(ip):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}

// AddressAllowed reports whether a webhook may connect to ip. Always
// refused: unspecified, multicast, link-local (169.254.0.0/16 and fe80::/10,
// which hold the cloud metadata services) and known metadata addresses.
// Loopback, private (RFC 1918, fc00::/7) and CGNAT ranges only with
// allowPrivate. An IPv6 address that embeds an IPv4 one (IPv4-mapped,
// IPv4-compatible, NAT64, 6to4) must pass for both, so ::ffff:127.0.0.1 or
// 64:ff9b::a9fe:a9fe cannot reach what 127.0.0.1 or 169.254.169.254 may not.
func AddressAllowed(ip netip.Addr, allowPrivate bool) bool {
	// The zone only picks an interface; left on, it would make the
	// prefix and metadata comparisons below miss (Prefix.Contains is false
	// for any zoned address).
	ip = ip.Unmap().WithZone("")
	if !addressAllowed(ip, allowPrivate) {
		return false
	}
	if v4, ok := embeddedIPv4(ip); ok {
		return addressAllowed(v4, allowPrivate)
	}
	return true
}

func addressAllowed(ip netip.Addr, allowPrivate bool) bool {
	switch {
	case !ip.IsValid(), ip.IsUnspecified(), ip.IsMulticast(), ip.IsLinkLocalUnicast(),
		ip.IsLinkLocalMulticast(), ip.IsInterfaceLocalMulticast():
		return false
	}
	for _, m := range metadataAddrs {
		if ip == m {
			return false
		}
	}
	if ip.IsLoopback() || ip.IsPrivate() || cgnat.Contains(ip) {
		return allowPrivate
	}
	return true
}

func checkDial(network, address string, allowPrivate bool) error {
	if !strings.HasPrefix(network, "tcp") {
		return fmt.Errorf("%w: network %s", ErrForbiddenAddress, network)
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrForbiddenAddress, address)
	}
	if !AddressAllowed(ap.Addr(), allowPrivate) {
		return fmt.Errorf("%w: %s", ErrForbiddenAddress, ap.Addr())
	}
	return nil
}

// Sign returns the Standard Webhooks signature header value
// "v1,<base64 HMAC-SHA256(key, id.timestamp.body)>", where key is secret
// base64-decoded after removing an optional "whsec_" prefix. Returns an
// error when the secret is not base64.
func Sign(secret, id string, ts time.Time, body []byte) (string, error) {
	key, err := DecodeSecret(secret)
	if err != nil {
		return "", err
	}
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s.%d.", id, ts.Unix())
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}

// DecodeSecret decodes a signing secret as the Standard Webhooks libraries
// do: strip "whsec_", then standard base64.
func DecodeSecret(secret string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || len(key) == 0 {
		return nil, fmt.Errorf("webhook signing secret is not base64 (optionally prefixed whsec_)")
	}
	return key, nil
}

// ParseRetryAfter reads a Retry-After value: delay-seconds or an HTTP date
// (relative to now). ok is false for an empty or unparsable value; a date in
// the past gives 0 with ok true.
func ParseRetryAfter(v string, now time.Time) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		const maxSecs = int64(365 * 24 * 3600) // avoid overflowing Duration
		return time.Duration(min(secs, maxSecs)) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}
