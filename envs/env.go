package envs

import (
	"context"

	"github.com/unfold-dev/unfold/tools"
)

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

// Hinter is implemented by environments that say what their commands do to
// the world around them: whether they only read, may destroy, repeat
// without further effect, or reach beyond a closed domain. The
// orchestrator puts the hints on the environment's command tool (MCP
// clients see them as tool annotations); an environment that does not say
// is taken to be [tools.AssumedHints]. Hints must not block.
type Hinter interface {
	Hints() tools.Hints
}

// Response is the result of one command, or of one part of it: a command
// still running when its environment gave control back ([Limits]) is
// answered with Running set, and the commands after it continue it (see
// [LimitedExecutor]).
type Response struct {
	// Output is what the command printed, or the part of it new since the
	// last response, with notes in brackets saying what happened.
	Output string `json:"output"`
	// Success reports that the command ended and succeeded (exit status
	// 0 for a shell). A running command has not succeeded yet.
	Success bool `json:"success"`
	// Running reports that the command had not ended when control came
	// back: the next command to the environment continues it.
	Running bool `json:"running,omitempty"`
	// Waiting reports, while Running, that the command waits for input:
	// the next command's text is typed to it.
	Waiting bool `json:"waiting,omitempty"`
	// Prompt is, while Waiting, the last line of the output: most likely
	// the question. It is at most [MaxQuestion] characters (see
	// [ClipQuestion]).
	Prompt string `json:"prompt,omitempty"`
	// Hidden reports, while Waiting, that the answer is a secret (the
	// program asks for a password, or turned echo off): it is not shown,
	// and transcripts record it as hidden.
	Hidden bool `json:"hidden,omitempty"`
	// OutputFile is where the whole output was saved when the response
	// shows only its head and tail (see the orchestrator's budget).
	OutputFile string `json:"output_file,omitempty"`
}

// LimitedExecutor is implemented by environments that give control back
// while a command still runs, so that a caller is never stuck behind it.
//
// ExecuteLimited runs command as Execute does, but returns once limits
// say so (its output unchanged for limits.Quiet, or limits.Until passed)
// with the output so far and Running set; the command goes on. While it
// runs, the next command continues it rather than starting another:
//
//   - an empty command waits again, under its own limits, and returns the
//     output new since the last response; once the command ends, the
//     response has its status (Success) and Running is false;
//   - [Interrupt] ("C-c") interrupts it as Ctrl-C would, and
//     [EndOfInput] ("C-d") ends its input;
//   - other text is typed to it as input (with a newline) when it waits
//     for input (Waiting); otherwise the text is refused, so that it is
//     not run later by the shell, say.
//
// Cancelling ctx, or its deadline (a hard limit), interrupts the command
// as for Execute. Calls wait their turn in the order they arrive, each
// until its own ctx ends or its limits.Until passes (then it is not run,
// see [NotRun]). Execute on such an environment is ExecuteLimited with
// zero Limits: the environment's defaults.
type LimitedExecutor interface {
	Env
	ExecuteLimited(ctx context.Context, command string, limits Limits) (Response, error)
}

// Screen is an environment's current screen. MaxLines bounds how many lines
// the orchestrator shows; 0 means the orchestrator's default.
type Screen struct {
	Content  string `json:"content"`
	MaxLines int    `json:"max_lines"`
}
