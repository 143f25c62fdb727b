package standalone_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/config"
	"github.com/docintake/docintake/pkg/pdftext/pdftexttest"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/docintake/docintake/services/standalone"
	"github.com/docintake/docintake/services/standalone/internal/pgcluster"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
)

const devToken = "dev-token"

func repoRoot(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	require.NoError(t, err)
	for dir := wd; dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir
		}
	}
	t.Fatal("go.work not found")
	return ""
}

type system struct {
	url  string
	stop func() error
}

// start runs the standalone system in-process on free ports with env on top
// of the test defaults, and stops it in cleanup.
func start(t testing.TB, env map[string]string) *system {
	t.Helper()
	root := repoRoot(t)
	dataDir := t.TempDir()
	// A private cluster runs as the postgres user when we are root; it must
	// be able to reach its directory below the test's temporary one.
	require.NoError(t, os.Chmod(filepath.Dir(dataDir), 0o755))
	require.NoError(t, os.Chmod(dataDir, 0o755))
	base := map[string]string{
		"INTAKE_HTTP_ADDR":     "127.0.0.1:0",
		"INTAKE_NATS_LISTEN":   "127.0.0.1:0",
		"INTAKE_DATA_DIR":      dataDir,
		"INTAKE_TEMPLATES_DIR": filepath.Join(root, "deploy", "templates"),
		"INTAKE_CLIENTS_FILE":  filepath.Join(root, "deploy", "dev", "clients.yaml"),
		"INTAKE_LOG_LEVEL":     "debug",
	}
	for k, v := range env {
		base[k] = v
	}
	cfg, err := config.FromEnv(func(k string) string { return base[k] })
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	bound := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- standalone.Run(ctx, cfg, zaptest.NewLogger(t), bound) }()
	var addr string
	select {
	case addr = <-bound:
	case err := <-done:
		cancel()
		t.Fatalf("standalone stopped during start-up: %v", err)
	case <-time.After(90 * time.Second):
		cancel()
		t.Fatal("standalone did not start within 90s")
	}
	s := &system{url: "http://" + addr}
	var once bool
	s.stop = func() error {
		if once {
			return nil
		}
		once = true
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(60 * time.Second):
			return context.DeadlineExceeded
		}
	}
	t.Cleanup(func() { require.NoError(t, s.stop()) })
	waitReady(t, s.url)
	return s
}

func waitReady(t testing.TB, url string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get(url + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s/readyz not ready: %v", url, err)
		}
		time.Sleep(50 * time.Millisecond) // polling an external process's readiness, not waiting for an event
	}
}

func upload(t *testing.T, url, messageID string, pdf []byte) map[string]any {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	require.NoError(t, w.WriteField("message_id", messageID))
	require.NoError(t, w.WriteField("subject", "PO"))
	require.NoError(t, w.WriteField("party_id", "CONTOSO"))
	fw, err := w.CreateFormFile("file", "order.pdf")
	require.NoError(t, err)
	_, _ = fw.Write(pdf)
	require.NoError(t, w.Close())
	req, err := http.NewRequest(http.MethodPost, url+"/incoming", &buf)
	require.NoError(t, err)
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+devToken)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	require.Equal(t, http.StatusAccepted, res.StatusCode, string(raw))
	var out map[string]any
	require.NoError(t, json.Unmarshal(raw, &out))
	return out
}

func details(t *testing.T, url, logID string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url+"/documents/"+logID, nil)
	req.Header.Set("Authorization", "Bearer "+devToken)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	var out map[string]any
	require.NoError(t, json.NewDecoder(res.Body).Decode(&out))
	return out
}

