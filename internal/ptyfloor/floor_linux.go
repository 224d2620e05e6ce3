package ptyfloor

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
	"unsafe"

	"github.com/creack/pty"

	"github.com/unfold-dev/unfold/internal/term"
)

// Term is a program on a pty with echo and output processing off. It is
// read with plain blocking reads, or, when spin is above 0, with a
// [term.Reader] that busy-waits that long after each line it writes, as
// envs/bash does.
type Term struct {
	cmd    *exec.Cmd
	master *os.File
	reader *term.Reader
	spin   time.Duration
	buf    []byte
	chunk  []byte
}

// Start runs name with args and env (nil: none) on a new pty.
func Start(spin time.Duration, env []string, name string, args ...string) (*Term, error) {
	var m, s *os.File
	var r *term.Reader
	var err error
	if spin > 0 {
		m, r, s, err = term.OpenDirect()
	} else {
		m, s, err = openRaw()
	}
	if err != nil {
		return nil, err
	}
	defer s.Close()
	cmd := exec.Command(name, args...)
	cmd.Env = env
	if err := term.Start(cmd, s); err != nil {
		if r != nil {
			r.Close()
		}
		m.Close()
		return nil, err
	}
	return &Term{cmd: cmd, master: m, reader: r, spin: spin, buf: make([]byte, 0, 4096), chunk: make([]byte, 4096)}, nil
}

// openRaw opens a pty whose master is on the runtime poller, with echo
// and output processing off.
func openRaw() (m, s *os.File, err error) {
	m, s, err = pty.Open()
	if err != nil {
		return nil, nil, err
	}
	var t syscall.Termios
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, s.Fd(), syscall.TCGETS, uintptr(unsafe.Pointer(&t))); e != 0 {
		m.Close()
		s.Close()
		return nil, nil, e
	}
	t.Lflag &^= syscall.ECHO
	t.Oflag &^= syscall.OPOST
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, s.Fd(), syscall.TCSETS, uintptr(unsafe.Pointer(&t))); e != 0 {
		m.Close()
		s.Close()
		return nil, nil, e
	}
	return m, s, nil
}

// RoundTrip writes line and reads until want has arrived.
func (r *Term) RoundTrip(line, want []byte) error {
	if r.reader != nil {
		r.reader.SpinUntil(time.Now().Add(r.spin))
	}
	if _, err := r.master.Write(line); err != nil {
		return err
	}
	return r.Until(want)
}

// Until reads until want has arrived, giving up after 1 MB of output.
func (r *Term) Until(want []byte) error {
	r.buf = r.buf[:0]
	for !bytes.Contains(r.buf, want) {
		if len(r.buf) > 1<<20 {
			return fmt.Errorf("%s: no %q in 1 MB of output", r.cmd.Path, want)
		}
		var n int
		var err error
		if r.reader != nil {
			n, err = r.reader.Read(r.chunk, time.Time{})
		} else {
			n, err = r.master.Read(r.chunk)
		}
		if err != nil {
			return err
		}
		r.buf = append(r.buf, r.chunk[:n]...)
	}
	return nil
}

// Close kills the program and closes the pty.
func (r *Term) Close() {
	_ = r.cmd.Process.Kill()
	_ = r.cmd.Wait()
	if r.reader != nil {
		r.reader.Close()
	}
	r.master.Close()
}
