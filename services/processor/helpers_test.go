package processor_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/repotest"

	"github.com/docintake/docintake/pkg/config"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/jobs"
	"github.com/docintake/docintake/pkg/jobspb"
	"github.com/docintake/docintake/pkg/objectstore"
	"github.com/docintake/docintake/pkg/objectstore/objectstoretest"
	"github.com/docintake/docintake/pkg/pdftext/pdftexttest"
	"github.com/docintake/docintake/pkg/queue"
	"github.com/docintake/docintake/pkg/queue/queuetest"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/docintake/docintake/pkg/system"
	"github.com/docintake/docintake/services/processor"
	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
)

func TestMain(m *testing.M) { objectstoretest.Main(m) }

const clientID = "acme"

// bundle is one test's system: its own schema, stream, bucket and config.
type bundle struct {
	t       testing.TB
	dbURL   string
	st      *store.Store
	natsURL string
	js      jetstream.JetStream
	qcfg    queue.Config
	s3      objectstore.S3Config
	objects *countingStore
	cfg     config.Config
	env     map[string]string
	tmpls   *catalogue.Catalogue
	relay   *queue.Relay
}

// repoRoot is the directory holding go.work.
func repoRoot(t testing.TB) string { return repotest.Root(t) }

// sharedDir is ../shared next to the repository; absent, the test skips
// (or fails under CI=true).
func sharedDir(t testing.TB) string { return repotest.Shared(t) }

// setup builds a bundle; env overrides the test defaults (INTAKE_* vars).
func setup(t testing.TB, env map[string]string) *bundle {
	t.Helper()
	b := &bundle{t: t, dbURL: storetest.SchemaURL(t)}
	pool, err := store.Open(t.Context(), b.dbURL)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	b.st = store.New(pool)
	require.NoError(t, b.st.UpsertClient(t.Context(), document.Client{ID: clientID, Name: "ACME", WebhookURL: "http://127.0.0.1:1/hook", WebhookEnabled: true}))

	b.natsURL = os.Getenv("INTAKE_TEST_NATS_URL")
	if b.natsURL == "" {
		b.natsURL = queuetest.Server(t).ClientURL()
	}
	qc := queuetest.Config(t)
	b.s3 = objectstoretest.S3Config(t)
	b.env = map[string]string{
		"INTAKE_DATABASE_URL":              b.dbURL,
		"INTAKE_NATS_URL":                  b.natsURL,
		"INTAKE_STREAM":                    qc.Stream,
		"INTAKE_SUBJECT_PREFIX":            qc.SubjectPrefix,
		"INTAKE_S3_ENDPOINT":               b.s3.Endpoint,
		"INTAKE_S3_REGION":                 b.s3.Region,
		"INTAKE_S3_BUCKET":                 b.s3.Bucket,
		"INTAKE_S3_ACCESS_KEY":             b.s3.AccessKey,
		"INTAKE_S3_SECRET_KEY":             b.s3.SecretKey,
		"INTAKE_TEMPLATES_DIR":             filepath.Join("testdata", "templates"),
		"INTAKE_PDF_ENGINE":                "pdftotext",
		"INTAKE_PROCESSOR_CONCURRENCY":     "2",
		"INTAKE_PROCESSOR_RETRY_SCHEDULE":  "200ms,200ms",
		"INTAKE_PROCESSOR_FAILURE_BACKOFF": "50ms",
		"INTAKE_PROCESSOR_ACK_WAIT":        "2s",
		"INTAKE_SWEEP_INTERVAL":            "0s",
		"INTAKE_SHUTDOWN_TIMEOUT":          "10s",
		"INTAKE_LOG_LEVEL":                 "debug",
		"INTAKE_METRICS_ADDR":              "127.0.0.1:0",
	}
	for k, v := range env {
		b.env[k] = v
	}
	b.cfg, err = config.FromEnv(func(k string) string { return b.env[k] })
	require.NoError(t, err)
	b.qcfg = b.cfg.Queue()
	_, b.js = queuetest.Connect(t, b.natsURL)
	queuetest.Ensure(t, b.js, &b.qcfg)

	s3, err := objectstore.NewS3(b.s3)
	require.NoError(t, err)
	b.objects = &countingStore{Store: s3}
	b.tmpls, err = catalogue.Open(t.Context(), b.st, zaptest.NewLogger(t).Named("templates"), catalogue.Options{
		Dirs: []string{filepath.Join("testdata", "templates"), filepath.Join(repoRoot(t), "deploy", "templates")}})
	require.NoError(t, err)
	t.Cleanup(b.tmpls.Close)
	b.relay = queue.NewRelay(b.st, queue.NewPublisher(b.js, b.qcfg.Stream), zaptest.NewLogger(t), queue.RelayOptions{})
	return b
}

