// Package sysproc runs docintake as separate local processes next to its
// servers (PostgreSQL, nats-server, versitygw): process supervision,
// readiness polling, binary discovery and the servers' set-up. The chaos
// harness and the benchmark harness share it.
package sysproc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/docintake/docintake/services/standalone"
	"github.com/jackc/pgx/v5"
)

// Proc is one child process that a harness starts, kills and restarts.
// Its output goes to a log file that survives restarts (appended), so the
// secret scan sees every incarnation.
type Proc struct {
	Name string
	bin  string
	args []string
	env  []string
	log  *os.File
	cred *syscall.Credential // run as this user (postgres as root)

	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{}
	killing bool // the current incarnation is being stopped on purpose
}

// NewProc prepares a process whose output is appended to logDir/name.log.
func NewProc(name, bin string, args, env []string, logDir string) (*Proc, error) {
	f, err := os.OpenFile(filepath.Join(logDir, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%s log: %w", name, err)
	}
	return &Proc{Name: name, bin: bin, args: args, env: env, log: f}, nil
}

// Start launches a new incarnation. The kernel kills it when the harness
// dies (Pdeathsig), so an interrupted run leaves nothing behind.
func (p *Proc) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		return fmt.Errorf("%s already running", p.Name)
	}
	cmd := exec.Command(p.bin, p.args...)
	cmd.Env = p.env
	cmd.Stdout, cmd.Stderr = p.log, p.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: p.cred, Setpgid: true, Pdeathsig: syscall.SIGKILL}
	fmt.Fprintf(p.log, "=== sysproc: start %s at %s\n", p.Name, time.Now().Format(time.RFC3339Nano))
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", p.Name, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		p.mu.Lock()
		if p.cmd == cmd {
			p.cmd = nil
		}
		p.mu.Unlock()
		close(exited)
	}()
	p.cmd, p.exited, p.killing = cmd, exited, false
	return nil
}

// Running returns the exit channel of the current incarnation, or nil.
func (p *Proc) Running() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return nil
	}
	return p.exited
}

// Signal sends sig to the current incarnation and waits up to wait for it
// to exit (then SIGKILLs it). It reports whether a process was running.
func (p *Proc) Signal(sig syscall.Signal, wait time.Duration) bool {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	if cmd != nil {
		p.killing = true
		fmt.Fprintf(p.log, "=== sysproc: %s %s at %s\n", sig, p.Name, time.Now().Format(time.RFC3339Nano))
	}
	p.mu.Unlock()
	if cmd == nil {
		return false
	}
	_ = cmd.Process.Signal(sig)
	select {
	case <-exited:
	case <-time.After(wait):
		_ = cmd.Process.Kill()
		<-exited
	}
	return true
}

// Intentional reports whether the last exit was caused by the harness.
func (p *Proc) Intentional() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.killing
}

// PID returns the process id of the current incarnation, or 0.
func (p *Proc) PID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// StopAll sends SIGTERM to procs in reverse order (services before the
// servers they depend on), waiting up to wait for each, and closes their logs.
func StopAll(procs []*Proc, wait time.Duration) {
	for i := len(procs) - 1; i >= 0; i-- {
		procs[i].Signal(syscall.SIGTERM, wait)
		procs[i].Close()
	}
}

// FreeAddr is FreePort as a loopback address.
func FreeAddr() (string, error) {
	port, err := FreePort()
	if err != nil {
		return "", err
	}
	return "127.0.0.1:" + strconv.Itoa(port), nil
}

// Close closes the log file.
func (p *Proc) Close() { _ = p.log.Close() }

// FreePort asks the kernel for a free loopback port. The services keep the
// port across restarts, so the clients' URLs stay valid.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// WaitFor polls ready every 50ms until it returns nil, the process exits,
// or the timeout passes.
func WaitFor(ctx context.Context, p *Proc, timeout time.Duration, ready func(context.Context) error) error {
	deadline := time.Now().Add(timeout)
	exited := p.Running()
	for {
		err := ready(ctx)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready within %s: %w", p.Name, timeout, err)
		}
		select {
		case <-exited:
			return fmt.Errorf("%s exited during start-up (see its log)", p.Name)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// NewPostgres initialises a cluster in dir and prepares a server process on
// a fixed port. Standalone's private cluster picks a new port on each
// start; the harness restarts the server under running services, so it
// needs the port fixed.
func NewPostgres(ctx context.Context, dir, logDir string) (*Proc, string, error) {
	bin, err := standalone.PostgresBinDir()
	if err != nil {
		return nil, "", err
	}
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, "", fmt.Errorf("running as root needs the postgres user: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, "", err
	}
	if cred != nil {
		// The server must reach its directory (temp dirs are 0700).
		_ = os.Chmod(filepath.Dir(dir), 0o755)
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return nil, "", err
		}
	}
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", dir, "-U", "postgres", "--auth=trust",
		"--encoding=UTF8", "--locale=C", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, "", fmt.Errorf("initdb: %w: %s", err, out)
	}
	port, err := FreePort()
	if err != nil {
		return nil, "", err
	}
	// fsync stays on: the check is that committed rows survive a crash.
	p, err := NewProc("postgres", filepath.Join(bin, "postgres"), []string{"-D", dir, "-p", strconv.Itoa(port),
		"-h", "127.0.0.1", "-k", dir, "-c", "max_connections=300", "-c", "fsync=on"}, os.Environ(), logDir)
	if err != nil {
		return nil, "", err
	}
	p.cred = cred
	return p, fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port), nil
}

