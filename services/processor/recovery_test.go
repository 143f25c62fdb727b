package processor_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/objectstore"
	"github.com/docintake/docintake/pkg/queue"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/docintake/docintake/services/processor"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"
)

// gate is an S3 reverse proxy that holds GETs of sources whose path
// contains a marker until released, so a test knows a processor is in the
// middle of a job and can stop or kill it there.
type gate struct {
	url     string
	mu      sync.Mutex
	marker  string
	hit     chan struct{}
	release chan struct{}
}

func newGate(t *testing.T, target string) *gate {
	t.Helper()
	u, err := url.Parse(target)
	require.NoError(t, err)
	g := &gate{hit: make(chan struct{}, 16), release: make(chan struct{})}
	proxy := httputil.NewSingleHostReverseProxy(u) // keeps the Host header the client signed
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		marker := g.marker
		g.mu.Unlock()
		if r.Method == http.MethodGet && marker != "" && strings.Contains(r.URL.Path, marker) {
			g.hit <- struct{}{}
			select {
			case <-g.release:
			case <-r.Context().Done(): // the worker died holding it
				return
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	g.url = srv.URL
	return g
}

func (g *gate) hold(marker string) {
	g.mu.Lock()
	g.marker = marker
	g.mu.Unlock()
}

// open lets held and future requests through.
func (g *gate) open() {
	g.hold("")
	close(g.release)
}

func (g *gate) waitHit(t *testing.T, timeout time.Duration) {
	t.Helper()
	select {
	case <-g.hit:
	case <-time.After(timeout):
		t.Fatal("no request reached the gate")
	}
}

// Shutdown stops fetching but lets the document in flight finish.
func TestGracefulShutdownFinishesInFlight(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.addArticles()
	g := newGate(t, b.s3.Endpoint)
	cfg := b.s3
	cfg.Endpoint = g.url
	proxied, err := objectstore.NewS3(cfg)
	require.NoError(t, err)
	inst := b.start(func(d *processor.Deps) { d.Objects = proxied })

	d := b.create(orderPDF("G-1", nil), docOpts{})
	g.hold(d.LogID)
	b.flush()
	g.waitHit(t, 20*time.Second)
	stopped := make(chan error, 1)
	go func() { stopped <- inst.stop() }()
	// A document uploaded during shutdown is not taken by this instance.
	late := b.upload(orderPDF("G-2", nil), docOpts{})
	g.open()
	require.NoError(t, <-stopped)
	b.waitState(d, document.StateProcessedSuccess, 5*time.Second)
	got, err := b.st.Document(t.Context(), late.ID)
	require.NoError(t, err)
	require.Equal(t, document.StateReceived, got.State, "left for the next processor")
}

// A job whose document lost its message (the broker lost it after the relay
// had published it and deleted its outbox row) is re-enqueued by the
// sweeper.
func TestSweeperRepublishesLostJob(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"INTAKE_SWEEP_INTERVAL": "100ms", "INTAKE_STUCK_AFTER": "300ms"})
	b.addArticles()
	d := b.create(orderPDF("S-1", nil), docOpts{})
	_, err := b.st.Pool().Exec(t.Context(), `DELETE FROM outbox`)
	require.NoError(t, err)
	b.start()
	d = b.waitState(d, document.StateProcessedSuccess, 20*time.Second)
	ev := b.events(d)
	require.Equal(t, "sweeper", ev[1].Actor, "%+v", ev)
	pr, err := b.st.Processing(t.Context(), d.ID)
	require.NoError(t, err)
	require.Equal(t, 2, pr.ProcessSeq)
}

// A job delivered MaxDeliver times whose attempt workers started
// INTAKE_PROCESSOR_MAX_FAILURES times without an outcome (here: pinned three
// times, then taken by a client that never acks, like a worker killed each
// time) reaches dlq through the MAX_DELIVERIES advisory, and its message is
// deleted.
func TestMaxDeliveriesAdvisory(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"INTAKE_PROCESSOR_ACK_WAIT": "1s"})
	q := b.maxDeliverOne(t)
	d := b.upload(orderPDF("K-1", nil), docOpts{})
	for range b.cfg.ProcessorMaxFailures {
		_, _, err := b.tmpls.PinAttempt(t.Context(), d, 1, "processor")
		require.NoError(t, err)
	}
	b.takeAndHold(t, q)
	b.start()
	d = b.waitState(d, document.StateDLQ, 20*time.Second)
	ev := b.events(d)
	require.Contains(t, ev[len(ev)-1].Detail, "started 3 times without an outcome")
	b.noProcessMessages(t, q)
}

