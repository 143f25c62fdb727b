//go:build amd64 || arm64

package trampoline

import (
	"syscall"
	"unsafe"
)

// Constants the syscall package lacks (their values are the same on amd64
// and arm64; TestConstants holds them to golang.org/x/sys/unix).
const (
	prSetPdeathsig   = 1
	prSetDumpable    = 4
	prSetSecurebits  = 28
	prSetNoNewPrivs  = 38
	oPath            = 0x200000
	mfdCloexec       = 0x1
	mfdAllowSealing  = 0x2
	mfdExec          = 0x10
	fAddSeals        = 1033
	fSealSeal        = 0x1
	fSealShrink      = 0x2
	fSealGrow        = 0x4
	fSealWrite       = 0x8
	capabilityV3     = 0x20080522
	secureNoRoot     = 0x1 | 0x2 // SECBIT_NOROOT and its lock
	secureNoFixup    = 0x4 | 0x8 // SECBIT_NO_SETUID_FIXUP and its lock
	secureKeepLocked = 0x20      // SECBIT_KEEP_CAPS_LOCKED (KEEP_CAPS off)
	secureNoAmbient  = 0x40 | 0x80
)

func prctl(option, arg uintptr) error {
	if _, _, e := syscall.RawSyscall6(nrPrctl, option, arg, 0, 0, 0, 0); e != 0 {
		return e
	}
	return nil
}

// program is the file to exec: a sealed copy the helper may execute but
// not read (the kernel makes a process that cannot read its own program
// non-dumpable at exec, whatever the program does), and the original, in
// case the kernel refuses to execute the copy (vm.memfd_noexec=2).
type program struct{ sealed, original int }

