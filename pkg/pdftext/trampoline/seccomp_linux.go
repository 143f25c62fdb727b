//go:build amd64 || arm64

package trampoline

import (
	"syscall"
	"unsafe"
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
var deniedSyscalls = append([]uint32{
	nrPtrace, nrProcessVmReadv, nrProcessVmWritev, nrProcessMadvise, nrKcmp, nrPidfdGetfd,
	nrMount, nrUmount2, nrPivotRoot, nrChroot, nrUnshare, nrSetns, nrFsopen, nrFsconfig, nrFsmount,
	nrFspick, nrMoveMount, nrOpenTree, nrMountSetattr, nrOpenByHandleAt, nrNameToHandleAt,
	nrSocket, nrSocketpair,
	nrBpf, nrPerfEventOpen, nrUserfaultfd, nrFanotifyInit, nrIoUringSetup, nrIoUringEnter, nrIoUringRegister,
	nrKeyctl, nrAddKey, nrRequestKey,
	nrInitModule, nrFinitModule, nrDeleteModule, nrKexecLoad, nrKexecFileLoad,
	nrReboot, nrSwapon, nrSwapoff, nrAcct, nrQuotactl, nrQuotactlFd,
	nrSettimeofday, nrClockSettime, nrClockAdjtime, nrAdjtimex,
	nrSethostname, nrSetdomainname, nrSyslog, nrPersonality, nrVhangup,
	nrLookupDcookie, nrMovePages, nrMigratePages, nrNfsservctl,
}, archDeniedSyscalls...)

// namespaceCloneFlags are clone's flags that create namespaces (CLONE_NEWTIME
// is left out: clone reads that bit as part of the exit signal).
const namespaceCloneFlags = syscall.CLONE_NEWNS | syscall.CLONE_NEWUTS | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUSER |
	syscall.CLONE_NEWPID | syscall.CLONE_NEWNET | syscall.CLONE_NEWCGROUP

// seccomp's constants (TestConstants holds them to golang.org/x/sys/unix).
const (
	seccompSetModeFilter  = 1
	seccompRetAllow       = 0x7fff0000
	seccompRetErrno       = 0x00050000
	seccompRetKillProcess = 0x80000000
	tiocsti, tioclinux    = 0x5412, 0x541c
)

// installSeccomp sets no_new_privs and installs the filter on the calling
// thread (which then execs the helper).
func installSeccomp() error {
	prog := seccompProgram()
	if err := prctl(prSetNoNewPrivs, 1); err != nil {
		return fail("no_new_privs", err)
	}
	fprog := syscall.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	_, _, e := syscall.RawSyscall(nrSeccomp, seccompSetModeFilter, 0, uintptr(unsafe.Pointer(&fprog)))
	if e != 0 {
		return fail("seccomp", e)
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
	ins    []syscall.SockFilter
	labels map[string]int
	fixups map[int][2]string // instruction → jt, jf labels
}

func (b *bpfProgram) stmt(code uint16, k uint32) {
	b.ins = append(b.ins, syscall.SockFilter{Code: code, K: k})
}

// jump adds a conditional jump; "" continues with the next instruction.
func (b *bpfProgram) jump(code uint16, k uint32, jt, jf string) {
	b.fixups[len(b.ins)] = [2]string{jt, jf}
	b.ins = append(b.ins, syscall.SockFilter{Code: code, K: k})
}

func (b *bpfProgram) label(name string) { b.labels[name] = len(b.ins) }

func (b *bpfProgram) resolve() []syscall.SockFilter {
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
	ldW  = syscall.BPF_LD | syscall.BPF_W | syscall.BPF_ABS
	jeq  = syscall.BPF_JMP | syscall.BPF_JEQ | syscall.BPF_K
	jge  = syscall.BPF_JMP | syscall.BPF_JGE | syscall.BPF_K
	jset = syscall.BPF_JMP | syscall.BPF_JSET | syscall.BPF_K
	ret  = syscall.BPF_RET | syscall.BPF_K
)

// seccompProgram is the filter.
func seccompProgram() []syscall.SockFilter {
	b := &bpfProgram{labels: map[string]int{}, fixups: map[int][2]string{}}
	b.stmt(ldW, offArch)
	b.jump(jeq, seccompArch, "", "kill")
	b.stmt(ldW, offNr)
	if foreignSyscallBit != 0 {
		b.jump(jge, foreignSyscallBit, "kill", "")
	}
	b.jump(jeq, nrClone, "clone", "")
	b.jump(jeq, nrClone3, "enosys", "")
	b.jump(jeq, nrIoctl, "ioctl", "")
	for _, nr := range deniedSyscalls {
		b.jump(jeq, nr, "eperm", "")
	}
	b.stmt(ret, seccompRetAllow)
	b.label("clone")
	b.stmt(ldW, offArg0)
	b.jump(jset, namespaceCloneFlags, "eperm", "")
	b.stmt(ret, seccompRetAllow)
	b.label("ioctl")
	b.stmt(ldW, offArg1)
	b.jump(jeq, tiocsti, "eperm", "")
	b.jump(jeq, tioclinux, "eperm", "")
	b.stmt(ret, seccompRetAllow)
	b.label("eperm")
	b.stmt(ret, seccompRetErrno|uint32(syscall.EPERM))
	b.label("enosys")
	b.stmt(ret, seccompRetErrno|uint32(syscall.ENOSYS))
	b.label("kill")
	b.stmt(ret, seccompRetKillProcess)
	return b.resolve()
}
