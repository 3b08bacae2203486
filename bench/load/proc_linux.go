package main

import (
	"os/exec"
	"syscall"
)

// setDeathSignal has the kernel kill the process cmd starts when this one
// dies, however it dies.
func setDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
