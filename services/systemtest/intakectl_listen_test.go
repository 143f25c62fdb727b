package systemtest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/client"
	"github.com/docintake/docintake/pkg/pdftext/pdftexttest"
	"github.com/docintake/docintake/pkg/repotest"
	"github.com/docintake/docintake/pkg/webhook"
	"github.com/docintake/docintake/services/intakectl"
	"github.com/docintake/docintake/services/standalone/standalonetest"
	"github.com/stretchr/testify/require"
)

// syncBuffer is a bytes.Buffer a running command writes while the test
// reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startCommand runs intakectl args in the background until the test ends.
func startCommand(t *testing.T, env map[string]string, args ...string) (stdout, stderr *syncBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr = &syncBuffer{}, &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- intakectl.Main(ctx, args, intakectlEnv(env, stdout, stderr))
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case code := <-done:
			require.Equal(t, 0, code, stderr.String())
		case <-time.After(10 * time.Second):
			t.Error("command did not stop")
		}
	})
	return stdout, stderr
}

// intakectlEnv is intakectl's environment in a test: the variables of env
// only, no input, output to stdout and stderr.
func intakectlEnv(env map[string]string, stdout, stderr io.Writer) intakectl.Env {
	return intakectl.Env{Getenv: func(k string) string { return env[k] }, Stdin: strings.NewReader(""),
		Stdout: stdout, Stderr: stderr}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond) // polling output of a running command and the system under test
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

// genOrderPDF is an order in the layout of pkg/client's test template
// gen-order: order G-<n> with two items.
func genOrderPDF(n int) []byte {
	return pdftexttest.PDF([]string{"GENERATED ORDER", fmt.Sprintf("Order no. G-%d", n), "Date: 2026-02-03", "Items",
		"BOLT-1      Bolts M8      10      1.50", "NUT-2      Nuts M8      20      0.25", "Total 20.00"})
}

// startSystem runs docintake with the gen-order template and a client
// "dev" (token dev-token) whose webhook goes to hookAddr.
func startSystem(t *testing.T, hookAddr, hookToken, secret string) *standalonetest.System {
	t.Helper()
	clients := filepath.Join(t.TempDir(), "clients.yaml")
	require.NoError(t, os.WriteFile(clients, fmt.Appendf(nil, `clients:
  - id: dev
    name: listen test
    token_sha256: ["c91cbbedf8c712e8e2b7517ddeca8fe4fde839ebd8339e0b2001363002b37712"]
    webhook_url: http://%s/hook
    webhook_token: %s
    signing_secret: %s
`, hookAddr, hookToken, secret), 0o644))
	return standalonetest.Start(t, map[string]string{
		"INTAKE_CLIENTS_FILE":  clients,
		"INTAKE_TEMPLATES_DIR": filepath.Join(repotest.Root(t), "pkg", "client", "testdata", "templates"),
		"INTAKE_PDF_ENGINE":    "pdftotext",
	})
}

