package orchestrator

import (
	"cmp"
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
var namePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`) })

// Orchestrator holds environments by name, runs commands in them and collects
// their screens. It is safe for concurrent use; commands to the same
// environment run one at a time, commands to different environments may run
// at once. The zero value is not usable; create one with [New]. Names pass
// [ValidName]; [Orchestrator.LoadErrors] lists the spec files that fail to
// load.
type Orchestrator struct {
	sess        *session.Session // receives CommandExecuted; may be nil
	maxLines    int              // screen height when an environment leaves it at 0
	maxLine     int              // longest protocol line Serve accepts
	interactive InteractiveFactory
	processes   ProcessFactory
	budget      int    // tokens a response may take, unless a call or registration says; 0: the environment's default
	project     string // the project directory, for output saved under context/output; "" when none
	saveLimit   int64  // bytes one saved output may take; 0: envs.DefaultSaveLimit, negative: no bound
	dirLimit    int64  // bytes the outputs saved under context/output take together; negative: no bound

	// temp holds the outputs saved without a project, in a directory of
	// its own that Close removes once the saves under way are done.
	temp *envs.Spool
	// fixedSpecs says why spec files that change after LoadSpecs are not
	// loaded (WithoutSpecReload); "" when they are.
	fixedSpecs string
	// pins are the programs of the spec files loaded while fixedSpecs is
	// set (see ProgramFile); pinsMu guards them.
	pinsMu sync.Mutex
	pins   []*programPin

	// mu guards envs, names, loadErrs, gen, specs, replaced and closed.
	mu   sync.RWMutex
	envs map[string]*entry
	// replaced holds, by name, what the next command to an environment
	// that its spec file's change replaced or removed must be told.
	replaced map[string]replacedNote
	names    []string // sorted environment names
	loadErrs []error  // spec files that failed to load
	gen      uint64   // counts the changes to envs and to loadErrs (see Generation)
	specs    *specSet // the spec files loaded, to pick up their changes; nil before LoadSpecs
	closed   bool

	reloadMu sync.Mutex     // serializes reloads of the spec files, and guards specs' fields
	retiring sync.WaitGroup // the closes of environments a reload replaced or removed

	closeOnce sync.Once
	closeErr  error
}

// entry is one registered environment.
type entry struct {
	name string
	env  envs.Env
	exec envs.LimitedExecutor // env itself, or env run by envs.Background
	reg  registration
	spec string // the spec file it came from, "" when registered by code

	mu     sync.Mutex // guards hidden, running, used and retired
	hidden bool       // the command runs on and waits for a secret: the next text is not recorded
	// running is the command that ran on when the last call returned; ""
	// when none did.
	running string
	used    bool // a command was sent to it, or waits to be
	// retired is how a reload of the spec files stopped the environment,
	// for a command under way then; nil while it is registered.
	retired *retirement

	shot  shot // its screen as last drawn for the agent
	quick bool // env is a QuickScreener: its screen is drawn by the caller

	toolOnce sync.Once // makes tool, the environment's command tool, once
	tool     *tools.Tool
	toolErr  error
}

// Option configures an [Orchestrator]: [WithSession], [WithMaxLines],
// [WithMaxLineBytes], [WithOutputBudget], [WithProject],
// [WithSavedOutputLimits], [WithInteractive], [WithProcesses] and
// [WithoutSpecReload].
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

// DefaultOutputBudget is the token budget of a response's output that
// the command-line front ends set (see [WithOutputBudget]).
const DefaultOutputBudget = envs.DefaultBudget

// WithOutputBudget bounds the tokens of every response's output (see
// [envs.Limits.Fit]) unless a call, or the environment's registration
// ([Budget]), sets another bound; a negative n means no bound. Without
// it, each environment's own default applies.
func WithOutputBudget(n int) Option {
	return func(o *Orchestrator) { o.budget = n }
}

// WithProject sets the project directory: the whole output of a response
// cut to its budget, or to its environment's output limit, is saved under
// dir/context/output, where the editor
// can open it, and responses name it by its path relative to dir. The
// file is made through an [os.Root] on dir, so a context directory that
// links out of dir fails the save rather than writing there. Without it,
// such output goes to a directory of the orchestrator's own under the
// system's temporary directory, which [Orchestrator.Close] removes.
func WithProject(dir string) Option {
	return func(o *Orchestrator) { o.project = dir }
}

// DefaultSavedOutputTotal is how many bytes the outputs saved under
// context/output take together by default (see [WithSavedOutputLimits]).
const DefaultSavedOutputTotal = envs.DefaultSaveTotal

// WithSavedOutputLimits bounds the output saved under the project's
// context/output ([WithProject]). One saved output takes at most file
// bytes ([envs.Limits.SaveLimit]; 0: [envs.DefaultSaveLimit], 64 MiB):
// of output past an environment's memory limit that does not fit, the
// file keeps the head and the tail, marks the place of what it leaves
// out, and the response says so. The saved outputs take at most total
// bytes together (0: [DefaultSavedOutputTotal], 256 MiB): saving a new
// one removes the oldest files saved there (named <name>-<ten digits>.txt)
// past that, never other files, and never the new one. A negative value
// means no bound.
func WithSavedOutputLimits(file, total int64) Option {
	return func(o *Orchestrator) { o.saveLimit, o.dirLimit = file, total }
}

// New returns an orchestrator with no environments.
func New(opts ...Option) (*Orchestrator, error) {
	o := &Orchestrator{
		maxLines: DefaultMaxLines,
		maxLine:  DefaultMaxLineBytes,
		envs:     make(map[string]*entry),
		temp:     envs.NewSpool("", 0),
	}
	for _, opt := range opts {
		opt(o)
	}
	o.dirLimit = cmp.Or(o.dirLimit, DefaultSavedOutputTotal)
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
	budget      int
	// limits are the environment's own soft limits: those envs.Background
	// runs it with, or its spec file's, which its command tool names.
	limits envs.Defaults
	hard   bool // the spec file's timeout interrupts commands
	hints  *tools.Hints
}

// specLimits gives the registration the limits of the spec file s, for
// its command tool to name.
func specLimits(s specFile) RegisterOption {
	return func(r *registration) { r.limits, r.hard = s.limits(), s.Hard && s.Timeout > 0 }
}

// Budget bounds the tokens of the environment's responses, unless a call
// sets another bound (see [WithOutputBudget]).
func Budget(tokens int) RegisterOption {
	return func(r *registration) { r.budget = tokens }
}

// Limits sets the soft limits of an environment that is not an
// [envs.LimitedExecutor] (the orchestrator runs its commands in the
// background, see [envs.Background]); a LimitedExecutor has its own.
func Limits(d envs.Defaults) RegisterOption {
	return func(r *registration) { r.limits = d }
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

// Hints says what the environment's commands do to the world around them,
// over what the environment says itself ([envs.Hinter]): its command tool
// carries them.
func Hints(h tools.Hints) RegisterOption {
	return func(r *registration) { r.hints = &h }
}

// Register adds env under name. The name must be an identifier (letters,
// digits and underscores, not starting with a digit), not [ScreenName],
// and unused, even ignoring case (the environments' prompt sections are
// keyed by the lower-case name, [SectionKey]). No tool given with [Tools]
// may share its name with another tool of the environments, an
// environment's command tool, or a front end's own tool
// ([ReservedNames]). Registering after [Orchestrator.Close] is an error.
func (o *Orchestrator) Register(name string, env envs.Env, opts ...RegisterOption) error {
	return o.register(name, env, "", opts...)
}

// register registers env, from the spec file spec ("" for code).
func (o *Orchestrator) register(name string, env envs.Env, spec string, opts ...RegisterOption) error {
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
	if err := o.clash(name, reg.tools); err != nil {
		return fmt.Errorf("orchestrator: register %s: %w", name, err)
	}
	o.add(&entry{name: name, env: env, reg: reg, spec: spec})
	return nil
}

// clash returns why an environment called name, with the extra tools ts,
// cannot stand beside those registered, under o.mu, or nil. Names equal
// but for case clash as well: their prompt sections would have the same
// key ([SectionKey]), and a front end could offer neither. A tool name
// clashes with another tool's or command tool's name, as a front end
// offers them side by side.
func (o *Orchestrator) clash(name string, ts []*tools.Tool) error {
	for _, other := range o.names {
		if other == name {
			return errors.New("an environment with that name is already registered")
		}
		if strings.EqualFold(other, name) {
			return fmt.Errorf("the environment %s is registered, whose name differs only in case: their prompt sections would have the same key %q; rename one", other, strings.ToLower(name))
		}
	}
	// owner maps each tool name taken to what takes it.
	owner := map[string]string{}
	for _, n := range reservedNames {
		owner[n] = "the front ends' own tool"
	}
	for _, other := range o.names {
		owner[other] = "the command tool of " + other
		for _, t := range o.envs[other].reg.tools {
			owner[t.Name()] = "a tool of " + other
		}
	}
	if by, ok := owner[name]; ok {
		return fmt.Errorf("its command tool would be named %s, as is %s; rename it", name, by)
	}
	owner[name] = "its own command tool"
	for _, t := range ts {
		if t == nil {
			return errors.New("a nil tool among its tools")
		}
		if by, ok := owner[t.Name()]; ok {
			return fmt.Errorf("its tool %s has the name of %s; rename one", t.Name(), by)
		}
		owner[t.Name()] = "another of its tools"
	}
	return nil
}

// add registers e, under o.mu.
func (o *Orchestrator) add(e *entry) {
	_, e.quick = e.env.(QuickScreener)
	if le, ok := e.env.(envs.LimitedExecutor); ok {
		e.exec = le
	} else {
		e.exec = envs.NewBackground(e.env, e.reg.limits)
	}
	o.envs[e.name] = e
	i, _ := slices.BinarySearch(o.names, e.name)
	o.names = slices.Insert(o.names, i, e.name)
	o.gen++
}

// remove unregisters the environment called name, under o.mu, and returns
// it.
func (o *Orchestrator) remove(name string) *entry {
	e := o.envs[name]
	delete(o.envs, name)
	if i, ok := slices.BinarySearch(o.names, name); ok {
		o.names = slices.Delete(o.names, i, i+1)
	}
	o.gen++
	return e
}

// ValidName reports whether name can name an environment: an identifier
// (`^[a-zA-Z_][a-zA-Z0-9_]*$`) other than [ScreenName].
func ValidName(name string) error {
	if !namePattern().MatchString(name) {
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

// SpecFile returns the spec file the environment called name was loaded
// from, relative to the project directory (like "env/db.json"); "" when
// code registered it, or there is no such environment.
func (o *Orchestrator) SpecFile(name string) string {
	o.mu.RLock()
	defer o.mu.RUnlock()
	if e, ok := o.envs[name]; ok {
		return e.spec
	}
	return ""
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

// Command is one command for an environment, with the limits its caller
// sets (see [envs.Limits]).
type Command struct {
	Environment string
	Text        string
	// Timeout gives control back this long after the command arrived, the
	// command running on (a soft limit), or with Hard interrupts it; 0
	// means the environment's default wait.
	Timeout time.Duration
	Hard    bool
	// Quiet gives control back once the output has not changed for this
	// long; 0 means the environment's default, negative never.
	Quiet time.Duration
	// Budget bounds the tokens of the response's output; 0 means the
	// environment's (see [WithOutputBudget]), negative no bound.
	Budget int
	// Arrived is when the command arrived, which its Timeout counts from
	// even while it waits behind another command; zero means now.
	Arrived time.Time
}

// Execute runs command in the environment called env with its default
// limits; see [Orchestrator.Run].
func (o *Orchestrator) Execute(ctx context.Context, env, command string) Result {
	return o.Run(ctx, Command{Environment: env, Text: command})
}

// Run runs cmd in its environment and collects every screen afterwards.
// A command still running when control comes back has Running set in its
// response, and the next command to that environment continues it (see
// [envs.LimitedExecutor]); environments that are not LimitedExecutors run
// under [envs.Background]. Commands to one environment wait their turn in
// the order they arrive, each until its own deadline; commands to
// different environments run at once. Spec files added, changed or
// removed since the last command are picked up first (see
// [Orchestrator.LoadSpecs]). Failures are responses, never Go errors:
//
//   - an unknown environment: success false,
//     "Unknown environment: <name>\nAvailable: <sorted names, comma-separated>"
//     ("Available: none; ..." and why when there is none);
//   - an environment that returns an error or panics: success false,
//     "Environment error in <name>:\n" and the error text, or the panic value
//     and the stack of the panicking goroutine;
//   - a closed orchestrator: success false, saying so;
//   - a command under way when a reload stops its environment (its spec
//     file changed or was removed): success false, saying so, which file,
//     and whether the environment starts again with the next command; one
//     that ended well before the program was stopped keeps its output and
//     success, the note after it.
//
// Every command that reaches an environment is dispatched to the session as a
// [CommandExecuted] event (the text of an answer to a question asking for
// a secret is recorded as hidden); commands to unknown environments are
// not.
func (o *Orchestrator) Run(ctx context.Context, cmd Command) Result {
	if cmd.Arrived.IsZero() {
		cmd.Arrived = time.Now()
	}
	resp := o.run(ctx, cmd)
	return Result{Response: resp, Screens: o.screensAfter(ctx, cmd)}
}

func (o *Orchestrator) run(ctx context.Context, cmd Command) envs.Response {
	arrived := cmd.Arrived
	if arrived.IsZero() {
		arrived = time.Now()
	}
	o.ReloadSpecs()
	name := cmd.Environment
	o.mu.RLock()
	e, ok := o.envs[name]
	closed := o.closed
	o.mu.RUnlock()
	if closed {
		return envs.Response{Output: "The orchestrator is shut down; no environment accepts commands.", Success: false}
	}
	note, noted := o.takeReplaced(name)
	if !ok {
		out := o.unknown(name)
		if noted {
			out = note.text + "\n" + out
		}
		return envs.Response{Output: out, Success: false}
	}
	if noted && note.lost {
		// What comes now was meant for the command that was lost: it is
		// not sent to the new program.
		out := note.text
		if cmd.Text != "" && !envs.IsInterrupt(cmd.Text) && !envs.IsEndOfInput(cmd.Text) {
			out += "\n[The text was not sent: the command it was meant for was lost. Send it again to run it as a command in the new program.]"
		}
		return envs.Response{Output: out, Success: false}
	}
	limits := envs.Limits{Quiet: cmd.Quiet, Budget: cmp.Or(cmd.Budget, e.reg.budget, o.budget), Save: o.saver(name), SaveLimit: o.saveLimit}
	if cmd.Timeout > 0 {
		deadline := arrived.Add(cmd.Timeout)
		if cmd.Hard {
			// The call waits for the command up to its deadline, which
			// interrupts it: no soft limit comes first.
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, deadline)
			defer cancel()
			limits.Until = deadline.Add(hardGrace)
			if limits.Quiet == 0 {
				limits.Quiet = -1
			}
		} else {
			limits.Until = deadline
		}
	}
	e.mu.Lock()
	recorded := eventCommand(cmd.Text)
	if e.hidden && cmd.Text != "" && !envs.IsInterrupt(cmd.Text) && !envs.IsEndOfInput(cmd.Text) {
		recorded = hiddenInput
	}
	// Before the command runs: a spec change that cuts off the first
	// command still finds a program whose state is lost to note.
	e.used = true
	e.mu.Unlock()
	start := time.Now()
	resp := atEnd(ctx, o.runCommand(ctx, e, cmd.Text, limits))
	elapsed := time.Since(start)
	e.mu.Lock()
	retired := e.retired
	e.mu.Unlock()
	if retired != nil {
		resp = retired.response(e, resp)
	}
	if noted {
		resp.Output = strings.TrimSuffix(note.text+"\n"+resp.Output, "\n")
	}
	// An environment of someone else's may pass a program's question on
	// whole; it goes to the model as it is.
	resp.Prompt = envs.ClipQuestion(resp.Prompt)
	e.mu.Lock()
	e.hidden = resp.Running && resp.Hidden
	switch {
	case !resp.Running:
		e.running = ""
	case e.running == "":
		e.running = cmd.Text
	}
	e.mu.Unlock()
	if o.sess != nil {
		// The reducer cannot fail; a failure here would be a bug in a reducer
		// someone else registered for this event, which is theirs to report.
		_ = o.sess.Dispatch(CommandExecuted{
			Environment: name,
			Command:     recorded,
			Success:     resp.Success,
			Duration:    elapsed,
		})
	}
	return resp
}

// hardGrace is how long past a hard deadline a call may wait for the
// interrupted command to stop before control comes back anyway.
const hardGrace = 10 * time.Second

// hiddenInput is what the session records of a secret typed to a command.
const hiddenInput = "[hidden input: the command asked for a secret]"

func (o *Orchestrator) unknown(name string) string {
	o.mu.RLock()
	defer o.mu.RUnlock()
	if len(o.names) == 0 {
		return "Unknown environment: " + name + "\nAvailable: none; no environment is loaded (a spec file that failed to load is named on the orchestrator's screen)"
	}
	return "Unknown environment: " + name + "\nAvailable: " + strings.Join(o.names, ", ")
}

// runCommand calls Execute, turning an error or a panic into a failed
// response.
func (o *Orchestrator) runCommand(ctx context.Context, e *entry, command string, limits envs.Limits) (resp envs.Response) {
	defer func() {
		if p := recover(); p != nil {
			resp = envs.Response{Output: envErrorPrefix(e.name) + panicTrace(p, "(*Orchestrator).runCommand", debug.Stack()), Success: false}
		}
	}()
	resp, err := e.exec.ExecuteLimited(ctx, command, limits)
	var pe *envs.PanicError
	if errors.As(err, &pe) {
		// A panic on the goroutine envs.Background ran the command on.
		return envs.Response{Output: envErrorPrefix(e.name) + panicTrace(pe.Value, "", pe.Stack), Success: false}
	}
	if errors.Is(err, envs.ErrClosed) {
		o.mu.RLock()
		closed := o.closed
		o.mu.RUnlock()
		if closed {
			// Close closed the environment under the command.
			return envs.Response{Output: "The orchestrator shut down while the command ran in " + e.name + ", and closed it; no environment accepts commands.", Success: false}
		}
	}
	if err != nil {
		return envs.Response{Output: envErrorPrefix(e.name) + err.Error(), Success: false}
	}
	return resp
}

func envErrorPrefix(name string) string { return "Environment error in " + name + ":\n" }

// pkgPrefix starts the names of this package's functions in a stack trace.
const pkgPrefix = "github.com/unfold-dev/unfold/orchestrator."

// envsBackground starts the frames of envs.Background in a stack trace,
// below an environment's code run on its goroutine.
const envsBackground = "github.com/unfold-dev/unfold/envs.(*Background)."

// panicTrace formats a recovered panic value with the stack of the panicking
// goroutine (as debug.Stack gave it, in the deferred function that
// recovered), from the frame that panicked down to the call of caller (a
// function of this package; "" for all), so the trace shows the
// environment's code and not the orchestrator's.
func panicTrace(p any, caller string, raw []byte) string {
	stack := string(raw)
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
	if i := strings.Index(stack, "\n"+pkgPrefix+caller+"("); caller != "" && i >= 0 {
		stack = stack[:i]
	} else if i := strings.Index(stack, "\n"+envsBackground); caller == "" && i >= 0 {
		stack = stack[:i]
	}
	return fmt.Sprintf("panic: %v\n\n%s", p, strings.TrimRight(stack, "\n"))
}

// Close shuts down every environment that implements [envs.Closer], each
// once, and returns all their errors joined (a panic in Close counts as an
// error); none is skipped because another failed. It then removes the
// outputs saved without a project ([WithProject]). Later calls return the
// same result. Commands after Close get a failed response.
func (o *Orchestrator) Close() error {
	o.closeOnce.Do(func() {
		o.reloadMu.Lock()
		o.mu.Lock()
		o.closed = true
		if o.specs != nil {
			o.specs.stopWatch()
		}
		o.reloadMu.Unlock()
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
		// Added to only before closed was set.
		o.retiring.Wait()
		// After the environments: a command still running until its
		// environment closed saves its output before the directory goes.
		if err := o.temp.Close(); err != nil {
			errs = append(errs, fmt.Errorf("orchestrator: remove the saved outputs: %w", err))
		}
		o.closeErr = errors.Join(errs...)
	})
	return o.closeErr
}

func closeEnv(e *entry) (err error) {
	c, ok := e.exec.(envs.Closer)
	if !ok {
		return nil
	}
	defer func() {
		if p := recover(); p != nil {
			err = errors.New(panicTrace(p, "closeEnv", debug.Stack()))
		}
	}()
	return c.Close()
}
