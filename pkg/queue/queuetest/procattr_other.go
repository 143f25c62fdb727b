//go:build !linux

package queuetest

import "os/exec"

// setParentDeathSignal has no portable equivalent; the test cleanup kills the server.
func setParentDeathSignal(*exec.Cmd) {}
