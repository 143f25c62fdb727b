package standalone_test

import (
	"context"
	"encoding/json"
	"github.com/docintake/docintake/services/standalone/standalonetest"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/config"
	"github.com/docintake/docintake/pkg/pdftext/pdftexttest"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/docintake/docintake/services/standalone"
	"github.com/docintake/docintake/services/standalone/internal/pgcluster"
	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zapcore"
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
	dir  string // INTAKE_DATA_DIR
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
	// The test log honours INTAKE_LOG_LEVEL: the benchmark sets warn so that
	// formatting thousands of request lines does not weigh on its figures.
	lvl, err := zapcore.ParseLevel(cfg.LogLevel)
	require.NoError(t, err)
	go func() { done <- standalone.Run(ctx, cfg, zaptest.NewLogger(t, zaptest.Level(lvl)), bound) }()
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
	s := &system{url: "http://" + addr, dir: dataDir}
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
	standalonetest.WaitReady(t, s.url)
	return s
}

func upload(t *testing.T, url, messageID string, pdf []byte) map[string]any {
	t.Helper()
	return uploadForm(t, url, map[string]string{"message_id": messageID, "subject": "PO", "party_id": "CONTOSO"}, pdf)
}

// uploadForm posts pdf with the given multipart fields and expects 202.
func uploadForm(t *testing.T, url string, fields map[string]string, pdf []byte) map[string]any {
	t.Helper()
	code, out := tryUpload(t, url, devToken, fields, pdf) // templates_test.go
	require.Equal(t, http.StatusAccepted, code, out)
	return out
}

// waitDetails polls GET /documents/{log_id} until its state is one of want.
func waitDetails(t *testing.T, url, logID string, want ...string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		d := details(t, url, logID)
		for _, w := range want {
			if d["document_state"] == w {
				return d
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("document %s is %v, want one of %v", logID, d["document_state"], want)
		}
		time.Sleep(50 * time.Millisecond) // polling the system under test through its API
	}
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

	// The cluster listens on loopback, where every local user can reach it:
	// without the generated password (0600 in the data dir) nobody gets in.
	pw := readSecret(t, filepath.Join(s.dir, "postgres.password"))
	pid, err := os.ReadFile(filepath.Join(s.dir, "postgres", "postmaster.pid"))
	require.NoError(t, err)
	port := strings.Split(string(pid), "\n")[3] // postmaster.pid: pid, data dir, start time, port, …
	for _, u := range []string{"postgres://postgres@127.0.0.1:" + port + "/docintake?sslmode=disable",
		"postgres://postgres:wrong@127.0.0.1:" + port + "/docintake?sslmode=disable"} {
		conn, err := pgx.Connect(t.Context(), u)
		if err == nil {
			conn.Close(t.Context())
		}
		require.ErrorContains(t, err, "password authentication failed", "no password or a wrong one is refused")
	}
	conn, err := pgx.Connect(t.Context(), "postgres://postgres:"+pw+"@127.0.0.1:"+port+"/docintake?sslmode=disable")
	require.NoError(t, err)
	conn.Close(t.Context())
}

// readSecret checks that a generated secret is private to its owner and
// returns it.
func readSecret(t *testing.T, path string) string {
	t.Helper()
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "%s is for its owner only", path)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	sec := strings.TrimSpace(string(b))
	require.Len(t, sec, 64, "32 random bytes as hex")
	return sec
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

	// Local strangers are refused; workers and intakectl join with the
	// token from the data dir.
	_, err = nats.Connect("nats://" + natsAddr)
	require.ErrorIs(t, err, nats.ErrAuthorization, "the embedded server needs its token")
	_, err = nats.Connect("nats://not-the-token@" + natsAddr)
	require.ErrorIs(t, err, nats.ErrAuthorization)
	nc, err := nats.Connect("nats://" + readSecret(t, filepath.Join(s.dir, "nats.token")) + "@" + natsAddr)
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	// The processor takes the job (a one-line PDF is not a Contoso order:
	// rejected); its consumer then has delivered exactly one message: the
	// retried upload published none. (The work-queue stream deletes acked
	// jobs, so the consumer's counters are what is left to look at.)
	waitDetails(t, s.url, ack["log_id"].(string), "processed_rejected", "sent_rejected", "finished_rejected", "finished_with_failure")
	cons, err := js.Consumer(t.Context(), "INTAKE", "processor")
	require.NoError(t, err)
	info, err := cons.Info(t.Context())
	require.NoError(t, err)
	require.EqualValues(t, 1, info.Delivered.Consumer, "one job for one accepted document, none for the retried upload")
	require.Zero(t, info.NumPending)
	require.Zero(t, info.NumAckPending)
}

