package systemtest_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/client"
	"github.com/docintake/docintake/pkg/config"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/observability"
	"github.com/docintake/docintake/pkg/pdftext/pdftexttest"
	"github.com/docintake/docintake/pkg/repotest"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/store/storetest"
	disystem "github.com/docintake/docintake/pkg/system"
	"github.com/docintake/docintake/services/dispatcher"
	"github.com/docintake/docintake/services/ingest"
	"github.com/docintake/docintake/services/processor"
	"github.com/docintake/docintake/services/standalone/standalonetest"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
	"golang.org/x/sync/errgroup"
)

// sqlRecord is one statement a traced pool ran.
type sqlRecord struct {
	stage string // the pool's service
	tx    int    // transaction number on its connection, 0 outside one
	sql   string
	args  []string
	rows  int64 // rows the statement returned or changed
}

// sqlCounter is a pgx QueryTracer that records every statement of the pools
// it is installed on, with the transaction it ran in. pgx sends BEGIN and
// COMMIT as queries too, so every round trip of a pool shows up here.
type sqlCounter struct {
	mu     sync.Mutex
	recs   []sqlRecord
	openTx map[*pgx.Conn]int
	nextTx int
	gen    int // reset count, so a statement started before a reset is not matched after it
}

type stageTracer struct {
	c     *sqlCounter
	stage string
}

func (t stageTracer) TraceQueryStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	args := make([]string, 0, len(data.Args))
	for _, a := range data.Args {
		switch v := a.(type) {
		case []byte:
			args = append(args, hex.EncodeToString(v))
		default:
			args = append(args, fmt.Sprint(v))
		}
	}
	sql := strings.ToLower(strings.TrimSpace(data.SQL))
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	tx := t.c.openTx[conn]
	if sql == "begin" || strings.HasPrefix(sql, "begin ") {
		t.c.nextTx++
		tx = t.c.nextTx
		t.c.openTx[conn] = tx
	}
	t.c.recs = append(t.c.recs, sqlRecord{stage: t.stage, tx: tx, sql: sql, args: args})
	if sql == "commit" || sql == "rollback" {
		delete(t.c.openTx, conn)
	}
	return context.WithValue(ctx, recordKey{}, [2]int{t.c.gen, len(t.c.recs) - 1})
}

type recordKey struct{}

func (t stageTracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryEndData) {
	at, ok := ctx.Value(recordKey{}).([2]int)
	if !ok {
		return
	}
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	if at[0] == t.c.gen {
		t.c.recs[at[1]].rows = data.CommandTag.RowsAffected()
	}
}

// pool opens a pool for stage whose statements c records.
func (c *sqlCounter) pool(t *testing.T, url, stage string) *store.Store {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(url)
	require.NoError(t, err)
	cfg.ConnConfig.Tracer = stageTracer{c: c, stage: stage}
	p, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(p.Close)
	return store.New(p)
}

func (c *sqlCounter) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.recs = nil
	c.gen++
}

// roundTrips are the statements and transactions of one stage.
type roundTrips struct {
	statements, transactions int
}

// count attributes the recorded statements to stages. Only statements that
// concern the test's documents count: their arguments name one of keys (a
// document's id, log id or message id, the client's id or token hash), or
// they run in a transaction with such a statement, or they are a relay's
// deletion of published rows (a claim, or a batch of hand-over rows).
// Background loops that found nothing to do (relay and scheduler polls,
// sweeps, gauges) are not per-document work. A transaction that deletes
// outbox rows is the relay's, whichever service's relay ran it.
func (c *sqlCounter) count(keys []string) (map[string]roundTrips, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	// The relay's claims and its deletions of published hand-over rows.
	relayMark := func(r sqlRecord) bool { return strings.HasPrefix(r.sql, "delete from outbox") && r.rows > 0 }
	relevant := func(r sqlRecord) bool {
		if relayMark(r) {
			return true
		}
		for _, a := range r.args {
			for _, k := range keys {
				if strings.Contains(a, k) {
					return true
				}
			}
		}
		return false
	}
	txRelevant, txRelay := map[int]bool{}, map[int]bool{}
	for _, r := range c.recs {
		if r.tx != 0 && relevant(r) {
			txRelevant[r.tx] = true
		}
		if r.tx != 0 && relayMark(r) {
			txRelay[r.tx] = true
		}
	}
	out := map[string]roundTrips{}
	var listing []string
	seenTx := map[int]bool{}
	for _, r := range c.recs {
		if (r.tx == 0 && !relevant(r)) || (r.tx != 0 && !txRelevant[r.tx]) {
			continue
		}
		stage := r.stage
		if txRelay[r.tx] {
			stage = "relay"
		}
		rt := out[stage]
		rt.statements++
		if r.tx != 0 && !seenTx[r.tx] {
			seenTx[r.tx] = true
			rt.transactions++
		}
		out[stage] = rt
		sql := r.sql
		if i := strings.IndexAny(sql, "\n\t"); i > 0 {
			sql = sql[:i]
		}
		listing = append(listing, fmt.Sprintf("%-10s tx%-4d %s", stage, r.tx, sql))
	}
	return out, listing
}

