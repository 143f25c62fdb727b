package processor

import (
	"context"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/observability"
	"github.com/docintake/docintake/pkg/queue"
	"github.com/docintake/docintake/pkg/store"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the processor's Prometheus series. Counters count this
// process's work; the gauges (documents by state, oldest received document,
// consumer backlog) are read from PostgreSQL and JetStream at scrape time,
// so every replica reports the same system-wide values.
type metrics struct {
	jobs        *prometheus.CounterVec
	extractSecs *prometheus.HistogramVec
	swept       prometheus.Counter
	held        prometheus.Gauge
	flags       *prometheus.CounterVec // flags.go
}

func newMetrics(reg *prometheus.Registry, st *store.Store, js jetstream.JetStream, q queue.Config) *metrics {
	m := &metrics{
		jobs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "docintake_processor_jobs_total",
			Help: "Process jobs handled, by outcome (success, rejected, held_for_review, ignored, deferred, dlq, failed_attempt, retry, duplicate, superseded, invalid).",
		}, []string{"outcome"}),
		extractSecs: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "docintake_processor_extraction_seconds",
			Help:    "Time to extract one PDF's text, by the engine(s) that produced it.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 20, 60},
		}, []string{"engine"}),
		swept: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "docintake_processor_swept_total",
			Help: "Documents the sweeper re-enqueued because their job was lost or overdue.",
		}),
		flags: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "docintake_processor_flags_total",
			Help: "Flags raised on orders read exactly, by kind (price, price_no_entry, delivery_date_before_order, delivery_date_past).",
		}, []string{"kind"}),
		held: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "docintake_processor_window_held",
			Help: "Process jobs this processor has pulled into its fair window and not yet started (the broker counts them as ack pending).",
		}),
	}
	if reg == nil {
		return m
	}
	m.jobs = observability.Register(reg, m.jobs)
	m.extractSecs = observability.Register(reg, m.extractSecs)
	m.swept = observability.Register(reg, m.swept)
	m.held = observability.Register(reg, m.held)
	m.flags = observability.Register(reg, m.flags)
	observability.Register(reg, prometheus.Collector(&stateCollector{st: st, js: js, stream: q.Stream,
		consumers: []string{q.Processor.Durable, q.Dispatcher.Durable}}))
	return m
}

func (m *metrics) job(outcome string) { m.jobs.WithLabelValues(outcome).Inc() }

func (m *metrics) extraction(engine string, d time.Duration) {
	m.extractSecs.WithLabelValues(engine).Observe(d.Seconds())
}

var (
	descDocuments = prometheus.NewDesc("docintake_documents", "Documents by state (from PostgreSQL).", []string{"state"}, nil)
	descOldest    = prometheus.NewDesc("docintake_oldest_received_age_seconds",
		"Age of the oldest document still in received (0 when none).", nil, nil)
	descReviewPending = prometheus.NewDesc("docintake_review_pending",
		"Rejections held for review (issue 27): waiting for an operator's approval or release, or their review timeout.", nil, nil)
	descReviewOldest = prometheus.NewDesc("docintake_review_oldest_pending_age_seconds",
		"How long the oldest rejection held for review has waited (0 when none).", nil, nil)
	descPending = prometheus.NewDesc("docintake_consumer_pending",
		"Messages not yet delivered to a JetStream consumer: the queue depth.", []string{"consumer"}, nil)
	descAckPending = prometheus.NewDesc("docintake_consumer_ack_pending",
		"Messages delivered and not yet acked, including deferred ones waiting for redelivery.", []string{"consumer"}, nil)
	descRedelivered = prometheus.NewDesc("docintake_consumer_redelivered",
		"Messages delivered more than once and not yet acked.", []string{"consumer"}, nil)
)

// stateCollector reads the gauges when scraped. A source that does not
// answer leaves its series out of that scrape instead of failing the whole
// scrape (and with it every other series).
type stateCollector struct {
	st        *store.Store
	js        jetstream.JetStream
	stream    string
	consumers []string
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descDocuments, descOldest, descReviewPending, descReviewOldest, descPending,
		descAckPending, descRedelivered} {
		ch <- d
	}
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if counts, err := c.st.CountByState(ctx); err == nil {
		for _, s := range document.States {
			if s == document.StateUnknown {
				continue
			}
			ch <- prometheus.MustNewConstMetric(descDocuments, prometheus.GaugeValue, float64(counts[s]), string(s))
		}
	}
	if at, ok, err := c.st.OldestCreated(ctx, document.StateReceived); err == nil {
		age := 0.0
		if ok {
			age = max(time.Since(at).Seconds(), 0)
		}
		ch <- prometheus.MustNewConstMetric(descOldest, prometheus.GaugeValue, age)
	}
	if n, oldest, err := c.st.ReviewBacklog(ctx); err == nil {
		age := 0.0
		if n > 0 {
			age = max(time.Since(oldest).Seconds(), 0)
		}
		ch <- prometheus.MustNewConstMetric(descReviewPending, prometheus.GaugeValue, float64(n))
		ch <- prometheus.MustNewConstMetric(descReviewOldest, prometheus.GaugeValue, age)
	}
	for _, name := range c.consumers {
		s, err := queue.Stats(ctx, c.js, c.stream, name)
		if err != nil {
			continue
		}
		ch <- prometheus.MustNewConstMetric(descPending, prometheus.GaugeValue, float64(s.Pending), name)
		ch <- prometheus.MustNewConstMetric(descAckPending, prometheus.GaugeValue, float64(s.AckPending), name)
		ch <- prometheus.MustNewConstMetric(descRedelivered, prometheus.GaugeValue, float64(s.Redelivered), name)
	}
}
