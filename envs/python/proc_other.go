//go:build !unix

package python

import (
	"os"
	"os/exec"
)

type processSignal = os.Signal

var (
	sigInterrupt processSignal = os.Interrupt
	sigTerminate processSignal = os.Kill
	sigKill      processSignal = os.Kill
)

func newSession(*exec.Cmd) {}

// signalGroup signals the interpreter alone: without process groups,
// what it started is left alone.
func signalGroup(cmd *exec.Cmd, sig processSignal) {
	if cmd.Process != nil {
		_ = cmd.Process.Signal(sig)
	}
}

func signalName(*os.ProcessState) string { return "" }
