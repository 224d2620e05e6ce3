package python

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/internal/procs"
	"github.com/unfold-dev/unfold/tools"
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
	Limits      envs.Defaults
	Save        func(io.Reader) (string, error)
	Resources   procs.Limits

	spool *envs.Spool // the whole output of commands past the output limit; set by New
}

// Option configures a [REPL]: [WithPython], [WithDir], [WithOutputLimit],
// [WithEnv], [WithGrace], [WithTimeout], [WithQuiet], [WithBudget],
// [WithSave] and [WithResources].
type Option func(*options)

// WithPython sets the interpreter to run, a path or a name looked up in
// PATH (default "python3"; Python 3.8 or later).
func WithPython(path string) Option { return func(o *options) { o.Python = path } }

// WithDir sets the directory the interpreter starts in, and starts in again
// after a restart (default: the current directory).
func WithDir(dir string) Option { return func(o *options) { o.Dir = dir } }

// WithOutputLimit bounds the output kept in memory per command, in
// bytes, head and tail (see [envs.Output]; default
// [envs.DefaultOutputLimit]). Past it the whole output goes to a spool
// file (see [envs.Spool]), and the response names the file it is saved
// in.
func WithOutputLimit(n int) Option { return func(o *options) { o.OutputLimit = n } }

// WithEnv adds environment variables, "KEY=value", for the interpreter.
// They come after the inherited environment and the defaults (TERM=dumb,
// PAGER=cat, MPLBACKEND=Agg when unset, ...), so they win.
func WithEnv(kv ...string) Option { return func(o *options) { o.Env = append(o.Env, kv...) } }

// WithGrace sets how long code may take to stop after KeyboardInterrupt
// before the interpreter is killed (default [DefaultGrace]).
func WithGrace(d time.Duration) Option { return func(o *options) { o.Grace = d } }

// WithTimeout sets how long a call waits for a cell at most before it
// gives control back while the cell runs on (default [envs.DefaultWait];
// negative: no bound). It is a soft limit: a context deadline is the hard
// one, which raises KeyboardInterrupt.
func WithTimeout(d time.Duration) Option { return func(o *options) { o.Limits.Wait = d } }

// WithQuiet sets how long a cell's output may stay unchanged before the
// call gives control back while the cell runs on (default
// [envs.DefaultQuiet]; negative: no such limit).
func WithQuiet(d time.Duration) Option { return func(o *options) { o.Limits.Quiet = d } }

// WithBudget sets how many tokens a response's output may take before its
// middle is cut and the whole output saved to a file (default
// [envs.DefaultBudget]; negative: no bound). See [envs.Limits.Fit].
func WithBudget(tokens int) Option { return func(o *options) { o.Limits.Budget = tokens } }

// WithSave sets how the whole output of a response cut to the budget or
// the output limit is kept. By default it goes to a new file in a
// directory of the interpreter's own under the system's temporary
// directory, removed by Close ([envs.Spool.Save]).
func WithSave(save func(output io.Reader) (string, error)) Option {
	return func(o *options) { o.Save = save }
}

// WithSaveLimit bounds the bytes of one saved output whose middle only a
// spool file holds (default [envs.DefaultSaveLimit]; negative: no bound):
// the file keeps the head and the tail of that middle, and the response
// says how much it leaves out. See [envs.Spool.Fit].
func WithSaveLimit(n int64) Option { return func(o *options) { o.Limits.SaveLimit = n } }

// WithResources sets resource limits on the interpreter, which what it
// starts inherits (see [procs.Limits]).
func WithResources(l procs.Limits) Option { return func(o *options) { o.Resources = l } }

// REPL is a persistent Python interpreter: each command is a block of code
// run in one namespace that lives across commands. It is safe for
// concurrent use; commands run one at a time, and Screen answers while one
// runs. Its screen is [ScreenLines] lines high.
type REPL struct {
	opts options     // normalized by New
	dir  string      // absolute start directory
	turn *envs.Queue // held by a call for its whole run

	// mu guards every field below.
	mu     sync.Mutex
	proc   *proc // nil until the first command, and after the interpreter is lost
	cell   *cell // the cell still running in proc after its call gave control back
	closed bool
	cwd    string     // the interpreter's working directory after the last command
	vars   []variable // as of the last command, most recently mentioned first
}

