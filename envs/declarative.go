package envs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/unfold-dev/unfold/internal/utf8cut"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tools"
)

// DefaultMaxLines is the screen height of a [Declarative] environment whose
// spec leaves MaxLines at zero.
const DefaultMaxLines = 100

// maxEchoedName bounds how much of an unknown command's name a response
// repeats, in bytes.
const maxEchoedName = 80

// cancelGrace is how long Execute waits, after its context is done, for a
// handler to return its own response before giving up on it.
const cancelGrace = 100 * time.Millisecond

// DeclarativeSpec declares a [Declarative] environment.
type DeclarativeSpec struct {
	// Description says in one line what the environment is for. It is the
	// environment's summary and, without State, its state display.
	// Required.
	Description string
	// Commands are the environment's commands, in the order the screen lists
	// them. At least one; names (first words of the signatures) must be
	// unique.
	Commands []Command
	// State, when set, returns the state display shown above "Commands:".
	// It is called by Screen, possibly while a handler runs on another
	// goroutine: it must synchronize with the handlers on whatever state
	// they share, must not wait for a running handler, and should be fast.
	State func() string
	// MaxLines is the screen height the orchestrator shows; 0 means
	// [DefaultMaxLines].
	MaxLines int
	// Close, when set, releases the environment's resources. It runs once,
	// on the first call of [Declarative.Close].
	Close func() error
	// Hints, when set, say what the commands do to the world around them
	// ([Hinter]); nil means [tools.AssumedHints].
	Hints *tools.Hints
}

// Declarative is an environment built from a list of [Command] values. It
// routes each command text to a command by its first word and shows a help
// screen that is long for commands not used yet and short for used ones
// (see the package documentation for the exact format). Usage is recorded in
// a session as [CommandUsed] events.
//
// Handlers run one at a time. Screen never waits for a running handler.
// Create a Declarative with [NewDeclarative]; it is safe for concurrent use.
type Declarative struct {
	name     string
	desc     string
	sess     *session.Session
	state    func() string
	maxLines int
	onClose  func() error
	hints    tools.Hints

	cmds      []Command
	byName    map[string]int // command name -> index in cmds and help
	help      []help
	available string // sorted names, comma-separated

	// sem holds one token while a handler runs, so handlers run one at a
	// time; a handler abandoned after a cancel keeps it until it returns.
	sem chan struct{}

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error // written once inside closeOnce
}

var (
	_ Env        = (*Declarative)(nil)
	_ Closer     = (*Declarative)(nil)
	_ Summarizer = (*Declarative)(nil)
	_ Hinter     = (*Declarative)(nil)
)

// NewDeclarative returns the environment called name (an identifier, used
// to fence examples and to key usage) with the commands of spec, recording
// usage in sess. A nil sess gives the environment a private session. It
// fails, saying what to fix, on a bad name, a missing description, no
// commands, a bad command or a duplicate command name, or when the usage
// slice cannot be registered in sess.
func NewDeclarative(name string, sess *session.Session, spec DeclarativeSpec) (*Declarative, error) {
	fail := func(format string, args ...any) (*Declarative, error) {
		return nil, fmt.Errorf("envs: new declarative %q: "+format, append([]any{name}, args...)...)
	}
	if !isIdentifier(name) {
		return fail("the name must be an identifier (a letter or _, then letters, digits or _)")
	}
	desc := strings.TrimSpace(spec.Description)
	switch {
	case desc == "":
		return fail("empty description; say in one line what the environment is for")
	case strings.ContainsAny(desc, "\r\n"):
		return fail("description spans lines; keep it to one")
	case len(spec.Commands) == 0:
		return fail("no commands; give at least one")
	case spec.MaxLines < 0:
		return fail("MaxLines is %d; use 0 for the default or a positive height", spec.MaxLines)
	}
	if sess == nil {
		sess = session.New()
	}
	if err := RegisterUsage(sess); err != nil {
		return fail("%w", err)
	}
	d := &Declarative{
		name:     name,
		desc:     desc,
		sess:     sess,
		state:    spec.State,
		maxLines: spec.MaxLines,
		onClose:  spec.Close,
		cmds:     slices.Clone(spec.Commands),
		byName:   make(map[string]int, len(spec.Commands)),
		sem:      make(chan struct{}, 1),
		hints:    tools.AssumedHints,
	}
	if spec.Hints != nil {
		d.hints = *spec.Hints
	}
	if d.maxLines == 0 {
		d.maxLines = DefaultMaxLines
	}
	names := make([]string, 0, len(d.cmds))
	for i, c := range d.cmds {
		if err := c.validate(); err != nil {
			return fail("command %d: %v", i+1, err)
		}
		n := c.Name()
		if _, dup := d.byName[n]; dup {
			return fail("command %d: name %q is already used by another command", i+1, n)
		}
		d.byName[n] = i
		d.help = append(d.help, newHelp(name, c))
		names = append(names, n)
	}
	slices.Sort(names)
	d.available = strings.Join(names, ", ")
	return d, nil
}

// Name returns the environment's name.
func (d *Declarative) Name() string { return d.name }

// Summary returns the environment's one-line description.
func (d *Declarative) Summary() string { return d.desc }

// Hints returns what the commands do to the world around them, as the spec
// says ([tools.AssumedHints] when it does not).
func (d *Declarative) Hints() tools.Hints { return d.hints }