// genTemplate reads the orders that genOrder writes.
const genTemplate = `issuer: Generated Buyer
keywords: [GENERATED ORDER]
fields:
  order_id: {parser: regex, regex: 'Order no\. (\S+)'}
  date: {parser: regex, regex: 'Date: (\d{4}-\d{2}-\d{2})', type: date}
  buyer_name: {parser: static, value: Generated Buyer}
  currency: {parser: static, value: EUR}
  lines:
    parser: lines
    start: Items
    end: Total
    line: '^\s*(?P<supplier_article_id>[A-Z]+-\d+)\s+(?P<description>.+?)\s+(?P<quantity>\d+)\s+(?P<unit_price>\d+\.\d\d)\s*$'
    types: {quantity: float, unit_price: float}
docintake:
  name: gen-order
  party_ids: [GEN]
`

// End to end in one process: upload a generated order naming its template,
// the processor extracts it, and the document details show the result files.
func TestStandaloneEndToEnd(t *testing.T) {
	t.Parallel()
	tmpl := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(tmpl, "gen-order.yml"), []byte(genTemplate), 0o644))
	s := start(t, map[string]string{"INTAKE_DATABASE_URL": storetest.SchemaURL(t), "INTAKE_TEMPLATES_DIR": tmpl,
		"INTAKE_PDF_ENGINE": "pdftotext"})
	pdf := pdftexttest.PDF([]string{"GENERATED ORDER", "Order no. G-4711", "Date: 2026-02-03", "Items",
		"BOLT-1      Bolts M8      10      1.50", "NUT-2      Nuts M8      20      0.25", "Total 20.00"})
	ack := uploadForm(t, s.url, map[string]string{"message_id": "e2e-1", "subject": "PO G-4711", "template": "gen-order"}, pdf)
	d := waitDetails(t, s.url, ack["log_id"].(string), "processed_success", "sent_success", "finished_success")
	require.Equal(t, "2026-02-03", d["document_date"])
	for _, k := range []string{"result_path", "result_json_path"} {
		require.IsType(t, "", d[k], k)
		require.True(t, strings.HasPrefix(d[k].(string), "file://"), d[k])
		require.Contains(t, d[k], "/results/")
	}
	u, err := neturl.Parse(d["result_path"].(string))
	require.NoError(t, err)
	xml, err := os.ReadFile(u.Path)
	require.NoError(t, err)
	require.Contains(t, string(xml), "<ORDER_ID>G-4711</ORDER_ID>")
	require.Contains(t, string(xml), `<bmecat:SUPPLIER_PID type="supplier_specific">BOLT-1</bmecat:SUPPLIER_PID>`)
	u, err = neturl.Parse(d["result_json_path"].(string))
	require.NoError(t, err)
	raw, err := os.ReadFile(u.Path)
	require.NoError(t, err)
	var res struct {
		LogID string `json:"log_id"`
		Order struct {
			OrderID string `json:"order_id"`
			Items   []struct {
				Quantity string `json:"quantity"`
			} `json:"items"`
		} `json:"order"`
	}
	require.NoError(t, json.Unmarshal(raw, &res))
	require.Equal(t, ack["log_id"], res.LogID)
	require.Equal(t, "G-4711", res.Order.OrderID)
	require.Len(t, res.Order.Items, 2)
	require.Equal(t, "20", res.Order.Items[1].Quantity)

	// The processor's series are on the shared registry.
	mres, err := http.Get(s.url + "/metrics")
	require.NoError(t, err)
	defer mres.Body.Close()
	metrics, err := io.ReadAll(mres.Body)
	require.NoError(t, err)
	require.Contains(t, string(metrics), `docintake_processor_jobs_total{outcome="success"} 1`)
	require.Contains(t, string(metrics), `docintake_consumer_pending{consumer="processor"} 0`)
	// The three services share the process's one outbox relay.
	require.Contains(t, string(metrics), "\ndocintake_outbox_relays 1\n")
}

// A template directory that cannot be read stops start-up with a message
// naming it. (A bad file in a readable directory is logged and left out,
// the others are served: pkg/system's TestSyncTemplatesDir.)
func TestStandaloneRefusesBadTemplates(t *testing.T) {
	t.Parallel()
	url := storetest.SchemaURL(t)
	for dir, want := range map[string][]string{
		filepath.Join(t.TempDir(), "missing"): {"missing"},
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