var (
	_ envs.Env             = (*REPL)(nil)
	_ envs.LimitedExecutor = (*REPL)(nil)
	_ envs.Closer          = (*REPL)(nil)
	_ envs.Summarizer      = (*REPL)(nil)
	_ envs.Hinter          = (*REPL)(nil)
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
	opts.spool = envs.NewSpool("", 0)
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
	if err := opts.Resources.Check(); err != nil {
		return nil, fmt.Errorf("python: new: %w", err)
	}
	opts.Env = append([]string(nil), opts.Env...)
	return &REPL{opts: opts, dir: dir, turn: envs.NewQueue(), cwd: dir}, nil
}

// Summary returns the one line shown when the environment's section is
// summarized.
func (r *REPL) Summary() string { return "Python REPL (ready)" }

// Hints says that Python code may change and delete anything the user
// may, and reach the network and other programs.
func (r *REPL) Hints() tools.Hints { return tools.Hints{Destructive: true, OpenWorld: true} }

// Execute runs code with the environment's own limits; see
// [REPL.ExecuteLimited].
func (r *REPL) Execute(ctx context.Context, code string) (envs.Response, error) {
	return r.ExecuteLimited(ctx, code, envs.Limits{})
}

// ExecuteLimited runs code in the persistent namespace and returns its
// output (stdout and stderr in write order, then the value of a final
// expression statement, then cut to the token budget) with success false
// for an exception.
//
// Control comes back before the code ends at the soft limits (its output
// unchanged for limits.Quiet, or limits.Until passed), and as soon as it
// waits for input (input(), getpass, sys.stdin); the response then has
// Running set, and the next command continues it as
// [envs.LimitedExecutor] says: an empty command waits again, text is the
// line of input the code waits for, [envs.EndOfInput] raises EOFError in
// it, and [envs.Interrupt] raises KeyboardInterrupt. Cancelling ctx, or
// its deadline, raises KeyboardInterrupt too; code that does not stop
// within the grace period is killed with the interpreter, which restarts
// without its variables, and the response says so. The error is non-nil
// only after Close.
func (r *REPL) ExecuteLimited(ctx context.Context, code string, limits envs.Limits) (envs.Response, error) {
	limits = limits.Or(r.opts.Limits, time.Now())
	if limits.Save == nil {
		limits.Save = r.opts.Save
	}
	if err := ctx.Err(); err != nil {
		return envs.NotRun(err), nil
	}
	if err := r.turn.Wait(ctx, limits.Until); err != nil {
		return envs.NotRun(err), nil
	}
	resp, err := r.executeTurn(ctx, code, limits)
	// Saving the output needs no turn: the next command need not wait
	// for it.
	return r.opts.spool.Fit(limits, resp), err
}

// executeTurn is execute for the holder of the turn, which it gives
// back.
func (r *REPL) executeTurn(ctx context.Context, code string, limits envs.Limits) (envs.Response, error) {
	defer r.turn.Done()
	return r.execute(ctx, code, limits)
}

func (r *REPL) execute(ctx context.Context, code string, limits envs.Limits) (envs.Response, error) {
	r.mu.Lock()
	c, cp := r.cell, r.proc
	r.mu.Unlock()
	p, notice, err := r.process(ctx)
	switch {
	case errors.Is(err, ErrClosed):
		return envs.Response{}, fmt.Errorf("python: execute: %w", err)
	case err != nil && ctx.Err() != nil:
		return envs.NotRun(ctx.Err()), nil
	case err != nil:
		return envs.Response{Output: notice + fmt.Sprintf(
			"Cannot start Python (%s): %v\nCheck that the interpreter exists and is Python 3.8 or later.",
			r.opts.Python, err)}, nil
	}
	key := envs.IsInterrupt(code) || envs.IsEndOfInput(code)
	if c != nil && p != cp {
		// The cell ended with the interpreter it ran in.
		out := strings.TrimSuffix(notice, "\n")
		if code != "" && !key {
			out += "\n[The code that was running ended with the interpreter, so the text was not run. Send it again to run it as code.]"
		}
		return envs.Response{Output: out}, nil
	}
	var o outcome
	switch {
	case c == nil && key:
		return envs.Response{Output: notice + envs.IdleNote(strings.TrimSpace(code)), Success: true}, nil
	case c == nil:
		// Blank lines alone are no news.
		if bg := strings.Trim(p.background(), "\n"); bg != "" {
			notice += "[Output since the last command (background threads or processes):]\n" + bg + "\n"
		}
		if c, err = p.begin(ctx, code); err != nil {
			o.died = "the command could not be sent to Python (" + err.Error() + "), so the process was killed"
			break
		}
		o = p.wait(ctx, c, limits, r.opts.Grace)
	case code == "":
		o = p.wait(ctx, c, limits, r.opts.Grace)
	case envs.IsInterrupt(code):
		p.interrupt(c, "Interrupted ("+envs.Interrupt+")", r.opts.Grace)
		o = p.wait(ctx, c, limits, r.opts.Grace)
	case !c.waiting:
		o = p.wait(ctx, c, envs.Limits{Until: time.Now()}, r.opts.Grace)
		if o.running != "" {
			o.running = envs.NotReadingNote()
		}
	default:
		var text *string
		if !envs.IsEndOfInput(code) {
			text = &code
		}
		if err := p.answer(ctx, c, text); err != nil {
			o.died = "the input could not be sent to Python (" + err.Error() + "), so the process was killed"
			break
		}
		o = p.wait(ctx, c, limits, r.opts.Grace)
	}
	return r.respond(p, c, o, notice), nil
}