// Session returns the session that records the environment's usage.
func (d *Declarative) Session() *session.Session { return d.sess }

// Execute routes command to the command named by its first word and runs
// its handler. An unknown name fails with "Unknown command: <name>" and the
// available names; empty text fails with "Empty command" and the available
// names; a handler error or panic fails with "Error: <message>". A known
// command is recorded as used before its handler runs, whatever the outcome.
//
// Cancelling ctx interrupts the command: the handler sees the cancellation
// and its response is returned; a handler that does not return soon after
// is left to finish on its own, Execute returns an "Interrupted" failure,
// and later commands wait for it. After [Declarative.Close], Execute returns
// an error wrapping [ErrClosed].
func (d *Declarative) Execute(ctx context.Context, command string) (Response, error) {
	if d.closed.Load() {
		return Response{}, fmt.Errorf("envs: %s: execute: %w", d.name, ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return Response{Output: "Interrupted before start: " + context.Cause(ctx).Error()}, nil
	}
	name, args := splitCommand(command)
	if name == "" {
		return Response{Output: "Empty command: write a command name, then its arguments\nAvailable: " + d.available}, nil
	}
	i, ok := d.byName[name]
	if !ok {
		return Response{Output: "Unknown command: " + clip(name, maxEchoedName) + "\nAvailable: " + d.available}, nil
	}
	select {
	case d.sem <- struct{}{}:
	case <-ctx.Done():
		return Response{Output: "Interrupted while waiting for the previous command: " + context.Cause(ctx).Error()}, nil
	}
	if err := d.markUsed(name); err != nil {
		<-d.sem
		return Response{}, err
	}
	h := d.cmds[i].Handler
	if ctx.Done() == nil { // cannot be cancelled: no need to watch it
		defer func() { <-d.sem }()
		return call(ctx, h, args), nil
	}
	done := make(chan Response, 1)
	go func() {
		defer func() { <-d.sem }()
		done <- call(ctx, h, args)
	}()
	select {
	case r := <-done:
		return r, nil
	case <-ctx.Done():
	}
	grace := time.NewTimer(cancelGrace)
	defer grace.Stop()
	select {
	case r := <-done:
		return r, nil
	case <-grace.C:
		return Response{Output: "Interrupted: " + context.Cause(ctx).Error() + "\nThe command is still finishing; the next command will wait for it."}, nil
	}
}

// markUsed records command as used, dispatching an event only the first
// time.
func (d *Declarative) markUsed(command string) error {
	if GetUsage(d.sess).Used(d.name, command) {
		return nil
	}
	if err := d.sess.Dispatch(CommandUsed{Environment: d.name, Command: command}); err != nil {
		return fmt.Errorf("envs: %s: record usage of %s: %w", d.name, command, err)
	}
	return nil
}

// call runs h, turning an error or a panic into a failed response.
func call(ctx context.Context, h Handler, args string) (r Response) {
	defer func() {
		if p := recover(); p != nil {
			r = Response{Output: fmt.Sprintf("Error: panic: %v", p)}
		}
	}()
	out, err := h(ctx, args)
	if err != nil {
		msg := "Error: " + err.Error()
		var f *Failure
		if errors.As(err, &f) {
			msg = f.Message
		}
		if out = strings.TrimRight(out, "\n"); out != "" {
			msg = out + "\n" + msg
		}
		return Response{Output: msg}
	}
	return Response{Output: out, Success: true}
}

// Screen returns the state display, a blank line, and the help for every
// command. It fails when State panics.
func (d *Declarative) Screen() (Screen, error) {
	state, err := d.stateDisplay()
	if err != nil {
		return Screen{}, err
	}
	var b strings.Builder
	b.Grow(len(state) + 64*len(d.help))
	renderHelp(&b, state, d.name, d.help, GetUsage(d.sess))
	return Screen{Content: b.String(), MaxLines: d.maxLines}, nil
}

func (d *Declarative) stateDisplay() (state string, err error) {
	if d.state == nil {
		return d.desc, nil
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("envs: %s: screen: state display panicked: %v", d.name, p)
		}
	}()
	return d.state(), nil
}

// Close marks the environment closed, so later commands fail with
// [ErrClosed], and runs the spec's Close once. It does not wait for a
// running handler. Every call returns the first call's result.
func (d *Declarative) Close() error {
	d.closeOnce.Do(func() {
		d.closed.Store(true)
		if d.onClose == nil {
			return
		}
		defer func() {
			if p := recover(); p != nil {
				d.closeErr = fmt.Errorf("envs: %s: close: panic: %v", d.name, p)
			}
		}()
		if err := d.onClose(); err != nil {
			d.closeErr = fmt.Errorf("envs: %s: close: %w", d.name, err)
		}
	})
	return d.closeErr
}

// isIdentifier reports whether s is a letter or underscore followed by
// letters, digits or underscores.
func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r != '_' && !unicode.IsLetter(r) && (i == 0 || !unicode.IsDigit(r)) {
			return false
		}
	}
	return true
}

// clip returns s cut to at most n bytes on a rune boundary, with "..." when
// cut, and invalid UTF-8 replaced.
func clip(s string, n int) string {
	if len(s) > n {
		s = utf8cut.Prefix(s, n) + "..."
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
