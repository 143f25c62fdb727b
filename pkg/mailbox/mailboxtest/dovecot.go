// Package mailboxtest starts throwaway Dovecot IMAP servers (Debian's
// dovecot-imapd) on a free loopback port with their own config, user and
// maildir, for the tests of pkg/mailbox, the mail intake and the commands
// built on them, the intake's benchmark, and the development mailbox of the
// README's quick start (cmd/devmailbox). It also builds the mails those put
// into them.
package mailboxtest

import (
	"bufio"
	"crypto/sha256"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
)

// Dovecot is a running server: one passwd-file user whose maildir lives
// under Dir, listening on 127.0.0.1:Port without TLS.
type Dovecot struct {
	Port     int
	User     string
	Password string
	Dir      string
	cmd      *exec.Cmd
	// greeting is this server's own login greeting, so that ready never
	// takes another server that won the port between probe and bind for
	// this one.
	greeting string
}

// Options say where and how to start a server.
type Options struct {
	Dir            string // its config, state, log and maildir (required)
	Port           int    // 0: a free port
	User, Password string // default orders / s3cret-imap
	// Extra is more config, given the server's directory (readable by its
	// processes) and written after the defaults, which it may override.
	Extra func(dir string) string
}

// Bin is the dovecot binary: on PATH, else Debian's /usr/sbin/dovecot.
func Bin() string {
	if p, err := exec.LookPath("dovecot"); err == nil {
		return p
	}
	return "/usr/sbin/dovecot"
}

// Installed tells whether Dovecot is there to start.
func Installed() bool {
	_, err := os.Stat(Bin())
	return err == nil
}

// Start starts a server in opt.Dir. With Port 0 it takes a free port,
// trying another when one is taken between the probe and the bind.
func Start(opt Options) (*Dovecot, error) {
	if opt.User == "" {
		opt.User, opt.Password = "orders", "s3cret-imap"
	}
	// The mail processes run as the mail user, who must reach the maildir.
	if err := os.MkdirAll(opt.Dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.Chmod(opt.Dir, 0o755); err != nil {
		return nil, err
	}
	d := &Dovecot{User: opt.User, Password: opt.Password, Dir: opt.Dir}
	var lastErr error
	for range 3 {
		d.Port = opt.Port
		if d.Port == 0 {
			p, err := freePort()
			if err != nil {
				return nil, err
			}
			d.Port = p
		}
		if lastErr = d.start(opt.Extra); lastErr == nil || opt.Port != 0 {
			return d, lastErr
		}
	}
	return nil, lastErr
}

// start writes the config and runs the server until it greets.
func (d *Dovecot) start(extra func(string) string) error {
	confPath, logPath, err := d.configure(extra)
	if err != nil {
		return err
	}
	d.cmd = exec.Command(Bin(), "-F", "-c", confPath)
	if err := d.cmd.Start(); err != nil {
		return err
	}
	if err := d.ready(logPath); err != nil {
		_ = d.Stop()
		return err
	}
	return nil
}

// Stop kills the server and waits for it.
func (d *Dovecot) Stop() error {
	if d.cmd == nil || d.cmd.Process == nil {
		return nil
	}
	_ = d.cmd.Process.Kill()
	err := d.cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return nil // killed, as asked
	}
	return err
}

// Wait waits for the server to exit.
func (d *Dovecot) Wait() error { return d.cmd.Wait() }

// Addr is the server's host:port.
func (d *Dovecot) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(d.Port)) }