// statementBudget is the most PostgreSQL statements (BEGIN and COMMIT
// included) and transactions one document may cost per stage on its way
// upload → processed_success → sent_success → finished_success, with a
// webhook that answers 200 at the first attempt.
var statementBudget = map[string]roundTrips{
	// ingest (before: 7 statements, 1 transaction; then 3): one INSERT …
	// RETURNING with the creating event and the process job as
	// data-modifying CTEs, and the token lookup unless the same token was
	// looked up less than a second before (services/ingest/authcache.go).
	// An upload small enough to stay in memory has no idempotency read: the
	// INSERT's ON CONFLICT answers a retry.
	"ingest": {statements: 2, transactions: 0},
	// relay (before: 8, 2; then 6, 2 with a claim transaction per job):
	// the store hands each committed row to the relay, which publishes it
	// at once and deletes the published rows of the last DeleteDelay in one
	// statement. Here a document's two jobs (process, deliver) are
	// usually deleted together; at worst one statement each. Under load
	// one deletion covers up to 100 rows.
	"relay": {statements: 2, transactions: 0},
	// processor (before: 15, 2; then 3, 0): one read of the document with
	// its bookkeeping and attempt number, one statement that pins the
	// template version (pin + last use + event), one read of the PO's
	// latest delivery (duplicates and revisions, issue 28), one read of the
	// client's flag policy with the price list entries of the order's
	// articles (flags, issue 28: the order has prices to check), and the
	// success in one transaction with the PO's identity: BEGIN, the
	// po_identities row, processed_success + event + deliver job, COMMIT.
	// Folding the identity row into the transition's statement would bring
	// it back to 5 statements and no transaction.
	"processor": {statements: 8, transactions: 1},
	// dispatcher (before: 18, 2; then 10, 1; then 5): the delivery row
	// created with the document and its client read in the same
	// statement, the claim with the client's shared slot, one statement
	// for attempt + delivery outcome + sent_success + finished_success
	// (one event per step) + the slot's release.
	"dispatcher": {statements: 3, transactions: 0},
}

