package bash

import (
	"crypto/rand"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/unfold-dev/unfold/envs"
)

// startTimeout bounds how long a new shell may take to print its first
// marker.
const startTimeout = 10 * time.Second

// proc is one running bash on a pseudo-terminal.
type proc struct {
	cmd    *exec.Cmd
	pid    int
	master *os.File
	tty    string   // the slave's path, as /proc/<pid>/fd links show it
	dir    string   // private directory for command files
	file   string   // the command file
	cmdf   *os.File // the command file, open for rewriting
	cmdLen int      // the command file's length
	nonces *mrand.ChaCha8
	stream *stream

	exited   chan struct{} // closed once the shell has been waited for
	status   string        // how the shell ended; set before exited is closed
	readDone chan struct{} // closed when the reader goroutine ends

	stopOnce sync.Once
	stopErr  error
}

// startProc starts bash in dir and waits for its first marker.
func startProc(bashPath, dir string, env []string) (*proc, error) {
	tmp, err := os.MkdirTemp(fastTempDir(), "unfold-bash-")
	if err != nil {
		return nil, err
	}
	nonce := rand.Text()
	init := filepath.Join(tmp, "init")
	if err := os.WriteFile(init, fmt.Appendf(nil, initScript, nonce), 0o600); err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	file := filepath.Join(tmp, "c")
	cmdf, err := os.OpenFile(file, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	master, slave, err := openPTY()
	if err != nil {
		cmdf.Close()
		os.RemoveAll(tmp)
		return nil, err
	}
	cmd := exec.Command(bashPath, "--norc", "--noprofile", "--noediting", "-i")
	cmd.Dir = dir
	cmd.Env = env
	err = startOnPTY(cmd, slave)
	tty := slave.Name()
	slave.Close()
	if err != nil {
		master.Close()
		cmdf.Close()
		os.RemoveAll(tmp)
		return nil, err
	}
	p := &proc{
		cmd:      cmd,
		pid:      cmd.Process.Pid,
		master:   master,
		tty:      tty,
		dir:      tmp,
		file:     file,
		cmdf:     cmdf,
		stream:   newStream(),
		nonces:   mrand.NewChaCha8(seed()),
		exited:   make(chan struct{}),
		readDone: make(chan struct{}),
	}
	go p.read()
	go p.wait()
	p.stream.expect(tag(nonce), envs.NewOutput(4<<10))
	if _, err := p.master.Write([]byte(" . " + quote(init) + "\n")); err != nil {
		p.stop()
		return nil, err
	}
	t := time.NewTimer(startTimeout)
	defer t.Stop()
	select {
	case <-p.stream.done:
		p.stream.finish()
		p.stream.background() // bash's greeting, if any
		return p, nil
	case <-p.exited:
		p.stop()
		return nil, fmt.Errorf("the shell ended while starting (%s)", p.status)
	case <-t.C:
		p.stop()
		return nil, fmt.Errorf("the shell did not answer within %v of starting", startTimeout)
	}
}

// writeCommand replaces the command file's content with command.
func (p *proc) writeCommand(command string) error {
	if _, err := p.cmdf.WriteAt([]byte(command), 0); err != nil {
		return err
	}
	if len(command) < p.cmdLen {
		if err := p.cmdf.Truncate(int64(len(command))); err != nil {
			return err
		}
	}
	p.cmdLen = len(command)
	return nil
}

// seed returns 32 random bytes from crypto/rand.
func seed() [32]byte {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return b
}

// nonce returns a new marker nonce: 26 characters from a generator seeded
// from crypto/rand, which is cheaper than asking the kernel every time.
func (p *proc) nonce() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	var b [26]byte
	var r [32]byte
	_, _ = p.nonces.Read(r[:])
	for i := range b {
		b[i] = alphabet[r[i]&31]
	}
	return string(b[:])
}

// fastTempDir returns where command files go: /dev/shm (memory) when it
// is there, since a file is written for every command, else the default.
func fastTempDir() string {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() && syscall.Access("/dev/shm", 2) == nil {
		return "/dev/shm"
	}
	return os.TempDir()
}

// tag returns the marker tag for nonce.
func tag(nonce string) []byte {
	return []byte("\x1e" + nonce)
}

// read copies the terminal's output to the stream until the terminal is
// closed or hung up.
func (p *proc) read() {
	defer close(p.readDone)
	buf := make([]byte, 32<<10)
	for {
		n, err := p.master.Read(buf)
		if n > 0 {
			p.stream.feed(buf[:n])
		}
		if err != nil {
			return
		}
	}
}

// wait reaps the shell and records how it ended.
func (p *proc) wait() {
	err := p.cmd.Wait()
	p.status = describeExit(err)
	close(p.exited)
}

// alive reports whether the shell has not ended.
func (p *proc) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// drain waits briefly for output the shell wrote before it ended.
func (p *proc) drain() {
	t := time.NewTimer(100 * time.Millisecond)
	defer t.Stop()
	select {
	case <-p.readDone:
	case <-t.C:
	}
}

// stop ends the shell's whole session (background jobs included): a hangup
// (the terminal closes), then SIGTERM, then SIGKILL, and removes the
// command files. It is idempotent.
func (p *proc) stop() error {
	p.stopOnce.Do(func() {
		p.master.Close()
		p.stopErr = endSession(p.pid, p.pid)
		t := time.NewTimer(killGrace)
		defer t.Stop()
		select {
		case <-p.exited:
		case <-t.C:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
		<-p.readDone
		p.cmdf.Close()
		os.RemoveAll(p.dir)
	})
	return p.stopErr
}

// describeExit says how a process ended, from its Wait error.
func describeExit(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return fmt.Sprintf("killed by signal %d (%v)", int(ws.Signal()), ws.Signal())
		}
		return fmt.Sprintf("exited with status %d", ee.ExitCode())
	}
	if err != nil {
		return err.Error()
	}
	return "exited with status 0"
}
