package objectstoretest

import (
	"os/exec"
	"syscall"
)

// setParentDeathSignal makes the kernel kill the gateway when the test binary
// dies without running Main's clean-up (panic, timeout, SIGKILL).
func setParentDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
