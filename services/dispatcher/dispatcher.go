// Package dispatcher is docintake's webhook worker: it consumes
// intake.deliver.> jobs and delivers each outcome to the client's webhook.
package dispatcher

import (
	"context"
	"fmt"

	"github.com/docintake/docintake/pkg/config"
	"github.com/docintake/docintake/pkg/queue"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/system"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
)

// Deps are the connected adapters the dispatcher runs on.
type Deps struct {
	Store     *store.Store
	Objects   system.ObjectStore
	Templates system.Templates
	NATS      *nats.Conn
	JetStream jetstream.JetStream
	Logger    *zap.Logger
	Registry  *prometheus.Registry
}

// Run works until ctx is done, then drains.
func Run(ctx context.Context, cfg config.Config, d Deps) error {
	qcfg := system.QueueConfig(cfg)
	relay := queue.NewRelay(system.OutboxSource{Store: d.Store}, queue.NewPublisher(d.JetStream, qcfg.Stream),
		d.Logger.Named("relay"), queue.RelayOptions{})
	if err := relay.Run(ctx); err != nil {
		return fmt.Errorf("outbox relay: %w", err)
	}
	return nil
}
