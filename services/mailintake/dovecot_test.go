package mailintake_test

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/stretchr/testify/require"
)

// dovecot is a Dovecot IMAP server of one test: its own config, passwd-file
// user and maildir in a temporary directory, listening on a free loopback
// port, stopped when the test ends.
type dovecot struct {
	Port     int
	User     string
	Password string
	extra    func(dir string) string // more config, written after the defaults (which it may override)
}

// startDovecot starts the server, or skips the test when Dovecot is not
// installed (fails under CI=true, where deploy/dev/testenv.sh installs it).
func startDovecot(t *testing.T) *dovecot {
	t.Helper()
	return startDovecotWith(t, nil)
}

// startDovecotWith starts the server with extra config (given the
// server's directory, readable by its processes), e.g. another passdb.
func startDovecotWith(t *testing.T, extra func(dir string) string) *dovecot {
	t.Helper()
	_, err := os.Stat(dovecotBin())
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("dovecot is not installed (deploy/dev/testenv.sh installs dovecot-imapd)")
		}
		t.Skip("dovecot is not installed: apt-get install dovecot-imapd (deploy/dev/testenv.sh does) to run the IMAP tests")
	}
	dir := t.TempDir()
	// The mail processes run as the mail user, who must reach the maildir.
	require.NoError(t, os.Chmod(filepath.Dir(dir), 0o755))
	require.NoError(t, os.Chmod(dir, 0o755))
	d := &dovecot{User: "orders", Password: "s3cret-imap", extra: extra}
	var lastErr error
	for range 3 { // a free port may be taken between probe and bind
		d.Port = freePort(t)
		cmd, logPath := d.configure(t, dir)
		require.NoError(t, cmd.Start())
		if lastErr = d.ready(logPath); lastErr == nil {
			t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
			return d
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	t.Fatalf("dovecot did not start: %v", lastErr)
	return nil
}

// configure writes the config, passwd file and maildir home. As root the
// mail user is Dovecot's own system user (Dovecot refuses UID 0); as
// anyone else, every process runs as the current user.
func (d *dovecot) configure(t *testing.T, dir string) (*exec.Cmd, string) {
	t.Helper()
	internal, login := currentUser(t)
	mailUser := internal
	if os.Geteuid() == 0 {
		mailUser, login = lookup(t, "dovecot"), lookup(t, "dovenull")
		internal = mailUser
	}
	home := filepath.Join(dir, "home")
	require.NoError(t, os.MkdirAll(home, 0o700))
	require.NoError(t, os.Chown(home, mailUser.uid, mailUser.gid))
	for _, sub := range []string{"run", "state"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, sub), 0o755))
	}
	passwd := fmt.Sprintf("%s:{PLAIN}%s:%d:%d::%s::\n", d.User, d.Password, mailUser.uid, mailUser.gid, home)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "passwd"), []byte(passwd), 0o644))
	logPath := filepath.Join(dir, "dovecot.log")
	conf := fmt.Sprintf(`base_dir = %[1]s/run
state_dir = %[1]s/state
log_path = %[2]s
ssl = no
disable_plaintext_auth = no
listen = 127.0.0.1
protocols = imap
default_internal_user = %[3]s
default_internal_group = %[4]s
default_login_user = %[5]s
first_valid_uid = %[6]d
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = %[7]d
  }
  inet_listener imaps {
    port = 0
  }
  chroot =
}
service anvil {
  chroot =
}
passdb {
  driver = passwd-file
  args = username_format=%%u %[1]s/passwd
}
userdb {
  driver = passwd-file
  args = username_format=%%u %[1]s/passwd
}
mail_location = maildir:~/Maildir
`, dir, logPath, internal.name, internal.group, login.name, min(mailUser.uid, internal.uid), d.Port)
	if d.extra != nil {
		conf += d.extra(dir)
	}
	confPath := filepath.Join(dir, "dovecot.conf")
	require.NoError(t, os.WriteFile(confPath, []byte(conf), 0o644))
	return exec.Command(dovecotBin(), "-F", "-c", confPath), logPath
}

func dovecotBin() string {
	if p, err := exec.LookPath("dovecot"); err == nil {
		return p
	}
	return "/usr/sbin/dovecot"
}

type sysUser struct {
	name, group string
	uid, gid    int
}

func lookup(t *testing.T, name string) sysUser {
	t.Helper()
	u, err := user.Lookup(name)
	require.NoError(t, err, "the dovecot-imapd package creates the user %s", name)
	return toSysUser(t, u)
}

func currentUser(t *testing.T) (sysUser, sysUser) {
	t.Helper()
	u, err := user.Current()
	require.NoError(t, err)
	su := toSysUser(t, u)
	return su, su
}

func toSysUser(t *testing.T, u *user.User) sysUser {
	t.Helper()
	uid, err := strconv.Atoi(u.Uid)
	require.NoError(t, err)
	gid, err := strconv.Atoi(u.Gid)
	require.NoError(t, err)
	g, err := user.LookupGroupId(u.Gid)
	require.NoError(t, err)
	return sysUser{name: u.Username, group: g.Name, uid: uid, gid: gid}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// ready waits for the server's greeting (Dovecot needs a moment to start
// its listeners), up to 20 s; the log explains a failure.
func (d *dovecot) ready(logPath string) error {
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", d.addr(), time.Second)
		if err == nil {
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
			line, rerr := bufio.NewReader(c).ReadString('\n')
			c.Close()
			if rerr == nil && strings.HasPrefix(line, "* OK") {
				return nil
			}
			err = fmt.Errorf("greeting %q: %v", line, rerr)
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(logPath)
			return fmt.Errorf("%v; log:\n%s", err, b)
		}
		time.Sleep(50 * time.Millisecond) // polling a starting server, not synchronising with our code
	}
}

func (d *dovecot) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(d.Port)) }

// client logs in as the test user.
func (d *dovecot) client(t *testing.T) *imapclient.Client {
	t.Helper()
	c, err := imapclient.DialInsecure(d.addr(), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	require.NoError(t, c.Login(d.User, d.Password).Wait())
	return c
}

// appendMail puts raw into folder over IMAP, as a mail server delivering
// it would.
func (d *dovecot) appendMail(t *testing.T, folder string, raw []byte) {
	t.Helper()
	c := d.client(t)
	defer c.Logout()
	cmd := c.Append(folder, int64(len(raw)), nil)
	_, err := cmd.Write(raw)
	require.NoError(t, err)
	require.NoError(t, cmd.Close())
	_, err = cmd.Wait()
	require.NoError(t, err)
}

// count is how many mails folder holds (0 for a folder that does not
// exist).
func (d *dovecot) count(t *testing.T, folder string) int {
	t.Helper()
	c := d.client(t)
	defer c.Logout()
	st, err := c.Status(folder, &imap.StatusOptions{NumMessages: true}).Wait()
	if err != nil {
		return 0
	}
	return int(*st.NumMessages)
}
