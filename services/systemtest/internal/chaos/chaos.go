// Package chaos is the fault harness behind `make chaos`: it runs docintake
// as separate processes (one ingest, two processors, two dispatchers) on
// their own PostgreSQL cluster, nats-server process and versitygw, uploads
// documents from concurrent clients while it kills and restarts services,
// the broker and the database, then waits for the system to quiesce and
// checks that no accepted document was lost or reported inconsistently.
//
// The harness is the system's client and its webhook receiver at once; it
// checks from the outside (HTTP answers, webhook calls, objects) and from the
// source of truth (PostgreSQL).
package chaos

import (
	"context"
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/docintake/docintake/services/systemtest/internal/sysproc"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Options configure one run. Zero values take the full run's defaults.
type Options struct {
	Documents    int           // uploads (default 2000)
	Clients      int           // concurrent uploading clients (default 16)
	Processors   int           // processor processes (default 2)
	Dispatchers  int           // dispatcher processes (default 2)
	KillEvery    time.Duration // mean time between kill -9 of a random service (default 3s)
	NATSRestarts int           // nats-server kill -9 + restart during the upload (default 2; <0: none)
	// NATSCluster runs three nats-servers clustered over loopback routes
	// with an R3 stream (INTAKE_STREAM_REPLICAS=3), as production does;
	// each NATS fault kills one node, the first one the stream's leader.
	NATSCluster bool
	PGRestarts  int           // PostgreSQL crash (immediate shutdown) + restart (default 1; <0: none)
	WebhookFail float64       // share of webhook calls the receiver answers 503 (default 0.02; <0: none)
	Quiesce     time.Duration // how long to wait for quiescence after the faults (default 10m)
	BinDir      string        // directory with ingest, processor, dispatcher; "" builds them
	WorkDir     string        // kept for inspection when set; else a temp dir removed after a green run
	LogLevel    string        // services' INTAKE_LOG_LEVEL (default info)
	Out         io.Writer     // progress and summary (default os.Stdout)
}

func (o *Options) defaults() {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&o.Documents, 2000)
	def(&o.Clients, 16)
	def(&o.Processors, 2)
	def(&o.Dispatchers, 2)
	def(&o.NATSRestarts, 2)
	def(&o.PGRestarts, 1)
	o.NATSRestarts, o.PGRestarts = max(o.NATSRestarts, 0), max(o.PGRestarts, 0)
	if o.KillEvery == 0 {
		o.KillEvery = 3 * time.Second
	}
	if o.WebhookFail == 0 {
		o.WebhookFail = 0.02
	}
	o.WebhookFail = max(o.WebhookFail, 0)
	if o.Quiesce == 0 {
		o.Quiesce = 10 * time.Minute
	}
	if o.LogLevel == "" {
		o.LogLevel = "info"
	}
	if o.Out == nil {
		o.Out = os.Stdout
	}
}

// Check is one verdict of the run.
type Check struct {
	Name   string
	OK     bool
	Detail string
}

// Report is the outcome of a run.
type Report struct {
	Checks  []Check
	Figures []string // counts worth recording (RELIABILITY.md)
	WorkDir string
}

// OK reports whether every check passed.
func (r *Report) OK() bool {
	for _, c := range r.Checks {
		if !c.OK {
			return false
		}
	}
	return len(r.Checks) > 0
}

func (r *Report) check(name string, ok bool, format string, args ...any) {
	r.Checks = append(r.Checks, Check{Name: name, OK: ok, Detail: fmt.Sprintf(format, args...)})
}

func (r *Report) figure(format string, args ...any) {
	r.Figures = append(r.Figures, fmt.Sprintf(format, args...))
}

// Print writes one line per figure and per check.
func (r *Report) Print(w io.Writer) {
	for _, f := range r.Figures {
		fmt.Fprintf(w, "  %s\n", f)
	}
	for _, c := range r.Checks {
		verdict := "PASS"
		if !c.OK {
			verdict = "FAIL"
		}
		fmt.Fprintf(w, "%s %-28s %s\n", verdict, c.Name, c.Detail)
	}
}

