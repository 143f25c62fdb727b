//go:build linux && !amd64 && !arm64

package trampoline

// No filter table for this architecture: the trampoline refuses to start
// helpers (installSeccomp returns errNoSeccompArch).
const (
	seccompArch       = 0
	foreignSyscallBit = 0
)

var archDeniedSyscalls []uintptr
