package bash

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/internal/procs"
	"github.com/unfold-dev/unfold/internal/term"
	"github.com/unfold-dev/unfold/tools"
)

// MaxLines is the height of the shell's screen.
const MaxLines = 50

// Summary is the shell's one-line summary (docs/design.md, Environments).
const Summary = "Bash shell (ready)"

// DefaultSpin is how long a command's end is busy-waited for, when
// no [WithSpin] is given, where the process may use more than one
// processor.
const DefaultSpin = 100 * time.Microsecond

// options configure a [Shell]; the zero value is the defaults.
type options struct {
	Dir         string
	OutputLimit int
	Limits      envs.Defaults
	Save        func(io.Reader) (string, error)
	Env         []string
	Bash        string
	Spin        time.Duration
	Resources   procs.Limits
}

// Option configures a [Shell]: [WithDir], [WithOutputLimit],
// [WithTimeout], [WithQuiet], [WithBudget], [WithSave], [WithResources],
// [WithEnv], [WithBash] and [WithSpin].
type Option func(*options)

// WithDir sets the starting working directory (default: the current one).
// A restarted shell starts in the last known working directory, or here
// when that is gone.
func WithDir(dir string) Option { return func(o *options) { o.Dir = dir } }

// WithOutputLimit sets how many bytes of a command's output are kept in
// memory, half from the start and half from the end (default
// [envs.DefaultOutputLimit]). Past it the whole output goes to a spool
// file (see [envs.Spool]), and the response names the file it is saved
// in.
func WithOutputLimit(n int) Option { return func(o *options) { o.OutputLimit = n } }

// WithTimeout sets how long a call waits for a command at most before it
// gives control back while the command runs on (default
// [envs.DefaultWait]; negative: no bound). It is a soft limit: a context
// deadline is the hard one, which interrupts the command.
func WithTimeout(d time.Duration) Option { return func(o *options) { o.Limits.Wait = d } }

// WithQuiet sets how long a command's output may stay unchanged before the
// call gives control back while the command runs on (default
// [envs.DefaultQuiet]; negative: no such limit).
func WithQuiet(d time.Duration) Option { return func(o *options) { o.Limits.Quiet = d } }

// WithBudget sets how many tokens a response's output may take before its
// middle is cut and the whole output saved to a file (default
// [envs.DefaultBudget]; negative: no bound). See [envs.Limits.Fit].
func WithBudget(tokens int) Option { return func(o *options) { o.Limits.Budget = tokens } }

// WithSave sets how the whole output of a response cut to the budget or
// the output limit is kept: the function saves it and returns the name
// the response shows. By default it goes to a new file in a directory of
// the shell's own under the system's temporary directory, removed by
// Close ([envs.Spool.Save]).
func WithSave(save func(output io.Reader) (string, error)) Option {
	return func(o *options) { o.Save = save }
}

// WithSaveLimit bounds the bytes of one saved output whose middle only a
// spool file holds (default [envs.DefaultSaveLimit]; negative: no bound):
// the file keeps the head and the tail of that middle, and the response
// says how much it leaves out. See [envs.Spool.Fit].
func WithSaveLimit(n int64) Option { return func(o *options) { o.Limits.SaveLimit = n } }

// WithResources sets resource limits on the shell, which every command
// inherits (see [procs.Limits]).
func WithResources(l procs.Limits) Option { return func(o *options) { o.Resources = l } }

// WithEnv adds "KEY=VALUE" variables, applied after the inherited
// environment and the defaults (TERM=dumb, PAGER=cat, ...).
func WithEnv(kv ...string) Option { return func(o *options) { o.Env = append(o.Env, kv...) } }

// WithBash sets the bash executable (default: "bash" looked up in PATH).
func WithBash(path string) Option { return func(o *options) { o.Bash = path } }

// WithSpin sets how long, from typing a command, Execute busy-waits for
// the command's end before it sleeps until the shell answers: the marker
// of a quick command then finds the reading thread running rather than
// asleep. On an idle machine with two processors that took a quarter to a
// third off the round trip of true; with every processor busy it gains
// nothing and may cost a little. It also costs up to d of processor time
// per command that takes longer. Between commands nothing spins. The
// default is [DefaultSpin], or none where the process may use only one
// processor (runtime.NumCPU or GOMAXPROCS is 1), as spinning would only
// hold the shell up there; negative means none.
func WithSpin(d time.Duration) Option { return func(o *options) { o.Spin = d } }

// Shell is a persistent bash on a pseudo-terminal: one process per Shell,
// whose working directory, variables, functions, aliases and background
// jobs carry over from command to command. It is safe for concurrent use:
// commands run one at a time, and Screen and Summary answer while one runs.
// Its screen is [MaxLines] lines high; its summary is [Summary] while the
// shell runs, and [Shell.Summary] says what it is now.
type Shell struct {
	bashPath  string
	startDir  string
	env       []string
	limit     int
	spool     *envs.Spool // the whole output of commands past the limit
	defaults  envs.Defaults
	save      func(io.Reader) (string, error)
	spin      time.Duration
	resources procs.Limits

	turn *envs.Queue // taken by a call for its whole run, and by Close to wait for it

	mu       sync.Mutex // guards the fields below
	p        *proc      // the current shell; it may have ended
	closed   bool
	cwd      string
	lastExit int
	jobs     []string
	running  *job // the command still running after its call gave control back
}

