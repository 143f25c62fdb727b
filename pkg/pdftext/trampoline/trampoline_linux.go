// Package trampoline starts pdftext's helper programs in their sandbox.
// Go's SysProcAttr can neither install a seccomp filter nor mount
// anything, so pdftext (sandbox_linux.go) starts the helper as the running
// binary itself, re-executed with Arg0 as its name and the sandbox in its
// arguments; this package's init confines that process and execs the
// helper program in place (same pid), without ever reaching main.
//
// The package imports little on purpose: Go initializes packages in
// import-path order as soon as their imports are, so this init runs before
// most of the embedding program's packages (metrics, tracing, protobuf
// registries) and a helper's start costs little more than an exec.
package trampoline

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
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

func init() {
	if len(os.Args) < 2 || os.Args[0] != Arg0 {
		return
	}
	err := enterSandbox(os.Args[1:])
	fmt.Fprintf(os.Stderr, "%s: %v\n", Arg0, err)
	os.Exit(126)
}

type rlimit struct {
	res      int
	cur, max uint64
}

// sandboxSpec is what the arguments ask for.
type sandboxSpec struct {
	dir        string
	uid        uint32 // 0: keep ours
	namespaces bool
	limits     []rlimit
	argv       []string // the program and its arguments
}

func parseSandboxSpec(args []string) (sandboxSpec, error) {
	var s sandboxSpec
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			s.argv = args[i+1:]
			if len(s.argv) == 0 || s.dir == "" {
				return s, errors.New("no program or no directory")
			}
			return s, nil
		case a == "--ns":
			s.namespaces = true
		case i+1 >= len(args):
			return s, fmt.Errorf("%s without a value", a)
		case a == "--dir":
			i++
			s.dir = args[i]
		case a == "--uid":
			i++
			n, err := strconv.ParseUint(args[i], 10, 32)
			if err != nil || n == 0 {
				return s, fmt.Errorf("bad uid %q", args[i])
			}
			s.uid = uint32(n)
		case a == "--rlimit":
			i++
			l, err := parseRlimit(args[i])
			if err != nil {
				return s, err
			}
			s.limits = append(s.limits, l)
		default:
			return s, fmt.Errorf("unknown option %q", a)
		}
	}
	return s, errors.New("no program")
}

func parseRlimit(v string) (rlimit, error) {
	f := strings.Split(v, ":")
	if len(f) != 3 {
		return rlimit{}, fmt.Errorf("bad rlimit %q", v)
	}
	res, err1 := strconv.Atoi(f[0])
	cur, err2 := strconv.ParseUint(f[1], 10, 64)
	hi, err3 := strconv.ParseUint(f[2], 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return rlimit{}, fmt.Errorf("bad rlimit %q: %w", v, err)
	}
	return rlimit{res: res, cur: cur, max: hi}, nil
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
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("not dumpable: %w", err)
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
	if err := os.Chdir(s.dir); err != nil {
		return err
	}
	if err := dropPrivileges(s.uid); err != nil {
		return err
	}
	if err := installSeccomp(); err != nil {
		return err
	}
	return execProgram(exe, s.argv, s.limits)
}

// program is the file to exec: a sealed copy the helper may execute but
// not read (the kernel makes a process that cannot read its own program
// non-dumpable at exec, whatever the program does), and the original, in
// case the kernel refuses to execute the copy (vm.memfd_noexec=2).
type program struct{ sealed, original int }

func openProgram(path string) (program, error) {
	p := program{sealed: -1}
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return p, fmt.Errorf("open %s: %w", path, err)
	}
	p.original = fd
	if sealed, err := sealedCopy(path); err == nil {
		p.sealed = sealed
	}
	return p, nil
}

// sealedCopy copies the program into a memfd, mode 0111, sealed against
// change, and returns a read-only descriptor of it (a writable one would
// make exec fail with ETXTBSY).
func sealedCopy(path string) (int, error) {
	src, err := os.Open(path)
	if err != nil {
		return -1, err
	}
	defer src.Close()
	fd, err := unix.MemfdCreate(filepath.Base(path), unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING|unix.MFD_EXEC)
	if errors.Is(err, unix.EINVAL) { // kernels before 6.3 know no MFD_EXEC
		fd, err = unix.MemfdCreate(filepath.Base(path), unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	}
	if err != nil {
		return -1, err
	}
	f := os.NewFile(uintptr(fd), "memfd")
	defer f.Close()
	if _, err := io.Copy(f, src); err != nil {
		return -1, err
	}
	if err := f.Chmod(0o111); err != nil {
		return -1, err
	}
	seals := unix.F_SEAL_SEAL | unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_WRITE
	if _, err := unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, seals); err != nil {
		return -1, err
	}
	return unix.Open("/proc/self/fd/"+strconv.Itoa(fd), unix.O_RDONLY|unix.O_CLOEXEC, 0)
}

