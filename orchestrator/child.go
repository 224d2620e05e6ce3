package orchestrator

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/unfold-dev/unfold/internal/procs"
	"github.com/unfold-dev/unfold/internal/term"
)

// maxStderrTail is how much of a process's stderr is kept (the most recent
// bytes) to explain why it failed.
const maxStderrTail = 4 << 10

// child is one running process.
type child struct {
	cmd     *exec.Cmd
	group   *procs.Group // the process and everything it started
	limits  procs.Limits // set on the process, to name one that ended it
	stdin   *os.File
	stdout  *os.File
	lines   chan message  // replies, and lines sent while a command runs; closed at the end of stdout
	exited  chan struct{} // closed once Wait returned
	waitErr error         // valid after exited is closed
	stderr  *tailBuffer   // the end of stderr
	// stderrPipe is read into stderr until it ends; then stderrDone closes.
	stderrPipe *os.File
	stderrDone chan struct{}

	cleanOnce sync.Once // ends the group once

	// sendMu serializes writes to stdin. Closing stdin does not take it
	// (os.File allows Close during Write, and it unblocks the Write).
	sendMu sync.Mutex

	// mu guards the fields below, which tell the lines that answer a
	// request from lines no request waits for.
	mu       sync.Mutex
	expect   string        // the type of the request whose reply is awaited; "" when none is
	answered string        // the request last asked, as messages name it
	got      int64         // bytes read from stdout
	lined    int64         // bytes of stdout made into lines
	extra    []byte        // the first line that came when no request waited for one (clipped); nil when none
	extraTo  string        // the request that line followed
	noticed  chan struct{} // capacity 1: extra was set
}

// message is a line of the process's stdout, read as a reply.
type message struct {
	readLine
	rep   reply
	valid bool // the line is a protocol reply: JSON with a type, not over the limit
}

func startChild(spec ProcessSpec, maxLine int) (*child, error) {
	cmd := exec.Command(spec.Executable, spec.Args...)
	cmd.Dir = spec.Dir
	group := procs.NewGroup()
	cmd.Env = os.Environ()
	for k, v := range spec.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	// unfold's own come last: of duplicates, the last is kept.
	cmd.Env = append(cmd.Env, "UNFOLD_ENV="+spec.Name, group.Env())
	setProcessGroup(cmd)
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("failed to start %s: %w", spec.Name, err)
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		closeAll(stdinR, stdinW)
		return nil, fmt.Errorf("failed to start %s: %w", spec.Name, err)
	}
	stderrR, stderrW, err := os.Pipe()
	if err != nil {
		closeAll(stdinR, stdinW, stdoutR, stdoutW)
		return nil, fmt.Errorf("failed to start %s: %w", spec.Name, err)
	}
	c := &child{
		cmd:        cmd,
		group:      group,
		limits:     spec.Resources,
		stdin:      stdinW,
		stdout:     stdoutR,
		stderrPipe: stderrR,
		lines:      make(chan message, 1),
		noticed:    make(chan struct{}, 1),
		exited:     make(chan struct{}),
		stderr:     &tailBuffer{limit: maxStderrTail},
		stderrDone: make(chan struct{}),
	}
	// The pipes are files, so Wait does not wait for them: a grandchild that
	// keeps one open cannot hold up noticing that the process exited.
	cmd.Stdin = stdinR
	cmd.Stdout = stdoutW
	cmd.Stderr = stderrW
	err = group.Start(cmd, cmd.Start)
	closeAll(stdinR, stdoutW, stderrW)
	if err == nil {
		// The process may run a little before its limits apply.
		if err = spec.Resources.Apply(cmd.Process.Pid); err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}
	if err != nil {
		group.Close()
		closeAll(stdinW, stdoutR, stderrR)
		return nil, fmt.Errorf("failed to start %s (%s): %w", spec.Name, spec.Executable, err)
	}
	go func() {
		c.waitErr = cmd.Wait()
		close(c.exited)
	}()
	go func() {
		defer close(c.stderrDone)
		_, _ = io.Copy(c.stderr, stderrR)
	}()
	go c.readStdout(stdoutR, maxLine)
	return c, nil
}

// readStdout turns stdout into messages. A line that comes when no request
// waits for one is kept aside as extra, never taken as the reply to a
// later request; ask reports it.
func (c *child) readStdout(stdout *os.File, maxLine int) {
	defer close(c.lines)
	br := bufio.NewReaderSize(newStdoutPipe(c, stdout), 64<<10)
	lr := &lineReader{br: br, limit: maxLine}
	for {
		l := lr.next()
		if l.err != nil {
			return
		}
		m := message{readLine: l}
		if l.tooLong == 0 {
			m.data = bytes.Clone(l.data)
			err := json.Unmarshal(m.data, &m.rep)
			m.valid = err == nil && m.rep.Type != "" && (m.rep.Type != "error" || m.rep.Message != nil)
		}
		c.mu.Lock()
		c.lined = c.got - int64(br.Buffered())
		asked := c.expect != ""
		switch {
		case !asked && c.extra == nil:
			c.extra, c.extraTo = []byte(clip(string(m.data))), c.answered
			if m.tooLong > 0 {
				c.extra = fmt.Appendf(nil, "(a line of %d bytes)", m.tooLong)
			}
			c.noticed <- struct{}{}
		case asked && (c.expect != "execute" || !m.valid || (m.rep.Type != "output" && m.rep.Type != "input")):
			c.expect = "" // the reply: nothing more is asked
		}
		c.mu.Unlock()
		if asked {
			c.lines <- m
		}
	}
}