func openProgram(path string) (program, error) {
	p := program{sealed: -1}
	fd, err := syscall.Open(path, oPath|syscall.O_CLOEXEC, 0)
	if err != nil {
		return p, fail("open "+path, err)
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
	src, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	defer syscall.Close(src)
	name, err := syscall.BytePtrFromString("helper")
	if err != nil {
		return -1, err
	}
	fd, _, e := syscall.RawSyscall(nrMemfdCreate, uintptr(unsafe.Pointer(name)), mfdCloexec|mfdAllowSealing|mfdExec, 0)
	if e == syscall.EINVAL { // kernels before 6.3 know no MFD_EXEC
		fd, _, e = syscall.RawSyscall(nrMemfdCreate, uintptr(unsafe.Pointer(name)), mfdCloexec|mfdAllowSealing, 0)
	}
	if e != 0 {
		return -1, e
	}
	defer syscall.Close(int(fd))
	if err := copyFile(int(fd), src); err != nil {
		return -1, err
	}
	if err := syscall.Fchmod(int(fd), 0o111); err != nil {
		return -1, err
	}
	seals := uintptr(fSealSeal | fSealShrink | fSealGrow | fSealWrite)
	if _, _, e := syscall.Syscall(nrFcntl, fd, fAddSeals, seals); e != 0 {
		return -1, e
	}
	return syscall.Open("/proc/self/fd/"+itoa(int(fd)), syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
}

func copyFile(dst, src int) error {
	buf := make([]byte, 256<<10)
	for {
		n, err := syscall.Read(src, buf)
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		for b := buf[:n]; len(b) > 0; {
			w, err := syscall.Write(dst, b)
			if err != nil {
				return err
			}
			b = b[w:]
		}
	}
}

// hiddenDirs are covered with an empty tmpfs in the helper's mount
// namespace: where unix sockets (databases, container runtimes, D-Bus),
// other processes' temporary files and shared memory live.
var hiddenDirs = []string{"/tmp", "/var/tmp", "/run", "/var/run", "/dev/shm"}

// privateMounts hides hiddenDirs from the helper but for its own working
// directory, which is bound back at the same path, and mounts a /proc that
// shows the helper's pid namespace only.
func privateMounts(dir string) error {
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return fail("make / private", err)
	}
	dirFD, err := syscall.Open(dir, oPath|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fail("open "+dir, err)
	}
	defer syscall.Close(dirFD)
	for _, p := range hiddenDirs {
		// A symlink (/var/run → /run) is covered through its target.
		var st syscall.Stat_t
		if syscall.Lstat(p, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
			continue
		}
		const flags = syscall.MS_NOSUID | syscall.MS_NODEV | syscall.MS_NOEXEC
		if err := syscall.Mount("tmpfs", p, "tmpfs", flags, "size=64k,nr_inodes=64,mode=755"); err != nil {
			return fail("hide "+p, err)
		}
	}
	var st syscall.Stat_t
	if syscall.Stat(dir, &st) != nil {
		if err := mkdirAll(dir); err != nil {
			return fail("mkdir "+dir, err)
		}
		if err := syscall.Mount("/proc/self/fd/"+itoa(dirFD), dir, "", syscall.MS_BIND, ""); err != nil {
			return fail("bind "+dir, err)
		}
	}
	if syscall.Getpid() == 1 {
		// Best effort: a container that masks parts of /proc refuses a
		// new one; the pid namespace still keeps other processes out of
		// reach of signals.
		_ = syscall.Mount("proc", "/proc", "proc", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, "")
	}
	return nil
}

// mkdirAll creates the absolute path dir and its missing parents.
func mkdirAll(dir string) error {
	for i := 1; i <= len(dir); i++ {
		if i < len(dir) && dir[i] != '/' {
			continue
		}
		if err := syscall.Mkdir(dir[:i], 0o755); err != nil && err != syscall.EEXIST {
			return err
		}
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
		u := uintptr(uid)
		for _, c := range [][4]uintptr{{nrSetgroups, 0, 0, 0}, {nrSetresgid, u, u, u}, {nrSetresuid, u, u, u}} {
			if _, _, e := syscall.RawSyscall(c[0], c[1], c[2], c[3]); e != 0 {
				return fail("become uid "+itoa(int(uid)), e)
			}
		}
	} else if syscall.Geteuid() == 0 {
		if err := prctl(prSetSecurebits, secureNoRoot|secureNoFixup|secureKeepLocked|secureNoAmbient); err != nil {
			return fail("securebits", err)
		}
		hdr := struct {
			version uint32
			pid     int32
		}{version: capabilityV3}
		var data [2]struct{ effective, permitted, inheritable uint32 }
		if _, _, e := syscall.RawSyscall(nrCapset, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); e != 0 {
			return fail("drop capabilities", e)
		}
	}
	// A change of credentials clears the parent-death signal.
	if err := prctl(prSetPdeathsig, uintptr(syscall.SIGKILL)); err != nil {
		return fail("parent-death signal", err)
	}
	return prctl(prSetDumpable, 0)
}

// execProgram sets the rlimits and execs the program. Once the address
// space is limited the Go runtime could fail an allocation of its own
// (fatal: cannot allocate memory), so everything exec needs is built first
// and the last steps are raw system calls that allocate nothing.
func execProgram(p program, argv []string, limits []rlimit) error {
	var paths []*byte
	for _, fd := range []int{p.sealed, p.original} {
		if fd >= 0 {
			b, err := syscall.BytePtrFromString("/proc/self/fd/" + itoa(fd))
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
	var env []string
	for _, kv := range syscall.Environ() {
		if kv != EnvMarker && kv != "GOGC=off" {
			env = append(env, kv)
		}
	}
	envp, err := syscall.SlicePtrFromStrings(env)
	if err != nil {
		return err
	}
	rl := make([]syscall.Rlimit, len(limits))
	for i, l := range limits {
		rl[i] = syscall.Rlimit{Cur: l.cur, Max: l.max}
	}
	for i, l := range limits {
		_, _, e := syscall.RawSyscall6(nrPrlimit64, 0, uintptr(l.res), uintptr(unsafe.Pointer(&rl[i])), 0, 0, 0)
		if e != 0 {
			return fail("rlimit "+itoa(l.res), e)
		}
	}
	// The sealed copy first; the original when the kernel refuses to
	// execute a memfd.
	var e syscall.Errno
	for _, path := range paths {
		_, _, e = syscall.RawSyscall(nrExecve, uintptr(unsafe.Pointer(path)),
			uintptr(unsafe.Pointer(&argvp[0])), uintptr(unsafe.Pointer(&envp[0])))
		if e != syscall.EACCES && e != syscall.EPERM {
			break
		}
	}
	return fail("exec "+argv[0], e)
}