func TestStandaloneServesAndDrains(t *testing.T) {
	t.Parallel()
	s := start(t, map[string]string{"INTAKE_DATABASE_URL": storetest.SchemaURL(t)})
	pdf := pdftexttest.PDF([]string{"Contoso purchase order"})
	ack := upload(t, s.url, "standalone-1", pdf)
	d := details(t, s.url, ack["log_id"].(string))
	require.Equal(t, "standalone-1", d["message_id"])
	require.Contains(t, d["source_path"], "file://")
	require.NoError(t, s.stop(), "SIGTERM drains and returns nil")
	_, err := http.Get(s.url + "/healthz")
	require.Error(t, err, "the listener is closed after shutdown")
}

func TestStandalonePrivatePostgres(t *testing.T) {
	t.Parallel()
	if _, err := pgcluster.BinDir(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI installs PostgreSQL: %v", err)
		}
		t.Skip(err.Error())
	}
	s := start(t, nil) // no INTAKE_DATABASE_URL: a private cluster under the data dir
	ack := upload(t, s.url, "private-pg", pdftexttest.PDF([]string{"x"}))
	require.NotEmpty(t, details(t, s.url, ack["log_id"].(string))["id"])
}

// The embedded NATS server listens on INTAKE_NATS_LISTEN for outside
// connections (extra workers, intakectl), and an accepted upload's job is
// published to its stream exactly once.
func TestStandaloneEmbeddedNATS(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	natsAddr := l.Addr().String()
	require.NoError(t, l.Close())
	s := start(t, map[string]string{"INTAKE_DATABASE_URL": storetest.SchemaURL(t), "INTAKE_NATS_LISTEN": natsAddr})
	ack := upload(t, s.url, "nats-1", pdftexttest.PDF([]string{"x"}))
	upload(t, s.url, "nats-1", pdftexttest.PDF([]string{"x"})) // a retried upload publishes nothing new

	nc, err := nats.Connect("nats://" + natsAddr)
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	stream, err := js.Stream(t.Context(), "INTAKE")
	require.NoError(t, err)
	// The relay publishes right after the commit; poll the stream's last
	// sequence (it counts every message ever stored, consumed or not).
	var last uint64
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && last == 0; {
		info, err := stream.Info(t.Context())
		require.NoError(t, err)
		last = info.State.LastSeq
		time.Sleep(20 * time.Millisecond)
	}
	require.EqualValues(t, 1, last, "one job for one accepted document, none for the retried upload")
	msg, err := stream.GetMsg(t.Context(), 1)
	require.NoError(t, err)
	require.Equal(t, "intake.process.dev", msg.Subject)
	require.Equal(t, ack["log_id"].(string)+":process:1", msg.Header.Get(jetstream.MsgIDHeader))
}

// A template directory that cannot be read, or two templates claiming one
// name or party_id, stops start-up with a message naming the files.
func TestStandaloneRefusesBadTemplates(t *testing.T) {
	t.Parallel()
	url := storetest.SchemaURL(t)
	dup := t.TempDir()
	tmpl := "issuer: X\nkeywords: [X]\nfields:\n  order_id:\n    parser: regex\n    regex: 'No (\\d+)'\ndocintake:\n  name: same\n  party_ids: [P1]\n"
	require.NoError(t, os.WriteFile(filepath.Join(dup, "a.yml"), []byte(tmpl), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dup, "b.yml"), []byte(tmpl), 0o644))
	for dir, want := range map[string][]string{
		filepath.Join(t.TempDir(), "missing"): {"missing"},
		dup:                                   {filepath.Join(dup, "a.yml"), filepath.Join(dup, "b.yml")},
	} {
		env := map[string]string{"INTAKE_DATABASE_URL": url, "INTAKE_TEMPLATES_DIR": dir, "INTAKE_DATA_DIR": t.TempDir(),
			"INTAKE_HTTP_ADDR": "127.0.0.1:0", "INTAKE_NATS_LISTEN": "127.0.0.1:0"}
		cfg, err := config.FromEnv(func(k string) string { return env[k] })
		require.NoError(t, err)
		err = standalone.Run(t.Context(), cfg, zaptest.NewLogger(t), nil)
		require.Error(t, err)
		for _, w := range want {
			require.Contains(t, err.Error(), w)
		}
	}
}
