package trampoline

const (
	seccompArch       = 0xc00000b7 // AUDIT_ARCH_AARCH64
	foreignSyscallBit = 0
)
