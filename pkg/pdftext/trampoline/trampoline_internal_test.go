//go:build amd64 || arm64

package trampoline

import (
	"runtime"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// The filter assembles (every jump within classic BPF's 255 instructions)
// and starts with the architecture check, so another ABI's numbers never
// reach the deny-list.
func TestSeccompProgram(t *testing.T) {
	prog := seccompProgram()
	require.Less(t, len(prog), 4096)
	require.Equal(t, syscall.SockFilter{Code: ldW, K: offArch}, prog[0])
	require.Equal(t, uint32(seccompArch), prog[1].K)
	require.Equal(t, syscall.SockFilter{Code: ret, K: seccompRetKillProcess}, prog[len(prog)-1])
}

// TestConstants holds the hand-written constants (the package imports no
// golang.org/x/sys, see its comment) to golang.org/x/sys/unix.
func TestConstants(t *testing.T) {
	for name, c := range map[string][2]uint64{
		"PR_SET_PDEATHSIG": {prSetPdeathsig, unix.PR_SET_PDEATHSIG}, "PR_SET_DUMPABLE": {prSetDumpable, unix.PR_SET_DUMPABLE},
		"PR_SET_SECUREBITS": {prSetSecurebits, unix.PR_SET_SECUREBITS}, "PR_SET_NO_NEW_PRIVS": {prSetNoNewPrivs, unix.PR_SET_NO_NEW_PRIVS},
		"O_PATH": {oPath, unix.O_PATH}, "MFD_CLOEXEC": {mfdCloexec, unix.MFD_CLOEXEC}, "MFD_ALLOW_SEALING": {mfdAllowSealing, unix.MFD_ALLOW_SEALING},
		"MFD_EXEC": {mfdExec, unix.MFD_EXEC}, "F_ADD_SEALS": {fAddSeals, unix.F_ADD_SEALS}, "F_SEAL_SEAL": {fSealSeal, unix.F_SEAL_SEAL},
		"F_SEAL_SHRINK": {fSealShrink, unix.F_SEAL_SHRINK}, "F_SEAL_GROW": {fSealGrow, unix.F_SEAL_GROW}, "F_SEAL_WRITE": {fSealWrite, unix.F_SEAL_WRITE},
		"LINUX_CAPABILITY_VERSION_3": {capabilityV3, unix.LINUX_CAPABILITY_VERSION_3},
		"SECCOMP_SET_MODE_FILTER":    {seccompSetModeFilter, unix.SECCOMP_SET_MODE_FILTER}, "SECCOMP_RET_ALLOW": {seccompRetAllow, unix.SECCOMP_RET_ALLOW},
		"SECCOMP_RET_ERRNO": {seccompRetErrno, unix.SECCOMP_RET_ERRNO}, "SECCOMP_RET_KILL_PROCESS": {seccompRetKillProcess, unix.SECCOMP_RET_KILL_PROCESS},
		"TIOCSTI": {tiocsti, unix.TIOCSTI}, "TIOCLINUX": {tioclinux, unix.TIOCLINUX},
	} {
		require.Equal(t, c[1], c[0], name)
	}
	arch := map[string]uint64{"amd64": unix.AUDIT_ARCH_X86_64, "arm64": unix.AUDIT_ARCH_AARCH64}[runtime.GOARCH]
	require.EqualValues(t, arch, seccompArch)
}

// TestSyscallNumbers holds sysnum_linux_$GOARCH.go to golang.org/x/sys/unix.
func TestSyscallNumbers(t *testing.T) {
	nums := map[string][2]uint64{"CLONE": {nrClone, unix.SYS_CLONE}, "CLONE3": {nrClone3, unix.SYS_CLONE3}, "IOCTL": {nrIoctl, unix.SYS_IOCTL}, "MEMFD_CREATE": {nrMemfdCreate, unix.SYS_MEMFD_CREATE}, "SECCOMP": {nrSeccomp, unix.SYS_SECCOMP}, "PRLIMIT64": {nrPrlimit64, unix.SYS_PRLIMIT64}, "EXECVE": {nrExecve, unix.SYS_EXECVE}, "PRCTL": {nrPrctl, unix.SYS_PRCTL}, "FCNTL": {nrFcntl, unix.SYS_FCNTL}, "CAPSET": {nrCapset, unix.SYS_CAPSET}, "SETGROUPS": {nrSetgroups, unix.SYS_SETGROUPS}, "SETRESUID": {nrSetresuid, unix.SYS_SETRESUID}, "SETRESGID": {nrSetresgid, unix.SYS_SETRESGID}, "PTRACE": {nrPtrace, unix.SYS_PTRACE}, "PROCESS_VM_READV": {nrProcessVmReadv, unix.SYS_PROCESS_VM_READV}, "PROCESS_VM_WRITEV": {nrProcessVmWritev, unix.SYS_PROCESS_VM_WRITEV}, "PROCESS_MADVISE": {nrProcessMadvise, unix.SYS_PROCESS_MADVISE}, "KCMP": {nrKcmp, unix.SYS_KCMP}, "PIDFD_GETFD": {nrPidfdGetfd, unix.SYS_PIDFD_GETFD}, "MOUNT": {nrMount, unix.SYS_MOUNT}, "UMOUNT2": {nrUmount2, unix.SYS_UMOUNT2}, "PIVOT_ROOT": {nrPivotRoot, unix.SYS_PIVOT_ROOT}, "CHROOT": {nrChroot, unix.SYS_CHROOT}, "UNSHARE": {nrUnshare, unix.SYS_UNSHARE}, "SETNS": {nrSetns, unix.SYS_SETNS}, "FSOPEN": {nrFsopen, unix.SYS_FSOPEN}, "FSCONFIG": {nrFsconfig, unix.SYS_FSCONFIG}, "FSMOUNT": {nrFsmount, unix.SYS_FSMOUNT}, "FSPICK": {nrFspick, unix.SYS_FSPICK}, "MOVE_MOUNT": {nrMoveMount, unix.SYS_MOVE_MOUNT}, "OPEN_TREE": {nrOpenTree, unix.SYS_OPEN_TREE}, "MOUNT_SETATTR": {nrMountSetattr, unix.SYS_MOUNT_SETATTR}, "OPEN_BY_HANDLE_AT": {nrOpenByHandleAt, unix.SYS_OPEN_BY_HANDLE_AT}, "NAME_TO_HANDLE_AT": {nrNameToHandleAt, unix.SYS_NAME_TO_HANDLE_AT}, "SOCKET": {nrSocket, unix.SYS_SOCKET}, "SOCKETPAIR": {nrSocketpair, unix.SYS_SOCKETPAIR}, "BPF": {nrBpf, unix.SYS_BPF}, "PERF_EVENT_OPEN": {nrPerfEventOpen, unix.SYS_PERF_EVENT_OPEN}, "USERFAULTFD": {nrUserfaultfd, unix.SYS_USERFAULTFD}, "FANOTIFY_INIT": {nrFanotifyInit, unix.SYS_FANOTIFY_INIT}, "IO_URING_SETUP": {nrIoUringSetup, unix.SYS_IO_URING_SETUP}, "IO_URING_ENTER": {nrIoUringEnter, unix.SYS_IO_URING_ENTER}, "IO_URING_REGISTER": {nrIoUringRegister, unix.SYS_IO_URING_REGISTER}, "KEYCTL": {nrKeyctl, unix.SYS_KEYCTL}, "ADD_KEY": {nrAddKey, unix.SYS_ADD_KEY}, "REQUEST_KEY": {nrRequestKey, unix.SYS_REQUEST_KEY}, "INIT_MODULE": {nrInitModule, unix.SYS_INIT_MODULE}, "FINIT_MODULE": {nrFinitModule, unix.SYS_FINIT_MODULE}, "DELETE_MODULE": {nrDeleteModule, unix.SYS_DELETE_MODULE}, "KEXEC_LOAD": {nrKexecLoad, unix.SYS_KEXEC_LOAD}, "KEXEC_FILE_LOAD": {nrKexecFileLoad, unix.SYS_KEXEC_FILE_LOAD}, "REBOOT": {nrReboot, unix.SYS_REBOOT}, "SWAPON": {nrSwapon, unix.SYS_SWAPON}, "SWAPOFF": {nrSwapoff, unix.SYS_SWAPOFF}, "ACCT": {nrAcct, unix.SYS_ACCT}, "QUOTACTL": {nrQuotactl, unix.SYS_QUOTACTL}, "QUOTACTL_FD": {nrQuotactlFd, unix.SYS_QUOTACTL_FD}, "SETTIMEOFDAY": {nrSettimeofday, unix.SYS_SETTIMEOFDAY}, "CLOCK_SETTIME": {nrClockSettime, unix.SYS_CLOCK_SETTIME}, "CLOCK_ADJTIME": {nrClockAdjtime, unix.SYS_CLOCK_ADJTIME}, "ADJTIMEX": {nrAdjtimex, unix.SYS_ADJTIMEX}, "SETHOSTNAME": {nrSethostname, unix.SYS_SETHOSTNAME}, "SETDOMAINNAME": {nrSetdomainname, unix.SYS_SETDOMAINNAME}, "SYSLOG": {nrSyslog, unix.SYS_SYSLOG}, "PERSONALITY": {nrPersonality, unix.SYS_PERSONALITY}, "VHANGUP": {nrVhangup, unix.SYS_VHANGUP}, "LOOKUP_DCOOKIE": {nrLookupDcookie, unix.SYS_LOOKUP_DCOOKIE}, "MOVE_PAGES": {nrMovePages, unix.SYS_MOVE_PAGES}, "MIGRATE_PAGES": {nrMigratePages, unix.SYS_MIGRATE_PAGES}, "NFSSERVCTL": {nrNfsservctl, unix.SYS_NFSSERVCTL}}
	for k, v := range archNumbers() {
		nums[k] = v
	}
	for name, c := range nums {
		require.Equal(t, c[1], c[0], name)
	}
}

func TestParseSandboxSpec(t *testing.T) {
	s, err := parseSandboxSpec([]string{"--dir", "/tmp/x", "--uid", "2000000001", "--ns", "--rlimit", "9:64:65", "--", "/bin/prog", "--dir", "a"})
	require.NoError(t, err)
	require.Equal(t, sandboxSpec{dir: "/tmp/x", uid: 2000000001, namespaces: true,
		limits: []rlimit{{res: 9, cur: 64, max: 65}}, argv: []string{"/bin/prog", "--dir", "a"}}, s)
	for _, bad := range [][]string{
		{"--dir", "/tmp/x"},                      // no program
		{"--", "/bin/prog"},                      // no directory
		{"--dir", "/x", "--uid", "0", "--", "p"}, // uid 0 would mean root
		{"--dir", "/x", "--uid", "-1", "--", "p"},
		{"--dir", "/x", "--rlimit", "9:1", "--", "p"},
		{"--dir", "/x", "--rlimit", "9:1:x", "--", "p"},
		{"--dir", "/x", "--what", "--", "p"},
	} {
		_, err := parseSandboxSpec(bad)
		require.Error(t, err, "%q", bad)
	}
	require.Equal(t, "2000000001", itoa(2000000001))
	require.Equal(t, "0", itoa(0))
}
