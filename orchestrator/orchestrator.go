package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tools"
)

// ScreenName is the name of the orchestrator's own screen, which lists spec
// files that failed to load. No environment may take this name.
const ScreenName = "orchestrator"

// namePattern is what an environment name must match: an identifier, so it
// can be typed after a fence (```name) and used as a section key.
var namePattern = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// Orchestrator holds environments by name, runs commands in them and collects
// their screens. It is safe for concurrent use; commands to the same
// environment run one at a time, commands to different environments may run
// at once. The zero value is not usable; create one with [New].
type Orchestrator struct {
	sess        *session.Session // receives CommandExecuted; may be nil
	maxLines    int              // screen height when an environment leaves it at 0
	maxLine     int              // longest protocol line Serve accepts
	interactive InteractiveFactory
	processes   ProcessFactory

	// mu guards envs, names, loadErrs and closed.
	mu       sync.RWMutex
	envs     map[string]*entry
	names    []string // sorted environment names
	loadErrs []error  // spec files that failed to load
	closed   bool

	closeOnce sync.Once
	closeErr  error
}

// entry is one registered environment.
type entry struct {
	name string
	env  envs.Env
	reg  registration

	run sync.Mutex // serializes Execute calls on env

	toolOnce sync.Once // makes tool, the environment's command tool, once
	tool     *tools.Tool
	toolErr  error
}

// Option configures an Orchestrator.
type Option func(*Orchestrator)

// WithSession makes the orchestrator dispatch a [CommandExecuted] event to
// sess for every command an environment runs. New installs the usage slice
// and the event name in sess ([RegisterSession]).
func WithSession(sess *session.Session) Option {
	return func(o *Orchestrator) { o.sess = sess }
}

// WithMaxLines sets the screen height used for environments whose screen
// leaves MaxLines at 0 (default [DefaultMaxLines]).
func WithMaxLines(n int) Option {
	return func(o *Orchestrator) { o.maxLines = n }
}

// WithMaxLineBytes sets the longest line [Orchestrator.Serve] accepts
// (default [DefaultMaxLineBytes]). Longer lines are answered with an error
// message and discarded without being held in memory.
func WithMaxLineBytes(n int) Option {
	return func(o *Orchestrator) { o.maxLine = n }
}

// New returns an orchestrator with no environments.
func New(opts ...Option) (*Orchestrator, error) {
	o := &Orchestrator{
		maxLines: DefaultMaxLines,
		maxLine:  DefaultMaxLineBytes,
		envs:     make(map[string]*entry),
	}
	for _, opt := range opts {
		opt(o)
	}
	if o.maxLines <= 0 {
		return nil, fmt.Errorf("orchestrator: new: max lines %d: want a positive number", o.maxLines)
	}
	if o.maxLine <= 0 {
		return nil, fmt.Errorf("orchestrator: new: max line bytes %d: want a positive number", o.maxLine)
	}
	if o.sess != nil {
		if err := RegisterSession(o.sess); err != nil {
			return nil, fmt.Errorf("orchestrator: new: %w", err)
		}
	}
	return o, nil
}

// Session returns the session given with [WithSession], or nil.
func (o *Orchestrator) Session() *session.Session { return o.sess }

// RegisterOption configures one environment's registration.
type RegisterOption func(*registration)

type registration struct {
	onDemand    bool
	title       string
	description string
	tools       []*tools.Tool
}

// OnDemand declares the environment on demand: its prompt section renders as
// its one-line summary until the environment is first used or the model
// opens the section, and its section's tools are offered only once it is
// open. Other environments render in full from the first turn, and are
// summarized only when a token budget demotes them.
func OnDemand() RegisterOption {
	return func(r *registration) { r.onDemand = true }
}

// Title sets the title of the environment's prompt section (default: the
// name).
func Title(title string) RegisterOption {
	return func(r *registration) { r.title = title }
}

// Description sets the environment's one-line summary, used when the
// environment does not implement [envs.Summarizer].
func Description(line string) RegisterOption {
	return func(r *registration) { r.description = line }
}

// Tools attaches tools to the environment's prompt section besides its
// command tool ([Orchestrator.CommandTool]): they are offered while the
// section renders in full.
func Tools(ts ...*tools.Tool) RegisterOption {
	return func(r *registration) { r.tools = append(r.tools, ts...) }
}

// Register adds env under name. The name must be an identifier (letters,
// digits and underscores, not starting with a digit), unused, and not
// [ScreenName]. Registering after [Orchestrator.Close] is an error.
func (o *Orchestrator) Register(name string, env envs.Env, opts ...RegisterOption) error {
	if err := ValidName(name); err != nil {
		return fmt.Errorf("orchestrator: register: %w", err)
	}
	if env == nil {
		return fmt.Errorf("orchestrator: register %s: nil environment", name)
	}
	var reg registration
	for _, opt := range opts {
		opt(&reg)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return fmt.Errorf("orchestrator: register %s: orchestrator is closed", name)
	}
	if _, ok := o.envs[name]; ok {
		return fmt.Errorf("orchestrator: register %s: an environment with that name is already registered", name)
	}
	o.envs[name] = &entry{name: name, env: env, reg: reg}
	i, _ := slices.BinarySearch(o.names, name)
	o.names = slices.Insert(o.names, i, name)
	return nil
}

// ValidName reports whether name can name an environment: an identifier
// (`^[a-zA-Z_][a-zA-Z0-9_]*$`) other than [ScreenName].
func ValidName(name string) error {
	if !namePattern.MatchString(name) {
		return fmt.Errorf("invalid environment name %q: use an identifier (letters, digits and underscores, not starting with a digit)", name)
	}
	if name == ScreenName {
		return fmt.Errorf("invalid environment name %q: the name is reserved for the orchestrator's own screen", name)
	}
	return nil
}