// tenant is one client of the system under test with its secrets.
type tenant struct {
	id, token, webhookToken, signingSecret string
	signingKey                             []byte
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = crand.Read(b)
	return hex.EncodeToString(b)
}

func newTenant(id string) tenant {
	key := make([]byte, 32)
	_, _ = crand.Read(key)
	return tenant{id: id, token: "chaos-tok-" + randomHex(16), webhookToken: "chaos-hook-" + randomHex(16),
		signingSecret: "whsec_" + base64.StdEncoding.EncodeToString(key), signingKey: key}
}

// service is a supervised docintake process: when it exits it is started
// again, after the down time the chaos loop chose or at once when it died
// by itself (for example because PostgreSQL was down while it started).
type service struct {
	p          *sysproc.Proc
	mu         sync.Mutex
	downUntil  time.Time
	starts     int
	kills      int
	unexpected int
}

func (s *service) supervise(ctx context.Context, logf func(string, ...any)) {
	for {
		if err := s.p.Start(); err != nil {
			logf("%v", err)
		} else {
			s.mu.Lock()
			s.starts++
			s.mu.Unlock()
		}
		select {
		case <-s.p.Running():
		case <-ctx.Done():
			s.p.Signal(syscall.SIGTERM, 15*time.Second)
			return
		}
		s.mu.Lock()
		wait := time.Until(s.downUntil)
		if !s.p.Intentional() {
			s.unexpected++
			wait = time.Second
		}
		s.mu.Unlock()
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return
		}
	}
}

// kill -9s the service; the supervisor restarts it after down.
func (s *service) kill(down time.Duration) {
	s.mu.Lock()
	s.downUntil = time.Now().Add(down)
	s.kills++
	s.mu.Unlock()
	s.p.Signal(syscall.SIGKILL, 5*time.Second)
}

// harness is one run's world.
type harness struct {
	opts    Options
	repo    string
	work    string
	logDir  string
	tenants map[string]tenant
	pg      *sysproc.Proc
	pgURL   string
	nats    *sysproc.Proc // the single server, or the first cluster node
	natsURL string
	// natsNodes are the servers (one without NATSCluster).
	natsNodes []sysproc.NATSNode
	s3        *sysproc.Proc
	s3URL     string
	recv      *receiver
	apiURL    string
	svcs      []*service
	pool      *pgxpool.Pool
	procs     []*sysproc.Proc
	start     time.Time
	report    *Report
	outMu     sync.Mutex // logf is called from many goroutines
}

func (h *harness) logf(format string, args ...any) {
	h.outMu.Lock()
	defer h.outMu.Unlock()
	fmt.Fprintf(h.opts.Out, "[%6.1fs] %s\n", time.Since(h.start).Seconds(), fmt.Sprintf(format, args...))
}

// Run executes one chaos run. The returned error means the harness itself
// could not run (missing binaries, a server that did not start); failed
// checks are in the report.
func Run(ctx context.Context, opts Options) (*Report, error) {
	opts.defaults()
	h := &harness{opts: opts, start: time.Now(), report: &Report{}}
	repo, err := sysproc.RepoRoot()
	if err != nil {
		return nil, err
	}
	h.repo = repo
	if opts.WorkDir != "" {
		h.work, err = filepath.Abs(opts.WorkDir)
		if err == nil {
			err = os.MkdirAll(h.work, 0o755)
		}
	} else {
		h.work, err = os.MkdirTemp("", "docintake-chaos-*")
	}
	if err != nil {
		return nil, fmt.Errorf("work dir: %w", err)
	}
	h.report.WorkDir = h.work
	h.logDir = filepath.Join(h.work, "logs")
	if err := os.MkdirAll(h.logDir, 0o755); err != nil {
		return nil, err
	}
	defer h.teardown()
	if err := h.setUp(ctx); err != nil {
		return nil, err
	}
	if err := h.exercise(ctx); err != nil {
		return nil, err
	}
	if h.report.OK() && opts.WorkDir == "" {
		defer os.RemoveAll(h.work)
	}
	return h.report, nil
}

