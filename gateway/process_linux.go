package gateway

import (
	"syscall"

	"github.com/unfold-dev/unfold/internal/procs"
)

// sysProcAttr puts a server in a process group of its own, so that a
// terminal's Ctrl-C reaches unfold, which stops it, and not the server;
// and has the kernel kill it when unfold dies without stopping it
// (SIGKILL, a crash). procs.Group.Start starts it from a thread that
// lives as long as unfold, which the parent-death signal needs.
func sysProcAttr() *syscall.SysProcAttr {
	return procs.DieWithParent(&syscall.SysProcAttr{Setpgid: true})
}
