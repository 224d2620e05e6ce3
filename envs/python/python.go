package python

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/unfold-dev/unfold/envs"
)

// DefaultGrace is how long interrupted code may take to stop before the
// interpreter is killed and restarted, when no [WithGrace] is given.
const DefaultGrace = 2 * time.Second

// ErrClosed is [envs.ErrClosed], the one error value for a closed
// environment, which Execute returns wrapped after Close.
var ErrClosed = envs.ErrClosed

// options configure a [REPL]; the zero value runs the system python3 in the
// current directory.
type options struct {
	Python      string
	Dir         string
	OutputLimit int
	Env         []string
	Grace       time.Duration
}

// Option configures a [REPL].
type Option func(*options)

// WithPython sets the interpreter to run, a path or a name looked up in
// PATH (default "python3"; Python 3.8 or later).
func WithPython(path string) Option { return func(o *options) { o.Python = path } }

// WithDir sets the directory the interpreter starts in, and starts in again
// after a restart (default: the current directory).
func WithDir(dir string) Option { return func(o *options) { o.Dir = dir } }

// WithOutputLimit bounds the output kept per command, in bytes, head and
// tail (see [envs.Output]; default [envs.DefaultOutputLimit]).
func WithOutputLimit(n int) Option { return func(o *options) { o.OutputLimit = n } }

// WithEnv adds environment variables, "KEY=value", for the interpreter.
// They come after the inherited environment and the defaults (TERM=dumb,
// PAGER=cat, MPLBACKEND=Agg when unset, ...), so they win.
func WithEnv(kv ...string) Option { return func(o *options) { o.Env = append(o.Env, kv...) } }

// WithGrace sets how long code may take to stop after KeyboardInterrupt
// before the interpreter is killed (default [DefaultGrace]).
func WithGrace(d time.Duration) Option { return func(o *options) { o.Grace = d } }

// REPL is a persistent Python interpreter: each command is a block of code
// run in one namespace that lives across commands. It is safe for
// concurrent use; commands run one at a time, and Screen answers while one
// runs.
type REPL struct {
	opts options // normalized by New
	dir  string  // absolute start directory
	run  chan struct{}

	// mu guards every field below.
	mu     sync.Mutex
	proc   *proc // nil until the first command, and after the interpreter is lost
	closed bool
	cwd    string     // the interpreter's working directory after the last command
	vars   []variable // as of the last command, most recently mentioned first
}

var (
	_ envs.Env        = (*REPL)(nil)
	_ envs.Closer     = (*REPL)(nil)
	_ envs.Summarizer = (*REPL)(nil)
)

// New returns a Python environment. The interpreter starts with the first
// command, so an environment that is never used costs no process; an
// interpreter that cannot start is reported in that command's response.
func New(opt ...Option) (*REPL, error) {
	var opts options
	for _, o := range opt {
		o(&opts)
	}
	if opts.Python == "" {
		opts.Python = "python3"
	}
	if opts.OutputLimit < 0 {
		return nil, fmt.Errorf("python: new: output limit %d: want 0 (the default) or more", opts.OutputLimit)
	}
	if opts.OutputLimit == 0 {
		opts.OutputLimit = envs.DefaultOutputLimit
	}
	if opts.Grace < 0 {
		return nil, fmt.Errorf("python: new: grace %v: want 0 (the default) or more", opts.Grace)
	}
	if opts.Grace == 0 {
		opts.Grace = DefaultGrace
	}
	for _, kv := range opts.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return nil, fmt.Errorf("python: new: environment entry %q: want KEY=value", kv)
		}
	}
	dir := opts.Dir
	if dir == "" {
		dir = "."
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("python: new: working directory: %w", err)
	}
	if fi, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("python: new: working directory: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("python: new: working directory %s: not a directory", dir)
	}
	opts.Env = append([]string(nil), opts.Env...)
	return &REPL{opts: opts, dir: dir, run: make(chan struct{}, 1), cwd: dir}, nil
}

// Summary returns the one line shown when the environment's section is
// summarized.
func (r *REPL) Summary() string { return "Python REPL (ready)" }