// instance is one running processor.
type instance struct {
	reg  *prometheus.Registry
	stop func() error
}

// start runs processor.Run on its own NATS connection with its own outbox
// relay around it (like a separate replica's process) until the test ends or
// stop is called.
func (b *bundle) start(mod ...func(*processor.Deps)) *instance {
	b.t.Helper()
	nc, js := queuetest.Connect(b.t, b.natsURL)
	reg := prometheus.NewRegistry()
	// A store of its own on the shared pool, as a separate process has: the
	// store hands its committed outbox rows to one relay, this instance's.
	st := store.New(b.st.Pool())
	d := processor.Deps{Config: b.cfg, Store: st, Objects: b.objects, Templates: b.tmpls, NATS: nc,
		JetStream: js, Logger: zaptest.NewLogger(b.t), Registry: reg}
	relay := system.NewRelay(system.Adapters{Store: st, JetStream: js, Logger: d.Logger}, b.cfg)
	for _, m := range mod {
		m(&d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- relay.Serve(ctx, b.cfg.ShutdownTimeout, func(ctx context.Context) error { return processor.Run(ctx, d) })
	}()
	var once sync.Once
	var err error
	stop := func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				err = fmt.Errorf("processor did not stop within 30s")
			}
		})
		return err
	}
	b.t.Cleanup(func() { require.NoError(b.t, stop()) })
	return &instance{reg: reg, stop: stop}
}

// docOpts describe an upload.
type docOpts struct {
	template string
	mode     document.ResultMode
	client   string // default clientID
}

// upload stores pdf and creates its document with the first process job,
// as ingest does, and publishes the job.
func (b *bundle) upload(pdf []byte, o docOpts) document.Document {
	b.t.Helper()
	d := b.create(pdf, o)
	b.flush()
	return d
}

// create is upload without publishing the job (it stays in the outbox).
func (b *bundle) create(pdf []byte, o docOpts) document.Document {
	b.t.Helper()
	if o.template == "" {
		o.template = "acme"
	}
	if o.client == "" {
		o.client = clientID
	}
	ctx := b.t.Context()
	logID := uuid.NewString()
	now := time.Now()
	key := objectstore.SourceKey(logID, now)
	require.NoError(b.t, b.objects.Store.Put(ctx, key, bytes.NewReader(pdf), int64(len(pdf)), "application/pdf"))
	sum := sha256.Sum256(pdf)
	d := document.Document{ID: uuid.Must(uuid.NewV7()).String(), LogID: logID, ClientID: o.client, MessageID: "m-" + logID,
		FileSHA256: sum[:], FileSize: int64(len(pdf)), Filename: "order.pdf", Subject: "PO", Template: o.template,
		ResultMode: o.mode, SourceKey: key, SourcePath: b.objects.URI(key)}
	m := jobs.Process(b.qcfg.SubjectPrefix, d, 1, now)
	d, created, err := b.st.CreateDocument(ctx, d, m)
	require.NoError(b.t, err)
	require.True(b.t, created)
	return d
}

func (b *bundle) flush() {
	b.t.Helper()
	_, err := b.relay.Flush(b.t.Context())
	require.NoError(b.t, err)
}

// waitState polls the document until it is in want.
func (b *bundle) waitState(d document.Document, want document.State, timeout time.Duration) document.Document {
	b.t.Helper()
	var got document.Document
	waitFor(b.t, timeout, func() error {
		var err error
		if got, err = b.st.Document(b.t.Context(), d.ID); err != nil {
			return err
		}
		if got.State != want {
			return fmt.Errorf("document %s is %s, want %s", d.LogID, got.State, want)
		}
		return nil
	})
	return got
}

// waitFor polls check until it returns nil, failing with its last error
// after timeout.
func waitFor(t testing.TB, timeout time.Duration, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %v", timeout, err)
		}
		<-tick.C
	}
}

// events returns the document's history.
func (b *bundle) events(d document.Document) []document.Event {
	b.t.Helper()
	ev, err := b.st.Events(b.t.Context(), d.ID)
	require.NoError(b.t, err)
	return ev
}

// transitions returns the to-states of the document's state changes
// (deferred → deferred included; failed attempts and sweeps, which keep the
// state and carry no reason, left out).
func transitions(ev []document.Event) []document.State {
	var out []document.State
	for _, e := range ev {
		if e.From != e.To || e.Reason != "" {
			out = append(out, e.To)
		}
	}
	return out
}

