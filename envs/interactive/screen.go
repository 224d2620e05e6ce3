package interactive

import (
	"fmt"
	"time"

	"github.com/unfold-dev/unfold/envs"
)

// Summary returns the description.
func (e *Env) Summary() string { return e.spec.Description }

// QuickScreen marks the environment's screen as one that never blocks
// (see orchestrator.QuickScreener): [Env.Screen] copies fields under a
// lock held briefly.
func (e *Env) QuickScreen() {}

// Screen shows the description, whether the program runs, and how to use
// the environment. It does not wait for a running command.
func (e *Env) Screen() (envs.Screen, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var status string
	switch {
	case e.closed:
		status = "closed"
	case e.p != nil && e.p.alive():
		status = fmt.Sprintf("running (pid %d)", e.p.pid)
	case e.lastExit != "":
		status = fmt.Sprintf("stopped (%s); it starts again with the next command", e.lastExit)
	case e.p != nil:
		// It ended after the last command; the next command's response
		// says so too. Its status is set before exited is closed.
		status = fmt.Sprintf("stopped (%s); it starts again with the next command", e.p.status)
	default:
		status = "not started; it starts with the first command"
	}
	if j := e.running; j != nil && j.starting {
		status += fmt.Sprintf("\nStarting: no prompt yet (for %v); then it runs: %s", envs.Round(time.Since(j.began)), envs.Abbrev(j.command))
	} else if j != nil {
		status += fmt.Sprintf("\nRunning: %s (for %v)", envs.Abbrev(j.command), envs.Round(time.Since(j.began)))
		if j.waiting != "" {
			status += fmt.Sprintf("\nWaiting for input: %q (the next command is typed as the answer)", j.waiting)
		}
	}
	content := fmt.Sprintf("%s\nStatus: %s\n\nEach command is typed at the %s prompt and its output returned. The program and its state persist across commands.",
		e.spec.Description, status, e.name)
	return envs.Screen{Content: content, MaxLines: MaxLines}, nil
}
