// Package standalone runs the whole docintake system in one process: the
// ingest API, the processor and the dispatcher, on an embedded JetStream
// server, a filesystem object store (unless S3 is configured) and
// PostgreSQL from INTAKE_DATABASE_URL or a private cluster under the data
// directory. It is for development and small sites; extra processor or
// dispatcher processes and intakectl can join its NATS server.
package standalone

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/docintake/docintake/pkg/intake"
	"github.com/docintake/docintake/pkg/mailbox"
	"github.com/docintake/docintake/pkg/store"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/config"
	"github.com/docintake/docintake/pkg/observability"
	"github.com/docintake/docintake/pkg/system"
	"github.com/docintake/docintake/services/dispatcher"
	"github.com/docintake/docintake/services/ingest"
	"github.com/docintake/docintake/services/mailintake"
	"github.com/docintake/docintake/services/processor"
	"github.com/docintake/docintake/services/standalone/internal/pgcluster"
	"github.com/nats-io/nats-server/v2/server"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"
)

// Run starts everything and serves until ctx is done, then drains the API,
// the workers, the process's one outbox relay, NATS and the private
// PostgreSQL (if it started one), in that order. bound, if not nil, receives the API address once it listens.
func Run(ctx context.Context, cfg config.Config, logger *zap.Logger, bound chan<- string) error {
	dataDir, err := system.EnsureDir(cfg.DataDir)
	if err != nil {
		return err
	}

	if cfg.DatabaseURL == "" {
		url, stop, err := startPrivatePostgres(ctx, dataDir, logger)
		if err != nil {
			return err
		}
		defer stop()
		cfg.DatabaseURL = url
	}
	st, err := store.Connect(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer st.Pool().Close()
	if cfg.ClientsFile != "" {
		specs, err := system.LoadClientsFile(cfg.ClientsFile)
		if err != nil {
			return err
		}
		if err := system.ApplyClients(ctx, st, specs); err != nil {
			return err
		}
	}
	tmpls, err := catalogue.Open(ctx, st, logger.Named("templates"),
		catalogue.Options{Dirs: []string{cfg.TemplatesDir}})
	if err != nil {
		return err
	}
	defer tmpls.Close()
	objs, err := system.OpenObjects(ctx, cfg.S3, filepath.Join(dataDir, "objects"))
	if err != nil {
		return err
	}

	ns, natsToken, err := startEmbeddedNATS(cfg.NATSListen, dataDir, logger)
	if err != nil {
		return err
	}
	defer func() {
		ns.Shutdown()
		ns.WaitForShutdown()
	}()
	nc, js, err := system.ConnectNATS(ctx, withToken(ns.ClientURL(), natsToken), "docintake-standalone", cfg.Queue(), logger)
	if err != nil {
		return err
	}
	defer nc.Close()

	reg := observability.NewRegistry()
	adapters := system.Adapters{Store: st, Objects: objs, NATS: nc, JetStream: js, Logger: logger, Registry: reg}
	// One outbox relay for the process, not one per service: the three
	// services only write outbox rows, which the store hands to it. It
	// stops after all of them have drained.
	relay := system.NewRelay(adapters, cfg)
	err = relay.Serve(ctx, cfg.ShutdownTimeout, func(ctx context.Context) error {
		return runServices(ctx, cfg, adapters, tmpls, bound)
	})
	if derr := nc.Drain(); derr != nil {
		logger.Warn("nats drain", zap.Error(derr))
	}
	return err
}

// runServices runs ingest, the processor, the dispatcher and the profiler on
// a until ctx is done. The API stops first (ctx); the workers keep running
// until it has drained, so nothing it accepted waits for the next start.
func runServices(ctx context.Context, cfg config.Config, a system.Adapters, tmpls *catalogue.Catalogue, bound chan<- string) error {
	if cfg.MailboxesFile != "" {
		// Applied to the mailboxes table, which the mail intake follows
		// (and intakectl mailboxes edits).
		boxes, err := mailbox.LoadMailboxes(cfg.MailboxesFile)
		if err != nil {
			return err
		}
		if err := mailbox.ApplyMailboxes(ctx, a.Store, boxes); err != nil {
			return err
		}
	}
	workCtx, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWork()
	g := new(errgroup.Group)
	// An intake channel like the API: it stops taking mail with ctx, while
	// the workers drain what it committed. With no mailbox configured it
	// only looks at the table each minute.
	g.Go(func() error {
		a := a.Named("mailintake")
		in := &intake.Service{Store: a.Store, Objects: a.Objects, Templates: tmpls, SubjectPrefix: cfg.SubjectPrefix,
			Logger: a.Logger}
		return mailintake.Run(ctx, mailintake.Deps{Load: mailintake.StoredMailboxes(a.Store), Store: a.Store, Intake: in,
			Logger: a.Logger, Registry: a.Registry, Tuning: mailintake.Tuning{Read: mailbox.Tuning{MaxPDFBytes: cfg.MaxUploadBytes}}})
	})
	g.Go(func() error {
		defer stopWork()
		a := a.Named("ingest")
		return ingest.Run(ctx, ingest.Deps{Config: cfg, Store: a.Store, Objects: a.Objects, Templates: tmpls, NATS: a.NATS,
			JetStream: a.JetStream, Logger: a.Logger, Registry: a.Registry, Bound: bound})
	})
	g.Go(func() error {
		a := a.Named("processor")
		return processor.Run(workCtx, processor.Deps{Config: cfg, Store: a.Store, Objects: a.Objects, Templates: tmpls,
			NATS: a.NATS, JetStream: a.JetStream, Logger: a.Logger, Registry: a.Registry})
	})
	g.Go(func() error { return observability.ServePprof(workCtx, cfg.PprofAddr) })
	g.Go(func() error {
		da := a.Named("dispatcher")
		return dispatcher.Run(workCtx, dispatcher.Deps{Config: cfg, Store: da.Store, Objects: da.Objects,
			JetStream: da.JetStream, Logger: da.Logger, Registry: da.Registry})
	})
	return g.Wait()
}

// withToken puts the NATS token into a nats:// URL (nats.go reads a user
// without password as the token).
func withToken(natsURL, token string) string {
	return strings.Replace(natsURL, "nats://", "nats://"+token+"@", 1)
}

// startPrivatePostgres starts the PostgreSQL cluster standalone runs under
// dataDir when no INTAKE_DATABASE_URL is set, and returns its URL and stop,
// which shuts it down (logging a failure) and closes its log.
func startPrivatePostgres(ctx context.Context, dataDir string, logger *zap.Logger) (url string, stop func(), err error) {
	logf, err := os.OpenFile(filepath.Join(dataDir, "postgres.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return "", nil, fmt.Errorf("postgres log: %w", err)
	}
	pw, err := secret(filepath.Join(dataDir, "postgres.password"))
	if err != nil {
		logf.Close()
		return "", nil, err
	}
	cluster, err := pgcluster.Start(ctx, filepath.Join(dataDir, "postgres"), pw, logf)
	if err != nil {
		logf.Close()
		return "", nil, fmt.Errorf("private postgres (or set INTAKE_DATABASE_URL): %w", err)
	}
	stop = func() {
		if err := cluster.Stop(); err != nil {
			logger.Warn("stop postgres", zap.Error(err))
		}
		logf.Close()
	}
	logger.Info("started private postgres", zap.String("dir", filepath.Join(dataDir, "postgres")),
		zap.String("url", fmt.Sprintf("postgres://postgres:PASSWORD@127.0.0.1:%d/docintake", cluster.Port)),
		zap.String("password_file", filepath.Join(dataDir, "postgres.password")))
	return cluster.URL, stop, nil
}

// startEmbeddedNATS starts the embedded NATS server on listen with the
// token kept under dataDir, and returns the server and the token.
func startEmbeddedNATS(listen, dataDir string, logger *zap.Logger) (*server.Server, string, error) {
	natsToken, err := secret(filepath.Join(dataDir, "nats.token"))
	if err != nil {
		return nil, "", err
	}
	ns, err := startNATS(listen, filepath.Join(dataDir, "nats"), natsToken)
	if err != nil {
		return nil, "", err
	}
	logger.Info("embedded nats listening", zap.String("url", ns.ClientURL()),
		zap.String("token_file", filepath.Join(dataDir, "nats.token")))
	return ns, natsToken, nil
}

// startNATS runs an embedded JetStream server on listen with its store in
// dir; clients must present token. sync_interval always: JetStream
// acknowledges before fsync otherwise, and an accepted document must survive
// a power loss (DESIGN.md).
func startNATS(listen, dir, token string) (*server.Server, error) {
	host, portStr, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, fmt.Errorf("INTAKE_NATS_LISTEN %q: %w", listen, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return nil, fmt.Errorf("INTAKE_NATS_LISTEN %q: bad port", listen)
	}
	if port == 0 {
		port = server.RANDOM_PORT
	}
	opts := &server.Options{ServerName: "docintake-standalone", Host: host, Port: port, JetStream: true,
		StoreDir: dir, SyncAlways: true, SyncInterval: 2 * time.Minute, NoSigs: true, NoLog: true, Authorization: token}
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("embedded nats: %w", err)
	}
	ns.Start()
	if !ns.ReadyForConnections(30 * time.Second) {
		ns.Shutdown()
		return nil, fmt.Errorf("embedded nats did not start on %s (port in use?)", listen)
	}
	return ns, nil
}