func (h *harness) setUp(ctx context.Context) error {
	binDir := h.opts.BinDir
	if binDir == "" {
		binDir = filepath.Join(h.work, "bin")
		h.logf("building ingest, processor, dispatcher into %s", binDir)
		if err := sysproc.BuildServices(ctx, h.repo, binDir); err != nil {
			return err
		}
	}
	for _, s := range []string{"ingest", "processor", "dispatcher"} {
		if !sysproc.IsExec(filepath.Join(binDir, s)) {
			return fmt.Errorf("%s/%s missing (make build)", binDir, s)
		}
	}

	// PostgreSQL.
	var err error
	h.pg, h.pgURL, err = sysproc.NewPostgres(ctx, filepath.Join(h.work, "pg"), h.logDir)
	if err != nil {
		return err
	}
	h.procs = append(h.procs, h.pg)
	if err := h.startInfra(ctx, h.pg, sysproc.PGReady(h.pgURL)); err != nil {
		return err
	}
	h.pool, err = pgxpool.New(ctx, h.pgURL)
	if err != nil {
		return err
	}

	// nats-server: file store, fsync on every write.
	var natsAddr, s3Addr string
	if h.opts.NATSCluster {
		if h.natsNodes, h.natsURL, err = sysproc.NewNATSCluster(h.repo, h.work, h.logDir, 3); err != nil {
			return err
		}
	} else {
		if h.nats, h.natsURL, natsAddr, err = sysproc.NewNATS(h.repo, h.work, h.logDir); err != nil {
			return err
		}
		h.natsNodes = []sysproc.NATSNode{{Proc: h.nats, Name: "nats", Addr: natsAddr}}
	}
	h.nats = h.natsNodes[0].Proc
	for _, n := range h.natsNodes {
		h.procs = append(h.procs, n.Proc)
		if err := n.Proc.Start(); err != nil {
			return err
		}
	}
	for _, n := range h.natsNodes {
		if err := sysproc.WaitFor(ctx, n.Proc, 60*time.Second, sysproc.TCPReady(n.Addr)); err != nil {
			return err
		}
	}

	// versitygw.
	if h.s3, h.s3URL, s3Addr, err = sysproc.NewVersitygw(filepath.Join(h.work, "s3"), h.logDir, "chaos", "chaossecret"); err != nil {
		return err
	}
	h.procs = append(h.procs, h.s3)
	if err := h.startInfra(ctx, h.s3, sysproc.TCPReady(s3Addr)); err != nil {
		return err
	}

	// Tenants, their webhook receiver and the clients file.
	h.tenants = map[string]tenant{"chaos-a": newTenant("chaos-a"), "chaos-b": newTenant("chaos-b")}
	if h.recv, err = startReceiver(h.tenants, h.opts.WebhookFail); err != nil {
		return err
	}
	var clients strings.Builder
	clients.WriteString("clients:\n")
	for _, id := range []string{"chaos-a", "chaos-b"} {
		t := h.tenants[id]
		sum := sha256.Sum256([]byte(t.token))
		// The load repeats a few sample POs under new message ids, each
		// expected to end finished_success: the duplicate check is off.
		fmt.Fprintf(&clients, "  - id: %s\n    name: %s\n    token_sha256: [%q]\n    webhook_url: %s/hook/%s\n    webhook_token: %s\n    signing_secret: %s\n    duplicate_window_days: 0\n",
			id, id, hex.EncodeToString(sum[:]), h.recv.url, id, t.webhookToken, t.signingSecret)
	}
	clientsFile := filepath.Join(h.work, "clients.yaml")
	if err := os.WriteFile(clientsFile, []byte(clients.String()), 0o600); err != nil {
		return err
	}

	// The services.
	port, err := sysproc.FreePort()
	if err != nil {
		return err
	}
	apiAddr := fmt.Sprintf("127.0.0.1:%d", port)
	h.apiURL = "http://" + apiAddr
	common := h.serviceEnv(clientsFile)
	add := func(name, bin string, extra ...string) error {
		p, err := sysproc.NewProc(name, filepath.Join(binDir, bin), nil, append(append([]string{}, common...), extra...), h.logDir)
		if err != nil {
			return err
		}
		h.procs = append(h.procs, p)
		h.svcs = append(h.svcs, &service{p: p})
		return nil
	}
	if err := add("ingest", "ingest", "INTAKE_HTTP_ADDR="+apiAddr); err != nil {
		return err
	}
	for i := 1; i <= h.opts.Processors; i++ {
		if err := h.addWorker(add, "processor", i); err != nil {
			return err
		}
	}
	for i := 1; i <= h.opts.Dispatchers; i++ {
		if err := h.addWorker(add, "dispatcher", i); err != nil {
			return err
		}
	}
	h.logf("postgres %s, nats %s, s3 %s, api %s, receiver %s; logs in %s", h.pgURL, h.natsURL, h.s3URL, h.apiURL, h.recv.url, h.logDir)
	return nil
}

