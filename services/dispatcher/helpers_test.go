package dispatcher_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/config"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/jobs"
	"github.com/docintake/docintake/pkg/objectstore"
	"github.com/docintake/docintake/pkg/objectstore/objectstoretest"
	"github.com/docintake/docintake/pkg/queue"
	"github.com/docintake/docintake/pkg/queue/queuetest"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/docintake/docintake/pkg/system"
	"github.com/docintake/docintake/services/dispatcher"
	intakectlpkg "github.com/docintake/docintake/services/intakectl"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
)

func TestMain(m *testing.M) { objectstoretest.Main(m) }

// bundle is one test's system: its own schema, stream and bucket.
type bundle struct {
	t       *testing.T
	dbURL   string
	natsURL string
	st      *store.Store
	js      jetstream.JetStream
	qcfg    queue.Config
	s3cfg   objectstore.S3Config
	objs    *objectstore.S3
	env     map[string]string
	reg     *prometheus.Registry
	tm      *catalogue.Catalogue // the last started dispatcher's catalogue
}

// setup builds the infrastructure; env overrides the test defaults (short
// schedule, 1s timeout, loopback allowed).
func setup(t *testing.T, env map[string]string) *bundle {
	t.Helper()
	b := &bundle{t: t, dbURL: storetest.SchemaURL(t)}
	pool, err := store.Open(t.Context(), b.dbURL)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	b.st = store.New(pool)
	b.natsURL = queuetest.Server(t).ClientURL()
	_, b.js = queuetest.Connect(t, b.natsURL)
	b.qcfg = queuetest.Ensure(t, b.js, nil)
	b.s3cfg = objectstoretest.S3Config(t)
	// The same bucket for the test's writes and the dispatcher (also when it
	// runs as a process, configured through the environment).
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	s3cfg := b.s3cfg
	s3cfg.HTTPClient = &http.Client{Transport: tr}
	b.objs, err = objectstore.NewS3(s3cfg)
	require.NoError(t, err)
	b.env = map[string]string{
		"INTAKE_DATABASE_URL":               b.dbURL,
		"INTAKE_NATS_URL":                   b.natsURL,
		"INTAKE_STREAM":                     b.qcfg.Stream,
		"INTAKE_SUBJECT_PREFIX":             b.qcfg.SubjectPrefix,
		"INTAKE_WEBHOOK_TIMEOUT":            "1s",
		"INTAKE_WEBHOOK_RETRY_SCHEDULE":     "20ms,20ms,20ms",
		"INTAKE_WEBHOOK_ALLOW_PRIVATE":      "true",
		"INTAKE_WEBHOOK_CLIENT_CONCURRENCY": "4",
		"INTAKE_DISPATCHER_CONCURRENCY":     "8",
		"INTAKE_SHUTDOWN_TIMEOUT":           "5s",
		"INTAKE_S3_ENDPOINT":                b.s3cfg.Endpoint,
		"INTAKE_S3_BUCKET":                  b.s3cfg.Bucket,
		"INTAKE_S3_ACCESS_KEY":              b.s3cfg.AccessKey,
		"INTAKE_S3_SECRET_KEY":              b.s3cfg.SecretKey,
		"INTAKE_TEMPLATES_DIR":              templatesDir(t),
		"INTAKE_METRICS_ADDR":               "127.0.0.1:0",
	}
	for k, v := range env {
		b.env[k] = v
	}
	return b
}

func (b *bundle) config() config.Config {
	cfg, err := config.FromEnv(func(k string) string { return b.env[k] })
	require.NoError(b.t, err)
	return cfg
}

// templatesDir writes one template that asks for feedback on ignored
// documents ("feedback") and one that does not ("quiet").
func templatesDir(t *testing.T) string {
	dir := t.TempDir()
	for name, fb := range map[string]bool{"feedback": true, "quiet": false} {
		y := fmt.Sprintf("issuer: %[1]s corp\nkeywords: [%[1]s corp]\nfields:\n  order_id:\n    parser: regex\n    regex: 'PO (\\d+)'\n"+
			"docintake:\n  name: %[1]s\n  ignored_feedback: %[2]t\n", name, fb)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name+".yml"), []byte(y), 0o600))
	}
	return dir
}

