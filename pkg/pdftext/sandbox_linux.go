package pdftext

import (
	"context"
	"errors"
	"hash/fnv"
	"os"
	"os/exec"
	"strconv"
	"sync/atomic"
	"syscall"

	"github.com/docintake/docintake/pkg/pdftext/trampoline"
)

// The helper programs (pdftext-resident, pdftotext, pdftoppm, pdfimages,
// pdfdetach, tesseract) read documents that tenants chose, so each one is
// treated as if a document had already taken it over. It starts through a
// trampoline, this binary re-executed as trampoline.Arg0 (see package
// trampoline), because Go's SysProcAttr can neither install a seccomp
// filter nor mount anything; the trampoline confines itself and then execs
// the program in place (same pid, so deadlines and the process-group kill
// still work):
//
//   - its own uid and gid when we are root (helperCred): a number in a range
//     no host account uses, one per private directory, so a helper shares
//     its uid with no host process and, but for a hash collision, with no
//     other helper;
//   - not dumpable: the program runs from a sealed, execute-only copy, so
//     the kernel marks it non-dumpable at exec (a process of the same uid
//     can neither ptrace it nor open its /proc/<pid>/mem or environ);
//   - no new privileges and a seccomp filter (trampoline/seccomp_linux.go);
//   - private mount, network, pid and IPC namespaces: /tmp, /var/tmp, /run
//     and /dev/shm are empty tmpfs (the host's unix sockets, such as a local
//     database's, are not there) but for the helper's own working directory,
//     /proc shows the helper alone, the network has loopback only;
//   - rlimits, a fixed environment and its own process group.
//
// Where the kernel or a container refuses namespaces the helper runs in
// ours, with everything else in place.

// Helpers started by root run as helperUIDBase + a hash of their private
// directory (mod helperUIDRange); the gid is the same number. The range
// lies above the ranges systemd reserves for containers' user namespaces
// (up to 1878982655) and below 2^31, and needs no /etc/passwd entry; it
// must not be assigned to anyone else on the host.
const (
	helperUIDBase  = 2_000_000_000
	helperUIDRange = 1 << 20
)

// helperCred is who the programs working in dir run as: nil (ourselves)
// when we are not root.
func helperCred(dir string) *syscall.Credential {
	if os.Geteuid() != 0 {
		return nil
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(dir))
	id := helperUIDBase + h.Sum32()%helperUIDRange
	return &syscall.Credential{Uid: id, Gid: id, Groups: []uint32{}}
}

// chownToHelper hands path to the user of the programs working in dir.
func chownToHelper(path, dir string) error {
	if cred := helperCred(dir); cred != nil {
		return os.Chown(path, int(cred.Uid), int(cred.Gid))
	}
	return nil
}

// jail is the confinement of one helper process.
type jail struct {
	dir        string // working directory, the one host directory it may write
	limits     []rlimit
	namespaces bool
	env        []string
}

// command returns the command that runs bin with args inside the jail.
func (j jail) command(ctx context.Context, bin string, args []string) *exec.Cmd {
	targs := []string{"--dir", j.dir}
	if cred := helperCred(j.dir); cred != nil {
		targs = append(targs, "--uid", strconv.FormatUint(uint64(cred.Uid), 10))
	}
	if j.namespaces {
		targs = append(targs, "--ns")
	}
	for _, l := range j.limits {
		targs = append(targs, "--rlimit", strconv.Itoa(l.res)+":"+strconv.FormatUint(l.cur, 10)+":"+strconv.FormatUint(l.max, 10))
	}
	targs = append(append(targs, "--", bin), args...)
	// /proc/self/exe is this very binary even when the file was replaced
	// (an upgrade) or is out of the helper's reach: the trampoline starts
	// as us and drops privileges itself.
	cmd := exec.CommandContext(ctx, "/proc/self/exe", targs...)
	cmd.Args[0] = trampoline.Arg0
	cmd.Dir = j.dir
	// The marker makes the binary a trampoline; GOGC=off keeps its
	// collector from mapping memory once the rlimits are set. The
	// trampoline removes both before the program starts.
	cmd.Env = append(append(make([]string, 0, len(j.env)+2), j.env...), trampoline.EnvMarker, "GOGC=off")
	attr := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if j.namespaces {
		attr.Cloneflags = syscall.CLONE_NEWNS | syscall.CLONE_NEWNET | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC
		if os.Geteuid() != 0 {
			// Unprivileged: a user namespace in which we are root makes the
			// others allowed; the trampoline gives up that root's
			// capabilities before the program starts.
			attr.Cloneflags |= syscall.CLONE_NEWUSER
			attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
			attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
		}
	}
	cmd.SysProcAttr = attr
	return cmd
}

// oneShotNamespaces is whether one-shot helpers get namespaces: 0 not tried
// yet, 1 yes, -1 the kernel or container refused them.
var oneShotNamespaces atomic.Int32

// startJailed starts the command build returns, with namespaces unless
// they were refused before; a first refusal (EPERM in most containers,
// EINVAL without user namespaces) turns them off for later helpers.
func startJailed(build func(namespaces bool) *exec.Cmd) (*exec.Cmd, error) {
	state := oneShotNamespaces.Load()
	cmd := build(state >= 0)
	err := cmd.Start()
	if err == nil {
		oneShotNamespaces.CompareAndSwap(0, 1)
		return cmd, nil
	}
	if state != 0 || !namespacesRefused(err) {
		return nil, err
	}
	cmd = build(false)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	oneShotNamespaces.CompareAndSwap(0, -1)
	return cmd, nil
}

func namespacesRefused(err error) bool {
	return errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) ||
		errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EACCES)
}
