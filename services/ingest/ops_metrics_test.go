package ingest_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/config"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/objectstore"
	"github.com/docintake/docintake/pkg/observability"
	"github.com/docintake/docintake/pkg/queue"
	"github.com/docintake/docintake/pkg/queue/queuetest"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/docintake/docintake/pkg/system"
	"github.com/docintake/docintake/services/ingest"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
)

// TestMetricsAfterUpload runs ingest as its binary does (the process's relay
// around Serve: API, metrics wiring) and checks /metrics after one upload
// has been accepted and its job published.
func TestMetricsAfterUpload(t *testing.T) {
	t.Parallel()
	st := storetest.Store(t)
	nc, js := queuetest.Connect(t, queuetest.Server(t).ClientURL())
	qcfg := queuetest.Ensure(t, js, nil)
	objs, err := objectstore.NewFS(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, st.UpsertClient(t.Context(), document.Client{ID: "acme"}, store.TokenHash("tok-acme")))
	env := map[string]string{"INTAKE_HTTP_ADDR": "127.0.0.1:0", "INTAKE_STREAM": qcfg.Stream,
		"INTAKE_SUBJECT_PREFIX": qcfg.SubjectPrefix, "INTAKE_OPS_TOKEN": opsToken}
	cfg, err := config.FromEnv(func(k string) string { return env[k] })
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	bound := make(chan string, 1)
	done := make(chan error, 1)
	a := system.Adapters{Store: st, NATS: nc, JetStream: js, Logger: zaptest.NewLogger(t), Registry: observability.NewRegistry()}
	relay := system.NewRelay(a, cfg)
	go func() {
		done <- relay.Serve(ctx, cfg.ShutdownTimeout, func(ctx context.Context) error {
			return ingest.Run(ctx, ingest.Deps{Config: cfg, Store: st, Objects: objs, Templates: templates{"contoso-po": nil},
				NATS: nc, JetStream: js, Logger: a.Logger, Registry: a.Registry, Bound: bound})
		})
	}()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	var addr string
	select {
	case addr = <-bound:
	case err := <-done:
		t.Fatalf("serve: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("ingest did not listen within 30s")
	}
	b := &bundle{url: "http://" + addr, router: openAPIRouter(t)}

	pdf := []byte("%PDF-1.4\n% a body the API only sniffs\n%%EOF\n")
	res := b.do(t, b.multipart(t, "tok-acme", form{file: pdf, fields: [][2]string{{"message_id", "m-metrics"}, {"subject", "PO 1"}, {"template", "contoso-po"}}}))
	require.Equal(t, http.StatusAccepted, res.status, "%s", res.raw)

	// The relay publishes the job; then the processor consumer has one
	// message pending and the outbox is empty.
	// The relay publishes before it deletes the row, so the scrape waits
	// for both.
	var fams map[string]*dto.MetricFamily
	require.Eventually(t, func() bool {
		s, err := queue.Stats(t.Context(), js, qcfg.Stream, qcfg.Processor.Durable)
		if err != nil || s.Pending != 1 {
			return false
		}
		fams = scrape(t, "http://"+addr+"/metrics")
		f, ok := fams["docintake_outbox_unsent"]
		// The relay counts a batch after its commit.
		relayed, counted := fams["docintake_outbox_relayed_total"]
		return ok && len(f.GetMetric()) == 1 && f.GetMetric()[0].GetGauge().GetValue() == 0 &&
			counted && relayed.GetMetric()[0].GetCounter().GetValue() == 1
	}, 20*time.Second, 20*time.Millisecond)

	value := func(name string, labels ...string) float64 {
		t.Helper()
		f, ok := fams[name]
		require.True(t, ok, "metric %s missing from /metrics", name)
		for _, m := range f.GetMetric() {
			if hasLabels(m, labels...) {
				switch f.GetType() {
				case dto.MetricType_COUNTER:
					return m.GetCounter().GetValue()
				case dto.MetricType_GAUGE:
					return m.GetGauge().GetValue()
				case dto.MetricType_HISTOGRAM:
					return float64(m.GetHistogram().GetSampleCount())
				}
			}
		}
		t.Fatalf("metric %s has no series with labels %v", name, labels)
		return 0
	}
	require.Equal(t, 1.0, value("docintake_http_requests_total", "route", "/incoming", "method", "POST", "code", "202"))
	require.Equal(t, 1.0, value("docintake_http_request_duration_seconds", "route", "/incoming", "method", "POST"))
	require.Equal(t, 1.0, value("docintake_ingest_upload_bytes"))
	require.Equal(t, 1.0, value("docintake_ingest_insert_group_uploads"), "one upload, one group")
	require.Equal(t, 1.0, fams["docintake_ingest_insert_group_uploads"].GetMetric()[0].GetHistogram().GetSampleSum())
	require.Equal(t, float64(len(pdf)), fams["docintake_ingest_upload_bytes"].GetMetric()[0].GetHistogram().GetSampleSum())
	require.Equal(t, 0.0, value("docintake_outbox_unsent"))
	require.Equal(t, 0.0, value("docintake_outbox_oldest_unsent_age_seconds"))
	require.Equal(t, 1.0, value("docintake_outbox_relays"), "the process runs one relay")
	require.Equal(t, 1.0, value("docintake_outbox_relayed_total"))
	require.Greater(t, value("docintake_consumer_oldest_pending_age_seconds", "consumer", "processor"), 0.0)
	require.Equal(t, 0.0, value("docintake_consumer_oldest_pending_age_seconds", "consumer", "dispatcher"))
	require.Contains(t, fams, "go_goroutines", "the registry carries the runtime collectors")

	// Prometheus conventions: counters end in _total, durations are in
	// seconds, sizes in bytes, and a histogram of counts names what it
	// counts in the plural (the group commit's _uploads).
	for name, f := range fams {
		if !strings.HasPrefix(name, "docintake_") {
			continue
		}
		switch f.GetType() {
		case dto.MetricType_COUNTER:
			require.True(t, strings.HasSuffix(name, "_total"), name)
		case dto.MetricType_HISTOGRAM:
			require.True(t, strings.HasSuffix(name, "_seconds") || strings.HasSuffix(name, "_bytes") || strings.HasSuffix(name, "_uploads"), name)
		}
	}

	// The console is on the same port.
	page := opsRequest(t, "GET", "http://"+addr+"/ops/", opsToken, nil)
	require.Equal(t, http.StatusOK, page.StatusCode)
	body := readBody(t, page)
	require.Contains(t, body, `id="queue-processor"`)
	require.Regexp(t, `id="queue-processor"><td>processor</td><td class="num">1</td>`, body, "queue depth 1")
}

func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	res, err := http.Get(url)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(res.Body)
	require.NoError(t, err)
	return fams
}

func hasLabels(m *dto.Metric, kv ...string) bool {
	got := map[string]string{}
	for _, l := range m.GetLabel() {
		got[l.GetName()] = l.GetValue()
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if got[kv[i]] != kv[i+1] {
			return false
		}
	}
	return true
}
