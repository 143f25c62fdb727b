package trampoline

const (
	seccompArch = 0xc000003e // AUDIT_ARCH_X86_64
	// foreignSyscallBit marks x32 system calls, a second ABI on the same
	// architecture value.
	foreignSyscallBit = 0x40000000
)