func (h *harness) addWorker(add func(string, string, ...string) error, kind string, i int) error {
	port, err := sysproc.FreePort()
	if err != nil {
		return err
	}
	return add(fmt.Sprintf("%s-%d", kind, i), kind, fmt.Sprintf("INTAKE_METRICS_ADDR=127.0.0.1:%d", port))
}

// serviceEnv is the configuration every service process gets: the
// harness's servers, and schedules short enough for the run to quiesce in
// minutes instead of the production defaults' hours.
func (h *harness) serviceEnv(clientsFile string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "INTAKE_") {
			env = append(env, kv)
		}
	}
	return append(env,
		"INTAKE_DATABASE_URL="+h.pgURL,
		"INTAKE_NATS_URL="+h.natsURL,
		"INTAKE_STREAM_REPLICAS="+strconv.Itoa(len(h.natsNodes)),
		"INTAKE_S3_ENDPOINT="+h.s3URL,
		"INTAKE_S3_BUCKET=chaos",
		"INTAKE_S3_ACCESS_KEY=chaos",
		"INTAKE_S3_SECRET_KEY=chaossecret",
		"INTAKE_CLIENTS_FILE="+clientsFile,
		"INTAKE_TEMPLATES_DIR="+filepath.Join(h.repo, "deploy", "templates"),
		"INTAKE_WEBHOOK_ALLOW_PRIVATE=true",
		"INTAKE_LOG_LEVEL="+h.opts.LogLevel,
		"INTAKE_SHUTDOWN_TIMEOUT=10s",
		"INTAKE_PROCESSOR_CONCURRENCY=2",
		// Hostile PDFs (cyclic page trees, flate bombs) run into the deadline
		// three times each before dlq; at the default 20s they would use
		// most of the run's worker time (RELIABILITY.md).
		"INTAKE_PDF_TIMEOUT=5s",
		"INTAKE_PROCESSOR_ACK_WAIT=6s",
		"INTAKE_PROCESSOR_FAILURE_BACKOFF=1s",
		"INTAKE_PROCESSOR_RETRY_SCHEDULE=1s,2s,4s",
		"INTAKE_WEBHOOK_TIMEOUT=5s",
		"INTAKE_WEBHOOK_RETRY_SCHEDULE=1s,2s,4s,8s,8s,8s,8s,8s",
		"INTAKE_STUCK_AFTER=30s",
		"INTAKE_SWEEP_INTERVAL=2s",
	)
}

