package queuetest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Process is a nats-server running as a child process, so that a test can
// kill it like a crashing broker and start it again on the same port and
// store directory.
type Process struct {
	t    testing.TB
	bin  string
	conf string
	port int

	mu     sync.Mutex
	proc   *os.Process
	exited chan struct{}
}

// StartProcess starts a JetStream nats-server process (sync_interval
// always, loopback, free port) and kills it at cleanup.
func StartProcess(t testing.TB) *Process {
	t.Helper()
	dir := t.TempDir()
	port, err := freePort()
	if err != nil {
		t.Fatalf("queuetest: %v", err)
	}
	conf := filepath.Join(dir, "nats.conf")
	body := fmt.Sprintf("listen: 127.0.0.1:%d\njetstream {\n  store_dir: %q\n  sync_interval: always\n}\n", port, filepath.Join(dir, "js"))
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatalf("queuetest: %v", err)
	}
	p := &Process{t: t, bin: ServerBinary(t), conf: conf, port: port}
	t.Cleanup(p.Kill)
	p.Start()
	return p
}

// URL is the client URL; it stays the same across restarts.
func (p *Process) URL() string { return "nats://127.0.0.1:" + strconv.Itoa(p.port) }

// Start (re)starts the server and waits until JetStream answers. It fails
// the test when the server does not come up within 30s.
func (p *Process) Start() {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.proc != nil {
		p.t.Fatal("queuetest: nats-server already running")
	}
	out := &lockedWriter{}
	cmd := exec.Command(p.bin, "-c", p.conf)
	cmd.Stdout = out
	cmd.Stderr = out
	setParentDeathSignal(cmd)
	if err := cmd.Start(); err != nil {
		p.t.Fatalf("queuetest: start %s: %v", p.bin, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	p.proc, p.exited = cmd.Process, exited

	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-exited:
			p.proc = nil
			p.t.Fatalf("queuetest: nats-server exited at start: %s", out.String())
		case <-tick.C:
			if jetStreamReady(p.URL()) {
				return
			}
			if time.Now().After(deadline) {
				p.t.Fatalf("queuetest: nats-server not ready within 30s: %s", out.String())
			}
		}
	}
}

// Kill stops the server with SIGKILL (no shutdown, like a crash) and waits
// for it to exit. Safe to call when it is not running.
func (p *Process) Kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.proc == nil {
		return
	}
	_ = p.proc.Kill()
	<-p.exited
	p.proc = nil
}

// jetStreamReady reports whether a client can use JetStream at url.
func jetStreamReady(url string) bool {
	nc, err := nats.Connect(url, nats.Timeout(time.Second), nats.NoReconnect())
	if err != nil {
		return false
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err = js.AccountInfo(ctx)
	return err == nil
}

var (
	binaryOnce sync.Once
	binaryPath string
	binaryErr  error
)

// ServerBinary returns a nats-server executable: $INTAKE_NATS_SERVER, else
// one built from the nats-server/v2 module this test binary links (cached
// per version under $HOME/.cache/docintake-bin), else nats-server on $PATH.
func ServerBinary(t testing.TB) string {
	t.Helper()
	binaryOnce.Do(func() { binaryPath, binaryErr = findServerBinary() })
	if binaryErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("queuetest: %v", binaryErr)
		}
		t.Skipf("queuetest: %v", binaryErr)
	}
	return binaryPath
}

const serverModule = "github.com/nats-io/nats-server/v2"

func findServerBinary() (string, error) {
	if p := os.Getenv("INTAKE_NATS_SERVER"); p != "" {
		return p, nil
	}
	version := moduleVersion()
	var buildErr error
	if cache, err := os.UserCacheDir(); err == nil && version != "" {
		bin := filepath.Join(cache, "docintake-bin", "nats-server-"+version)
		if _, err := os.Stat(bin); err == nil {
			return bin, nil
		}
		if buildErr = build(bin); buildErr == nil {
			return bin, nil
		}
	}
	if p, err := exec.LookPath("nats-server"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("no nats-server binary: set INTAKE_NATS_SERVER or install nats-server (build from module %s %s failed: %v)", serverModule, version, buildErr)
}

// moduleVersion is the nats-server/v2 version the current module (the
// test's working directory) requires; test binaries carry no dependency
// list in their build info, so ask the go command.
func moduleVersion() string {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", serverModule).Output()
	if err == nil {
		return strings.TrimSpace(string(out))
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range bi.Deps {
			if dep.Path == serverModule {
				return dep.Version
			}
		}
	}
	return ""
}

// build compiles the server module into bin, atomically so that test
// binaries building at the same time do not see a partial file.
func build(bin string) error {
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return err
	}
	tmp := fmt.Sprintf("%s.tmp%d", bin, os.Getpid())
	cmd := exec.Command("go", "build", "-o", tmp, serverModule)
	if out, err := cmd.CombinedOutput(); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("go build %s: %w: %s", serverModule, err, out)
	}
	return os.Rename(tmp, bin)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// lockedWriter collects process output written from exec's copy goroutine.
type lockedWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *lockedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}