// The pipeline's PostgreSQL round trips per document, counted with a pgx
// tracer on a separate pool per service, stay within statementBudget.
// Documents go through one at a time, so each relay batch carries one row.
func TestStatementsPerDocument(t *testing.T) {
	t.Parallel()
	const docs = 3
	dir := t.TempDir()
	url := storetest.SchemaURL(t)

	var hookMu sync.Mutex
	hooked := map[string]int{}
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hookMu.Lock()
		hooked[r.Header.Get("webhook-id")]++
		hookMu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(hook.Close)

	const token = "rt-token"
	sum := sha256.Sum256([]byte(token))
	clients := filepath.Join(dir, "clients.yaml")
	require.NoError(t, os.WriteFile(clients, []byte(fmt.Sprintf(`clients:
  - id: rtclient
    name: Round trips
    token_sha256: [%q]
    webhook_url: %s/hook
    webhook_token: rt-webhook-token
    signing_secret: whsec_cnQtc2lnbmluZy1zZWNyZXQtZm9yLXRlc3RzLW9ubHk=
`, hex.EncodeToString(sum[:]), hook.URL)), 0o644))
	tmpl := filepath.Join(repotest.Root(t), "pkg", "client", "testdata", "templates") // gen-order

	env := map[string]string{
		"INTAKE_HTTP_ADDR":             "127.0.0.1:0",
		"INTAKE_DATA_DIR":              dir,
		"INTAKE_DATABASE_URL":          url,
		"INTAKE_PDF_ENGINE":            "pdftotext",
		"INTAKE_WEBHOOK_ALLOW_PRIVATE": "true",
		"INTAKE_PROCESSOR_CONCURRENCY": "1",
	}
	cfg, err := config.FromEnv(func(k string) string { return env[k] })
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	logger := zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))

	// Set-up runs on an untraced store.
	setup := storetestStore(t, url)
	specs, err := disystem.LoadClientsFile(clients)
	require.NoError(t, err)
	require.NoError(t, disystem.ApplyClients(ctx, setup, specs))

	counter := &sqlCounter{openTx: map[*pgx.Conn]int{}}
	stores := map[string]*store.Store{}
	for _, stage := range []string{"ingest", "processor", "dispatcher", "relay"} {
		stores[stage] = counter.pool(t, url, stage)
	}
	// The processor pins template versions through the catalogue's store.
	tmpls, err := catalogue.Open(ctx, stores["processor"], logger, catalogue.Options{Dirs: []string{tmpl}})
	require.NoError(t, err)
	t.Cleanup(tmpls.Close)
	objs, err := disystem.OpenObjects(ctx, cfg.S3, filepath.Join(dir, "objects"))
	require.NoError(t, err)

	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, JetStream: true,
		StoreDir: filepath.Join(dir, "nats"), NoSigs: true, NoLog: true})
	require.NoError(t, err)
	ns.Start()
	require.True(t, ns.ReadyForConnections(30*time.Second))
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	nc, js, err := disystem.ConnectNATS(ctx, ns.ClientURL(), "roundtrips", cfg.Queue(), logger)
	require.NoError(t, err)
	t.Cleanup(nc.Close)

	// The process's one relay, on a pool of its own; every stage's store
	// hands it the outbox rows it commits, as the process's one store does.
	relay := disystem.NewRelay(disystem.Adapters{Store: stores["relay"], JetStream: js, Logger: logger.Named("relay")}, cfg)
	for _, st := range stores {
		st.HandOutboxTo(relay.Handoff)
	}
	adapters := func(stage string) disystem.Adapters {
		return disystem.Adapters{Store: stores[stage], Objects: objs, NATS: nc, JetStream: js,
			Logger: logger.Named(stage), Registry: observability.NewRegistry()}
	}
	bound := make(chan string, 1)
	g := new(errgroup.Group)
	g.Go(func() error {
		a := adapters("ingest")
		return ingest.Run(ctx, ingest.Deps{Config: cfg, Store: a.Store, Objects: a.Objects, Templates: tmpls, NATS: a.NATS,
			JetStream: a.JetStream, Logger: a.Logger, Registry: a.Registry, Bound: bound})
	})
	g.Go(func() error {
		a := adapters("processor")
		return processor.Run(ctx, processor.Deps{Config: cfg, Store: a.Store, Objects: a.Objects, Templates: tmpls,
			NATS: a.NATS, JetStream: a.JetStream, Logger: a.Logger, Registry: a.Registry})
	})
	g.Go(func() error {
		da := adapters("dispatcher")
		return dispatcher.Run(ctx, dispatcher.Deps{Config: cfg, Store: da.Store, Objects: da.Objects,
			JetStream: da.JetStream, Logger: da.Logger, Registry: da.Registry})
	})
	relayDone := make(chan error, 1)
	go func() {
		relayDone <- relay.Serve(ctx, cfg.ShutdownTimeout, func(context.Context) error { return g.Wait() })
	}()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-relayDone)
	})
	var api string
	select {
	case addr := <-bound:
		api = "http://" + addr
	case <-time.After(60 * time.Second):
		t.Fatal("ingest did not start")
	}
	standalonetest.WaitReady(t, api)

	up, err := client.New(api, token, nil)
	require.NoError(t, err)
	counter.reset()
	keys := []string{"rtclient", hex.EncodeToString(sum[:])}
	for i := range docs {
		pdf := pdftexttest.PDF([]string{"GENERATED ORDER", fmt.Sprintf("Order no. G-%d", 4711+i), "Date: 2026-02-03", "Items",
			"BOLT-1      Bolts M8      10      1.50", "Total 15.00"})
		msg := fmt.Sprintf("rt-%d", i)
		ack, err := up.Upload(t.Context(), client.UploadRequest{File: bytes.NewReader(pdf), MessageID: msg, Subject: "PO",
			Template: "gen-order"})
		require.NoError(t, err)
		logID := ack.LogID
		d := waitState(t, setup, "rtclient", logID, "finished_success")
		keys = append(keys, d.ID, logID, msg)
	}
	hookMu.Lock()
	require.Len(t, hooked, docs, "one webhook per document")
	for id := range hooked {
		keys = append(keys, id) // the delivery ids
	}
	hookMu.Unlock()
	got, listing := counter.count(keys)
	t.Logf("statements per document (%d documents):", docs)
	stages := make([]string, 0, len(got))
	for s := range got {
		stages = append(stages, s)
	}
	sort.Strings(stages)
	for _, s := range stages {
		t.Logf("  %-10s %5.1f statements %5.1f transactions", s, float64(got[s].statements)/docs,
			float64(got[s].transactions)/docs)
	}
	t.Logf("statements:\n%s", strings.Join(listing, "\n"))
	for stage, b := range statementBudget {
		rt := got[stage]
		require.Greater(t, rt.statements, 0, "stage %s ran no statement: the counter is broken", stage)
		require.LessOrEqual(t, rt.statements, b.statements*docs, "statements of stage %s", stage)
		require.LessOrEqual(t, rt.transactions, b.transactions*docs, "transactions of stage %s", stage)
	}
	for s := range got {
		_, ok := statementBudget[s]
		require.True(t, ok, "statements of an unbudgeted stage %s", s)
	}
}

func storetestStore(t *testing.T, url string) *store.Store {
	t.Helper()
	p, err := pgxpool.New(context.Background(), url)
	require.NoError(t, err)
	t.Cleanup(p.Close)
	return store.New(p)
}

// waitState polls PostgreSQL (untraced) until the document is in state.
func waitState(t *testing.T, st *store.Store, clientID, logID, state string) document.Document {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		doc, err := st.DocumentByLogID(t.Context(), clientID, logID)
		if err == nil && string(doc.State) == state {
			return doc
		}
		if time.Now().After(deadline) {
			t.Fatalf("document %s is %v (%v), want %s", logID, doc.State, err, state)
		}
		time.Sleep(20 * time.Millisecond) // polling the system under test through its database
	}
}
