package envs

import "context"

// Env is a persistent environment an agent sends commands to: a shell, a
// REPL, an editor, a declarative command set.
//
// Execute runs one command text and blocks until it is done. Cancelling ctx
// (or its deadline) interrupts the running command and keeps the environment
// and its state alive; Execute then returns a Response saying what happened.
// A command that fails (bad syntax, non-zero exit, unknown command) is a
// Response with Success false, never an error: the error return is for the
// environment itself breaking, and the orchestrator reports it as
// "Environment error in <name>:".
//
// Screen returns what the agent should see of the environment now: its state
// and how to use it. It may be called from another goroutine while Execute
// runs, so it must not block on the running command.
type Env interface {
	Execute(ctx context.Context, command string) (Response, error)
	Screen() (Screen, error)
}

// Closer is implemented by environments that hold resources (processes,
// files). Close must be idempotent; commands after Close fail with an error
// wrapping [ErrClosed], never a panic.
type Closer interface {
	Close() error
}

// Summarizer is implemented by environments that describe themselves in one
// line, shown when their prompt section is summarized ("Bash shell (ready)").
type Summarizer interface {
	Summary() string
}

// Response is the result of one command.
type Response struct {
	Output  string `json:"output"`
	Success bool   `json:"success"`
}

// Screen is an environment's current screen. MaxLines bounds how many lines
// the orchestrator shows; 0 means the orchestrator's default.
type Screen struct {
	Content  string `json:"content"`
	MaxLines int    `json:"max_lines"`
}