// configure writes the config, passwd file and maildir home. As root the
// mail user is Dovecot's own system user (Dovecot refuses UID 0); as
// anyone else, every process runs as the current user.
func (d *Dovecot) configure(extra func(string) string) (confPath, logPath string, err error) {
	internal, err := currentUser()
	if err != nil {
		return "", "", err
	}
	mailUser, login := internal, internal
	if os.Geteuid() == 0 {
		if mailUser, err = lookup("dovecot"); err != nil {
			return "", "", err
		}
		if login, err = lookup("dovenull"); err != nil {
			return "", "", err
		}
		internal = mailUser
	}
	dir := d.Dir
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return "", "", err
	}
	if err := os.Chown(home, mailUser.uid, mailUser.gid); err != nil {
		return "", "", err
	}
	for _, sub := range []string{"run", "state"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return "", "", err
		}
	}
	passwd := fmt.Sprintf("%s:{PLAIN}%s:%d:%d::%s::\n", d.User, d.Password, mailUser.uid, mailUser.gid, home)
	if err := os.WriteFile(filepath.Join(dir, "passwd"), []byte(passwd), 0o644); err != nil {
		return "", "", err
	}
	logPath = filepath.Join(dir, "dovecot.log")
	d.greeting = fmt.Sprintf("mailboxtest %x ready.", sha256.Sum256([]byte(dir)))
	conf := fmt.Sprintf(confTemplate, dir, logPath, internal.name, internal.group, login.name, min(mailUser.uid, internal.uid), d.Port,
		d.greeting)
	if extra != nil {
		conf += extra(dir)
	}
	confPath = filepath.Join(dir, "dovecot.conf")
	return confPath, logPath, os.WriteFile(confPath, []byte(conf), 0o644)
}

const confTemplate = `base_dir = %[1]s/run
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
login_greeting = %[8]s
`

type sysUser struct {
	name, group string
	uid, gid    int
}

func lookup(name string) (sysUser, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return sysUser{}, fmt.Errorf("the dovecot-imapd package creates the user %s: %w", name, err)
	}
	return toSysUser(u)
}

func currentUser() (sysUser, error) {
	u, err := user.Current()
	if err != nil {
		return sysUser{}, err
	}
	return toSysUser(u)
}

func toSysUser(u *user.User) (sysUser, error) {
	uid, err := strconv.Atoi(u.Uid)
	if err != nil {
		return sysUser{}, err
	}
	gid, err := strconv.Atoi(u.Gid)
	if err != nil {
		return sysUser{}, err
	}
	g, err := user.LookupGroupId(u.Gid)
	if err != nil {
		return sysUser{}, err
	}
	return sysUser{name: u.Username, group: g.Name, uid: uid, gid: gid}, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// ready waits for the server's greeting (Dovecot needs a moment to start
// its listeners), up to 20 s; the log explains a failure.
func (d *Dovecot) ready(logPath string) error {
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", d.Addr(), time.Second)
		if err == nil {
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
			line, rerr := bufio.NewReader(c).ReadString('\n')
			c.Close()
			if rerr == nil && strings.HasPrefix(line, "* OK") {
				if strings.Contains(line, d.greeting) {
					return nil
				}
				// Ours could not bind: Start tries another port.
				return fmt.Errorf("port %d: another server answers (%q)", d.Port, strings.TrimSpace(line))
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

// Login connects and logs in as the server's user.
func (d *Dovecot) Login() (*imapclient.Client, error) {
	c, err := imapclient.DialInsecure(d.Addr(), nil)
	if err != nil {
		return nil, err
	}
	if err := c.Login(d.User, d.Password).Wait(); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Deliver puts raw into folder over IMAP (APPEND), as a mail server
// delivering it would.
func (d *Dovecot) Deliver(folder string, raw []byte) error {
	return d.DeliverAt(folder, raw, time.Time{})
}

// DeliverAt is Deliver with the mail's arrival (INTERNALDATE) at; zero is
// now.
func (d *Dovecot) DeliverAt(folder string, raw []byte, at time.Time) error {
	c, err := d.Login()
	if err != nil {
		return err
	}
	defer c.Close()
	cmd := c.Append(folder, int64(len(raw)), &imap.AppendOptions{Time: at})
	if _, err := cmd.Write(raw); err != nil {
		return err
	}
	if err := cmd.Close(); err != nil {
		return err
	}
	if _, err := cmd.Wait(); err != nil {
		return err
	}
	return c.Logout().Wait()
}

// Count is how many mails folder holds (0 for a folder that does not
// exist).
func (d *Dovecot) Count(folder string) (int, error) {
	c, err := d.Login()
	if err != nil {
		return 0, err
	}
	defer c.Close()
	// Dovecot answers STATUS of a missing folder with a plain NO.
	list, err := c.List("", folder, nil).Collect()
	if err != nil || len(list) == 0 {
		return 0, err
	}
	st, err := c.Status(folder, &imap.StatusOptions{NumMessages: true}).Wait()
	if err != nil {
		return 0, err
	}
	return int(*st.NumMessages), nil
}
