//go:build !linux

package objectstoretest

import "os/exec"

// setParentDeathSignal has no portable equivalent; Main stops the gateway.
func setParentDeathSignal(*exec.Cmd) {}
