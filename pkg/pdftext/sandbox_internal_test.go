package pdftext

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// requireRoot skips a sandbox test when we are not root (only root can
// give helpers a uid of their own), except under CI=true, where tests run
// as root and a skip would hide a broken sandbox.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("CI=true: the sandbox tests need root (CI runs as root)")
	}
	t.Skip("skipping: the helper sandbox's uid and /proc properties need root (run as root or with CI=true)")
}

// requireNamespaces skips when the kernel or container refused the
// helpers' namespaces (failing under CI=true).
func requireNamespaces(t *testing.T, granted bool) {
	t.Helper()
	if granted {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("CI=true: helpers got no namespaces here")
	}
	t.Skip("skipping: the kernel or container refuses namespaces, helpers share ours")
}

// passwdUIDs are the uids of /etc/passwd's accounts by name.
func passwdUIDs(t *testing.T) map[string]uint32 {
	t.Helper()
	f, err := os.Open("/etc/passwd")
	require.NoError(t, err)
	defer f.Close()
	ids := map[string]uint32{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ":")
		if len(fields) > 2 {
			if n, err := strconv.ParseUint(fields[2], 10, 32); err == nil {
				ids[fields[0]] = uint32(n)
			}
		}
	}
	require.NoError(t, sc.Err())
	return ids
}

// requireOwnUID: uid is not nobody's nor any other account's.
func requireOwnUID(t *testing.T, uid uint32) {
	t.Helper()
	require.NotEqualValues(t, 65534, uid, "not the traditional nobody")
	for name, id := range passwdUIDs(t) {
		require.NotEqual(t, id, uid, "the helper's uid is %s's", name)
	}
}

// hostSocket listens on a unix socket at path that any user may connect
// to: only the sandbox can keep a helper from it.
func hostSocket(t *testing.T, path string) {
	t.Helper()
	l, err := net.Listen("unix", path)
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	require.NoError(t, os.Chmod(path, 0o777))
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	c, err := net.Dial("unix", path)
	require.NoError(t, err, "the socket is reachable from the host")
	c.Close()
}

// hostSockets creates one socket in /run and one in /tmp.
func hostSockets(t *testing.T) []string {
	t.Helper()
	name := fmt.Sprintf("docintake-test-%d-%d.sock", os.Getpid(), time.Now().UnixNano())
	paths := []string{filepath.Join("/run", name), filepath.Join("/tmp", name)}
	for _, p := range paths {
		hostSocket(t, p)
	}
	return paths
}

func procStatus(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	return string(b)
}

func statusField(t *testing.T, status, name string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + name + `:[ \t]*(.*)$`).FindStringSubmatch(status)
	require.NotNil(t, m, "%s in\n%s", name, status)
	return strings.TrimSpace(m[1])
}

// sameUserOpens tries to read a file of /proc/<pid> as uid, the way another
// process of the helper's user would (this test runs as root, whom
// dumpability does not stop).
func sameUserOpens(t *testing.T, uid uint32, path string) error {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", `exec 3< "$0"`, path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid, Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w: %s", err, out)
	}
	return nil
}