// deliverJobs fetches every deliver job published so far (through the
// dispatcher's consumer, which nobody else reads in these tests).
func (b *bundle) deliverJobs(want int) []*jobspb.DeliverJob {
	b.t.Helper()
	cons, err := b.js.Consumer(b.t.Context(), b.qcfg.Stream, b.qcfg.Dispatcher.Durable)
	require.NoError(b.t, err)
	var out []*jobspb.DeliverJob
	waitFor(b.t, 10*time.Second, func() error {
		batch, err := cons.FetchNoWait(100)
		if err != nil {
			return err
		}
		for m := range batch.Messages() {
			j, err := jobs.ParseDeliver(m.Data())
			require.NoError(b.t, err)
			out = append(out, j)
			require.NoError(b.t, m.Ack())
		}
		if len(out) < want {
			return fmt.Errorf("%d deliver jobs, want %d", len(out), want)
		}
		return nil
	})
	require.Len(b.t, out, want)
	return out
}

// read returns an object's bytes by URI.
func (b *bundle) read(uri string) []byte {
	b.t.Helper()
	key := strings.TrimPrefix(uri, "s3://"+b.s3.Bucket+"/")
	rc, err := b.objects.Get(b.t.Context(), key)
	require.NoError(b.t, err)
	defer rc.Close()
	data, err := io.ReadAll(rc)
	require.NoError(b.t, err)
	return data
}

// countingStore counts result writes (Put of results/ keys).
type countingStore struct {
	objectstore.Store
	results atomic.Int64
}

func (c *countingStore) Put(ctx context.Context, key string, r io.Reader, size int64, ct string) error {
	if strings.HasPrefix(key, "results/") {
		c.results.Add(1)
	}
	return c.Store.Put(ctx, key, r, size, ct)
}

// orderText is the layout of the test template's orders; edit replaces
// lines before the PDF is built.
func orderPDF(id string, edit func([]string) []string) []byte {
	lines := []string{
		"ACME Corp            Purchase Order",
		"Order no. " + id,
		"Date: 2026-02-03",
		"VAT: DE123456789",
		"Items",
		"B-1      Bolts      10      1.50",
		"N-2      Nuts       20      0.25",
		"Total 20.00",
	}
	if edit != nil {
		lines = edit(lines)
	}
	return pdfLines(lines)
}

// articles are the mappings the test template's orders need.
var articles = []store.Mapping{{Kind: "article", Key: "B-1", Value: "S-100"}, {Kind: "article", Key: "N-2", Value: "S-200"}}

func (b *bundle) addArticles() {
	b.t.Helper()
	require.NoError(b.t, b.st.PutMappings(b.t.Context(), clientID, articles))
}

// processDeliveries counts how often the processor consumer delivered
// messages (a cheap way to see that a duplicate was consumed).
func (b *bundle) processorDelivered() uint64 {
	b.t.Helper()
	cons, err := b.js.Consumer(b.t.Context(), b.qcfg.Stream, b.qcfg.Processor.Durable)
	require.NoError(b.t, err)
	info, err := cons.Info(b.t.Context())
	require.NoError(b.t, err)
	return info.Delivered.Consumer
}

// publishDuplicate publishes a copy of the document's process job n under
// a new message id (so the stream's dedup does not drop it).
func (b *bundle) publishDuplicate(d document.Document, n int) {
	b.t.Helper()
	m := jobs.Process(b.qcfg.SubjectPrefix, d, n, time.Now())
	_, err := b.js.Publish(b.t.Context(), m.Subject, m.Payload, jetstream.WithMsgID(m.MsgID+":dup:"+strconv.FormatInt(time.Now().UnixNano(), 10)))
	require.NoError(b.t, err)
}

// pdfLines is a one-page PDF with one text line per entry.
func pdfLines(lines []string) []byte { return pdftexttest.PDF(lines) }

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return data
}

// gauge gathers reg and returns the value of the series of name whose
// label (any label when label is "") has value (any when "").
func gauge(t testing.TB, reg *prometheus.Registry, name, label, value string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			match := value == ""
			for _, lp := range m.GetLabel() {
				if (label == "" || lp.GetName() == label) && lp.GetValue() == value {
					match = true
				}
			}
			if !match {
				continue
			}
			switch {
			case m.GetCounter() != nil:
				return m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				return m.GetGauge().GetValue()
			}
		}
	}
	t.Fatalf("no series %s{%s=%q}", name, label, value)
	return 0
}

// histogramCount returns the sample count of a histogram series.
func histogramCount(t testing.TB, reg *prometheus.Registry, name, engine string) uint64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetValue() == engine {
					return m.GetHistogram().GetSampleCount()
				}
			}
		}
	}
	return 0
}