// respond turns what happened to c during a call into the response.
func (r *REPL) respond(p *proc, c *cell, o outcome, notice string) envs.Response {
	lost := o.killed || o.died != ""
	r.mu.Lock()
	closed := r.closed
	if o.replied {
		r.cwd, r.vars = o.reply.Cwd, variables(o.reply.Vars)
	}
	r.cell = nil
	if o.running != "" && !lost {
		r.cell = c
	}
	if lost && r.proc == p {
		r.proc, r.cwd, r.vars = nil, r.dir, nil
	}
	r.mu.Unlock()

	var b strings.Builder
	b.WriteString(notice)
	b.WriteString(envs.TrimOutput(o.output))
	note := func(s string) {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("[" + s + "]")
	}
	if o.running != "" && !lost {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(o.running)
		return envs.Response{Output: b.String(), Running: true, Waiting: c.waiting, Prompt: c.prompt, Hidden: c.hidden}
	}
	success := o.replied && o.reply.Success && c.stop == ""
	switch {
	case lost && closed:
		note("The environment was closed while this command ran.")
	case lost:
		p.stop()
		if o.killed {
			note(interruption(c) + fmt.Sprintf(
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
	case c.stop != "" && o.reply.Status == "interrupted":
		note(interruption(c) + ": KeyboardInterrupt was raised in the running code. Variables and imports are kept.")
	case c.stop != "":
		note(interruption(c) + ": KeyboardInterrupt was raised, and the code handled it and finished. Variables and imports are kept.")
	case o.reply.Status == "exit":
		note("SystemExit does not end this Python session: it keeps running with its variables and imports.")
	}
	if o.replied {
		for _, rs := range o.reply.Restored {
			note(rs.note())
		}
	}
	if o.replied && o.reply.Forks > 0 {
		note(fmt.Sprintf("The code forked %d process(es). Their copies of this session stop where their copy of the code ends, and only this interpreter answers commands.", o.reply.Forks))
	}
	return envs.Response{Output: b.String(), Success: success}
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

// QuickScreen marks the environment's screen as one that never blocks
// (see orchestrator.QuickScreener): [REPL.Screen] copies fields under a
// lock held briefly.
func (r *REPL) QuickScreen() {}

// Screen shows the working directory, the variables most recently
// mentioned first, and how to use the environment. It never waits for a
// running command: it shows the state as of the last one.
func (r *REPL) Screen() (envs.Screen, error) {
	r.mu.Lock()
	cwd, vars, c := r.cwd, r.vars, r.cell
	if r.proc != nil && r.proc.dead() {
		cwd, vars, c = r.dir, nil, nil
	}
	var run running
	if c != nil {
		run = running{code: c.code, since: time.Since(c.began), waiting: c.waiting, prompt: c.prompt}
	}
	r.mu.Unlock()
	return envs.Screen{Content: screen(cwd, vars, run), MaxLines: ScreenLines}, nil
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
	// A call still running gets its turn to end first.
	_ = r.turn.Wait(context.Background(), time.Time{})
	defer r.turn.Done()
	if err := r.opts.spool.Close(); err != nil {
		return fmt.Errorf("python: close: %w", err)
	}
	return nil
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