func (h *harness) startInfra(ctx context.Context, p *sysproc.Proc, ready func(context.Context) error) error {
	if err := p.Start(); err != nil {
		return err
	}
	return sysproc.WaitFor(ctx, p, 60*time.Second, ready)
}

// restartInfra crashes a server (sig), keeps it down for down, and starts
// it again on the same port and data.
func (h *harness) restartInfra(ctx context.Context, p *sysproc.Proc, sig syscall.Signal, down time.Duration, ready func(context.Context) error) error {
	h.logf("fault: %s %s, down for %s", sig, p.Name, down)
	p.Signal(sig, 30*time.Second)
	select {
	case <-time.After(down):
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := h.startInfra(ctx, p, ready); err != nil {
		return err
	}
	h.logf("%s back", p.Name)
	return nil
}

func (h *harness) teardown() {
	if h.pool != nil {
		h.pool.Close()
	}
	if h.recv != nil {
		h.recv.close()
	}
	// Services first (the supervisors' context is already done), then the
	// servers they depend on.
	sysproc.StopAll(h.procs, 15*time.Second)
}

// exercise runs the load and the faults, waits for quiescence and checks.
func (h *harness) exercise(ctx context.Context) error {
	svcCtx, stopSvcs := context.WithCancel(ctx)
	var svcWG sync.WaitGroup
	for _, s := range h.svcs {
		svcWG.Add(1)
		go func() { defer svcWG.Done(); s.supervise(svcCtx, h.logf) }()
	}
	defer func() { stopSvcs(); svcWG.Wait() }()
	if err := sysproc.WaitFor(ctx, h.svcs[0].p, 60*time.Second, func(ctx context.Context) error {
		res, err := http.Get(h.apiURL + "/readyz")
		if err != nil {
			return err
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return fmt.Errorf("readyz %d", res.StatusCode)
		}
		return nil
	}); err != nil {
		return err
	}

	samples, shared, err := corpus(h.repo)
	if err != nil {
		return err
	}
	run := randomHex(4)
	ups := make([]*upload, h.opts.Documents)
	for i, s := range pick(samples, h.opts.Documents) {
		ten := "chaos-a"
		if i%3 == 2 {
			ten = "chaos-b"
		}
		ups[i] = &upload{sample: s, tenant: ten, messageID: fmt.Sprintf("chaos-%s-%05d", run, i), json: i%4 == 3}
	}
	h.logf("uploading %d documents (shared corpus: %v) from %d clients; kill -9 every ~%s, %d nats-server and %d PostgreSQL restarts",
		len(ups), shared, h.opts.Clients, h.opts.KillEvery, h.opts.NATSRestarts, h.opts.PGRestarts)

	u := &uploader{url: h.apiURL, tenants: h.tenants, retries: map[string]int{}, giveUp: 5 * time.Minute,
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: h.opts.Clients}}}
	loadStart := time.Now()
	loadDone := make(chan struct{})
	var loadTime time.Duration
	go func() {
		defer close(loadDone)
		u.run(ctx, ups, h.opts.Clients)
		loadTime = time.Since(loadStart)
		h.logf("uploads done in %s", loadTime.Round(time.Millisecond))
	}()
	faults, err := h.chaos(ctx, u, loadDone)
	<-loadDone
	if err != nil {
		return err
	}
	h.logf("faults stopped after %s: %s; waiting for quiescence", time.Since(loadStart).Round(time.Millisecond), faults)

	quietStart := time.Now()
	quiet, state := h.quiesce(ctx)
	quiesceTime := time.Since(quietStart)
	h.logf("quiescence: %v after %s (%s)", quiet, quiesceTime.Round(time.Millisecond), state)

	rep := h.report
	rep.figure("documents %d (clients %d, processors %d, dispatchers %d), uploads took %s (%.1f/s)",
		len(ups), h.opts.Clients, h.opts.Processors, h.opts.Dispatchers, loadTime.Round(time.Millisecond),
		float64(len(ups))/loadTime.Seconds())
	rep.figure("faults injected: %s", faults)
	rep.figure("upload retries: %s", u.retryCounts())
	rep.check("quiesced", quiet, "after %s (%s)", quiesceTime.Round(time.Millisecond), state)
	return h.verify(ctx, ups)
}

