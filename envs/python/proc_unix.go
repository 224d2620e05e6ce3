//go:build unix

package python

import (
	"os"
	"os/exec"
	"syscall"

	"github.com/unfold-dev/unfold/internal/procs"
)

type processSignal = syscall.Signal

const (
	sigInterrupt = syscall.SIGINT
	sigTerminate = syscall.SIGTERM
	sigKill      = syscall.SIGKILL
)

// newSession starts the interpreter in a session of its own: it has no
// controlling terminal (so getpass and the like cannot wait on the user's
// terminal) and leads its own process group, which signals reach whole.
// Having no terminal, it gets no SIGHUP when unfold dies: the kernel kills
// it then instead (procs.DieWithParent).
func newSession(cmd *exec.Cmd) {
	cmd.SysProcAttr = procs.DieWithParent(&syscall.SysProcAttr{Setsid: true})
}

// signalGroup signals the interpreter's process group: the interpreter and
// what it started, like Ctrl-C in a terminal.
func signalGroup(cmd *exec.Cmd, sig processSignal) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, sig)
	}
}

// signalName names the signal that ended a process, or "" when none did.
func signalName(ps *os.ProcessState) string {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ws.Signal().String()
	}
	return ""
}