// start runs the dispatcher in this process, with the process's outbox relay
// around it as its binary runs it, until the test ends.
func (b *bundle) start(tuning dispatcher.Tuning) {
	b.t.Helper()
	cfg := b.config()
	tm, err := catalogue.Open(b.t.Context(), b.st, zaptest.NewLogger(b.t), catalogue.Options{Dirs: []string{cfg.TemplatesDir}})
	require.NoError(b.t, err)
	b.t.Cleanup(tm.Close)
	b.tm = tm
	reg := prometheus.NewRegistry() // this dispatcher's, also when the test starts another
	b.reg = reg
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	a := system.Adapters{Store: b.st, Objects: b.objs, JetStream: b.js,
		Logger: zaptest.NewLogger(b.t).Named("dispatcher"), Registry: reg}
	relay := system.NewRelay(a, cfg)
	go func() {
		done <- relay.Serve(ctx, cfg.ShutdownTimeout, func(ctx context.Context) error {
			return dispatcher.Run(ctx, dispatcher.Deps{Config: cfg, Store: a.Store, Objects: a.Objects, JetStream: a.JetStream,
				Logger: a.Logger, Registry: a.Registry, Tuning: tuning})
		})
	}()
	b.t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			require.NoError(b.t, err)
		case <-time.After(20 * time.Second):
			b.t.Error("dispatcher did not stop")
		}
	})
}

// fastTuning polls often so tests do not wait for production intervals.
var fastTuning = dispatcher.Tuning{PollInterval: 20 * time.Millisecond, BusyDelay: 50 * time.Millisecond,
	LeaseMargin: time.Second, Backstop: 10 * time.Second, MetricsInterval: 50 * time.Millisecond}

const testSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// client registers a client whose webhook is url.
func (b *bundle) client(id, url string) document.Client {
	c := document.Client{ID: id, Name: id, WebhookURL: url, WebhookToken: "hook-token-" + id, SigningSecret: testSecret,
		WebhookEnabled: true}
	require.NoError(b.t, b.st.UpsertClient(b.t.Context(), c))
	return c
}

// doc is a document fixture.
type doc struct {
	document.Document
	XML string // the result written for processed_success
}

func newID() string {
	var r [16]byte
	_, _ = rand.Read(r[:])
	return hex.EncodeToString(r[:])
}

// document creates a document and moves it to state as the processor would:
// result written, state changed and the deliver job in the outbox in one
// transaction.
func (b *bundle) document(clientID, tmpl string, state document.State, reason document.Reason) doc {
	return b.documentWith(clientID, tmpl, state, reason, nil)
}

// documentWith is document with a step between the upload and the move to
// state (processing's side effects, such as the template pin).
func (b *bundle) documentWith(clientID, tmpl string, state document.State, reason document.Reason, between func(document.Document)) doc {
	t, ctx := b.t, b.t.Context()
	id := newID()
	d := document.Document{ID: uuid(id), LogID: "log" + id[:12], ClientID: clientID, MessageID: "mail-" + id[:8],
		FileSHA256: make([]byte, 32), FileSize: 10, Filename: "po.pdf", Subject: "PO", Template: tmpl,
		SourceKey: objectstore.SourceKey("log"+id[:12], time.Now())}
	created, _, err := b.st.CreateDocument(ctx, d, store.OutboxRow{Subject: b.qcfg.ProcessSubject(clientID), MsgID: jobs.ProcessMsgID(d.LogID, 1)})
	require.NoError(t, err)
	out := doc{Document: created}
	if between != nil {
		between(created)
	} else if state == document.StateProcessedIgnored && b.tm != nil {
		// Ignored as the processor ignores: the attempt pinned to the
		// served version, whose pin carries docintake.ignored_feedback.
		_, _, err := b.tm.PinAttempt(ctx, created, 1, "processor")
		if !errors.Is(err, catalogue.ErrTemplateUnavailable) {
			require.NoError(t, err)
		}
	}
	ch := store.Change{DocumentID: created.ID, From: document.StateReceived, To: state, Actor: "test"}
	if reason != "" {
		ch.Reason = &reason
	}
	if state == document.StateProcessedSuccess {
		out.XML = fmt.Sprintf("<?xml version=\"1.0\"?>\n<ORDER><ORDER_ID>%s</ORDER_ID><NOTE>Grüße &amp; \"quotes\"</NOTE></ORDER>", d.LogID)
		key, jsonKey := objectstore.ResultKey(d.LogID, time.Now(), "xml"), objectstore.ResultKey(d.LogID, time.Now(), "json")
		require.NoError(t, b.objs.Put(ctx, key, strings.NewReader(out.XML), int64(len(out.XML)), "application/xml"))
		require.NoError(t, b.objs.Put(ctx, jsonKey, strings.NewReader("{}"), 2, "application/json"))
		p, jp := b.objs.URI(key), b.objs.URI(jsonKey)
		ch.ResultKey, ch.ResultPath, ch.ResultJSONKey, ch.ResultJSONPath = &key, &p, &jsonKey, &jp
	}
	after := created
	after.State = state
	job := jobs.Deliver(b.qcfg.SubjectPrefix, after, "msg_"+newID(), time.Now())
	ch.Outbox = []store.OutboxRow{job}
	moved, err := b.st.Transition(ctx, ch)
	require.NoError(t, err)
	out.Document = moved
	return out
}

