package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// pipes cancels a run whose output has no reader any more (unfold agent
// ... | head -1, a closed stderr), so that it stops calling the model
// for output nobody reads: at the first write to stdout or stderr that
// fails with EPIPE, or, for a pipe, as soon as its reader closes it,
// which head does before the answer is written (a socket likewise, when
// its peer closed it whole). See survivePipe: the
// write fails instead of killing the process.
type pipes struct {
	stopRun        context.CancelFunc // cancels the run
	stdout, stderr io.Writer          // the streams, watched
	done           chan struct{}      // closed when watching ends

	mu     sync.Mutex // guards the fields below
	broken string     // "stdout" or "stderr": the first found closed
	err    error      // how
}

// watchPipes watches stdout and stderr. When one of them is found
// closed, stopRun (the run's cancel) is called before the write that
// found it returns, so that the run makes no new request after it.
func watchPipes(stopRun context.CancelFunc, stdout, stderr io.Writer) *pipes {
	p := &pipes{stopRun: stopRun, done: make(chan struct{})}
	p.stdout = &pipeWriter{p: p, name: "stdout", w: stdout}
	p.stderr = &pipeWriter{p: p, name: "stderr", w: stderr}
	for _, s := range []struct {
		name string
		w    io.Writer
	}{{"stdout", stdout}, {"stderr", stderr}} {
		if f, ok := s.w.(*os.File); ok && watchable(f) {
			go p.watch(s.name, f)
		}
	}
	return p
}

// closed records that stream was found closed, the first time, and
// cancels the run.
func (p *pipes) closed(stream string, err error) {
	p.mu.Lock()
	if p.broken == "" {
		p.broken, p.err = stream, err
	}
	p.mu.Unlock()
	p.stopRun()
}

// failed returns the stream found closed first and how, or "".
func (p *pipes) failed() (stream string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.broken, p.err
}

// stop ends the watching.
func (p *pipes) stop() { close(p.done) }

// report says, on the stream that still works, that the run of the
// command name stopped because a stream was closed, and reports whether
// one was.
func (p *pipes) report(name string) bool {
	stream, err := p.failed()
	if stream == "" {
		return false
	}
	w := p.stderr
	if stream == "stderr" {
		w = p.stdout
	}
	fmt.Fprintf(w, "unfold %s: stopped: %s was closed (%v)\n", name, stream, err)
	return true
}

// watch waits for the reader of pipe f to close it: poll reports POLLERR
// for the write end of a pipe that has no reader, and POLLHUP for a
// socket whose peer closed it. It looks again every
// second to see whether watching ended.
func (p *pipes) watch(name string, f *os.File) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	var fd int32
	// Read without Fd, which would put f in blocking mode.
	if rc.Control(func(u uintptr) { fd = int32(u) }) != nil {
		return
	}
	fds := []unix.PollFd{{Fd: fd}}
	for {
		select {
		case <-p.done:
			return
		default:
		}
		n, err := unix.Poll(fds, 1000)
		if err != nil && !errors.Is(err, unix.EINTR) {
			return
		}
		if n > 0 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0 {
			p.closed(name, fmt.Errorf("write %s: %w", f.Name(), syscall.EPIPE))
			return
		}
		if n > 0 && fds[0].Revents&unix.POLLNVAL != 0 {
			return
		}
	}
}

// watchable reports whether f is a pipe or a socket, whose reader going
// away poll reports (a socket: when its peer closed it whole).
func watchable(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) != 0
}

// pipeWriter passes writes on to w and reports one that fails with EPIPE.
type pipeWriter struct {
	p    *pipes
	name string
	w    io.Writer
}

func (w *pipeWriter) Write(b []byte) (int, error) {
	n, err := w.w.Write(b)
	if errors.Is(err, syscall.EPIPE) {
		w.p.closed(w.name, err)
	}
	return n, err
}

// Unwrap returns the stream written to, for a look at what it is (a
// terminal).
func (w *pipeWriter) Unwrap() io.Writer { return w.w }