// chaos kills a random service every ~KillEvery until the uploads are done
// and, meanwhile, crashes nats-server and PostgreSQL at evenly spread
// points of the upload progress. It returns a summary of what it did.
func (h *harness) chaos(ctx context.Context, u *uploader, loadDone <-chan struct{}) (string, error) {
	var infra []string
	for i := 0; i < max(h.opts.NATSRestarts, h.opts.PGRestarts); i++ {
		if i < h.opts.NATSRestarts {
			infra = append(infra, "nats")
		}
		if i < h.opts.PGRestarts {
			infra = append(infra, "postgres")
		}
	}
	// Progress counts answered uploads and documents at rest, so the
	// faults hit the upload, processing and delivery phases alike.
	var settled atomic.Int64
	progress := func() float64 {
		return float64(u.done.Load()+settled.Load()) / float64(2*h.opts.Documents)
	}
	pollCtx, stopPoll := context.WithCancel(ctx)
	defer stopPoll()
	go func() {
		for pollCtx.Err() == nil {
			var n int64
			if err := h.pool.QueryRow(pollCtx, `SELECT count(*) FROM documents WHERE state LIKE 'finished\_%' OR state = 'dlq'`).Scan(&n); err == nil {
				settled.Store(n)
			}
			select {
			case <-pollCtx.Done():
			case <-time.After(time.Second):
			}
		}
	}()
	var mu sync.Mutex
	kills := map[string]int{}
	infraErr := make(chan error, 1)
	killsDone := make(chan struct{})
	go func() {
		for i, what := range infra {
			at := float64(i+1) / float64(len(infra)+1)
			for progress() < at && !isClosed(killsDone) {
				select {
				case <-ctx.Done():
					infraErr <- ctx.Err()
					return
				case <-killsDone:
				case <-time.After(100 * time.Millisecond):
				}
			}
			var err error
			switch what {
			case "nats":
				var leader bool
				if leader, err = h.restartNATSNode(ctx, i == 0); err == nil && leader {
					mu.Lock()
					kills["nats-leader"]++
					mu.Unlock()
				}
			case "postgres":
				// Immediate shutdown: no checkpoint, crash recovery at the
				// next start, like a power cut (a SIGKILLed postmaster would
				// leave its backends holding the shared memory).
				err = h.restartInfra(ctx, h.pg, syscall.SIGQUIT, 3*time.Second, sysproc.PGReady(h.pgURL))
			}
			if err != nil {
				infraErr <- err
				return
			}
			mu.Lock()
			kills[what]++
			mu.Unlock()
		}
		infraErr <- nil
	}()
	// The first kill comes early, so that short runs kill the API while
	// clients are still uploading.
	wait := min(jitter(h.opts.KillEvery), time.Second)
	// Kill until the uploads are done and 95 % of the documents are at rest;
	// the rest must then settle without help.
	for {
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		wait = jitter(h.opts.KillEvery)
		if ctx.Err() != nil || (isClosed(loadDone) && progress() >= 0.975) || time.Since(h.start) > h.opts.Quiesce {
			break
		}
		s := h.svcs[rand.IntN(len(h.svcs))]
		mu.Lock()
		if !isClosed(loadDone) && kills["ingest"] == 0 {
			s = h.svcs[0] // make sure at least one upload meets a dead API
		}
		mu.Unlock()
		down := time.Duration(200+rand.IntN(1800)) * time.Millisecond
		h.logf("fault: kill -9 %s (%d/%d uploads answered, %d at rest), down for %s", s.p.Name, u.done.Load(), h.opts.Documents, settled.Load(), down)
		s.kill(down)
		mu.Lock()
		kills[s.p.Name]++
		mu.Unlock()
	}
	close(killsDone)
	if err := <-infraErr; err != nil {
		return "", err
	}
	var parts []string
	n := 0
	for _, name := range append([]string{"nats", "nats-leader", "postgres"}, h.serviceNames()...) {
		if kills[name] > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", name, kills[name]))
			if name != "nats" && name != "nats-leader" && name != "postgres" {
				n += kills[name]
			}
		}
	}
	return fmt.Sprintf("%d service kills (%s)", n, strings.Join(parts, " ")), nil
}