// unread reports whether the process wrote bytes that are not in a line
// yet: read, or still in the pipe. c.mu is held.
func (c *child) unread() bool { return c.got > c.lined || pipeReadable(c.stdout) }

// ask readies c for the reply to req, an execute or screen request, which
// the caller sends next. It fails, and nothing is to be sent, when the
// process wrote a line that no request waited for: in the pipe or read,
// so before req was sent. The caller stops the process.
func (c *child) ask(req request) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.expect == "" && c.extra == nil && c.unread() {
		// Bytes came unasked: give the reader a moment to make them a
		// line, to show it.
		c.mu.Unlock()
		select {
		case <-c.noticed:
		case <-time.After(stderrLinger):
		}
		c.mu.Lock()
		if c.extra == nil {
			c.extra, c.extraTo = []byte("(part of a line)"), c.answered
		}
	}
	if c.extra != nil {
		when := "after its reply to " + c.extraTo
		if c.extraTo == "" {
			when = "before its first request"
		}
		return fmt.Errorf("the process wrote a line %s, when no request was waiting for one: %q. "+
			"Each request gets one reply line, and output or input lines come only while a command runs; write logs to stderr, not stdout. "+
			"The process was stopped and restarts on the next command", when, c.extra)
	}
	c.expect = req.Type
	if req.Type == "execute" {
		c.answered = fmt.Sprintf("the command %q", clip(req.Command))
	} else {
		c.answered = "a " + req.Type + " request"
	}
	return nil
}
func (c *child) send(req request) error {
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	_, err = c.stdin.Write(b)
	return err
}

// dead reports whether the process has exited, and how.
func (c *child) dead() (string, bool) {
	select {
	case <-c.exited:
		return c.exitReason(), true
	default:
		return "", false
	}
}

func (c *child) exitReason() string {
	if c.waitErr == nil {
		return "it exited with status 0"
	}
	var ee *exec.ExitError
	if errors.As(c.waitErr, &ee) {
		if why := c.limits.Reached(ee.ProcessState); why != "" {
			return "it ended with " + ee.ProcessState.String() + ": " + why
		}
		return "it ended with " + ee.ProcessState.String()
	}
	return c.waitErr.Error()
}

// stderrLinger is how long stderrNote waits for the rest of stderr after the
// process ended; a grandchild may keep the pipe open.
const stderrLinger = 200 * time.Millisecond

func (c *child) stderrNote() string {
	select {
	case <-c.exited:
		select {
		case <-c.stderrDone:
		case <-time.After(stderrLinger):
		}
	default:
	}
	tail := strings.TrimSpace(term.Plain(c.stderr.String()))
	if tail == "" {
		return ""
	}
	return "\nIts stderr ended with:\n" + tail
}

// killNow kills the process group at once.
func (c *child) killNow() {
	signalGroup(c.cmd, sigKill)
}

// interrupt sends SIGINT to the process group.
func (c *child) interrupt() {
	signalGroup(c.cmd, sigInterrupt)
}

// stop closes stdin and escalates to SIGTERM and SIGKILL, grace apart, then
// releases the pipes.
func (c *child) stop(grace time.Duration) error {
	// Not under sendMu: closing also unblocks a write the process is not
	// reading.
	c.stdin.Close()
	for _, sig := range []processSignal{sigTerminate, sigKill} {
		select {
		case <-c.exited:
			c.cleanup()
			return c.shutdownErr()
		case <-time.After(grace):
		}
		signalGroup(c.cmd, sig)
	}
	<-c.exited
	c.cleanup()
	return c.shutdownErr()
}

// shutdownErr reports an unclean exit, but not the signals stop sent.
func (c *child) shutdownErr() error {
	var ee *exec.ExitError
	if c.waitErr == nil || errors.As(c.waitErr, &ee) && !ee.Exited() {
		return nil
	}
	return fmt.Errorf("%s%s", c.exitReason(), c.stderrNote())
}

// cleanup ends what the process started that is still running (processes
// that left its process group included), and releases the pipes; the
// reader goroutine ends.
func (c *child) cleanup() {
	c.cleanOnce.Do(func() {
		_ = c.group.Kill()
		c.group.Close()
	})
	c.stdin.Close()
	c.stdout.Close()
	c.stderrPipe.Close()
	// Drain so the reader goroutine is not blocked on a send.
	go func() {
		for range c.lines {
		}
	}()
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// tailBuffer keeps the last limit bytes written to it.
type tailBuffer struct {
	limit int
	// mu guards buf.
	mu  sync.Mutex
	buf []byte
}

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(b)
	if len(b) > t.limit {
		b = b[len(b)-t.limit:]
	}
	if over := len(t.buf) + len(b) - t.limit; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, b...)
	return n, nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.ToValidUTF8(string(t.buf), "")
}