// PGReady is a readiness check that connects to url.
func PGReady(url string) func(context.Context) error {
	return func(ctx context.Context) error {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		conn, err := pgx.Connect(cctx, url)
		if err != nil {
			return err
		}
		return conn.Close(ctx)
	}
}

// NATSServerBinary finds nats-server the way pkg/queue/queuetest does:
// $INTAKE_NATS_SERVER, else the build of the module version pkg requires,
// cached in ~/.cache/docintake-bin (built here when missing), else $PATH.
func NATSServerBinary(repo string) (string, error) {
	if p := os.Getenv("INTAKE_NATS_SERVER"); p != "" {
		return p, nil
	}
	const mod = "github.com/nats-io/nats-server/v2"
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Version}}", mod)
	cmd.Dir = filepath.Join(repo, "pkg")
	out, err := cmd.Output()
	if err == nil {
		version := strings.TrimSpace(string(out))
		cache, cerr := os.UserCacheDir()
		if cerr == nil && version != "" {
			bin := filepath.Join(cache, "docintake-bin", "nats-server-"+version)
			if IsExec(bin) {
				return bin, nil
			}
			tmp := fmt.Sprintf("%s.tmp%d", bin, os.Getpid())
			b := exec.Command("go", "build", "-o", tmp, mod)
			b.Dir = filepath.Join(repo, "pkg")
			if out, err := b.CombinedOutput(); err == nil {
				return bin, os.Rename(tmp, bin)
			} else {
				_ = os.Remove(tmp)
				err = fmt.Errorf("go build %s: %w: %s", mod, err, out)
				if p, lerr := exec.LookPath("nats-server"); lerr == nil {
					return p, nil
				}
				return "", err
			}
		}
	}
	if p, err := exec.LookPath("nats-server"); err == nil {
		return p, nil
	}
	return "", errors.New("no nats-server: set INTAKE_NATS_SERVER or install nats-server")
}

// VersitygwBinary looks where pkg/objectstore/objectstoretest looks.
func VersitygwBinary() (string, error) {
	if p := os.Getenv("INTAKE_VERSITYGW"); p != "" && IsExec(p) {
		return p, nil
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p, nil
	}
	var candidates []string
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		for _, gp := range filepath.SplitList(strings.TrimSpace(string(out))) {
			candidates = append(candidates, filepath.Join(gp, "bin", "versitygw"))
		}
	}
	if dir, err := os.UserCacheDir(); err == nil {
		candidates = append(candidates, filepath.Join(dir, "docintake-bin", "versitygw"))
	}
	for _, p := range candidates {
		if IsExec(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("no versitygw (GOBIN=$HOME/.cache/docintake-bin go install github.com/versity/versitygw/cmd/versitygw@v1.8.0); looked in $PATH and %s",
		strings.Join(candidates, ", "))
}

// IsExec reports whether p is an executable regular file.
func IsExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

// TCPReady is a readiness check that dials addr.
func TCPReady(addr string) func(context.Context) error {
	return func(context.Context) error {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return err
		}
		return c.Close()
	}
}

// BuildServices compiles the three service binaries into dir (go's build
// cache makes repeated runs cheap).
func BuildServices(ctx context.Context, repo, dir string) error {
	for _, s := range []string{"ingest", "processor", "dispatcher"} {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(dir, s), "./cmd/"+s)
		cmd.Dir = filepath.Join(repo, "services", s)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %w: %s", s, err, out)
		}
	}
	return nil
}

// RepoRoot walks up from the working directory to the directory with go.work.
func RepoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("go.work not found above %s", wd)
		}
	}
}
