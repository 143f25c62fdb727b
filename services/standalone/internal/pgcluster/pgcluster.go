// Package pgcluster runs a private PostgreSQL cluster from the locally
// installed server binaries, so that the standalone system works on a
// machine where nobody has set up a database.
package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrNoBinaries means no PostgreSQL server is installed.
var ErrNoBinaries = errors.New("no PostgreSQL server binaries found in /usr/lib/postgresql/*/bin (install Debian's postgresql package, or set INTAKE_DATABASE_URL)")

// BinDir returns the newest /usr/lib/postgresql/<version>/bin that has
// initdb and postgres.
func BinDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", ErrNoBinaries
}

func version(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

// Cluster is a running private PostgreSQL server.
type Cluster struct {
	URL  string // postgres://postgres:PASSWORD@127.0.0.1:PORT/docintake
	Port int
	cmd  *exec.Cmd
	done chan error
}

// hba is the cluster's whole pg_hba.conf, written at every start (also over
// the trust-everything file of clusters made before it): the unix socket
// sits in the 0700 data directory, so only its owner (and root) reach it;
// anyone else on the host must know the password over TCP.
const hba = `# Written by docintake standalone at every start; edits are lost.
local all all trust
host  all all 127.0.0.1/32 scram-sha-256
host  all all ::1/128      scram-sha-256
`

// Start initialises dir (first run only) and starts a server on a free
// loopback port, then creates the database "docintake". TCP connections
// need password, which Start sets for the postgres role at every start (the
// caller keeps it; it must be [0-9a-f]+, a generated secret). As root the
// server runs as the "postgres" user, since PostgreSQL refuses to run as
// root. log receives the server's output.
func Start(ctx context.Context, dir, password string, log *os.File) (*Cluster, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	if password == "" || strings.Trim(password, "0123456789abcdef") != "" {
		return nil, errors.New("private postgres: the password must be a non-empty hex string")
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("running as root needs the postgres user to start PostgreSQL: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("postgres dir: %w", err)
	}
	if cred != nil {
		// The server owns its directory; the parent must be traversable.
		_ = os.Chown(dir, int(cred.Uid), int(cred.Gid))
		_ = os.Chmod(filepath.Dir(dir), 0o755)
	}
	if _, err := os.Stat(filepath.Join(dir, "PG_VERSION")); err != nil {
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", dir, "-U", "postgres", "--auth=trust",
			"--encoding=UTF8", "--locale=C", "--no-sync")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("initdb %s: %w: %s", dir, err, strings.TrimSpace(string(out)))
		}
	}
	hbaFile := filepath.Join(dir, "pg_hba.conf")
	if err := os.WriteFile(hbaFile, []byte(hba), 0o600); err != nil {
		return nil, fmt.Errorf("write pg_hba.conf: %w", err)
	}
	if cred != nil {
		if err := os.Chown(hbaFile, int(cred.Uid), int(cred.Gid)); err != nil {
			return nil, fmt.Errorf("chown pg_hba.conf: %w", err)
		}
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", dir, "-p", strconv.Itoa(port), "-h", "127.0.0.1",
		"-k", dir, "-c", "max_connections=200", "-c", "fsync=on")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true, Pdeathsig: syscall.SIGTERM}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	c := &Cluster{Port: port, cmd: cmd, done: make(chan error, 1)}
	go func() { c.done <- cmd.Wait() }()

	// The administrative connection goes through the private socket.
	admin := fmt.Sprintf("postgres://postgres@/postgres?host=%s&port=%d&sslmode=disable", url.QueryEscape(dir), port)
	if err := c.waitReady(ctx, admin); err != nil {
		_ = c.Stop()
		return nil, err
	}
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		_ = c.Stop()
		return nil, fmt.Errorf("connect private postgres: %w", err)
	}
	defer conn.Close(ctx)
	// Utility statements take no parameters; the password is hex (checked above).
	if _, err := conn.Exec(ctx, "ALTER ROLE postgres PASSWORD '"+password+"'"); err != nil {
		_ = c.Stop()
		return nil, fmt.Errorf("set password: %w", err)
	}
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = 'docintake')`).Scan(&exists); err != nil {
		_ = c.Stop()
		return nil, fmt.Errorf("check database: %w", err)
	}
	if !exists {
		if _, err := conn.Exec(ctx, `CREATE DATABASE docintake`); err != nil {
			_ = c.Stop()
			return nil, fmt.Errorf("create database: %w", err)
		}
	}
	c.URL = fmt.Sprintf("postgres://postgres:%s@127.0.0.1:%d/docintake?sslmode=disable", password, port)
	return c, nil
}

func (c *Cluster) waitReady(ctx context.Context, url string) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		conn, err := pgx.Connect(pctx, url)
		cancel()
		if err == nil {
			_ = conn.Close(ctx)
			return nil
		}
		select {
		case werr := <-c.done:
			c.done <- werr
			return fmt.Errorf("postgres exited during start-up: %v", werr)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres did not accept connections within 60s: %w", err)
		}
	}
}

// Stop shuts the server down (fast shutdown: open transactions roll back,
// committed data is safe) and waits for it to exit.
func (c *Cluster) Stop() error {
	if c == nil || c.cmd.Process == nil {
		return nil
	}
	_ = c.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-c.done:
		return nil
	case <-time.After(30 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
		return fmt.Errorf("postgres did not stop within 30s; killed")
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