// TestResidentHelperIsolated reads a live resident helper's confinement
// from /proc: a uid no host account has, no new privileges, a seccomp
// filter, not dumpable (a process of its own uid cannot open its mem or
// environ), its own mount and pid namespaces, and no way to the host's
// unix sockets.
func TestResidentHelperIsolated(t *testing.T) {
	requireRoot(t)
	t.Parallel()
	socks := hostSockets(t)
	eng := newTestResident(t, Options{Workers: 1, Timeout: 10 * time.Second})
	eng.pool.mu.Lock()
	granted := eng.pool.netns == 1
	eng.pool.mu.Unlock()
	requireNamespaces(t, granted)
	pid := eng.pool.idlePids()[0]
	status := procStatus(t, pid)
	cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
	require.NoError(t, err)

	uid := strings.Fields(statusField(t, status, "Uid"))
	require.Equal(t, strings.Repeat(strconv.Itoa(int(helperCred(cwd).Uid))+" ", 4), strings.Join(uid, " ")+" ")
	n, err := strconv.ParseUint(uid[0], 10, 32)
	require.NoError(t, err)
	requireOwnUID(t, uint32(n))
	require.Equal(t, uid, strings.Fields(statusField(t, status, "Gid")))
	require.Empty(t, statusField(t, status, "Groups"))
	require.Equal(t, "0000000000000000", statusField(t, status, "CapEff"))

	require.Equal(t, "1", statusField(t, status, "NoNewPrivs"))
	require.Equal(t, "2", statusField(t, status, "Seccomp"), "a seccomp filter")

	// A non-dumpable process's /proc files belong to root, and its user
	// may not open the ones ptrace rules guard.
	var st syscall.Stat_t
	require.NoError(t, syscall.Stat(fmt.Sprintf("/proc/%d/environ", pid), &st))
	require.Zero(t, st.Uid, "/proc/%d/environ belongs to root: the helper is not dumpable", pid)
	for _, f := range []string{"mem", "environ"} {
		err := sameUserOpens(t, uint32(n), fmt.Sprintf("/proc/%d/%s", pid, f))
		require.Error(t, err, "uid %d opened the helper's /proc/%d/%s", n, pid, f)
	}

	for _, ns := range []string{"mnt", "pid", "net", "ipc"} {
		ours, err := os.Readlink("/proc/self/ns/" + ns)
		require.NoError(t, err)
		theirs, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/%s", pid, ns))
		require.NoError(t, err)
		require.NotEqual(t, ours, theirs, "the helper has its own %s namespace", ns)
	}
	// /proc/<pid>/root is the helper's view of the file system.
	root := fmt.Sprintf("/proc/%d/root", pid)
	for _, s := range socks {
		_, err := os.Stat(root + s)
		require.ErrorIs(t, err, os.ErrNotExist, "the helper sees the host's %s", s)
	}
	_, err = os.Stat(root + cwd)
	require.NoError(t, err, "the helper still sees its working directory")

	got, err := eng.Extract(t.Context(), orderPDF())
	require.NoError(t, err)
	require.Contains(t, got.String(), "PO-4711")
}

// probeReport is what TestSandboxProbe prints from inside the sandbox.
type probeReport struct {
	UID, GID     int
	Dumpable     int
	Status       string
	MountNS      string
	Sockets      map[string]string // path → why connecting failed ("" when it worked)
	Denied       map[string]string // system call → its error
	WorkDirWrite string            // "" when the helper could write its directory
}

// TestOneShotHelperIsolated runs this test binary in the one-shot sandbox
// (the one of pdftotext, pdftoppm, pdfdetach and tesseract, none of which
// we can change) as TestSandboxProbe, which reports what it can do from in
// there.
func TestOneShotHelperIsolated(t *testing.T) {
	requireRoot(t)
	t.Parallel()
	socks := hostSockets(t)
	dir := workDir(t)
	// The Go runtime (and the race detector's shadow memory) reserves
	// more address space than a PDF tool may have.
	sb := newSandbox(Options{Timeout: time.Minute, MaxOutputBytes: 1 << 20, MemoryLimitBytes: math.MaxInt64})
	out, err := sb.run(t.Context(), dir, probeBinary(t), probeArgs(socks), nil)
	require.NoError(t, err)
	requireNamespaces(t, oneShotNamespaces.Load() == 1)
	r := parseProbe(t, out)
	requireConfined(t, dir, r)
	ours, err := os.Readlink("/proc/self/ns/mnt")
	require.NoError(t, err)
	require.NotEqual(t, ours, r.MountNS, "the helper has its own mount namespace")
	for _, s := range socks {
		require.NotEmpty(t, r.Sockets[s], "the helper connected to the host's %s", s)
		require.Contains(t, r.Sockets[s], "no such file", "the host's %s is hidden", s)
	}
}

// TestHelperIsolatedWithoutNamespaces: where a container refuses
// namespaces, a helper still gets its own uid, no dumpability, no new
// privileges and the seccomp filter, which also keeps it from the host's
// unix sockets it can see.
func TestHelperIsolatedWithoutNamespaces(t *testing.T) {
	requireRoot(t)
	t.Parallel()
	socks := hostSockets(t)
	dir := workDir(t)
	j := jail{dir: dir, env: []string{"LC_ALL=C.UTF-8"}}
	out, err := j.command(t.Context(), probeBinary(t), probeArgs(socks)).Output()
	require.NoError(t, err)
	r := parseProbe(t, out)
	requireConfined(t, dir, r)
	for _, s := range socks {
		require.Contains(t, r.Sockets[s], "operation not permitted", "the helper connected to the host's %s", s)
	}
}

