package envs

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"time"
)

// Background gives an environment whose Execute blocks for a whole command
// (one that is not a [LimitedExecutor]) the soft limits of one: each
// command runs on a goroutine of its own, and control comes back at the
// limits, with Running set, while the command goes on. Such an
// environment shows its output only when a command ends, so a response
// that gives control back has none; the response that sees the command
// end has it all. An empty command waits again; [Interrupt] cancels the
// command's context, as a hard limit would; other text is refused while a
// command runs, since the environment takes no input.
//
// Screen and Summary pass through to the environment; Close cancels a
// running command and closes the environment when it is a [Closer]. A
// call waiting for a command when Close is called returns within
// [interruptGrace] (2 s), with an error wrapping [ErrClosed] if the
// command has not returned by then: an environment that ignores its
// context does not hold the call.
type Background struct {
	env  Env
	def  Defaults
	turn *Queue

	// mu guards job and closed.
	mu     sync.Mutex
	job    *job // the command running, or nil
	closed bool
	// closing is closed by Close, to wake the calls waiting for a command.
	closing chan struct{}
}

// interruptGrace is how long a command interrupted by its caller's context
// has to return before the call gives control back without it.
const interruptGrace = 2 * time.Second

// job is one command running in the background.
type job struct {
	done     chan struct{} // closed when Execute returned
	deadline time.Time     // the hard limit it runs under; zero for none
	resp     Response      // valid once done is closed
	err      error
	cancel   context.CancelFunc
}

var (
	_ LimitedExecutor = (*Background)(nil)
	_ Closer          = (*Background)(nil)
	_ Summarizer      = (*Background)(nil)
)

// NewBackground wraps env, with d as its default limits.
func NewBackground(env Env, d Defaults) *Background {
	return &Background{env: env, def: d, turn: NewQueue(), closing: make(chan struct{})}
}

// Env returns the wrapped environment.
func (b *Background) Env() Env { return b.env }

// Screen returns the environment's screen.
func (b *Background) Screen() (Screen, error) { return b.env.Screen() }

// Summary returns the environment's summary, or "" when it has none.
func (b *Background) Summary() string {
	if s, ok := b.env.(Summarizer); ok {
		return s.Summary()
	}
	return ""
}

// Execute is ExecuteLimited with the default limits.
func (b *Background) Execute(ctx context.Context, command string) (Response, error) {
	return b.ExecuteLimited(ctx, command, Limits{})
}

// ExecuteLimited runs command, or continues the running one, as
// [LimitedExecutor] says. A panic in the environment's Execute comes back
// as a [*PanicError].
func (b *Background) ExecuteLimited(ctx context.Context, command string, limits Limits) (Response, error) {
	start := time.Now()
	limits = limits.Or(b.def, start)
	resp, err := b.execute(ctx, command, limits, start)
	return limits.Fit(resp), err
}

func (b *Background) execute(ctx context.Context, command string, limits Limits, start time.Time) (Response, error) {
	if err := ctx.Err(); err != nil {
		return NotRun(err), nil
	}
	if err := b.turn.Wait(ctx, limits.Until); err != nil {
		return NotRun(err), nil
	}
	defer b.turn.Done()
	b.mu.Lock()
	j, closed := b.job, b.closed
	b.mu.Unlock()
	if closed {
		return Response{}, fmt.Errorf("envs: background: execute: %w", ErrClosed)
	}
	switch {
	case j == nil && (IsInterrupt(command) || IsEndOfInput(command)):
		return Response{Output: IdleNote(strings.TrimSpace(command)), Success: true}, nil
	case j == nil:
		j = b.start(ctx, command)
	case IsInterrupt(command):
		j.cancel()
	case strings.TrimSpace(command) != "":
		select {
		case <-j.done:
			resp, err := b.finish(j)
			resp.Output = joinNote(resp.Output, EndedNote())
			return resp, err
		default:
		}
		return Response{Output: "[This environment takes no input while a command runs: the text was not used. " +
			"Send an empty command to wait for the command to end, or " + Interrupt + " to interrupt it.]", Running: true}, nil
	}
	return b.await(ctx, j, limits, start)
}