func uuid(h string) string {
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// waitState polls until the document is in want.
func (b *bundle) waitState(logID string, want document.State, within time.Duration) document.Document {
	b.t.Helper()
	var last document.Document
	waitFor(b.t, within, func() error {
		d, err := b.st.DocumentByLogIDAnyClient(context.Background(), logID)
		if err != nil {
			return err
		}
		last = d
		if d.State != want {
			return fmt.Errorf("document %s is %s, want %s", logID, d.State, want)
		}
		return nil
	})
	return last
}

// waitFor polls check until it returns nil or the deadline passes, failing
// with the last error.
func waitFor(t *testing.T, within time.Duration, check func() error) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s: %v", within, err)
		}
		time.Sleep(20 * time.Millisecond) // polling external state, not waiting for an event
	}
}

// call is one request the receiver got.
type call struct {
	Header http.Header
	Body   []byte
	At     time.Time
}

// receiver is a webhook endpoint on loopback whose answer the test chooses.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	calls  []call
	answer func(w http.ResponseWriter, r *http.Request, c call) // nil: 204
}

func newReceiver(t *testing.T) *receiver {
	rc := &receiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		c := call{Header: r.Header.Clone(), Body: body, At: time.Now()}
		rc.mu.Lock()
		rc.calls = append(rc.calls, c)
		answer := rc.answer
		rc.mu.Unlock()
		if answer == nil {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		answer(w, r, c)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) setAnswer(f func(w http.ResponseWriter, r *http.Request, c call)) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.answer = f
}

func (rc *receiver) snapshot() []call {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]call(nil), rc.calls...)
}

// verifySignature recomputes the Standard Webhooks signature independently
// of pkg/webhook.
func verifySignature(t *testing.T, c call) {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(testSecret, "whsec_"))
	require.NoError(t, err)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(c.Header.Get("webhook-id") + "." + c.Header.Get("webhook-timestamp") + "."))
	mac.Write(c.Body)
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	require.True(t, hmac.Equal([]byte(want), []byte(c.Header.Get("webhook-signature"))), "signature %q, want %q",
		c.Header.Get("webhook-signature"), want)
}

// bodyOf returns the calls whose body names logID.
func callsFor(calls []call, logID string) []call {
	var out []call
	for _, c := range calls {
		if bytes.Contains(c.Body, []byte(`"log_id":"`+logID+`"`)) {
			out = append(out, c)
		}
	}
	return out
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// metric reads a counter or gauge of the dispatcher's registry; labels are
// the label values in the order of the metric's labels (0 when absent).
func (b *bundle) metric(name string, labels ...string) float64 {
	b.t.Helper()
	mfs, err := b.reg.Gather()
	require.NoError(b.t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			for i, lp := range m.GetLabel() {
				if i >= len(labels) || lp.GetValue() != labels[i] {
					continue next
				}
			}
			if m.GetCounter() != nil {
				return m.GetCounter().GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	return 0
}

// intakectl runs the operator CLI against the test's database and stream.
func intakectl(t *testing.T, b *bundle, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = intakectlpkg.Main(t.Context(), args, intakectlpkg.Env{Getenv: func(k string) string { return b.env[k] },
		Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
	return out.String(), errb.String(), code
}

// hanging is a webhook endpoint whose calls hang until open is called (the
// test's cleanup opens it too, before the receiver's Close, which waits for
// handlers); inFlight and maxInFlight count its calls.
type hanging struct {
	*receiver
	open                  func()
	inFlight, maxInFlight *atomic.Int32
}

func newHanging(t *testing.T) hanging {
	h := hanging{receiver: newReceiver(t), inFlight: new(atomic.Int32), maxInFlight: new(atomic.Int32)}
	release := make(chan struct{})
	var once sync.Once
	h.open = func() { once.Do(func() { close(release) }) }
	t.Cleanup(h.open)
	h.setAnswer(func(w http.ResponseWriter, _ *http.Request, _ call) {
		n := h.inFlight.Add(1)
		for m := h.maxInFlight.Load(); n > m && !h.maxInFlight.CompareAndSwap(m, n); m = h.maxInFlight.Load() {
		}
		<-release
		h.inFlight.Add(-1)
		w.WriteHeader(http.StatusOK)
	})
	return h
}
