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
	User string // the account the server runs as
	cmd  *exec.Cmd
	done chan error
}

// hba is the cluster's whole pg_hba.conf, written at every start (also over
// the trust file of clusters made by earlier releases): every connection
// needs the password, over TCP and over the unix socket alike. The socket
// sits in the 0700 data directory, but any process of the server's account
// (on Debian the host's shared postgres account, see serverAccount) reaches
// it; with "trust" those walked in as superuser.
const hba = `# Written by docintake standalone at every start; edits are lost.
local all all              scram-sha-256
host  all all 127.0.0.1/32 scram-sha-256
host  all all ::1/128      scram-sha-256
`

// DedicatedAccount is the account the server runs as when standalone runs
// as root and the account exists: one that owns nothing but this cluster.
// Standalone does not create accounts on the host (that is the
// administrator's decision: useradd --system --home-dir /nonexistent
// --shell /usr/sbin/nologin docintake-postgres); without it the server runs
// as Debian's postgres account, which the postgresql package made for
// running PostgreSQL.
const DedicatedAccount = "docintake-postgres"

// Start initialises dir (first run only) and starts a server on a free
// loopback port, then creates the database "docintake". Every connection
// needs password, the postgres role's, which Start sets at every start (the
// caller keeps it; it must be [0-9a-f]+, a generated secret). As root the
// server runs as serverAccount's account, since PostgreSQL refuses to run as
// root. It gets a minimal environment (serverEnv), never the caller's: that
// holds standalone's secrets. log receives the server's output.
func Start(ctx context.Context, dir, password string, log *os.File) (*Cluster, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	if password == "" || strings.Trim(password, "0123456789abcdef") != "" {
		return nil, errors.New("private postgres: the password must be a non-empty hex string")
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, err
	}
	acct, err := serverAccount(dir)
	if err != nil {
		return nil, err
	}
	if err := prepare(ctx, bin, dir, password, acct); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", dir, "-p", strconv.Itoa(port), "-h", "127.0.0.1",
		"-k", dir, "-c", "max_connections=200", "-c", "fsync=on")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: acct.cred, Setpgid: true, Pdeathsig: syscall.SIGTERM}
	cmd.Env = serverEnv(dir)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	c := &Cluster{Port: port, User: acct.name, cmd: cmd, done: make(chan error, 1)}
	go func() { c.done <- cmd.Wait() }()
	if err := c.createDatabase(ctx, dir, password); err != nil {
		_ = c.Stop()
		return nil, err
	}
	c.URL = fmt.Sprintf("postgres://postgres:%s@127.0.0.1:%d/docintake?sslmode=disable", password, port)
	return c, nil
}