// start runs command on its own goroutine, under a context that the
// caller's end does not cancel (the command outlives the call that gave
// control back) but [Interrupt], the caller's deadline (a hard limit) and
// Close do.
func (b *Background) start(ctx context.Context, command string) *job {
	jctx := context.WithoutCancel(ctx)
	var stopDeadline context.CancelFunc = func() {}
	d, hasDeadline := ctx.Deadline()
	if hasDeadline {
		// A hard limit holds for the command, past this call.
		jctx, stopDeadline = context.WithDeadline(jctx, d)
	}
	jctx, cancel := context.WithCancel(jctx)
	j := &job{done: make(chan struct{}), cancel: cancel}
	if hasDeadline {
		j.deadline = d
	}
	b.mu.Lock()
	b.job = j
	b.mu.Unlock()
	go func() {
		defer close(j.done)
		defer stopDeadline()
		defer cancel()
		defer func() {
			if p := recover(); p != nil {
				j.err = &PanicError{Value: p, Stack: debug.Stack()}
			}
		}()
		j.resp, j.err = b.env.Execute(jctx, command)
	}()
	return j
}

// await waits for j to end, the caller's context to end (which cancels
// j), or a soft limit.
func (b *Background) await(ctx context.Context, j *job, limits Limits, start time.Time) (Response, error) {
	for {
		why, next := limits.Due(time.Now(), start)
		if why != "" {
			return Response{Output: RunningNote(why), Running: true}, nil
		}
		var t *time.Timer
		var wake <-chan time.Time
		if !next.IsZero() {
			t = time.NewTimer(time.Until(next))
			wake = t.C
		}
		select {
		case <-j.done:
			stopTimer(t)
			return b.finish(j)
		case <-b.closing:
			stopTimer(t)
			if returns(j, interruptGrace) {
				return b.finish(j)
			}
			return Response{}, fmt.Errorf("envs: background: %w while a command ran, which has not returned", ErrClosed)
		case <-ctx.Done():
			stopTimer(t)
			if d, _ := ctx.Deadline(); !d.Equal(j.deadline) || !errors.Is(ctx.Err(), context.DeadlineExceeded) {
				// Not the command's own deadline, which ends it as such.
				j.cancel()
			}
			if returns(j, interruptGrace) {
				return b.finish(j)
			}
			return Response{Output: "[Interrupted, but the command has not returned yet. Send an empty command to wait for it.]", Running: true}, nil
		case <-wake:
		}
	}
}

// returns reports whether j returns within d.
func returns(j *job, d time.Duration) bool {
	grace := time.NewTimer(d)
	defer grace.Stop()
	select {
	case <-j.done:
		return true
	case <-grace.C:
		return false
	}
}

func stopTimer(t *time.Timer) {
	if t != nil {
		t.Stop()
	}
}

// finish forgets j, which has ended, and returns its result.
func (b *Background) finish(j *job) (Response, error) {
	b.mu.Lock()
	if b.job == j {
		b.job = nil
	}
	b.mu.Unlock()
	return j.resp, j.err
}

// Close cancels a running command and closes the environment when it is
// a [Closer]. It is idempotent.
func (b *Background) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	j := b.job
	b.mu.Unlock()
	close(b.closing)
	if j != nil {
		j.cancel()
	}
	if c, ok := b.env.(Closer); ok {
		return c.Close()
	}
	return nil
}

// PanicError is a panic in an environment's Execute, recovered on the
// goroutine that ran it.
type PanicError struct {
	Value any
	Stack []byte // the goroutine's stack, as debug.Stack gave it
}

func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v\n\n%s", e.Value, e.Stack) }

// joinNote appends note to output on a line of its own.
func joinNote(output, note string) string {
	if output == "" {
		return note
	}
	return output + "\n" + note
}
