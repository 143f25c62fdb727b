package queuetest

import (
	"os/exec"
	"syscall"
)

// setParentDeathSignal makes the kernel kill the server when the test binary
// dies without running its clean-up (panic, timeout, SIGKILL).
func setParentDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
