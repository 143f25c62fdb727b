package ingest

import (
	"context"
	"time"

	"github.com/docintake/docintake/pkg/queue"
	"github.com/docintake/docintake/pkg/store"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
)

var (
	descOutboxUnsent = prometheus.NewDesc("docintake_outbox_unsent",
		"Outbox rows committed and not yet published to JetStream (from PostgreSQL).", nil, nil)
	descOutboxOldest = prometheus.NewDesc("docintake_outbox_oldest_unsent_age_seconds",
		"Age of the oldest unpublished outbox row (0 when none): grows when no relay runs or the broker refuses publishes.", nil, nil)
	descOldestPending = prometheus.NewDesc("docintake_consumer_oldest_pending_age_seconds",
		"Age of the oldest message a JetStream consumer has not delivered yet (0 when none): how long the head of the queue waits.",
		[]string{"consumer"}, nil)
)

// backlogCollector reads the outbox and the consumers' oldest pending
// message at scrape time. The processor exports the consumers' counters and
// the documents by state; these are the ages only ingest's view adds. A
// source that does not answer leaves its series out of that scrape.
type backlogCollector struct {
	st        *store.Store
	js        jetstream.JetStream
	stream    string
	consumers []string
}

// RegisterBacklogMetrics registers the outbox and queue-age gauges on reg.
// Registering twice on one registry (two ingest servers in a test) keeps
// the first.
func RegisterBacklogMetrics(reg prometheus.Registerer, st *store.Store, js jetstream.JetStream, stream string, consumers []string) {
	_ = reg.Register(&backlogCollector{st: st, js: js, stream: stream, consumers: consumers})
}

func (c *backlogCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descOutboxUnsent
	ch <- descOutboxOldest
	ch <- descOldestPending
}

func (c *backlogCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if n, oldest, now, err := c.st.OutboxBacklog(ctx); err == nil {
		age := 0.0
		if !oldest.IsZero() {
			age = max(now.Sub(oldest).Seconds(), 0)
		}
		ch <- prometheus.MustNewConstMetric(descOutboxUnsent, prometheus.GaugeValue, float64(n))
		ch <- prometheus.MustNewConstMetric(descOutboxOldest, prometheus.GaugeValue, age)
	}
	if c.js == nil {
		return
	}
	for _, name := range c.consumers {
		at, ok, err := queue.OldestPending(ctx, c.js, c.stream, name)
		if err != nil {
			continue
		}
		age := 0.0
		if ok {
			age = max(time.Since(at).Seconds(), 0)
		}
		ch <- prometheus.MustNewConstMetric(descOldestPending, prometheus.GaugeValue, age, name)
	}
}
