// Package system assembles what every docintake process needs from its
// configuration: the migrated PostgreSQL store, the object store, the NATS
// connection with its stream, the clients file and the template catalogue.
// It is the shared part of the services' composition roots (their run
// functions and standalone), so that adapters never import each other.
package system

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/docintake/docintake/pkg/config"
	"github.com/docintake/docintake/pkg/objectstore"
	"github.com/docintake/docintake/pkg/queue"
	"github.com/docintake/docintake/pkg/store"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
)

// ObjectStore is what the services need of an object store.
type ObjectStore = objectstore.Store

// OpenObjects returns the S3 store when cfg.S3.Endpoint is set (creating the
// bucket if missing), else a filesystem store under fsDir ("" = error).
func OpenObjects(ctx context.Context, cfg config.S3, fsDir string) (ObjectStore, error) {
	if cfg.Endpoint == "" {
		if fsDir == "" {
			return nil, fmt.Errorf("INTAKE_S3_ENDPOINT is required")
		}
		return objectstore.NewFS(fsDir)
	}
	s3, err := objectstore.NewS3(objectstore.S3Config{Endpoint: cfg.Endpoint, Region: cfg.Region, Bucket: cfg.Bucket,
		AccessKey: cfg.AccessKey, SecretKey: cfg.SecretKey, PathStyle: cfg.PathStyle})
	if err != nil {
		return nil, err
	}
	ectx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := s3.EnsureBucket(ectx); err != nil {
		return nil, fmt.Errorf("s3 bucket %s: %w", cfg.Bucket, err)
	}
	return s3, nil
}

// ConnectNATS connects to url, reconnecting forever (a broker restart must
// not kill workers), and declares the stream and consumers.
func ConnectNATS(ctx context.Context, url, name string, qcfg queue.Config, logger *zap.Logger) (*nats.Conn, jetstream.JetStream, error) {
	nc, err := nats.Connect(url, nats.Name(name), nats.MaxReconnects(-1), nats.ReconnectWait(500*time.Millisecond),
		nats.RetryOnFailedConnect(false),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			logger.Warn("nats disconnected", zap.Error(err))
		}),
		nats.ReconnectHandler(func(c *nats.Conn) { logger.Info("nats reconnected", zap.String("url", c.ConnectedUrl())) }))
	if err != nil {
		return nil, nil, fmt.Errorf("connect nats %s: %w", url, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("jetstream: %w", err)
	}
	ectx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := queue.Ensure(ectx, js, qcfg); err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("ensure stream: %w", err)
	}
	return nc, js, nil
}

// The store's outbox is what the queue's relay reads (both speak
// jobs.Message), so NewRelay hands the store to queue.NewRelay directly.
var _ queue.OutboxSource = (*store.Store)(nil)

// EnsureDir creates dir (and parents) with owner-only permissions.
func EnsureDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("data dir %s: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o750); err != nil {
		return "", fmt.Errorf("data dir %s: %w", abs, err)
	}
	return abs, nil
}