// job is a command still running after its call gave control back.
type job struct {
	command string
	began   time.Time
	pend    *envs.Output // its output since that call, fed by the stream
	last    string       // the last non-empty line of the output returned so far
	waiting string       // the question, when it waits for input
	hidden  bool         // the question asks for a secret
	newline bool         // a newline was typed after the last answer, which did not hold it
	handled bool         // it handled the last Ctrl-C and waits again, with nothing typed since
}

var (
	_ envs.Env             = (*Shell)(nil)
	_ envs.LimitedExecutor = (*Shell)(nil)
	_ envs.Closer          = (*Shell)(nil)
	_ envs.Summarizer      = (*Shell)(nil)
	_ envs.Hinter          = (*Shell)(nil)
)

// New starts a shell. It fails when bash cannot be found or started, or
// when an option is invalid.
func New(opt ...Option) (*Shell, error) {
	var opts options
	for _, o := range opt {
		o(&opts)
	}
	fail := func(format string, args ...any) (*Shell, error) {
		return nil, fmt.Errorf("bash: new: "+format, args...)
	}
	if !term.Supported {
		return fail("bash environments need Linux (they read the terminal's state from /proc)")
	}
	if opts.OutputLimit < 0 {
		return fail("output limit %d: use a positive number of bytes, or leave it out for the default", opts.OutputLimit)
	}
	for _, kv := range opts.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return fail("environment entry %q is not KEY=VALUE", kv)
		}
	}
	dir := opts.Dir
	if dir == "" {
		dir = "."
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return fail("%v", err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fail("directory %q is not a directory", opts.Dir)
	}
	name := opts.Bash
	if name == "" {
		name = "bash"
	}
	bashPath, err := exec.LookPath(name)
	if err != nil {
		return fail("%v", err)
	}
	if err := opts.Resources.Check(); err != nil {
		return fail("%v", err)
	}
	s := &Shell{
		bashPath:  bashPath,
		startDir:  dir,
		env:       environ(opts.Env),
		limit:     opts.OutputLimit,
		spool:     envs.NewSpool("", 0),
		defaults:  opts.Limits,
		save:      opts.Save,
		spin:      spinFor(opts.Spin),
		resources: opts.Resources,
		turn:      envs.NewQueue(),
		cwd:       dir,
	}
	p, err := startProc(bashPath, dir, s.env, s.resources)
	if err != nil {
		return fail("start %s: %v", bashPath, err)
	}
	s.p = p
	return s, nil
}

// spinFor returns how long a command's end is busy-waited for, given
// [WithSpin]: on a machine with one processor, or a process that may
// use one (GOMAXPROCS, which follows a container's CPU limit), the
// default is none.
func spinFor(opt time.Duration) time.Duration {
	switch {
	case opt < 0:
		return 0
	case opt > 0:
		return opt
	case min(runtime.NumCPU(), runtime.GOMAXPROCS(0)) > 1:
		return DefaultSpin
	}
	return 0
}

// Summary returns "Bash shell (ready)".
func (s *Shell) Summary() string { return Summary }

// Hints says that a shell's commands may change and delete anything the
// user may, and reach the network and other programs.
func (s *Shell) Hints() tools.Hints { return tools.Hints{Destructive: true, OpenWorld: true} }

// QuickScreen marks the shell's screen as one that never blocks (see
// orchestrator.QuickScreener): [Shell.Screen] copies fields under a lock
// held briefly.
func (s *Shell) QuickScreen() {}

// Screen shows the working directory, the last exit code, the background
// jobs (when there are any) and how to use the shell. It does not wait for
// a running command.
func (s *Shell) Screen() (envs.Screen, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "Working directory: %s\nLast exit code: %d\n", s.cwd, s.lastExit)
	if len(s.jobs) > 0 {
		fmt.Fprintf(&b, "Background jobs: %s\n", strings.Join(s.jobs, ", "))
	}
	if j := s.running; j != nil {
		fmt.Fprintf(&b, "Running: %s (for %v)\n", envs.Abbrev(j.command), envs.Round(time.Since(j.began)))
		if j.waiting != "" {
			fmt.Fprintf(&b, "Waiting for input: %q (the next command is typed as the answer)\n", j.waiting)
		}
	}
	b.WriteString("\nAny bash command. Use & for background jobs.")
	return envs.Screen{Content: b.String(), MaxLines: MaxLines}, nil
}

// Close ends the shell and everything it started, background jobs
// included: a hangup, then SIGTERM, then SIGKILL. It waits for a running
// command to return. It is idempotent; commands after Close fail with
// [envs.ErrClosed].
func (s *Shell) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	p := s.p
	s.mu.Unlock()
	err := p.stop()
	_ = s.turn.Wait(context.Background(), time.Time{})
	defer s.turn.Done()
	s.mu.Lock()
	last := s.p
	s.mu.Unlock()
	if last != p {
		err = errors.Join(err, last.stop())
	}
	if err = errors.Join(err, s.spool.Close()); err != nil {
		return fmt.Errorf("bash: close: %w", err)
	}
	return nil
}