// createDatabase waits for the server and creates the database "docintake"
// on the first start. The administrative connection goes through the
// private socket, with the password like every other.
func (c *Cluster) createDatabase(ctx context.Context, dir, password string) error {
	admin := fmt.Sprintf("postgres://postgres:%s@/postgres?host=%s&port=%d&sslmode=disable", password, url.QueryEscape(dir), c.Port)
	if err := c.waitReady(ctx, admin); err != nil {
		return err
	}
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return fmt.Errorf("connect private postgres: %w", err)
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = 'docintake')`).Scan(&exists); err != nil {
		return fmt.Errorf("check database: %w", err)
	}
	if !exists {
		if _, err := conn.Exec(ctx, `CREATE DATABASE docintake`); err != nil {
			return fmt.Errorf("create database: %w", err)
		}
	}
	return nil
}

// account is who the server runs as: cred is nil when it runs as the
// caller (not root).
type account struct {
	name string
	cred *syscall.Credential
}

// serverAccount picks the server's account when standalone runs as root: the
// owner of an existing cluster (PostgreSQL runs only as its directory's
// owner), else DedicatedAccount when the host has it, else postgres.
func serverAccount(dir string) (account, error) {
	if os.Geteuid() != 0 {
		u, err := user.Current()
		if err != nil {
			return account{}, fmt.Errorf("private postgres: %w", err)
		}
		return account{name: u.Username}, nil
	}
	var u *user.User
	var err error
	if st, serr := os.Stat(filepath.Join(dir, "PG_VERSION")); serr == nil {
		u, err = user.LookupId(strconv.FormatUint(uint64(st.Sys().(*syscall.Stat_t).Uid), 10))
	} else if u, err = user.Lookup(DedicatedAccount); err != nil {
		u, err = user.Lookup("postgres")
	}
	if err != nil {
		return account{}, fmt.Errorf("running as root needs the %s or postgres user to start PostgreSQL: %w", DedicatedAccount, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if uid == 0 {
		return account{}, fmt.Errorf("private postgres: %s belongs to root; PostgreSQL does not run as root", dir)
	}
	return account{name: u.Username, cred: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}, nil
}

// serverEnv is the whole environment of initdb and the server: where the
// programs are, the C locale and the data directory. Standalone's own
// environment holds INTAKE_OPS_TOKEN, the NATS token and the like, which
// anyone with the server's account could read from /proc/<pid>/environ.
func serverEnv(dir string) []string {
	return []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C", "LC_ALL=C", "PGDATA=" + dir}
}

// prepare makes dir a cluster whose postgres role has password and whose
// pg_hba.conf asks every connection for it. A new cluster gets the password
// from initdb (it is never without one); an existing one, possibly made by
// an earlier release with "trust" or with another password file, gets it in
// single-user mode before the server starts.
func prepare(ctx context.Context, bin, dir, password string, acct account) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("postgres dir: %w", err)
	}
	if acct.cred != nil {
		// The server owns its directory; the parent must be traversable.
		_ = os.Chown(dir, int(acct.cred.Uid), int(acct.cred.Gid))
		_ = os.Chmod(filepath.Dir(dir), 0o755)
	}
	var err error
	if _, serr := os.Stat(filepath.Join(dir, "PG_VERSION")); serr != nil {
		err = initdb(ctx, bin, dir, password, acct)
	} else {
		err = setPassword(ctx, bin, dir, password, acct)
	}
	if err != nil {
		return err
	}
	return writeOwned(filepath.Join(dir, "pg_hba.conf"), []byte(hba), acct)
}

// initdb creates the cluster with the postgres role's password read from a
// file (never the command line, which every local user sees in /proc): a
// copy of the secret owned by the server's account, mode 0600, deleted
// right after.
func initdb(ctx context.Context, bin, dir, password string, acct account) error {
	pwfile := filepath.Join(filepath.Dir(dir), "."+filepath.Base(dir)+".initdb-password")
	if err := writeOwned(pwfile, []byte(password+"\n"), acct); err != nil {
		return err
	}
	defer os.Remove(pwfile)
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", dir, "-U", "postgres", "--auth=scram-sha-256",
		"--pwfile="+pwfile, "--encoding=UTF8", "--locale=C", "--no-sync")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: acct.cred}
	cmd.Env = serverEnv(dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb %s: %w: %s", dir, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// setPassword sets the postgres role's password in single-user mode, which
// needs no connection and so no authentication; the statement goes in on
// standard input.
func setPassword(ctx context.Context, bin, dir, password string, acct account) error {
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "postgres"), "--single", "-D", dir, "postgres")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: acct.cred}
	cmd.Env = serverEnv(dir)
	// Utility statements take no parameters; the password is hex (checked by Start).
	cmd.Stdin = strings.NewReader("ALTER ROLE postgres PASSWORD '" + password + "'\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("set the postgres password (single-user mode) %s: %w: %s", dir, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// writeOwned writes a file only the server's account reads (mode 0600).
func writeOwned(path string, b []byte, acct account) error {
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if acct.cred != nil {
		if err := os.Chown(path, int(acct.cred.Uid), int(acct.cred.Gid)); err != nil {
			return fmt.Errorf("chown %s: %w", path, err)
		}
	}
	return nil
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
	case err := <-c.done:
		c.done <- err // a second Stop returns at once
		return nil
	case <-time.After(30 * time.Second):
		_ = c.cmd.Process.Kill()
		c.done <- <-c.done
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
