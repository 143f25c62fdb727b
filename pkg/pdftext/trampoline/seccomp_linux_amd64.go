package trampoline

import "golang.org/x/sys/unix"

const (
	seccompArch = unix.AUDIT_ARCH_X86_64
	// foreignSyscallBit marks x32 system calls, a second ABI on the same
	// architecture value.
	foreignSyscallBit = 0x40000000
)

var archDeniedSyscalls = []uintptr{
	unix.SYS_IOPL, unix.SYS_IOPERM, unix.SYS_MODIFY_LDT, unix.SYS_USELIB, unix.SYS_USTAT, unix.SYS_SYSFS,
	unix.SYS__SYSCTL, unix.SYS_CREATE_MODULE, unix.SYS_GET_KERNEL_SYMS, unix.SYS_QUERY_MODULE, unix.SYS_NFSSERVCTL,
}
