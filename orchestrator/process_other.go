//go:build !unix

package orchestrator

import (
	"os"
	"os/exec"
)

type processSignal int

const (
	sigInterrupt processSignal = iota
	sigTerminate
	sigKill
)

func setProcessGroup(*exec.Cmd) {}

// signalGroup signals cmd's process; without process groups, an interrupt
// or a termination request is as far as the platform allows.
func signalGroup(cmd *exec.Cmd, sig processSignal) {
	if cmd.Process == nil {
		return
	}
	if sig == sigKill {
		_ = cmd.Process.Kill()
		return
	}
	_ = cmd.Process.Signal(os.Interrupt)
}
