// Package standalonetest runs the whole docintake system in the test's
// process for tests of other modules that need a real one (services/
// systemtest; a product module importing it would close a module cycle):
// API, processor, dispatcher, embedded JetStream, a filesystem object store
// and a fresh PostgreSQL schema.
package standalonetest

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/config"
	"github.com/docintake/docintake/pkg/repotest"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/docintake/docintake/services/standalone"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
)

// DevToken is the access token of deploy/dev/clients.yaml's client.
const DevToken = "dev-token"

// System is a running standalone system.
type System struct {
	// URL is the API's base URL (http://127.0.0.1:port).
	URL string
	// DatabaseURL is its PostgreSQL schema's URL.
	DatabaseURL string
}

// Start runs the system on free ports with env on top of the defaults
// (deploy/templates, deploy/dev/clients.yaml, a fresh schema, webhooks to
// private addresses allowed) until the test ends, and waits until it is
// ready.
func Start(t testing.TB, env map[string]string) *System {
	t.Helper()
	root := repotest.Root(t)
	base := map[string]string{
		"INTAKE_HTTP_ADDR":             "127.0.0.1:0",
		"INTAKE_NATS_LISTEN":           "127.0.0.1:0",
		"INTAKE_DATA_DIR":              t.TempDir(),
		"INTAKE_TEMPLATES_DIR":         filepath.Join(root, "deploy", "templates"),
		"INTAKE_CLIENTS_FILE":          filepath.Join(root, "deploy", "dev", "clients.yaml"),
		"INTAKE_WEBHOOK_ALLOW_PRIVATE": "true",
		"INTAKE_LOG_LEVEL":             "info",
	}
	for k, v := range env {
		base[k] = v
	}
	if base["INTAKE_DATABASE_URL"] == "" {
		base["INTAKE_DATABASE_URL"] = storetest.SchemaURL(t)
	}
	cfg, err := config.FromEnv(func(k string) string { return base[k] })
	if err != nil {
		t.Fatalf("standalone config: %v", err)
	}
	lvl, err := zapcore.ParseLevel(cfg.LogLevel)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	bound := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- standalone.Run(ctx, cfg, zaptest.NewLogger(t, zaptest.Level(lvl)), bound) }()
	var addr string
	select {
	case addr = <-bound:
	case err := <-done:
		cancel()
		t.Fatalf("standalone stopped during start-up: %v", err)
	case <-time.After(90 * time.Second):
		cancel()
		t.Fatal("standalone did not start within 90s")
	}
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("standalone: %v", err)
			}
		case <-time.After(60 * time.Second):
			t.Error("standalone did not stop within 60s")
		}
	})
	s := &System{URL: "http://" + addr, DatabaseURL: base["INTAKE_DATABASE_URL"]}
	WaitReady(t, s.URL)
	return s
}

// WaitReady polls url/readyz until it answers 200, failing t after 30 s.
func WaitReady(t testing.TB, url string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get(url + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s/readyz not ready: %v", url, err)
		}
		time.Sleep(50 * time.Millisecond) // polling the system's readiness, not waiting for an event
	}
}
