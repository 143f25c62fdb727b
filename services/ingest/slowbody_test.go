package ingest_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/objectstore"
	"github.com/docintake/docintake/pkg/observability"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/docintake/docintake/services/ingest"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
)

// runOpsServer runs the API with the ops console on a real http.Server
// (ReadTimeout 5 min, as in production) and returns its address.
func runOpsServer(t *testing.T) string {
	t.Helper()
	st := storetest.Store(t)
	require.NoError(t, st.UpsertClient(t.Context(), document.Client{ID: "acme"}, store.TokenHash("tok-acme")))
	objs, err := objectstore.NewFS(t.TempDir())
	require.NoError(t, err)
	srv := ingest.New(ingest.Config{}, st, objs, templates{"contoso-po": nil}, zaptest.NewLogger(t),
		prometheus.NewRegistry(), observability.NewHealth())
	srv.EnableOps(ingest.OpsConfig{Token: "ops-token-0123456789", Stream: "none"}, st, nil)
	ctx, cancel := context.WithCancel(context.Background())
	bound, done := make(chan string, 1), make(chan error, 1)
	go func() { done <- srv.Run(ctx, "127.0.0.1:0", bound) }()
	t.Cleanup(func() { cancel(); require.NoError(t, <-done) })
	select {
	case addr := <-bound:
		return addr
	case err := <-done:
		t.Fatalf("run: %v", err)
	}
	return ""
}

// dribble sends head (a request line and headers, without the blank line)
// declaring a body of declared bytes, then sends the body one byte every
// 50 ms from a goroutine, the way a slow-body attacker does. It returns the
// response and how many body bytes had been sent when it was read.
func dribble(t *testing.T, addr, head string, declared int) (*http.Response, []byte, int64) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	_, err = fmt.Fprintf(c, "%sContent-Length: %d\r\n\r\n", head, declared)
	require.NoError(t, err)
	var sent atomic.Int64
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for range declared {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			if _, err := c.Write([]byte{'a'}); err != nil {
				return
			}
			sent.Add(1)
		}
	}()
	defer func() { close(stop); <-stopped }()
	// Only keeps a broken server from hanging the test (it used to answer
	// after ReadTimeout, 5 min); the assertion is on the bytes sent.
	require.NoError(t, c.SetReadDeadline(time.Now().Add(60*time.Second)))
	br := bufio.NewReader(c)
	res, err := http.ReadResponse(br, nil)
	require.NoError(t, err, "no answer while the body was still coming")
	n := sent.Load()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	// The answer was the connection's last: the server closed it (a FIN, or
	// a reset for the bytes it did not read), without waiting for the body.
	_, err = br.ReadByte()
	var ne net.Error
	require.Error(t, err)
	require.False(t, errors.As(err, &ne) && ne.Timeout(), "the server kept the connection open: %v", err)
	return res, body, n
}

// A dribbled body gets its answer, and the connection closed, while the
// client is still sending it, on every route: unknown routes (404), known
// routes with the wrong method (405), the ops console's login and logout
// (their forms are small and must arrive within seconds) and unknown ops
// pages. net/http reads up to 256 KiB of an unread body before it answers,
// so each of these held the connection until ReadTimeout (5 min).
func TestDribbledBodyAnsweredAtOnce(t *testing.T) {
	t.Parallel()
	addr := runOpsServer(t)
	const big = 20000 // 10 % of it takes 100 s at one byte per 50 ms
	for _, tc := range []struct {
		name, head string
		declared   int
		status     int
	}{
		{"unknown route", "POST /no/such/route HTTP/1.1\r\nHost: x\r\n", big, http.StatusNotFound},
		{"wrong method", "PUT /incoming HTTP/1.1\r\nHost: x\r\n", big, http.StatusMethodNotAllowed},
		{"no token", "POST /incoming HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\n", big, http.StatusUnauthorized},
		{"wrong content type", "POST /incoming HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer tok-acme\r\nContent-Type: text/plain\r\n", big, http.StatusUnsupportedMediaType},
		{"body on a GET", "GET /healthz HTTP/1.1\r\nHost: x\r\n", big, http.StatusOK},
		{"unknown ops page", "POST /ops/nowhere HTTP/1.1\r\nHost: x\r\n", big, http.StatusNotFound},
		{"ops login too large", "POST /ops/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n", big, http.StatusRequestEntityTooLarge},
		// Within the forms' size limit: cut by their read deadline.
		{"ops login", "POST /ops/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n", 4000, http.StatusRequestTimeout},
		{"ops logout", "POST /ops/logout HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nCookie: docintake_ops=abc\r\n", 4000, http.StatusRequestTimeout},
		{"ops action", "POST /ops/documents/x/requeue HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n", big, http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, body, sent := dribble(t, addr, tc.head, tc.declared)
			require.Equal(t, tc.status, res.StatusCode, "%s", body)
			require.True(t, res.Close, "an answer given before the body was read closes the connection")
			require.Less(t, sent, int64(tc.declared/10), "the answer came only after %d of %d body bytes", sent, tc.declared)
		})
	}
}

// Refusals given before the body is read reach an ordinary client whatever
// the body's size, also when many arrive at once on a busy machine: the
// server reads (and throws away) what the client is still sending instead
// of closing on it, which would make the client's kernel see a reset and
// the client report "broken pipe" instead of the answer.
func TestRefusalsReachClientsUnderLoad(t *testing.T) {
	t.Parallel()
	addr := runOpsServer(t)
	client := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(client.CloseIdleConnections)
	type refusal struct {
		method, path, token, ctype string
		size, status               int
	}
	cases := []refusal{
		{"POST", "/no/such/route", "", "text/plain", 1 << 20, http.StatusNotFound},
		{"PUT", "/incoming", "tok-acme", "text/plain", 300 << 10, http.StatusMethodNotAllowed},
		{"POST", "/incoming", "wrong", "multipart/form-data; boundary=b", 1 << 20, http.StatusUnauthorized},
		{"POST", "/incoming", "tok-acme", "text/plain", 200 << 10, http.StatusUnsupportedMediaType},
		{"POST", "/incoming-json", "tok-acme", "text/plain", 4 << 10, http.StatusUnsupportedMediaType},
		{"POST", "/ops/login", "", "application/x-www-form-urlencoded", 64 << 10, http.StatusRequestEntityTooLarge},
	}
	errs := make(chan error, 8*len(cases))
	for w := range 8 {
		go func() {
			var err error
			for i := range cases {
				rc := cases[(w+i)%len(cases)]
				if err == nil {
					err = refuse(client, "http://"+addr, rc.method, rc.path, rc.token, rc.ctype, rc.size, rc.status)
				}
			}
			errs <- err
		}()
	}
	for range 8 {
		require.NoError(t, <-errs)
	}
}

func refuse(client *http.Client, base, method, path, token, ctype string, size, status int) error {
	req, err := http.NewRequest(method, base+path, strings.NewReader(strings.Repeat("a", size)))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", ctype)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s (%d bytes): %w", method, path, size, err)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	if res.StatusCode != status {
		return fmt.Errorf("%s %s: status %d, want %d", method, path, res.StatusCode, status)
	}
	return nil
}