// listen receives a real delivery of a running system (verified, printed,
// saved) and refuses forged ones with 401 and a line saying why.
func TestListen(t *testing.T) {
	t.Parallel()
	const hookToken, secret = "hook-token", "whsec_bGlzdGVuLXRlc3Qtc2VjcmV0"
	addr := freeAddr(t)
	out := t.TempDir()
	stdout, stderr := startCommand(t, nil, "listen", "--addr", addr, "--token", hookToken, "--secret", secret,
		"--out", out, "--json")
	waitFor(t, "listen to start", func() bool { return strings.Contains(stderr.String(), "receiving webhooks on http://"+addr) })
	sys := startSystem(t, addr, hookToken, secret)

	c, err := client.New(sys.URL, standalonetest.DevToken, nil)
	require.NoError(t, err)
	ack, err := c.Upload(t.Context(), client.UploadRequest{File: bytes.NewReader(genOrderPDF(4711)), MessageID: "listen-1",
		Subject: "PO", Template: "gen-order"})
	require.NoError(t, err)

	var line map[string]any
	waitFor(t, "the delivery", func() bool {
		for l := range strings.Lines(stdout.String()) {
			var m map[string]any
			if json.Unmarshal([]byte(l), &m) == nil && m["log_id"] == ack.LogID {
				line = m
				return true
			}
		}
		return false
	})
	require.Equal(t, "success", line["status"])
	require.Equal(t, "listen-1", line["message_id"])
	require.Equal(t, "gen-order", line["template"])
	require.Equal(t, "G-4711", line["order_id"])
	require.EqualValues(t, 2, line["items"])
	require.Equal(t, filepath.Join(out, ack.LogID+".xml"), line["file"])
	xml, err := os.ReadFile(filepath.Join(out, ack.LogID+".xml"))
	require.NoError(t, err)
	require.Contains(t, string(xml), "<ORDER_ID>G-4711</ORDER_ID>")
	// listen answered 2xx: the system records the delivery as done.
	waitFor(t, "finished_success", func() bool {
		d, err := c.Document(t.Context(), ack.LogID)
		require.NoError(t, err)
		return d.State == client.StateFinishedSuccess
	})

	// Forgeries: signed with another secret, the right signature with the
	// wrong token, a replayed old timestamp.
	body := []byte(`{"template":"gen-order","message_id":"forged","log_id":"forged-1","result":null,"status":"rejected","status_reason":"not_an_order"}`)
	post := func(tok, sec string, ts time.Time) int {
		sig, err := webhook.Sign(sec, "msg_forged", ts, body)
		require.NoError(t, err)
		req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/hook", bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("webhook-id", "msg_forged")
		req.Header.Set("webhook-timestamp", fmt.Sprint(ts.Unix()))
		req.Header.Set("webhook-signature", sig)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		return res.StatusCode
	}
	require.Equal(t, http.StatusUnauthorized, post(hookToken, "whsec_b3RoZXItc2VjcmV0", time.Now()))
	require.Equal(t, http.StatusUnauthorized, post("wrong", secret, time.Now()))
	require.Equal(t, http.StatusUnauthorized, post(hookToken, secret, time.Now().Add(-time.Hour)))
	var refusals []string
	waitFor(t, "three refusal lines", func() bool {
		refusals = nil
		for l := range strings.Lines(stdout.String()) {
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(l), &m), l)
			if m["refused"] == true {
				refusals = append(refusals, m["error"].(string))
			}
		}
		return len(refusals) == 3
	})
	require.Contains(t, refusals[0], "no webhook-signature matches")
	require.Contains(t, refusals[1], "wrong bearer token")
	require.Contains(t, refusals[2], "tolerance")
	require.NotContains(t, stdout.String(), `"log_id":"forged-1"`)
	// A correctly signed call is accepted and printed.
	require.Equal(t, http.StatusNoContent, post(hookToken, secret, time.Now()))
	waitFor(t, "the signed call", func() bool { return strings.Contains(stdout.String(), `"log_id":"forged-1"`) })
}

// The plain output is one line per delivery with the fields a developer
// looks for.
func TestListenPlainLines(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	stdout, stderr := startCommand(t, nil, "listen", "--addr", addr) // the dev client's credentials
	waitFor(t, "listen to start", func() bool { return strings.Contains(stderr.String(), "checking bearer token, signature, timestamp") })
	body := []byte(`{"template":"t","message_id":"m-1","log_id":"L-1","result":null,"status":"deferred_for_retry","status_reason":"mapping_not_resolved"}`)
	now := time.Now()
	// The dev client's secret of deploy/dev/clients.yaml.
	sig, err := webhook.Sign("whsec_ZGV2LXNpZ25pbmctc2VjcmV0LWZvci1sb2NhbC11c2U=", "msg_1", now, body)
	require.NoError(t, err)
	for range 2 { // the second is a repeat (same webhook-id)
		req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/hook", bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer dev-webhook-token")
		req.Header.Set("webhook-id", "msg_1")
		req.Header.Set("webhook-timestamp", fmt.Sprint(now.Unix()))
		req.Header.Set("webhook-signature", sig)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, http.StatusNoContent, res.StatusCode)
	}
	waitFor(t, "two lines", func() bool { return strings.Count(stdout.String(), "\n") == 2 })
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	require.Regexp(t, `^\d{4}-\d\d-\d\dT\S+Z  deferred_for_retry +reason=mapping_not_resolved log_id=L-1 message_id=m-1 template=t$`, lines[0])
	require.True(t, strings.HasSuffix(lines[1], " (repeat)"), lines[1])
}
