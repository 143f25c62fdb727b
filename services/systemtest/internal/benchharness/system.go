package benchharness

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/docintake/docintake/pkg/objectstore"
	"github.com/docintake/docintake/services/systemtest/internal/sysproc"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Tenants of the run: the end-to-end load is spread over several clients
// because the dispatcher limits webhook calls per client
// (INTAKE_WEBHOOK_CLIENT_CONCURRENCY); the ingest measurement has a client
// of its own, whose jobs are purged before any processor starts.
var e2eTenants = []string{"bench-a", "bench-b", "bench-c", "bench-d"}

const ingestTenant = "bench-ingest"

const (
	s3Access = "bench"
	s3Secret = "benchsecret"
	s3Bucket = "bench"
)

// service is one docintake process of the run.
type service struct {
	p         *sysproc.Proc
	readyURL  string // GET answers 200 when the service is ready
	pprofAddr string // "" without profiling
}

// system is the docintake deployment under test: PostgreSQL, nats-server,
// versitygw, one ingest, processors and a dispatcher as separate
// processes, and the webhook receiver in the harness.
type system struct {
	binDir, work, logDir string
	pg, nats, s3         *sysproc.Proc
	pgURL, natsURL       string
	s3cfg                objectstore.S3Config
	apiURL               string
	recv                 *receiver
	pool                 *pgxpool.Pool
	env                  []string
	ingest, dispatcher   *service
	processors           []*service
	all                  []*sysproc.Proc // teardown order reversed
	profile              bool
	extraEnv             []string
	tokens               map[string]string // tenant → access token
}

func (s *system) start(ctx context.Context, repo, templatesDir string) error {
	var err error
	if s.pg, s.pgURL, err = sysproc.NewPostgres(ctx, filepath.Join(s.work, "pg"), s.logDir); err != nil {
		return err
	}
	if err := s.startInfra(ctx, s.pg, sysproc.PGReady(s.pgURL)); err != nil {
		return err
	}
	if s.pool, err = pgxpool.New(ctx, s.pgURL); err != nil {
		return err
	}
	var natsAddr, s3Addr, s3URL string
	if s.nats, s.natsURL, natsAddr, err = sysproc.NewNATS(repo, s.work, s.logDir); err != nil {
		return err
	}
	if err := s.startInfra(ctx, s.nats, sysproc.TCPReady(natsAddr)); err != nil {
		return err
	}
	if s.s3, s3URL, s3Addr, err = sysproc.NewVersitygw(filepath.Join(s.work, "s3"), s.logDir, s3Access, s3Secret); err != nil {
		return err
	}
	if err := s.startInfra(ctx, s.s3, sysproc.TCPReady(s3Addr)); err != nil {
		return err
	}
	s.s3cfg = objectstore.S3Config{Endpoint: s3URL, Bucket: s3Bucket, AccessKey: s3Access, SecretKey: s3Secret, PathStyle: true}

	s.tokens = map[string]string{}
	hookToken := "bench-hook-" + randomHex(8)
	if s.recv, err = startReceiver(hookToken); err != nil {
		return err
	}
	var clients strings.Builder
	clients.WriteString("clients:\n")
	for _, id := range append([]string{ingestTenant}, e2eTenants...) {
		tok := "bench-tok-" + randomHex(12)
		s.tokens[id] = tok
		sum := sha256.Sum256([]byte(tok))
		// The load repeats a few POs: every copy is processed as a new
		// order (duplicate_window_days 0), as throughput is measured on.
		fmt.Fprintf(&clients, "  - id: %s\n    name: %s\n    token_sha256: [%q]\n    webhook_url: %s/hook/%s\n    webhook_token: %s\n    duplicate_window_days: 0\n",
			id, id, hex.EncodeToString(sum[:]), s.recv.url, id, hookToken)
	}
	clientsFile := filepath.Join(s.work, "clients.yaml")
	if err := os.WriteFile(clientsFile, []byte(clients.String()), 0o600); err != nil {
		return err
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "INTAKE_") {
			s.env = append(s.env, kv)
		}
	}
	// Production defaults everywhere except what a loopback test needs.
	s.env = append(s.env,
		"INTAKE_DATABASE_URL="+s.pgURL,
		"INTAKE_NATS_URL="+s.natsURL,
		"INTAKE_S3_ENDPOINT="+s3URL,
		"INTAKE_S3_BUCKET="+s3Bucket,
		"INTAKE_S3_ACCESS_KEY="+s3Access,
		"INTAKE_S3_SECRET_KEY="+s3Secret,
		"INTAKE_CLIENTS_FILE="+clientsFile,
		"INTAKE_TEMPLATES_DIR="+templatesDir,
		"INTAKE_WEBHOOK_ALLOW_PRIVATE=true",
		"INTAKE_LOG_LEVEL=warn",
	)
	s.env = append(s.env, s.extraEnv...)

	apiAddr, err := sysproc.FreeAddr()
	if err != nil {
		return err
	}
	s.apiURL = "http://" + apiAddr
	if s.ingest, err = s.newService("ingest", "ingest", apiAddr, "INTAKE_HTTP_ADDR="+apiAddr); err != nil {
		return err
	}
	// ingest migrates the database and applies the clients file; the
	// workers start later, one phase at a time.
	return s.startService(ctx, s.ingest)
}

