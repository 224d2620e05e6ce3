// Command timer runs the timer environment of the help-system design (seed
// 000): a declarative environment with start, stop and reset whose screen
// shows the elapsed time above help that is long for commands not used yet
// and one line for used ones.
//
// It prints the screen before any command, after start and after stop. The
// clock is simulated so every run prints the same bytes: 5.23 seconds pass
// between start and stop. A real timer passes time.Now to newTimer.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/session"
)

// timer is the state behind the environment's commands.
type timer struct {
	now func() time.Time

	// mu guards the fields below: handlers change them while Screen may read
	// them from another goroutine.
	mu      sync.Mutex
	running bool
	since   time.Time     // when the current run started
	elapsed time.Duration // total of the finished runs
}

// newTimer returns the timer environment, recording command usage in sess
// and reading the time from now.
func newTimer(sess *session.Session, now func() time.Time) (*envs.Declarative, error) {
	t := &timer{now: now}
	return envs.NewDeclarative("timer", sess, envs.DeclarativeSpec{
		Description: "Timer for tracking elapsed time",
		Commands: []envs.Command{
			{Signature: "start", Description: "Start the timer from zero or resume after stop.", Example: "start", Handler: noArgs(t.start)},
			{Signature: "stop", Description: "Stop the timer and record elapsed time.", Example: "stop", Handler: noArgs(t.stop)},
			{Signature: "reset", Description: "Reset timer to zero.", Example: "reset", Handler: noArgs(t.reset)},
		},
		State: t.state,
	})
}

// noArgs adapts f to a handler that refuses arguments.
func noArgs(f func() (string, error)) envs.Handler {
	return func(_ context.Context, args string) (string, error) {
		if args != "" {
			return "", fmt.Errorf("this command takes no arguments, got %q", args)
		}
		return f()
	}
}

func (t *timer) start() (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.running {
		return "", errors.New("Timer already running")
	}
	t.running, t.since = true, t.now()
	if t.elapsed > 0 {
		return fmt.Sprintf("Timer resumed at %s", seconds(t.elapsed)), nil
	}
	return "Timer started", nil
}

func (t *timer) stop() (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.running {
		return "", errors.New("Timer not running")
	}
	t.running = false
	t.elapsed += t.now().Sub(t.since)
	return "Elapsed: " + seconds(t.elapsed), nil
}

func (t *timer) reset() (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.running, t.elapsed = false, 0
	return "Timer reset", nil
}

// state is the line above the commands: "Timer: Running (5.23s)".
func (t *timer) state() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.running {
		return "Timer: Running (" + seconds(t.elapsed+t.now().Sub(t.since)) + ")"
	}
	return "Timer: Stopped (" + seconds(t.elapsed) + ")"
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.2fs", d.Seconds()) }

// clock is a simulated clock that moves only when told to.
type clock struct{ t time.Time }

func (c *clock) Now() time.Time          { return c.t }
func (c *clock) Advance(d time.Duration) { c.t = c.t.Add(d) }

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "timer:", err)
		os.Exit(1)
	}
}

// run drives the timer through start and stop, writing each screen and
// response to w.
func run(w io.Writer) error {
	clk := &clock{t: time.Date(2025, 1, 1, 9, 0, 0, 0, time.UTC)}
	env, err := newTimer(session.New(), clk.Now)
	if err != nil {
		return err
	}
	screen := func(title string) error {
		s, err := env.Screen()
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "=== %s ===\n%s\n\n", title, s.Content)
		return err
	}
	execute := func(command string) error {
		r, err := env.Execute(context.Background(), command)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "> %s\n%s (success: %v)\n\n", command, r.Output, r.Success)
		return err
	}
	for _, step := range []func() error{
		func() error { return screen("screen before any command") },
		func() error { return execute("start") },
		func() error { clk.Advance(5230 * time.Millisecond); return nil },
		func() error { return screen("screen 5.23s after start") },
		func() error { return execute("stop") },
		func() error { return screen("screen after stop") },
	} {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}
