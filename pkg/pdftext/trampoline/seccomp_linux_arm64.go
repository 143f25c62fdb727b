package trampoline

import "golang.org/x/sys/unix"

const (
	seccompArch       = unix.AUDIT_ARCH_AARCH64
	foreignSyscallBit = 0
)

var archDeniedSyscalls = []uintptr{unix.SYS_NFSSERVCTL}