// Execute runs code in the persistent namespace and returns its output
// (stdout and stderr in write order, then the value of a final expression
// statement) with success false for an exception. Cancelling ctx, or its
// deadline, raises KeyboardInterrupt in the code; code that does not stop
// within the grace period is killed with the interpreter, which restarts
// without its variables, and the response says so. The error is non-nil
// only after Close.
func (r *REPL) Execute(ctx context.Context, code string) (envs.Response, error) {
	select {
	case r.run <- struct{}{}:
	case <-ctx.Done():
		return notRun(ctx.Err(), ""), nil
	}
	defer func() { <-r.run }()
	if err := ctx.Err(); err != nil {
		return notRun(err, ""), nil
	}
	p, notice, err := r.process(ctx)
	switch {
	case errors.Is(err, ErrClosed):
		return envs.Response{}, fmt.Errorf("python: execute: %w", err)
	case err != nil && ctx.Err() != nil:
		return notRun(ctx.Err(), notice), nil
	case err != nil:
		return envs.Response{Output: notice + fmt.Sprintf(
			"Cannot start Python (%s): %v\nCheck that the interpreter exists and is Python 3.8 or later.",
			r.opts.Python, err)}, nil
	}

	o := p.run(ctx, code, r.opts.Grace)

	lost := o.killed || o.died != ""
	r.mu.Lock()
	closed := r.closed
	if o.replied {
		r.cwd, r.vars = o.reply.Cwd, variables(o.reply.Vars)
	}
	if lost && r.proc == p {
		r.proc, r.cwd, r.vars = nil, r.dir, nil
	}
	r.mu.Unlock()

	var b strings.Builder
	b.WriteString(notice)
	b.WriteString(strings.TrimRight(o.output, "\n"))
	note := func(s string) {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("[" + s + "]")
	}
	success := o.replied && o.reply.Success && o.interrupted == nil
	switch {
	case lost && closed:
		note("The environment was closed while this command ran.")
	case lost:
		p.stop()
		if o.killed {
			note(interruption(o.interrupted, o.elapsed) + fmt.Sprintf(
				": the code did not stop within %v of KeyboardInterrupt, so the Python process was killed. "+
					"All variables and imports were lost.", r.opts.Grace))
		} else {
			note(capitalize(o.died) + " while running this command. All variables and imports were lost.")
		}
		if _, _, err := r.process(context.Background()); err != nil && !errors.Is(err, ErrClosed) {
			note(fmt.Sprintf("Restarting Python failed: %v. The next command tries again.", err))
		} else if err == nil {
			note("A fresh interpreter was started.")
		}
	case o.interrupted != nil && o.reply.Status == "interrupted":
		note(interruption(o.interrupted, o.elapsed) + ": KeyboardInterrupt was raised in the running code. Variables and imports are kept.")
	case o.interrupted != nil:
		note(interruption(o.interrupted, o.elapsed) + ": KeyboardInterrupt was raised, and the code handled it and finished. Variables and imports are kept.")
	case o.reply.Status == "exit":
		note("SystemExit does not end this Python session: it keeps running with its variables and imports.")
	}
	return envs.Response{Output: b.String(), Success: success}, nil
}

// process returns the running interpreter, starting one when there is none
// or it died; notice then says the state that was lost, if any.
func (r *REPL) process(ctx context.Context) (*proc, string, error) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, "", ErrClosed
	}
	p := r.proc
	r.mu.Unlock()
	notice := ""
	if p != nil {
		if !p.dead() {
			return p, "", nil
		}
		notice = "[" + capitalize(exitDescription(p.waitErr)) +
			" since the last command. All variables and imports were lost; a fresh interpreter was started.]\n"
		p.stop()
		r.mu.Lock()
		if r.proc == p {
			r.proc, r.cwd, r.vars = nil, r.dir, nil
		}
		r.mu.Unlock()
	}
	np, ready, err := start(ctx, r.opts, r.dir)
	if err != nil {
		return nil, notice, err
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		np.stop()
		return nil, "", ErrClosed
	}
	r.proc, r.cwd, r.vars = np, ready.Cwd, nil
	r.mu.Unlock()
	return np, notice, nil
}

// Screen shows the working directory, the variables most recently
// mentioned first, and how to use the environment. It never waits for a
// running command: it shows the state as of the last one.
func (r *REPL) Screen() (envs.Screen, error) {
	r.mu.Lock()
	cwd, vars := r.cwd, r.vars
	if r.proc != nil && r.proc.dead() {
		cwd, vars = r.dir, nil
	}
	r.mu.Unlock()
	return envs.Screen{Content: screen(cwd, vars), MaxLines: ScreenLines}, nil
}

// Close stops the interpreter and everything in its process group: end of
// input, then SIGTERM, then SIGKILL, a second apart. A running command
// returns, saying the environment was closed. Close is idempotent.
func (r *REPL) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	p := r.proc
	r.proc = nil
	r.mu.Unlock()
	if p != nil {
		p.stop()
	}
	return nil
}

// notRun is the response to a command whose context ended before it ran.
func notRun(err error, notice string) envs.Response {
	why := "cancelled"
	if errors.Is(err, context.DeadlineExceeded) {
		why = "timed out"
	}
	return envs.Response{Output: notice + "[Not run: the command " + why + " before it started.]"}
}

// interruption says how a command was interrupted, for the start of a note.
func interruption(err error, elapsed time.Duration) string {
	if elapsed >= time.Second {
		elapsed = elapsed.Round(100 * time.Millisecond)
	} else {
		elapsed = elapsed.Round(time.Millisecond)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "Timed out after " + elapsed.String()
	}
	return "Cancelled after " + elapsed.String()
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
