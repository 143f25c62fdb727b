package dispatcher

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
)

// metrics are the dispatcher's Prometheus series.
type metrics struct {
	attempts   *prometheus.CounterVec // by status code class and what followed
	deliveries *prometheus.CounterVec // by webhook status and final outcome
	latency    prometheus.Histogram
	disabled   prometheus.Counter // 410s that disabled an endpoint: alert on any increase
	busy       prometheus.Counter

	pending      prometheus.Gauge
	retries      prometheus.Gauge
	oldest       prometheus.Gauge
	endpointsOff prometheus.Gauge
	waiting      prometheus.Gauge
}

func newMetrics(reg *prometheus.Registry) *metrics {
	m := &metrics{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "docintake_dispatcher_attempts_total",
			Help: "Webhook attempts by response status class (2xx..5xx, none) and outcome (delivered, retry, failed, disabled)."},
			[]string{"code_class", "outcome"}),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "docintake_dispatcher_deliveries_total",
			Help: "Deliveries that ended, by webhook status and outcome (delivered, failed, superseded, skipped)."},
			[]string{"status", "outcome"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "docintake_dispatcher_attempt_duration_seconds",
			Help: "Duration of one webhook attempt.", Buckets: prometheus.ExponentialBuckets(0.005, 2.5, 10)}),
		disabled: prometheus.NewCounter(prometheus.CounterOpts{Name: "docintake_dispatcher_endpoint_disabled_total",
			Help: "Client endpoints disabled because they answered 410 Gone (ops alert)."}),
		busy: prometheus.NewCounter(prometheus.CounterOpts{Name: "docintake_dispatcher_client_busy_total",
			Help: "Jobs put back because their client had no free delivery slot."}),
		pending: prometheus.NewGauge(prometheus.GaugeOpts{Name: "docintake_dispatcher_deliveries_pending",
			Help: "Deliveries not yet delivered or given up."}),
		retries: prometheus.NewGauge(prometheus.GaugeOpts{Name: "docintake_dispatcher_retries_pending",
			Help: "Pending deliveries that have had at least one attempt."}),
		oldest: prometheus.NewGauge(prometheus.GaugeOpts{Name: "docintake_dispatcher_oldest_undelivered_seconds",
			Help: "Age of the oldest pending delivery (0 when none)."}),
		endpointsOff: prometheus.NewGauge(prometheus.GaugeOpts{Name: "docintake_dispatcher_disabled_endpoints",
			Help: "Clients whose webhook endpoint is disabled."}),
		waiting: prometheus.NewGauge(prometheus.GaugeOpts{Name: "docintake_dispatcher_deliveries_waiting_disabled",
			Help: "Pending deliveries waiting for a disabled endpoint to be re-enabled."}),
	}
	if reg != nil {
		reg.MustRegister(m.attempts, m.deliveries, m.latency, m.disabled, m.busy, m.pending, m.retries, m.oldest,
			m.endpointsOff, m.waiting)
	}
	return m
}

// refreshMetrics reads the backlog gauges from PostgreSQL until ctx is done.
func (d *dispatcher) refreshMetrics(ctx context.Context) {
	t := time.NewTicker(d.tuning.MetricsInterval)
	defer t.Stop()
	for {
		b, err := d.store.DeliveryBacklog(ctx)
		if err == nil {
			d.metrics.pending.Set(float64(b.Pending))
			d.metrics.retries.Set(float64(b.Retries))
			d.metrics.endpointsOff.Set(float64(b.DisabledClients))
			d.metrics.waiting.Set(float64(b.WaitingOnDisable))
			age := 0.0
			if !b.Oldest.IsZero() {
				age = time.Since(b.Oldest).Seconds()
			}
			d.metrics.oldest.Set(age)
		} else if ctx.Err() == nil {
			d.logger.Warn("read delivery backlog", zap.Error(err))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