// A job the broker gives up on while no worker started it (held in the fair
// windows of processors that were killed: every kill sends a window back
// and counts a delivery) is no poison: its message is deleted, the sweeper
// gives the document a fresh job, and it is processed.
func TestMaxDeliveriesAdvisoryHeldJob(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"INTAKE_PROCESSOR_ACK_WAIT": "1s",
		"INTAKE_SWEEP_INTERVAL": "100ms", "INTAKE_STUCK_AFTER": "300ms"})
	b.addArticles()
	q := b.maxDeliverOne(t)
	d := b.upload(orderPDF("K-2", nil), docOpts{})
	b.takeAndHold(t, q)
	b.start()
	d = b.waitState(d, document.StateProcessedSuccess, 30*time.Second)
	for _, e := range b.events(d) {
		require.NotEqual(t, document.StateDLQ, e.To, "%+v", e)
	}
	pr, err := b.st.Processing(t.Context(), d.ID)
	require.NoError(t, err)
	require.Equal(t, 2, pr.ProcessSeq, "one fresh job from the sweeper")
	b.noProcessMessages(t, q)
}

// maxDeliverOne makes the processor consumer give a job up after one
// delivery.
func (b *bundle) maxDeliverOne(t *testing.T) queue.Config {
	q := b.qcfg
	q.Processor.MaxDeliver, q.Processor.BackOff = 1, []time.Duration{time.Second}
	require.NoError(t, queue.Ensure(t.Context(), b.js, q))
	return q
}

// takeAndHold takes the one process job and never acks it.
func (b *bundle) takeAndHold(t *testing.T, q queue.Config) {
	cons, err := b.js.Consumer(t.Context(), q.Stream, q.Processor.Durable)
	require.NoError(t, err)
	batch, err := cons.Fetch(1, jetstream.FetchMaxWait(5*time.Second))
	require.NoError(t, err)
	n := 0
	for range batch.Messages() {
		n++
	}
	require.Equal(t, 1, n)
}

// noProcessMessages waits until the stream holds no process job.
func (b *bundle) noProcessMessages(t *testing.T, q queue.Config) {
	waitFor(t, 10*time.Second, func() error {
		s, err := b.js.Stream(t.Context(), q.Stream)
		if err != nil {
			return err
		}
		info, err := s.Info(t.Context(), jetstream.WithSubjectFilter(q.SubjectPrefix+".process.>"))
		if err != nil {
			return err
		}
		if len(info.State.Subjects) != 0 {
			return fmt.Errorf("process messages left: %v", info.State.Subjects)
		}
		return nil
	})
}

// binaries are service binaries built once per test run, by package path.
var binaries = struct {
	sync.Mutex
	path map[string]string
}{path: map[string]string{}}

// buildBinary builds the command in pkg (a directory relative to this
// module, e.g. ./cmd/processor or ../ingest/cmd/ingest) once per test run.
func buildBinary(t testing.TB, pkg string) string {
	t.Helper()
	binaries.Lock()
	defer binaries.Unlock()
	if p, ok := binaries.path[pkg]; ok {
		return p
	}
	dir, err := os.MkdirTemp("", "docintake-bin")
	require.NoError(t, err)
	p := filepath.Join(dir, filepath.Base(pkg))
	out, err := exec.Command("go", "build", "-o", p, pkg).CombinedOutput()
	require.NoError(t, err, "go build %s: %s", pkg, out)
	binaries.path[pkg] = p
	return p
}

// processorBinary builds cmd/processor once per test run.
func processorBinary(t testing.TB) string { return buildBinary(t, "./cmd/processor") }

// child is a processor running as its own process.
type child struct {
	cmd    *exec.Cmd
	out    *lockedBuffer
	exited chan struct{} // closed when the process is gone; err is then set
	err    error
}

// wait returns the process's exit error once it has exited.
func (c *child) wait(timeout time.Duration) (error, bool) {
	select {
	case <-c.exited:
		return c.err, true
	case <-time.After(timeout):
		return nil, false
	}
}

func (b *bundle) startChild(t testing.TB, env map[string]string) *child {
	t.Helper()
	return b.startBinary(t, processorBinary(t), env)
}