// Names returns the registered environment names, sorted.
func (o *Orchestrator) Names() []string {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return slices.Clone(o.names)
}

// Env returns the environment registered under name.
func (o *Orchestrator) Env(name string) (envs.Env, bool) {
	o.mu.RLock()
	defer o.mu.RUnlock()
	e, ok := o.envs[name]
	if !ok {
		return nil, false
	}
	return e.env, true
}

// Result is what one command produced: the environment's response and every
// screen, collected after the command.
type Result struct {
	Response envs.Response
	// Screens maps environment names (and [ScreenName], when spec files failed
	// to load) to their truncated screens.
	Screens map[string]envs.Screen
}

// Execute runs command in the environment called env and collects every
// screen afterwards. Failures are responses, never Go errors:
//
//   - an unknown environment: success false,
//     "Unknown environment: <name>\nAvailable: <sorted names, comma-separated>";
//   - an environment that returns an error or panics: success false,
//     "Environment error in <name>:\n" and the error text, or the panic value
//     and the stack of the panicking goroutine;
//   - a closed orchestrator: success false, saying so.
//
// Every command that reaches an environment is dispatched to the session as a
// [CommandExecuted] event; commands to unknown environments are not.
func (o *Orchestrator) Execute(ctx context.Context, env, command string) Result {
	resp := o.execute(ctx, env, command)
	return Result{Response: resp, Screens: o.Screens()}
}

func (o *Orchestrator) execute(ctx context.Context, name, command string) envs.Response {
	o.mu.RLock()
	e, ok := o.envs[name]
	closed := o.closed
	o.mu.RUnlock()
	if closed {
		return envs.Response{Output: "The orchestrator is shut down; no environment accepts commands.", Success: false}
	}
	if !ok {
		return envs.Response{Output: o.unknown(name), Success: false}
	}
	e.run.Lock()
	start := time.Now()
	resp := runCommand(ctx, e, command)
	elapsed := time.Since(start)
	e.run.Unlock()
	if o.sess != nil {
		// The reducer cannot fail; a failure here would be a bug in a reducer
		// someone else registered for this event, which is theirs to report.
		_ = o.sess.Dispatch(CommandExecuted{
			Environment: name,
			Command:     eventCommand(command),
			Success:     resp.Success,
			Duration:    elapsed,
		})
	}
	return resp
}

func (o *Orchestrator) unknown(name string) string {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return "Unknown environment: " + name + "\nAvailable: " + strings.Join(o.names, ", ")
}

// runCommand calls Execute, turning an error or a panic into a failed
// response.
func runCommand(ctx context.Context, e *entry, command string) (resp envs.Response) {
	defer func() {
		if p := recover(); p != nil {
			resp = envs.Response{Output: envErrorPrefix(e.name) + panicTrace(p, "runCommand"), Success: false}
		}
	}()
	resp, err := e.env.Execute(ctx, command)
	if err != nil {
		return envs.Response{Output: envErrorPrefix(e.name) + err.Error(), Success: false}
	}
	return resp
}

func envErrorPrefix(name string) string { return "Environment error in " + name + ":\n" }

// pkgPrefix starts the names of this package's functions in a stack trace.
const pkgPrefix = "github.com/unfold-dev/unfold/orchestrator."

// panicTrace formats a recovered panic value with the stack of the panicking
// goroutine, from the frame that panicked down to the call of caller (a
// function of this package), so the trace shows the environment's code and
// not the orchestrator's. It must be called from the deferred function that
// recovered.
func panicTrace(p any, caller string) string {
	stack := string(debug.Stack())
	// Drop the frames of debug.Stack, the deferred function and the runtime's
	// panic itself: the first line after "panic(" and its file line is the
	// code that panicked.
	if i := strings.Index(stack, "\npanic("); i >= 0 {
		head, _, _ := strings.Cut(stack, "\n")
		rest := stack[i+1:]
		// Skip "panic(...)" and its "\t/path/panic.go:N" line.
		for range 2 {
			if _, after, ok := strings.Cut(rest, "\n"); ok {
				rest = after
			}
		}
		stack = head + "\n" + rest
	}
	if i := strings.Index(stack, "\n"+pkgPrefix+caller+"("); i >= 0 {
		stack = stack[:i]
	}
	return fmt.Sprintf("panic: %v\n\n%s", p, strings.TrimRight(stack, "\n"))
}

// Close shuts down every environment that implements [envs.Closer], each
// once, and returns all their errors joined (a panic in Close counts as an
// error); none is skipped because another failed. Later calls return the
// same result. Commands after Close get a failed response.
func (o *Orchestrator) Close() error {
	o.closeOnce.Do(func() {
		o.mu.Lock()
		o.closed = true
		list := make([]*entry, 0, len(o.names))
		for _, n := range o.names {
			list = append(list, o.envs[n])
		}
		o.mu.Unlock()
		var errs []error
		for _, e := range list {
			if err := closeEnv(e); err != nil {
				errs = append(errs, fmt.Errorf("orchestrator: close %s: %w", e.name, err))
			}
		}
		o.closeErr = errors.Join(errs...)
	})
	return o.closeErr
}

func closeEnv(e *entry) (err error) {
	c, ok := e.env.(envs.Closer)
	if !ok {
		return nil
	}
	defer func() {
		if p := recover(); p != nil {
			err = errors.New(panicTrace(p, "closeEnv"))
		}
	}()
	return c.Close()
}
