//go:build unix

package orchestrator

import (
	"os/exec"
	"syscall"
)

type processSignal = syscall.Signal

const (
	sigInterrupt = syscall.SIGINT
	sigTerminate = syscall.SIGTERM
	sigKill      = syscall.SIGKILL
)

// setProcessGroup puts the process in its own process group, so signals
// reach whatever it started too.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup signals the process group of cmd's process.
func signalGroup(cmd *exec.Cmd, sig processSignal) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, sig)
}
