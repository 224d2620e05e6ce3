package gateway

import (
	"runtime"
	"sync"
	"syscall"
)

// sysProcAttr puts a server in a process group of its own, so that a
// terminal's Ctrl-C reaches unfold, which stops it, and not the server;
// and has the kernel kill it when unfold dies without stopping it
// (SIGKILL, a crash).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// spawner runs the servers' starts on one goroutine locked to its thread
// for the life of the process. Pdeathsig fires when the thread that
// started the child ends, not the process, and Go ends a thread when a
// goroutine locked to it returns: a start from any thread could kill the
// server while unfold runs.
var spawner = sync.OnceValue(func() chan<- func() {
	ch := make(chan func())
	go func() {
		runtime.LockOSThread()
		for fn := range ch {
			fn()
		}
	}()
	return ch
})

// startLocked runs start on the spawner's thread.
func startLocked(start func() error) error {
	done := make(chan error, 1)
	spawner() <- func() { done <- start() }
	return <-done
}