// execProgram sets the rlimits and execs the program. Once the address
// space is limited, the Go runtime could fail any allocation of its own
// (fatal: cannot allocate memory), so everything exec needs is built first
// and the last steps are raw system calls that allocate nothing.
func execProgram(p program, argv []string, limits []rlimit) error {
	var paths []*byte
	for _, fd := range []int{p.sealed, p.original} {
		if fd >= 0 {
			b, err := syscall.BytePtrFromString("/proc/self/fd/" + strconv.Itoa(fd))
			if err != nil {
				return err
			}
			paths = append(paths, b)
		}
	}
	argvp, err := syscall.SlicePtrFromStrings(argv)
	if err != nil {
		return err
	}
	envp, err := syscall.SlicePtrFromStrings(os.Environ())
	if err != nil {
		return err
	}
	rl := make([]unix.Rlimit, len(limits))
	for i, l := range limits {
		rl[i] = unix.Rlimit{Cur: l.cur, Max: l.max}
	}
	debug.SetGCPercent(-1) // no collection starts (and maps memory) from here on
	for i, l := range limits {
		_, _, e := unix.RawSyscall6(unix.SYS_PRLIMIT64, 0, uintptr(l.res), uintptr(unsafe.Pointer(&rl[i])), 0, 0, 0)
		if e != 0 {
			return fmt.Errorf("rlimit %d: %w", l.res, e)
		}
	}
	// The sealed copy first; the original when the kernel refuses to
	// execute a memfd.
	var e syscall.Errno
	for _, path := range paths {
		_, _, e = unix.RawSyscall(unix.SYS_EXECVE, uintptr(unsafe.Pointer(path)),
			uintptr(unsafe.Pointer(&argvp[0])), uintptr(unsafe.Pointer(&envp[0])))
		if e != unix.EACCES && e != unix.EPERM {
			break
		}
	}
	return fmt.Errorf("exec %s: %w", argv[0], e)
}

// hiddenDirs are covered with an empty tmpfs in the helper's mount
// namespace: where unix sockets (databases, container runtimes, D-Bus),
// other processes' temporary files and shared memory live.
var hiddenDirs = []string{"/tmp", "/var/tmp", "/run", "/var/run", "/dev/shm"}

// privateMounts hides hiddenDirs from the helper but for its own working
// directory, which is bound back at the same path, and mounts a /proc that
// shows the helper's pid namespace only.
func privateMounts(dir string) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make / private: %w", err)
	}
	dirFD, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", dir, err)
	}
	defer unix.Close(dirFD)
	for _, p := range hiddenDirs {
		// A symlink (/var/run → /run) is covered through its target.
		if fi, err := os.Lstat(p); err != nil || !fi.IsDir() {
			continue
		}
		err := unix.Mount("tmpfs", p, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=64k,nr_inodes=64,mode=755")
		if err != nil {
			return fmt.Errorf("hide %s: %w", p, err)
		}
	}
	if _, err := os.Stat(dir); err != nil {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := unix.Mount("/proc/self/fd/"+strconv.Itoa(dirFD), dir, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("bind %s: %w", dir, err)
		}
	}
	if os.Getpid() == 1 {
		// Best effort: a container that masks parts of /proc refuses a
		// new one; the pid namespace still keeps other processes out of
		// reach of signals.
		_ = unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")
	}
	return nil
}

// dropPrivileges becomes uid (and the gid of the same number) without
// supplementary groups, which clears all capabilities. With uid 0 we stay
// who we are; as the root of our own user namespace we then give up its
// capabilities, for good (root regains none at exec).
func dropPrivileges(uid uint32) error {
	if uid != 0 {
		// Raw calls: for this thread only, the one that execs.
		for _, c := range [][4]uintptr{
			{unix.SYS_SETGROUPS, 0, 0, 0},
			{unix.SYS_SETRESGID, uintptr(uid), uintptr(uid), uintptr(uid)},
			{unix.SYS_SETRESUID, uintptr(uid), uintptr(uid), uintptr(uid)},
		} {
			if _, _, e := unix.RawSyscall(c[0], c[1], c[2], c[3]); e != 0 {
				return fmt.Errorf("become uid %d: %w", uid, e)
			}
		}
	} else if os.Geteuid() == 0 {
		const secbits = 0xff // NOROOT, NO_SETUID_FIXUP, KEEP_CAPS off, NO_CAP_AMBIENT_RAISE, all locked
		if err := unix.Prctl(unix.PR_SET_SECUREBITS, secbits&^(1<<4), 0, 0, 0); err != nil {
			return fmt.Errorf("securebits: %w", err)
		}
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var data [2]unix.CapUserData
		if err := unix.Capset(&hdr, &data[0]); err != nil {
			return fmt.Errorf("drop capabilities: %w", err)
		}
	}
	// A change of credentials clears the parent-death signal.
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0); err != nil {
		return err
	}
	return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}
