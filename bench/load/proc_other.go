//go:build !linux

package main

import "os/exec"

// setDeathSignal does nothing here: only Linux can have the kernel kill a
// child when its parent dies. The bare servers still stop when their
// standard input closes; the standalone servers and wrk are killed at the
// end of a run and on interrupt.
func setDeathSignal(*exec.Cmd) {}
