package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// shutdownGrace is how long a front end may take to shut down after
// SIGINT or SIGTERM (interrupting commands, closing environments) before it
// exits regardless: under the 5 s a user or a supervisor waits.
const shutdownGrace = 4 * time.Second

// exit ends the process when shutting down takes too long.
var exit = os.Exit

// stopper turns SIGINT and SIGTERM into the cancellation of a context and
// remembers the signal for the exit status. A second signal, or a shutdown
// longer than shutdownGrace, exits at once with that status.
type stopper struct {
	ctx    context.Context
	cancel context.CancelFunc
	sigs   chan os.Signal
	done   chan struct{}
	once   sync.Once

	mu     sync.Mutex
	caught os.Signal
}

// stopOnSignal starts watching for SIGINT and SIGTERM; stop ends it. name
// is the command, for the message when the grace runs out.
func stopOnSignal(name string, stderr io.Writer) *stopper {
	ctx, cancel := context.WithCancel(context.Background())
	s := &stopper{ctx: ctx, cancel: cancel, sigs: make(chan os.Signal, 2), done: make(chan struct{})}
	signal.Notify(s.sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		var sig os.Signal
		select {
		case sig = <-s.sigs:
		case <-s.done:
			return
		}
		s.mu.Lock()
		s.caught = sig
		s.mu.Unlock()
		cancel()
		grace := time.NewTimer(shutdownGrace)
		defer grace.Stop()
		select {
		case <-s.sigs:
			fmt.Fprintf(stderr, "unfold %s: a second signal; exiting without waiting for the environments\n", name)
		case <-grace.C:
			fmt.Fprintf(stderr, "unfold %s: not shut down %s after %v; exiting\n", name, shutdownGrace, sig)
		case <-s.done:
			return
		}
		exit(s.code())
	}()
	return s
}

// stop stops watching for signals: the shutdown is over.
func (s *stopper) stop() {
	s.once.Do(func() {
		signal.Stop(s.sigs)
		close(s.done)
		s.cancel()
	})
}

// signal returns the signal that came, or nil.
func (s *stopper) signal() os.Signal {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caught
}

// name is the signal's name, like SIGINT, or "" before one came.
func (s *stopper) name() string {
	if sig, ok := s.signal().(syscall.Signal); ok {
		return unix.SignalName(sig)
	}
	return ""
}

// code is the exit status after the signal, as a shell reports it: 128
// plus its number (130 after SIGINT, 143 after SIGTERM).
func (s *stopper) code() int {
	if sig, ok := s.signal().(syscall.Signal); ok {
		return 128 + int(sig)
	}
	return 1
}

// survivePipe keeps a write to a closed pipe (stdout, when the client
// stopped reading and closed its end) from killing the process with
// SIGPIPE: the write fails with EPIPE instead, which ends the session as
// the end of input does, shutting the environments down. The signal is
// caught, not ignored: an ignored signal stays ignored in the programs
// unfold starts, where `yes | head` would then never end.
func survivePipe() {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
}
