//go:build amd64 || arm64

// Package trampoline starts pdftext's helper programs in their sandbox.
// Go's SysProcAttr can neither install a seccomp filter nor mount
// anything, so pdftext (sandbox_linux.go) starts the helper as the running
// binary itself, re-executed with Arg0 as its name, EnvMarker in its
// environment and the sandbox in its arguments; this package's init
// confines that process and execs the helper program in place (same pid),
// without ever reaching main.
//
// The package imports nothing but syscall, unsafe and runtime, on purpose:
// Go initializes a package as soon as its imports are, so this init runs
// after about 20 of the embedding binary's packages instead of 170 (the
// processor's metrics, tracing and protobuf registries, its vocabulary
// tables): a helper's start costs little more than an exec. Hence the
// hand-written parsing and the system call numbers of sysnum_linux_*.go.
package trampoline

import (
	"runtime"
	"syscall"
)

// Arg0 is the name a trampoline is started with; the arguments that
// follow are
//
//	--dir DIR [--uid N] [--ns] [--rlimit RES:CUR:MAX]... -- PROGRAM ARGS...
//
// DIR is the helper's working directory (kept visible in its mount
// namespace), N the uid and gid to run as (root only), --ns asks for the
// private mounts (the caller created the namespaces with clone flags), and
// each --rlimit is set just before the exec.
const Arg0 = "docintake-pdftext-sandbox"

// EnvMarker is in a trampoline's environment (and removed before the
// program starts): other processes never read their command line here.
// GOGC=off, also removed, keeps the collector from mapping memory once the
// address space is limited.
const EnvMarker = "DOCINTAKE_PDFTEXT_SANDBOX=1"

func init() {
	if _, ok := syscall.Getenv("DOCINTAKE_PDFTEXT_SANDBOX"); !ok {
		return
	}
	args, err := cmdline()
	if err == nil && (len(args) < 2 || args[0] != Arg0) {
		return
	}
	if err == nil {
		err = enterSandbox(args[1:])
	}
	_, _ = syscall.Write(2, []byte(Arg0+": "+err.Error()+"\n"))
	syscall.Exit(126)
}

// failure is the trampoline's error: what failed and why.
type failure string

func (f failure) Error() string { return string(f) }

func fail(what string, err error) error { return failure(what + ": " + err.Error()) }

// cmdline reads our arguments (the os package, which has them, is not
// imported; see the package comment).
func cmdline() ([]string, error) {
	fd, err := syscall.Open("/proc/self/cmdline", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, fail("read arguments", err)
	}
	defer syscall.Close(fd)
	var data []byte
	buf := make([]byte, 64<<10)
	for {
		n, err := syscall.Read(fd, buf)
		if err != nil {
			return nil, fail("read arguments", err)
		}
		if n == 0 {
			break
		}
		data = append(data, buf[:n]...)
	}
	var args []string
	for len(data) > 0 {
		i := 0
		for i < len(data) && data[i] != 0 {
			i++
		}
		args = append(args, string(data[:i]))
		data = data[min(i+1, len(data)):]
	}
	return args, nil
}

// sandboxSpec is what the arguments ask for.
type sandboxSpec struct {
	dir        string
	uid        uint32 // 0: keep ours
	namespaces bool
	limits     []rlimit
	argv       []string // the program and its arguments
}

type rlimit struct {
	res      int
	cur, max uint64
}

func parseSandboxSpec(args []string) (sandboxSpec, error) {
	var s sandboxSpec
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			s.argv = args[i+1:]
			if len(s.argv) == 0 || s.dir == "" {
				return s, failure("no program or no directory")
			}
			return s, nil
		case a == "--ns":
			s.namespaces = true
		case i+1 >= len(args):
			return s, failure(a + " without a value")
		case a == "--dir":
			i++
			s.dir = args[i]
		case a == "--uid":
			i++
			n, ok := parseUint(args[i])
			if !ok || n == 0 || n > 1<<32-2 {
				return s, failure("bad uid " + args[i])
			}
			s.uid = uint32(n)
		case a == "--rlimit":
			i++
			l, ok := parseRlimit(args[i])
			if !ok {
				return s, failure("bad rlimit " + args[i])
			}
			s.limits = append(s.limits, l)
		default:
			return s, failure("unknown option " + a)
		}
	}
	return s, failure("no program")
}

// parseRlimit reads RES:CUR:MAX.
func parseRlimit(v string) (rlimit, bool) {
	var f []uint64
	start := 0
	for i := 0; i <= len(v); i++ {
		if i == len(v) || v[i] == ':' {
			n, ok := parseUint(v[start:i])
			if !ok {
				return rlimit{}, false
			}
			f = append(f, n)
			start = i + 1
		}
	}
	if len(f) != 3 || f[0] > 64 {
		return rlimit{}, false
	}
	return rlimit{res: int(f[0]), cur: f[1], max: f[2]}, true
}

func parseUint(s string) (uint64, bool) {
	if s == "" || len(s) > 20 {
		return 0, false
	}
	var n uint64
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if n > (1<<64-1-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for ; n > 0; n /= 10 {
		i--
		b[i] = byte('0' + n%10)
	}
	return string(b[i:])
}

// enterSandbox confines this process and execs the program; it returns
// only on failure. Credentials, no_new_privs and the seccomp filter are
// per thread: everything happens on this locked thread, which execs.
func enterSandbox(args []string) error {
	runtime.LockOSThread()
	s, err := parseSandboxSpec(args)
	if err != nil {
		return err
	}
	if err := prctl(prSetDumpable, 0); err != nil {
		return fail("not dumpable", err)
	}
	// Opened before the mounts hide the directory it may live in (a copy
	// of the resident helper under /tmp, a test binary).
	exe, err := openProgram(s.argv[0])
	if err != nil {
		return err
	}
	if s.namespaces {
		if err := privateMounts(s.dir); err != nil {
			return err
		}
	}
	if err := syscall.Chdir(s.dir); err != nil {
		return fail("chdir "+s.dir, err)
	}
	if err := dropPrivileges(s.uid); err != nil {
		return err
	}
	if err := installSeccomp(); err != nil {
		return err
	}
	return execProgram(exe, s.argv, s.limits)
}
