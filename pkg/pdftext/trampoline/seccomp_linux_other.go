//go:build linux && !amd64 && !arm64

// Package trampoline starts pdftext's helper programs in their sandbox
// (see trampoline_linux.go); this architecture has no seccomp table, so a
// trampoline refuses to start any helper.
package trampoline

import "syscall"

const (
	Arg0      = "docintake-pdftext-sandbox"
	EnvMarker = "DOCINTAKE_PDFTEXT_SANDBOX=1"
)

func init() {
	if _, ok := syscall.Getenv("DOCINTAKE_PDFTEXT_SANDBOX"); ok {
		_, _ = syscall.Write(2, []byte(Arg0+": no seccomp filter for this architecture\n"))
		syscall.Exit(126)
	}
}
