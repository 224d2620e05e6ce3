package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"unsafe"

	"github.com/creack/pty"
)

// rawTerm is a program on a pty read with plain blocking reads, with echo
// and output processing off: the floors a pty environment is compared
// with.
type rawTerm struct {
	cmd    *exec.Cmd
	master *os.File
	buf    []byte
	chunk  []byte
}

func startRaw(env []string, name string, args ...string) (*rawTerm, error) {
	m, s, err := pty.Open()
	if err != nil {
		return nil, err
	}
	defer s.Close()
	var t syscall.Termios
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, s.Fd(), syscall.TCGETS, uintptr(unsafe.Pointer(&t))); e != 0 {
		m.Close()
		return nil, e
	}
	t.Lflag &^= syscall.ECHO
	t.Oflag &^= syscall.OPOST
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, s.Fd(), syscall.TCSETS, uintptr(unsafe.Pointer(&t))); e != 0 {
		m.Close()
		return nil, e
	}
	cmd := exec.Command(name, args...)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s, s, s
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		m.Close()
		return nil, err
	}
	return &rawTerm{cmd: cmd, master: m, buf: make([]byte, 0, 4096), chunk: make([]byte, 4096)}, nil
}

// roundTrip writes line and reads until want has arrived.
func (r *rawTerm) roundTrip(line, want []byte) error {
	if _, err := r.master.Write(line); err != nil {
		return err
	}
	return r.until(want)
}

func (r *rawTerm) until(want []byte) error {
	r.buf = r.buf[:0]
	for !bytes.Contains(r.buf, want) {
		if len(r.buf) > 1<<20 {
			return fmt.Errorf("%s: no %q in 1 MB of output", r.cmd.Path, want)
		}
		n, err := r.master.Read(r.chunk)
		if err != nil {
			return err
		}
		r.buf = append(r.buf, r.chunk[:n]...)
	}
	return nil
}

func (r *rawTerm) close() {
	_ = r.cmd.Process.Kill()
	_ = r.cmd.Wait()
	r.master.Close()
}
