package repotest

import (
	"syscall"
	"testing"
	"time"
)

// ProcessCPU is the test process's user and system CPU time so far: a
// benchmark reports CPU per operation next to ns/op, because on a shared
// machine the wall time says more about the neighbours than about the code.
// Servers the test talks to in other processes are not counted.
func ProcessCPU(t testing.TB) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