func (s *system) startInfra(ctx context.Context, p *sysproc.Proc, ready func(context.Context) error) error {
	s.all = append(s.all, p)
	if err := p.Start(); err != nil {
		return err
	}
	return sysproc.WaitFor(ctx, p, 60*time.Second, ready)
}

// newService prepares a docintake process; readyAddr serves /readyz
// (ingest: its API, workers: their metrics port).
func (s *system) newService(name, bin, readyAddr string, extra ...string) (*service, error) {
	return s.newServiceCmd(name, filepath.Join(s.binDir, bin), nil, readyAddr, extra...)
}

// newServiceCmd is newService for a command line of its own (a wrapper
// that prepares the process, then executes the service).
func (s *system) newServiceCmd(name, path string, args []string, readyAddr string, extra ...string) (*service, error) {
	env := append(append([]string{}, s.env...), extra...)
	svc := &service{readyURL: "http://" + readyAddr + "/readyz"}
	if s.profile {
		addr, err := sysproc.FreeAddr()
		if err != nil {
			return nil, err
		}
		svc.pprofAddr = addr
		env = append(env, "INTAKE_PPROF_ADDR="+svc.pprofAddr)
	}
	p, err := sysproc.NewProc(name, path, args, env, s.logDir)
	if err != nil {
		return nil, err
	}
	svc.p = p
	return svc, nil
}

func (s *system) newWorker(kind string, n int) (*service, error) {
	addr, err := sysproc.FreeAddr()
	if err != nil {
		return nil, err
	}
	return s.newService(fmt.Sprintf("%s-%d", kind, n), kind, addr, "INTAKE_METRICS_ADDR="+addr)
}

func (s *system) startService(ctx context.Context, svc *service) error {
	s.all = append(s.all, svc.p)
	if err := svc.p.Start(); err != nil {
		return err
	}
	return sysproc.WaitFor(ctx, svc.p, 60*time.Second, func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, svc.readyURL, nil)
		if err != nil {
			return err
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return fmt.Errorf("readyz %d", res.StatusCode)
		}
		return nil
	})
}

// addProcessor starts one more processor process.
func (s *system) addProcessor(ctx context.Context) error {
	svc, err := s.newWorker("processor", len(s.processors)+1)
	if err != nil {
		return err
	}
	s.processors = append(s.processors, svc)
	return s.startService(ctx, svc)
}

func (s *system) startDispatcher(ctx context.Context) error {
	var err error
	if s.dispatcher, err = s.newWorker("dispatcher", 1); err != nil {
		return err
	}
	return s.startService(ctx, s.dispatcher)
}

// services lists the docintake processes started so far.
func (s *system) services() []*service {
	out := []*service{s.ingest}
	out = append(out, s.processors...)
	if s.dispatcher != nil {
		out = append(out, s.dispatcher)
	}
	return out
}

func (s *system) stop() {
	if s.pool != nil {
		s.pool.Close()
	}
	if s.recv != nil {
		s.recv.close()
	}
	sysproc.StopAll(s.all, 15*time.Second)
}
