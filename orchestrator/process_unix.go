//go:build unix

package orchestrator

import (
	"io"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/unfold-dev/unfold/internal/procs"
)

type processSignal = syscall.Signal

const (
	sigInterrupt = syscall.SIGINT
	sigTerminate = syscall.SIGTERM
	sigKill      = syscall.SIGKILL
)

// setProcessGroup puts the process in its own process group, so signals
// reach whatever it started too; the kernel kills it when unfold dies
// without closing it (procs.DieWithParent).
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = procs.DieWithParent(&syscall.SysProcAttr{Setpgid: true})
}

// signalGroup signals the process group of cmd's process.
func signalGroup(cmd *exec.Cmd, sig processSignal) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, sig)
}

// stdoutPipe reads the process's stdout once data is there, taking it from
// the pipe and counting it in one step under the child's mutex: every
// byte the process wrote is then in the pipe or counted, which ask needs
// to see a line that came unasked.
type stdoutPipe struct {
	c   *child
	rc  syscall.RawConn
	err error // from SyscallConn
}

func newStdoutPipe(c *child, f *os.File) io.Reader {
	rc, err := f.SyscallConn()
	return &stdoutPipe{c: c, rc: rc, err: err}
}

func (s *stdoutPipe) Read(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	var n int
	var rerr error
	err := s.rc.Read(func(fd uintptr) bool {
		s.c.mu.Lock()
		defer s.c.mu.Unlock()
		n, rerr = syscall.Read(int(fd), p)
		if rerr == syscall.EAGAIN || rerr == syscall.EINTR {
			return false // wait until there is data
		}
		n = max(n, 0)
		s.c.got += int64(n)
		return true
	})
	switch {
	case err != nil:
		return 0, err
	case rerr != nil:
		return 0, rerr
	case n == 0 && len(p) > 0:
		return 0, io.EOF
	}
	return n, nil
}

// pipeReadable reports whether f, a pipe, has data to read now.
func pipeReadable(f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	readable := false
	_ = rc.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 0)
		readable = err == nil && n > 0 && fds[0].Revents&unix.POLLIN != 0
	})
	return readable
}
