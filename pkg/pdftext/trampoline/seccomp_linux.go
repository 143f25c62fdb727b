package trampoline

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The helpers' seccomp filter is a deny-list: every system call that lets a
// process reach beyond itself and its files, which no PDF reader or OCR
// needs, fails with EPERM; everything else is allowed. An allow-list would
// be tighter, but poppler, tesseract (OpenMP), fontconfig, glibc and
// ld.so call what their versions and a document's code paths need, and a
// call missing from the list would fail a document only when a tenant's
// PDF takes that path. The other layers (own uid, namespaces, rlimits) do
// not depend on the list being complete.
//
// Denied: other processes (ptrace, process_vm_*, kcmp, pidfd_getfd), the
// kernel's namespaces and mounts (mount API, unshare, setns, clone with a
// namespace flag; clone3 gets ENOSYS, so glibc falls back to clone, whose
// flags the filter can read), sockets of any family, kernel attack surface
// (bpf, perf_event_open, io_uring, userfaultfd, keyrings), administration
// (modules, kexec, reboot, swap, clocks, hostname, quotas, syslog,
// personality) and terminal input injection (TIOCSTI, TIOCLINUX). System
// calls of another ABI (i386, x32 on amd64) kill the process: the deny-list
// names native numbers only.
var deniedSyscalls = append([]uintptr{
	unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV, unix.SYS_PROCESS_MADVISE,
	unix.SYS_KCMP, unix.SYS_PIDFD_GETFD,
	unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_CHROOT, unix.SYS_UNSHARE, unix.SYS_SETNS,
	unix.SYS_FSOPEN, unix.SYS_FSCONFIG, unix.SYS_FSMOUNT, unix.SYS_FSPICK, unix.SYS_MOVE_MOUNT,
	unix.SYS_OPEN_TREE, unix.SYS_MOUNT_SETATTR, unix.SYS_OPEN_BY_HANDLE_AT, unix.SYS_NAME_TO_HANDLE_AT,
	unix.SYS_SOCKET, unix.SYS_SOCKETPAIR,
	unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN, unix.SYS_USERFAULTFD, unix.SYS_FANOTIFY_INIT,
	unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
	unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
	unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE, unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD,
	unix.SYS_REBOOT, unix.SYS_SWAPON, unix.SYS_SWAPOFF, unix.SYS_ACCT, unix.SYS_QUOTACTL, unix.SYS_QUOTACTL_FD,
	unix.SYS_SETTIMEOFDAY, unix.SYS_CLOCK_SETTIME, unix.SYS_CLOCK_ADJTIME, unix.SYS_ADJTIMEX,
	unix.SYS_SETHOSTNAME, unix.SYS_SETDOMAINNAME, unix.SYS_SYSLOG, unix.SYS_PERSONALITY, unix.SYS_VHANGUP,
	unix.SYS_LOOKUP_DCOOKIE, unix.SYS_MOVE_PAGES, unix.SYS_MIGRATE_PAGES,
}, archDeniedSyscalls...)

// namespaceCloneFlags are clone's flags that create namespaces (CLONE_NEWTIME
// is left out: clone reads that bit as part of the exit signal).
const namespaceCloneFlags = unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWUSER |
	unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWCGROUP

var errNoSeccompArch = errors.New("no seccomp filter for this architecture")

// installSeccomp sets no_new_privs and installs the filter on the calling
// thread (which then execs the helper).
func installSeccomp() error {
	prog := seccompProgram()
	if prog == nil {
		return errNoSeccompArch
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	_, _, e := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog)))
	if e != 0 {
		return fmt.Errorf("seccomp: %w", e)
	}
	return nil
}

// seccomp_data's offsets: nr, arch, then the arguments (their low 32 bits
// on these little-endian architectures).
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16
	offArg1 = 24
)

// bpfProgram assembles classic BPF with symbolic jump targets.
type bpfProgram struct {
	ins    []unix.SockFilter
	labels map[string]int
	fixups map[int][2]string // instruction → jt, jf labels
}

func (b *bpfProgram) stmt(code uint16, k uint32) {
	b.ins = append(b.ins, unix.SockFilter{Code: code, K: k})
}

// jump adds a conditional jump; "" continues with the next instruction.
func (b *bpfProgram) jump(code uint16, k uint32, jt, jf string) {
	b.fixups[len(b.ins)] = [2]string{jt, jf}
	b.ins = append(b.ins, unix.SockFilter{Code: code, K: k})
}

func (b *bpfProgram) label(name string) { b.labels[name] = len(b.ins) }

func (b *bpfProgram) resolve() []unix.SockFilter {
	for i, l := range b.fixups {
		for j, name := range l {
			if name == "" {
				continue
			}
			off := b.labels[name] - i - 1
			if off < 0 || off > 255 {
				panic("seccomp: jump out of range to " + name)
			}
			if j == 0 {
				b.ins[i].Jt = uint8(off)
			} else {
				b.ins[i].Jf = uint8(off)
			}
		}
	}
	return b.ins
}

const (
	ldW  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	jeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	jge  = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
	jset = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
	ret  = unix.BPF_RET | unix.BPF_K
)

// seccompProgram is the filter (nil on an architecture without a table).
func seccompProgram() []unix.SockFilter {
	if seccompArch == 0 {
		return nil
	}
	b := &bpfProgram{labels: map[string]int{}, fixups: map[int][2]string{}}
	b.stmt(ldW, offArch)
	b.jump(jeq, seccompArch, "", "kill")
	b.stmt(ldW, offNr)
	if foreignSyscallBit != 0 {
		b.jump(jge, foreignSyscallBit, "kill", "")
	}
	b.jump(jeq, unix.SYS_CLONE, "clone", "")
	b.jump(jeq, unix.SYS_CLONE3, "enosys", "")
	b.jump(jeq, unix.SYS_IOCTL, "ioctl", "")
	for _, nr := range deniedSyscalls {
		b.jump(jeq, uint32(nr), "eperm", "")
	}
	b.stmt(ret, unix.SECCOMP_RET_ALLOW)
	b.label("clone")
	b.stmt(ldW, offArg0)
	b.jump(jset, namespaceCloneFlags, "eperm", "")
	b.stmt(ret, unix.SECCOMP_RET_ALLOW)
	b.label("ioctl")
	b.stmt(ldW, offArg1)
	b.jump(jeq, unix.TIOCSTI, "eperm", "")
	b.jump(jeq, unix.TIOCLINUX, "eperm", "")
	b.stmt(ret, unix.SECCOMP_RET_ALLOW)
	b.label("eperm")
	b.stmt(ret, unix.SECCOMP_RET_ERRNO|uint32(unix.EPERM))
	b.label("enosys")
	b.stmt(ret, unix.SECCOMP_RET_ERRNO|uint32(unix.ENOSYS))
	b.label("kill")
	b.stmt(ret, unix.SECCOMP_RET_KILL_PROCESS)
	return b.resolve()
}
