//go:build !unix

package orchestrator

import (
	"io"
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

// stdoutPipe reads the process's stdout, counting what it read for ask.
// Without a way to count bytes as they leave the pipe, a line read just
// before a request is sent may be seen only after it.
type stdoutPipe struct {
	c *child
	f *os.File
}

func newStdoutPipe(c *child, f *os.File) io.Reader { return &stdoutPipe{c: c, f: f} }

func (s *stdoutPipe) Read(p []byte) (int, error) {
	n, err := s.f.Read(p)
	s.c.mu.Lock()
	s.c.got += int64(n)
	s.c.mu.Unlock()
	return n, err
}

// pipeReadable reports false: the platform offers no poll of a pipe here.
func pipeReadable(*os.File) bool { return false }
