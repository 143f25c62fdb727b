package webhook_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/webhook"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The test vector published in the Standard Webhooks README (and by svix).
func TestSignStandardWebhooksVector(t *testing.T) {
	t.Parallel()
	ts := time.Unix(1614265330, 0)
	got, err := webhook.Sign("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", ts, []byte(`{"test": 2432232314}`))
	require.NoError(t, err)
	require.Equal(t, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=", got)
	noPrefix, err := webhook.Sign("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", ts, []byte(`{"test": 2432232314}`))
	require.NoError(t, err)
	require.Equal(t, got, noPrefix, "the whsec_ prefix is optional")
	_, err = webhook.Sign("not base64!", "id", ts, nil)
	require.Error(t, err)
}

func TestAddressAllowed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ip              string
		public, private bool // allowed without / with AllowPrivate
	}{
		{"93.184.216.34", true, true},
		{"2606:2800:220:1:248:1893:25c8:1946", true, true},
		{"127.0.0.1", false, true},
		{"::1", false, true},
		{"10.1.2.3", false, true},
		{"172.16.0.1", false, true},
		{"192.168.1.1", false, true},
		{"100.64.0.1", false, true},
		{"fd12::1", false, true},
		{"::ffff:127.0.0.1", false, true},
		{"169.254.169.254", false, false}, // AWS/GCP/Azure metadata
		{"169.254.1.1", false, false},
		{"fe80::1", false, false},
		{"fd00:ec2::254", false, false},
		{"100.100.100.200", false, false},
		{"0.0.0.0", false, false},
		{"::", false, false},
		{"224.0.0.1", false, false},
		{"::ffff:169.254.169.254", false, false},
	} {
		ip := netip.MustParseAddr(tc.ip)
		require.Equal(t, tc.public, webhook.AddressAllowed(ip, false), "%s without allow-private", tc.ip)
		require.Equal(t, tc.private, webhook.AddressAllowed(ip, true), "%s with allow-private", tc.ip)
	}
}

// An IPv6 address that carries an IPv4 address is judged by that IPv4
// address too: otherwise a webhook URL could name loopback, a private
// network or the metadata service through NAT64, 6to4 or the IPv4-compatible
// form. Addresses are parsed, never dialled.
func TestAddressAllowedEmbeddedIPv4(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ip              string
		public, private bool // allowed without / with AllowPrivate
	}{
		// IPv4-compatible ::a.b.c.d
		{"::127.0.0.1", false, true},
		{"::10.0.0.1", false, true},
		{"::169.254.169.254", false, false},
		{"::93.184.216.34", true, true},
		// IPv4-mapped ::ffff:a.b.c.d
		{"::ffff:10.0.0.1", false, true},
		{"::ffff:100.100.100.200", false, false},
		// NAT64 64:ff9b::/96
		{"64:ff9b::127.0.0.1", false, true},
		{"64:ff9b::c0a8:1", false, true}, // 192.168.0.1
		{"64:ff9b::169.254.169.254", false, false},
		{"64:ff9b::100.100.100.200", false, false},
		{"64:ff9b::93.184.216.34", true, true},
		// 6to4 2002:AABB:CCDD::/48 carries AA.BB.CC.DD
		{"2002:7f00:1::1", false, true}, // 127.0.0.1
		{"2002:a00:1::", false, true},   // 10.0.0.1
		{"2002:6440:1::1", false, true}, // 100.64.0.1 (CGNAT)
		{"2002:a9fe:a9fe::1", false, false},
		{"2002::1", false, false}, // 0.0.0.0
		{"2002:5db8:d822::1", true, true},
		// A zone must not hide an address from the checks.
		{"fd00:ec2::254%eth0", false, false},
		{"64:ff9b::a9fe:a9fe%eth0", false, false},
		{"2002:a9fe:a9fe::1%1", false, false},
	} {
		ip := netip.MustParseAddr(tc.ip)
		require.Equal(t, tc.public, webhook.AddressAllowed(ip, false), "%s without allow-private", tc.ip)
		require.Equal(t, tc.private, webhook.AddressAllowed(ip, true), "%s with allow-private", tc.ip)
	}
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"120", 2 * time.Minute, true},
		{" 0 ", 0, true},
		{"Fri, 02 Jan 2026 03:05:05 GMT", time.Minute, true},
		{"Fri, 02 Jan 2026 03:00:00 GMT", 0, true},
		{"", 0, false},
		{"-5", 0, false},
		{"soon", 0, false},
	} {
		got, ok := webhook.ParseRetryAfter(tc.in, now)
		require.Equal(t, tc.ok, ok, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
}

func TestCheckURL(t *testing.T) {
	t.Parallel()
	require.NoError(t, webhook.CheckURL("https://erp.example/hook"))
	require.NoError(t, webhook.CheckURL("http://127.0.0.1:9099/hook"))
	for _, bad := range []string{"ftp://x/y", "file:///etc/passwd", "/relative", "https://", "https://u:p@host/x", "gopher://h"} {
		require.Error(t, webhook.CheckURL(bad), bad)
	}
}

func send(t *testing.T, c *webhook.Client, url string) webhook.Result {
	t.Helper()
	return c.Send(t.Context(), webhook.Request{URL: url, ID: "msg_1", Timestamp: time.Now(), Body: []byte(`{}`),
		BearerToken: "tok", Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"})
}

func TestSend(t *testing.T) {
	t.Parallel()
	var got http.Header
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			got = r.Header.Clone()
			body, _ = io.ReadAll(r.Body)
			_, _ = w.Write(make([]byte, 5000))
		case "/redirect":
			http.Redirect(w, r, "/ok", http.StatusFound)
		case "/busy":
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(http.StatusTooManyRequests)
		case "/slow":
			select {
			case <-r.Context().Done():
			case <-time.After(time.Second):
			}
		}
	}))
	defer srv.Close()
	c := webhook.New(webhook.Options{Timeout: 300 * time.Millisecond, AllowPrivate: true})
	defer c.Close()

	res := send(t, c, srv.URL+"/ok")
	require.NoError(t, res.Err)
	require.True(t, res.OK())
	require.Len(t, res.BodyPrefix, webhook.MaxBodyPrefix, "only a prefix is kept")
	require.Equal(t, "Bearer tok", got.Get("Authorization"))
	require.Equal(t, "application/json", got.Get("Content-Type"))
	require.Equal(t, "msg_1", got.Get("webhook-id"))
	require.Equal(t, "{}", string(body))
	require.Regexp(t, `^v1,[A-Za-z0-9+/]+=*$`, got.Get("webhook-signature"))

	res = send(t, c, srv.URL+"/redirect")
	require.Equal(t, http.StatusFound, res.StatusCode, "redirects are not followed")
	require.Error(t, res.Err)

	res = send(t, c, srv.URL+"/busy")
	require.Equal(t, http.StatusTooManyRequests, res.StatusCode)
	require.Equal(t, 7*time.Second, res.RetryAfter)

	res = send(t, c, srv.URL+"/slow")
	require.Zero(t, res.StatusCode)
	require.ErrorIs(t, res.Err, context.DeadlineExceeded)

	strict := webhook.New(webhook.Options{Timeout: time.Second})
	defer strict.Close()
	res = send(t, strict, srv.URL+"/ok")
	require.True(t, errors.Is(res.Err, webhook.ErrForbiddenAddress), "loopback needs AllowPrivate: %v", res.Err)
	res = send(t, c, "http://169.254.169.254/latest/meta-data/")
	require.ErrorIs(t, res.Err, webhook.ErrForbiddenAddress, "metadata is refused even with AllowPrivate")
}