// startBinary runs a service binary (processor, ingest) as its own process
// on the bundle's configuration plus env.
func (b *bundle) startBinary(t testing.TB, bin string, env map[string]string) *child {
	t.Helper()
	cmd := exec.Command(bin)
	// The templates the in-process tests load: the test template and the
	// shipped ones, side by side in one directory.
	tmpl := t.TempDir()
	for _, dir := range []string{filepath.Join("testdata", "templates"), filepath.Join(repoRoot(t), "deploy", "templates")} {
		files, err := filepath.Glob(filepath.Join(dir, "*.yml"))
		require.NoError(t, err)
		for _, f := range files {
			require.NoError(t, os.WriteFile(filepath.Join(tmpl, filepath.Base(f)), mustRead(t, f), 0o600))
		}
	}
	vars := map[string]string{}
	for k, v := range b.env {
		vars[k] = v
	}
	vars["INTAKE_TEMPLATES_DIR"] = tmpl
	for k, v := range env {
		vars[k] = v
	}
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for k, v := range vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	c := &child{cmd: cmd, out: &lockedBuffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = c.out, c.out
	// The processor's own children (pdftotext, prlimit) inherit the output
	// pipe; if one outlives a kill -9, Wait would block on the pipe forever.
	// Its process group is killed with it, and WaitDelay bounds the rest.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 5 * time.Second
	require.NoError(t, cmd.Start())
	go func() { c.err = cmd.Wait(); close(c.exited) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-c.exited
		if t.Failed() {
			t.Logf("%s output:\n%s", filepath.Base(bin), c.out.String())
		}
	})
	return c
}

// Kill -9 a processor in the middle of a job: the job is redelivered to
// another processor process and the document finishes, exactly once.
func TestKillMidJob(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs processor processes")
	}
	b := setup(t, nil)
	b.addArticles()
	g := newGate(t, b.s3.Endpoint)
	proxied := map[string]string{"INTAKE_S3_ENDPOINT": g.url}

	first := b.startChild(t, proxied)
	d := b.create(orderPDF("KILL-1", nil), docOpts{})
	g.hold(d.LogID)
	b.flush()
	g.waitHit(t, 60*time.Second)
	require.NoError(t, first.cmd.Process.Signal(syscall.SIGKILL))
	err, exited := first.wait(10 * time.Second)
	require.True(t, exited)
	require.Error(t, err, "killed")
	got, err := b.st.Document(t.Context(), d.ID)
	require.NoError(t, err)
	require.Equal(t, document.StateReceived, got.State, "the killed worker left no outcome")

	g.open()
	second := b.startChild(t, proxied)
	d = b.waitState(d, document.StateProcessedSuccess, 60*time.Second)
	require.Equal(t, []document.State{document.StateReceived, document.StateProcessedSuccess}, transitions(b.events(d)))
	require.GreaterOrEqual(t, b.processorDelivered(), uint64(2), "the job was delivered again")

	// SIGTERM: the process drains and exits 0.
	require.NoError(t, second.cmd.Process.Signal(syscall.SIGTERM))
	err, exited = second.wait(30 * time.Second)
	require.True(t, exited, "processor did not exit after SIGTERM")
	require.NoError(t, err, second.out.String())
}

// Two processor instances on one consumer: 200 documents, each processed
// exactly once (one pair of result writes, one state change each), none
// left behind.
func TestTwoInstances200Documents(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.addArticles()
	a, c := b.start(), b.start()
	const n = 200
	docs := make([]document.Document, n)
	for i := range docs {
		docs[i] = b.create(orderPDF(fmt.Sprintf("TWO-%03d", i), nil), docOpts{})
	}
	b.flush()
	for _, d := range docs {
		b.waitState(d, document.StateProcessedSuccess, 90*time.Second)
	}
	require.EqualValues(t, 2*n, b.objects.results.Load(), "one XML and one JSON per document")
	perDoc := storetest.QueryMap[string, int](t, b.st.Pool(), `SELECT document_id::text, count(*) FROM document_events
		WHERE detail IS NULL OR detail NOT LIKE 'attempt %' GROUP BY document_id`)
	require.Len(t, perDoc, n)
	for id, k := range perDoc {
		require.Equal(t, 2, k, "document %s: received + processed_success only (besides the template pin)", id)
	}
	success := gauge(t, a.reg, "docintake_processor_jobs_total", "outcome", "success") +
		gauge(t, c.reg, "docintake_processor_jobs_total", "outcome", "success")
	require.Equal(t, float64(n), success)
	t.Logf("instance A processed %.0f, B %.0f", gauge(t, a.reg, "docintake_processor_jobs_total", "outcome", "success"),
		gauge(t, c.reg, "docintake_processor_jobs_total", "outcome", "success"))
	stats, err := queue.Stats(t.Context(), b.js, b.qcfg.Stream, b.qcfg.Processor.Durable)
	require.NoError(t, err)
	require.Zero(t, stats.Pending+uint64(stats.AckPending), "no job left")
}

// lockedBuffer collects a child's output.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
