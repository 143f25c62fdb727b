package chaos

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

	"github.com/docintake/docintake/services/standalone/internal/pgcluster"
	"github.com/jackc/pgx/v5"
)

// proc is one child process that the harness starts, kills and restarts.
// Its output goes to a log file that survives restarts (appended), so the
// secret scan sees every incarnation.
type proc struct {
	name string
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

func newProc(name, bin string, args, env []string, logDir string) (*proc, error) {
	f, err := os.OpenFile(filepath.Join(logDir, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%s log: %w", name, err)
	}
	return &proc{name: name, bin: bin, args: args, env: env, log: f}, nil
}

// start launches a new incarnation. The kernel kills it when the harness
// dies (Pdeathsig), so an interrupted run leaves nothing behind.
func (p *proc) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		return fmt.Errorf("%s already running", p.name)
	}
	cmd := exec.Command(p.bin, p.args...)
	cmd.Env = p.env
	cmd.Stdout, cmd.Stderr = p.log, p.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: p.cred, Setpgid: true, Pdeathsig: syscall.SIGKILL}
	fmt.Fprintf(p.log, "=== chaos: start %s at %s\n", p.name, time.Now().Format(time.RFC3339Nano))
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", p.name, err)
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

// running returns the exit channel of the current incarnation, or nil.
func (p *proc) running() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return nil
	}
	return p.exited
}

// signal sends sig to the current incarnation and waits up to wait for it
// to exit (then SIGKILLs it). It reports whether a process was running.
func (p *proc) signal(sig syscall.Signal, wait time.Duration) bool {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	if cmd != nil {
		p.killing = true
		fmt.Fprintf(p.log, "=== chaos: %s %s at %s\n", sig, p.name, time.Now().Format(time.RFC3339Nano))
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

// intentional reports whether the last exit was caused by the harness.
func (p *proc) intentional() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.killing
}

func (p *proc) close() { _ = p.log.Close() }

// freePort asks the kernel for a free loopback port. The services keep the
// port across restarts, so the clients' URLs stay valid.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitFor polls ready every 50ms until it returns nil, the process exits,
// or the timeout passes.
func waitFor(ctx context.Context, p *proc, timeout time.Duration, ready func(context.Context) error) error {
	deadline := time.Now().Add(timeout)
	exited := p.running()
	for {
		err := ready(ctx)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready within %s: %w", p.name, timeout, err)
		}
		select {
		case <-exited:
			return fmt.Errorf("%s exited during start-up (see its log)", p.name)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// newPostgres initialises a cluster in dir and prepares a server process on
// a fixed port. pgcluster.Start picks a new port on each start; the harness
// restarts the server under running services, so it needs the port fixed.
func newPostgres(ctx context.Context, dir, logDir string) (*proc, string, error) {
	bin, err := pgcluster.BinDir()
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
	port, err := freePort()
	if err != nil {
		return nil, "", err
	}
	// fsync stays on: the check is that committed rows survive a crash.
	p, err := newProc("postgres", filepath.Join(bin, "postgres"), []string{"-D", dir, "-p", strconv.Itoa(port),
		"-h", "127.0.0.1", "-k", dir, "-c", "max_connections=300", "-c", "fsync=on"}, os.Environ(), logDir)
	if err != nil {
		return nil, "", err
	}
	p.cred = cred
	return p, fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port), nil
}

func pgReady(url string) func(context.Context) error {
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

// natsServerBinary finds nats-server the way pkg/queue/queuetest does:
// $INTAKE_NATS_SERVER, else the build of the module version pkg requires,
// cached in ~/.cache/docintake-bin (built here when missing), else $PATH.
func natsServerBinary(repo string) (string, error) {
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
			if isExec(bin) {
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

// versitygwBinary looks where pkg/objectstore/objectstoretest looks.
func versitygwBinary() (string, error) {
	if p := os.Getenv("INTAKE_VERSITYGW"); p != "" && isExec(p) {
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
		if isExec(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("no versitygw (GOBIN=$HOME/.cache/docintake-bin go install github.com/versity/versitygw/cmd/versitygw@v1.8.0); looked in $PATH and %s",
		strings.Join(candidates, ", "))
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

func tcpReady(addr string) func(context.Context) error {
	return func(context.Context) error {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return err
		}
		return c.Close()
	}
}

// buildServices compiles the three service binaries into dir (go's build
// cache makes repeated runs cheap).
func buildServices(ctx context.Context, repo, dir string) error {
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