// restartNATSNode kills -9 one NATS server and starts it again on the same
// port and data: the only one without a cluster; in a cluster the stream's
// leader when leaderFirst (and it can be found), else a random node. It
// reports whether the node killed led the stream.
func (h *harness) restartNATSNode(ctx context.Context, leaderFirst bool) (bool, error) {
	node := h.natsNodes[rand.IntN(len(h.natsNodes))]
	leader := h.streamLeader(ctx)
	if leaderFirst && leader != "" {
		for _, n := range h.natsNodes {
			if n.Name == leader {
				node = n
			}
		}
	}
	err := h.restartInfra(ctx, node.Proc, syscall.SIGKILL, 2*time.Second, sysproc.TCPReady(node.Addr))
	return len(h.natsNodes) > 1 && node.Name == leader, err
}

// streamLeader names the server that leads the stream; "" when unknown.
func (h *harness) streamLeader(ctx context.Context) string {
	if len(h.natsNodes) < 2 {
		return ""
	}
	nc, err := nats.Connect(h.natsURL, nats.Timeout(5*time.Second))
	if err != nil {
		return ""
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, "INTAKE")
	if err != nil || s.CachedInfo().Cluster == nil {
		return ""
	}
	return s.CachedInfo().Cluster.Leader
}

func (h *harness) serviceNames() []string {
	var out []string
	for _, s := range h.svcs {
		out = append(out, s.p.Name)
	}
	return out
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// jitter returns d ± 50 %.
func jitter(d time.Duration) time.Duration {
	return d/2 + time.Duration(rand.Int64N(int64(d)+1))
}

// quiesce waits until every document is at rest (finished_* or dlq), no
// delivery is pending, the outbox is empty and every dlq document's failure
// notice is delivered, twice in a row one second apart.
func (h *harness) quiesce(ctx context.Context) (bool, string) {
	deadline := time.Now().Add(h.opts.Quiesce)
	quietPolls := 0
	state := ""
	for time.Now().Before(deadline) {
		var moving, pending, unsent, unnotified int
		err := h.pool.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM documents WHERE state NOT LIKE 'finished\_%' AND state <> 'dlq'),
			(SELECT count(*) FROM deliveries WHERE outcome = 'pending'),
			(SELECT count(*) FROM outbox WHERE sent_at IS NULL),
			(SELECT count(*) FROM documents d WHERE d.state = 'dlq' AND NOT EXISTS (
				SELECT 1 FROM deliveries x WHERE x.document_id = d.id AND x.status = 'failed' AND x.outcome <> 'pending'))`).
			Scan(&moving, &pending, &unsent, &unnotified)
		if err != nil {
			state = err.Error()
			quietPolls = 0
		} else {
			state = fmt.Sprintf("%d documents in flight, %d deliveries pending, %d outbox rows unsent, %d dlq notices undelivered",
				moving, pending, unsent, unnotified)
			if moving+pending+unsent+unnotified == 0 {
				quietPolls++
				if quietPolls >= 2 {
					return true, state
				}
			} else {
				quietPolls = 0
			}
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err().Error()
		case <-time.After(time.Second):
		}
	}
	return false, state
}
