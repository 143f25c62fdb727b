package client_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// The examples and integration tests run against a real docintake: the
// standalone binary (all services, embedded JetStream, a private
// PostgreSQL cluster, filesystem object store) started once by TestMain.
// The client module must not depend on docintake's modules, so the system
// runs as a separate process, built from the repository around this module
// (or taken from INTAKE_CHAOS_BIN, where `make test` put `make build`'s
// binaries).
var (
	baseURL     string // the API of the running system
	token       = "client-test-token"
	webhookAddr string // where the test client's webhook URL points
	// The test client's webhook credentials (testdata/clients.yaml).
	webhookToken  = "client-test-webhook-token"
	signingSecret = "whsec_Y2xpZW50LXRlc3Qtc2lnbmluZy1zZWNyZXQ="
)

func TestMain(m *testing.M) {
	flag.Parse()
	stop, err := startSystem()
	if err != nil {
		fmt.Fprintf(os.Stderr, "client tests: no docintake system: %v\n", err)
		// Examples cannot skip; without a system only the unit tests run,
		// and under CI the missing system is a failure.
		if os.Getenv("CI") == "true" {
			os.Exit(1)
		}
		os.Exit(runUnitOnly(m))
	}
	code := m.Run()
	stop()
	os.Exit(code)
}

// runUnitOnly runs the tests that need no system (names starting with
// TestUnit), since examples with output cannot be skipped.
func runUnitOnly(m *testing.M) int {
	if err := flagSet("test.run", "^TestUnit"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

func startSystem() (stop func(), err error) {
	if testing.Short() {
		return nil, errors.New("-short")
	}
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "docintake-client-test-")
	if err != nil {
		return nil, err
	}
	// A private PostgreSQL runs as the postgres user when we are root; it
	// must reach its directory.
	if err := os.Chmod(tmp, 0o755); err != nil {
		return nil, err
	}
	cleanup := func() { _ = os.RemoveAll(tmp) }
	bin, err := standaloneBinary(root, tmp)
	if err != nil {
		cleanup()
		return nil, err
	}
	api, err := freeAddr()
	if err != nil {
		cleanup()
		return nil, err
	}
	natsAddr, err := freeAddr()
	if err != nil {
		cleanup()
		return nil, err
	}
	if webhookAddr, err = freeAddr(); err != nil {
		cleanup()
		return nil, err
	}
	clients := filepath.Join(tmp, "clients.yaml")
	// token_sha256 is sha256("client-test-token"). The examples upload the
	// one sample PO under several message ids, each to show a success, so
	// the duplicate check is off (duplicate_window_days 0).
	err = os.WriteFile(clients, fmt.Appendf(nil, `clients:
  - id: client-test
    name: Go client tests
    token_sha256: ["%s"]
    webhook_url: http://%s/docintake
    webhook_token: %s
    signing_secret: %s
    duplicate_window_days: 0
`, sha256Hex(token), webhookAddr, webhookToken, signingSecret), 0o644)
	if err != nil {
		cleanup()
		return nil, err
	}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(),
		"INTAKE_HTTP_ADDR="+api,
		"INTAKE_NATS_LISTEN="+natsAddr,
		"INTAKE_DATA_DIR="+filepath.Join(tmp, "data"),
		"INTAKE_DATABASE_URL=", // a private cluster: this process shares no database with other tests
		"INTAKE_S3_ENDPOINT=",
		"INTAKE_TEMPLATES_DIR="+filepath.Join(must(os.Getwd()), "testdata", "templates"),
		"INTAKE_CLIENTS_FILE="+clients,
		"INTAKE_WEBHOOK_ALLOW_PRIVATE=true",
		"INTAKE_PDF_ENGINE=pdftotext",
		"INTAKE_LOG_LEVEL=warn",
	)
	logf, err := os.Create(filepath.Join(tmp, "standalone.log"))
	if err != nil {
		cleanup()
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		cleanup()
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop = func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(60 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		logf.Close()
		cleanup()
	}
	baseURL = "http://" + api
	if err := waitReady(baseURL, exited); err != nil {
		stop()
		log, _ := os.ReadFile(logf.Name())
		return nil, fmt.Errorf("%w\n%s", err, log)
	}
	return stop, nil
}

func waitReady(url string, exited <-chan error) error {
	deadline := time.Now().Add(120 * time.Second)
	for {
		res, err := http.Get(url + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case err := <-exited:
			return fmt.Errorf("standalone exited during start-up: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s/readyz not ready within 120s: %v", url, err)
		}
		time.Sleep(100 * time.Millisecond) // polling another process's readiness
	}
}

// standaloneBinary returns make build's bin/standalone when INTAKE_CHAOS_BIN
// names it, else builds one into dir.
func standaloneBinary(root, dir string) (string, error) {
	if b := os.Getenv("INTAKE_CHAOS_BIN"); b != "" {
		if p := filepath.Join(b, "standalone"); isFile(p) {
			return p, nil
		}
	}
	out := filepath.Join(dir, "standalone")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/standalone")
	cmd.Dir = filepath.Join(root, "services", "standalone")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build standalone: %w\n%s", err, msg)
	}
	return out, nil
}

// repoRoot is the docintake checkout around this module (go.work beside
// services/standalone); outside one there is no system to test against.
func repoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		if isFile(filepath.Join(dir, "go.work")) && isFile(filepath.Join(dir, "services", "standalone", "go.mod")) {
			return dir, nil
		}
	}
	return "", errors.New("not inside a docintake checkout (go.work and services/standalone not found)")
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func flagSet(name, value string) error { return flag.Set(name, value) }