// probeBinary is this test binary; the trampoline runs it from a copy, so
// the helper's uid needs no access to the build directory.
func probeBinary(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	return exe
}

func probeArgs(socks []string) []string {
	return append([]string{"-test.run=^TestSandboxProbe$", "-test.count=1", "--", "sandbox-probe"}, socks...)
}

func parseProbe(t *testing.T, out []byte) probeReport {
	t.Helper()
	m := regexp.MustCompile(`(?m)^probe: (.*)$`).FindSubmatch(out)
	require.NotNil(t, m, "no report in\n%s", out)
	var r probeReport
	require.NoError(t, json.Unmarshal(m[1], &r))
	return r
}

// requireConfined checks what holds with or without namespaces.
func requireConfined(t *testing.T, dir string, r probeReport) {
	t.Helper()
	require.EqualValues(t, helperCred(dir).Uid, r.UID)
	require.Equal(t, r.UID, r.GID)
	requireOwnUID(t, uint32(r.UID))
	require.Zero(t, r.Dumpable, "an exec'd program is not dumpable")
	require.Equal(t, "1", statusField(t, r.Status, "NoNewPrivs"))
	require.Equal(t, "2", statusField(t, r.Status, "Seccomp"))
	require.Equal(t, "0000000000000000", statusField(t, r.Status, "CapEff"))
	for _, call := range []string{"socket", "ptrace", "unshare", "process_vm_readv", "mount", "keyctl", "bpf"} {
		require.Equal(t, "operation not permitted", r.Denied[call], call)
	}
	require.Empty(t, r.WorkDirWrite, "the helper writes its own directory")
}

// TestSandboxProbe runs only inside the sandbox (TestOneShotHelperIsolated
// starts it there) and prints what a helper can reach.
func TestSandboxProbe(t *testing.T) {
	if flag.Arg(0) != "sandbox-probe" {
		t.Skip("runs inside the helper sandbox only (started by TestOneShotHelperIsolated)")
	}
	r := probeReport{UID: os.Getuid(), GID: os.Getgid(), Sockets: map[string]string{}, Denied: map[string]string{}}
	d, _ := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	r.Dumpable = d
	b, _ := os.ReadFile("/proc/self/status")
	r.Status = string(b)
	r.MountNS, _ = os.Readlink("/proc/self/ns/mnt")
	for _, s := range flag.Args()[1:] {
		r.Sockets[s] = "connected"
		if c, err := net.Dial("unix", s); err == nil {
			c.Close()
			r.Sockets[s] = ""
		} else if _, serr := os.Stat(s); serr != nil {
			r.Sockets[s] = err.Error() + "; " + serr.Error()
		} else {
			r.Sockets[s] = err.Error()
		}
	}
	errText := func(err error) string {
		if err == nil {
			return "allowed"
		}
		return err.Error()
	}
	_, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	r.Denied["socket"] = errText(err)
	r.Denied["ptrace"] = errText(unix.PtraceAttach(os.Getppid()))
	r.Denied["unshare"] = errText(unix.Unshare(unix.CLONE_NEWUSER))
	local := []unix.Iovec{{Base: new(byte), Len: 1}}
	_, err = unix.ProcessVMReadv(os.Getpid(), local, []unix.RemoteIovec{{Base: uintptr(0x1000), Len: 1}}, 0)
	r.Denied["process_vm_readv"] = errText(err)
	r.Denied["mount"] = errText(unix.Mount("none", "/tmp", "tmpfs", 0, ""))
	_, err = unix.KeyctlInt(unix.KEYCTL_GET_KEYRING_ID, unix.KEY_SPEC_SESSION_KEYRING, 0, 0, 0)
	r.Denied["keyctl"] = errText(err)
	r.Denied["bpf"] = "allowed"
	if _, _, e := unix.Syscall(unix.SYS_BPF, 0, 0, 0); e != 0 {
		r.Denied["bpf"] = e.Error()
	}
	if err := os.WriteFile("probe.txt", []byte("x"), 0o600); err != nil {
		r.WorkDirWrite = err.Error()
	}
	j, err := json.Marshal(r)
	require.NoError(t, err)
	fmt.Printf("probe: %s\n", j)
}
