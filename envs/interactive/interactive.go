package interactive

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/internal/cmdline"
	"github.com/unfold-dev/unfold/internal/procs"
	"github.com/unfold-dev/unfold/internal/term"
)

// Bounds of what is typed.
const (
	// MaxCommand bounds a command's text: programs read it from a terminal,
	// which is not made for megabytes of typing.
	MaxCommand = 64 << 10
)

// DefaultContinuation matches common continuation prompts: "... ",
// "   ...> ", "-> ".
const DefaultContinuation = `[ \t]*(?:\.\.\.+>?|->)[ \t]`

// MaxLines is the height of the environment's screen.
const MaxLines = 20

// interruptGrace is how long a program gets to show its prompt again after
// Ctrl-C before it is stopped.
const interruptGrace = 2 * time.Second

// quiet is how long the output must stay still after the prompt appears
// before the command counts as done, so that a prompt printed between two
// lines of a multi-line command is not taken for the last one.
const quiet = 3 * time.Millisecond

// Spec describes a prompt-driven program. Its command text is at most
// [MaxCommand] bytes; its screen is [MaxLines] lines high.
type Spec struct {
	// Name names the environment in messages; "" means the program's name.
	Name string
	// Command is the command line that starts the program, split into
	// words like a shell does (quotes and backslashes; no variables, globs
	// or pipes). Exactly one of Command and Args is set.
	Command string
	// Args is the program and its arguments, used as they are.
	Args []string
	// Prompt is a regular expression (Go RE2 syntax) matching the
	// program's prompt at the end of its output, such as `sqlite> ` or
	// `\(gdb\) `. Required. A `$` or `\z` at its end changes nothing:
	// where prompts are stripped from the starts of lines it is left out.
	Prompt string
	// Continuation is a regular expression matching the prompt the program
	// shows when a statement is not complete yet (sqlite3's "   ...> ",
	// Python's "... "); "" means [DefaultContinuation]. It must not match
	// the empty string. When a command ends at it, the response says the
	// input is incomplete and the next command continues it.
	Continuation string
	// Description says what the program is; the screen starts with it and
	// it is the summary. Required.
	Description string
	// Dir is the working directory; "" means the current one.
	Dir string
	// Env holds extra "KEY=VALUE" variables added to the inherited
	// environment (after TERM=dumb, PAGER=cat and the like).
	Env []string
	// Init lists commands sent after every start, their output dropped,
	// such as "set pagination off" for gdb. The terminal's size they
	// leave (stty cols 80) is the one each command starts with.
	Init []string
	// Timeout is how long a call waits for a command at most before it
	// gives control back while the command runs on (a soft limit; 0 means
	// [envs.DefaultWait], negative no bound). With Hard, it is a hard
	// limit instead: the command gets Ctrl-C then.
	Timeout time.Duration
	// Hard makes Timeout interrupt the command, and makes it the most a
	// call may give a command: the call's own time limit, soft or hard
	// (its context's deadline), interrupts it when it comes sooner.
	Hard bool
	// Quiet is how long a command's output may stay unchanged before the
	// call gives control back while it runs on; 0 means
	// [envs.DefaultQuiet], negative no such limit.
	Quiet time.Duration
	// Budget bounds the tokens of a response's output (see
	// [envs.Limits.Fit]); 0 means [envs.DefaultBudget], negative no bound.
	Budget int
	// Save keeps the whole output of a response cut to the budget or the
	// output limit and returns its name; nil means a new file in a
	// directory of the environment's own under the system's temporary
	// directory, removed by Close ([envs.Spool.Save]).
	Save func(output io.Reader) (string, error)
	// Resources are resource limits set on the program (see
	// [procs.Limits]).
	Resources procs.Limits
	// StartCheck, when set, is called before every start of the program;
	// an error refuses the start, and the command's response gives it.
	StartCheck func() error
	// StartTimeout bounds the wait for the first prompt, counted from the
	// program's start: past it the program is stopped and the command
	// fails, saying so. 0 means no bound of its own: the start is part
	// of the command that caused it, under that command's limits (its
	// time limit returns with Running set while the program starts on,
	// and the command is typed once its prompt shows; a hard limit or
	// cancellation stops the program). The quiet limit does not count
	// while the program starts.
	StartTimeout time.Duration
	// OutputLimit is how many bytes of a command's output are kept in
	// memory, head and tail; 0 means [envs.DefaultOutputLimit]. Past it
	// the whole output goes to a spool file (see [envs.Spool]), and the
	// response names the file it is saved in.
	OutputLimit int
}

// Env is a prompt-driven program on a pseudo-terminal, started on its first
// command and again after it exits. It is safe for concurrent use: commands
// run one at a time, and Screen and Summary answer while one runs.
type Env struct {
	name   string
	args   []string
	prompt *regexp.Regexp // the prompt at the end of a line
	lead   *regexp.Regexp // a prompt or continuation prompt at the start of a line
	cont   *regexp.Regexp // the continuation prompt at the end of a line
	spec   Spec
	spool  *envs.Spool // the whole output of commands past the output limit

	turn *envs.Queue // held by a call for its whole run, and by Close to wait for it

	mu       sync.Mutex // guards the fields below
	p        *proc
	running  *job // the command still running after its call gave control back
	closed   bool
	started  int    // how many times the program was started
	lastExit string // how the program last ended, "" if it has not
}

// job is a command still running after its call gave control back. Once
// it is the running one, its fields change under Env.mu (see setJob).
type job struct {
	command string
	began   time.Time
	last    string // the last non-empty line of the output returned so far
	waiting string // the question, when it waits for input
	hidden  bool
	// starting reports that the program has not shown its first prompt
	// yet: command is typed once it does.
	starting bool
}

var (
	_ envs.Env             = (*Env)(nil)
	_ envs.LimitedExecutor = (*Env)(nil)
	_ envs.Closer          = (*Env)(nil)
	_ envs.Summarizer      = (*Env)(nil)
)

// New checks spec and returns the environment; the program starts with the
// first command.
func New(spec Spec) (*Env, error) {
	fail := func(format string, args ...any) (*Env, error) {
		name := spec.Name
		if name == "" {
			name = spec.Command
		}
		return nil, fmt.Errorf("interactive: new %q: "+format, append([]any{name}, args...)...)
	}
	if !term.Supported {
		return fail("interactive environments need Linux")
	}
	args := spec.Args
	switch {
	case spec.Command != "" && len(args) > 0:
		return fail("both Command and Args are set; use one")
	case spec.Command != "":
		var err error
		if args, err = cmdline.Split(spec.Command); err != nil {
			return fail("Command: %v", err)
		}
	}
	if len(args) == 0 {
		return fail("no program: set Command (a command line) or Args")
	}
	if spec.Prompt == "" {
		return fail("Prompt is empty; give a regular expression matching the program's prompt")
	}
	re, err := regexp.Compile(`(?:` + spec.Prompt + `)\z`)
	if err != nil {
		return fail("Prompt is not a valid regular expression (Go RE2 syntax): %v", err)
	}
	if re.MatchString("") {
		// It would match the end of any output: every command would end
		// before its output came.
		return fail("Prompt %q matches the empty string, so it would match any output; write the prompt's text, such as \"sqlite> \"", spec.Prompt)
	}
	contExpr := spec.Continuation
	if contExpr == "" {
		contExpr = DefaultContinuation
	}
	contExpr, err = openEnded(contExpr)
	var contAlone *regexp.Regexp
	if err == nil {
		contAlone, err = regexp.Compile(contExpr)
	}
	if err != nil {
		return fail("Continuation is not a valid regular expression (Go RE2 syntax): %v", err)
	}
	if contAlone.MatchString("") {
		// It would match every line that is still empty: a command whose
		// output stops at the end of a line would end as incomplete.
		return fail("Continuation %q matches the empty string, so every command would end as incomplete; write the continuation prompt's text, such as \"db-# \"", spec.Continuation)
	}
	// Prompts are matched at the start of lines too, text after them: a
	// `$` that ends the prompt's expression would never match there.
	promptExpr, err := openEnded(spec.Prompt)
	if err != nil {
		return fail("Prompt is not a valid regular expression (Go RE2 syntax): %v", err)
	}
	// A line editor given several lines at once may print the prompt and
	// continuation prompts on one line: the line counts when it is made
	// of them and ends with a continuation prompt.
	cont, err := regexp.Compile(`^(?:(?:` + promptExpr + `)|(?:` + contExpr + `))*(?:` + contExpr + `)\z`)
	if err != nil {
		return fail("Continuation is not a valid regular expression (Go RE2 syntax): %v", err)
	}
	lead := regexp.MustCompile(`^(?:(?:` + promptExpr + `)|(?:` + contExpr + `))`)
	if spec.Description == "" {
		return fail("Description is empty; say in one line what the program is")
	}
	if spec.OutputLimit < 0 {
		return fail("OutputLimit is %d; use 0 for the default or a positive number of bytes", spec.OutputLimit)
	}
	for _, kv := range spec.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return fail("Env entry %q is not KEY=VALUE", kv)
		}
	}
	path, err := exec.LookPath(args[0])
	if err != nil {
		return fail("%v", err)
	}
	args = append([]string{path}, args[1:]...)
	if spec.Dir != "" {
		if fi, err := os.Stat(spec.Dir); err != nil || !fi.IsDir() {
			return fail("Dir %q is not a directory", spec.Dir)
		}
	}
	name := spec.Name
	if name == "" {
		name = filepath.Base(args[0])
	}
	if spec.StartTimeout < 0 {
		return fail("StartTimeout is %v; use 0 for no bound of its own or a positive duration", spec.StartTimeout)
	}
	if err := spec.Resources.Check(); err != nil {
		return fail("Resources: %v", err)
	}
	return &Env{name: name, args: args, prompt: re, lead: lead, cont: cont, spec: spec, spool: envs.NewSpool("", 0), turn: envs.NewQueue()}, nil
}

// Execute runs command with the environment's own limits; see
// [Env.ExecuteLimited].
func (e *Env) Execute(ctx context.Context, command string) (envs.Response, error) {
	return e.ExecuteLimited(ctx, command, envs.Limits{})
}

// ExecuteLimited types command at the program's prompt (starting the
// program first if needed) and returns the output up to the next prompt,
// without the echoed input and the prompts printed between its lines, cut
// to the token budget. Control comes back before the prompt at the soft
// limits, and as soon as the program waits for input away from its
// prompt; the response then has Running set, and the next command
// continues the command as [envs.LimitedExecutor] says. When ctx is done
// (a hard limit), the program gets Ctrl-C; one that does not show its
// prompt again, and does not read its terminal either, is stopped and
// starts again with the next command. One that reads its terminal again is
// kept, once: the next Ctrl-C, with nothing typed between, stops it. When
// the program exits, the response says so. ExecuteLimited returns an
// error only when the environment is closed or the program cannot be
// started.
func (e *Env) ExecuteLimited(ctx context.Context, command string, limits envs.Limits) (envs.Response, error) {
	now := time.Now()
	limits = limits.Or(envs.Defaults{Quiet: e.spec.Quiet, Wait: e.spec.Timeout, Budget: e.spec.Budget}, now)
	if e.spec.Hard {
		var cancel context.CancelFunc
		ctx, limits, cancel = limits.Ceiling(ctx, now, e.spec.Timeout, errHardTimeout)
		defer cancel()
	}
	if limits.Save == nil {
		limits.Save = e.spec.Save
	}
	if err := ctx.Err(); err != nil {
		return envs.NotRun(err), nil
	}
	if err := e.turn.Wait(ctx, limits.Until); err != nil {
		return envs.NotRun(err), nil
	}
	defer e.turn.Done()
	resp, err := e.execute(ctx, command, limits)
	return e.spool.Fit(limits, resp), err
}

func (e *Env) execute(ctx context.Context, command string, limits envs.Limits) (envs.Response, error) {
	e.mu.Lock()
	closed, p, j := e.closed, e.p, e.running
	e.mu.Unlock()
	if closed {
		return envs.Response{}, fmt.Errorf("interactive: execute %s: %w", e.name, envs.ErrClosed)
	}
	key := envs.IsInterrupt(command) || envs.IsEndOfInput(command)
	var notes []string
	if p == nil || !p.alive() {
		var last string // what it printed that no response showed
		if p != nil {
			// What the ended run started (a daemon, a job that left its
			// session) ends with it, before a new run starts.
			_ = p.stop()
			last = p.lastOutput()
		}
		if p != nil && p.ready && !p.told {
			// It ended: no response has said so yet.
			p.told = true
			e.mu.Lock()
			e.lastExit = p.status
			e.mu.Unlock()
			if j == nil {
				note := fmt.Sprintf("[%s %s after the last command.]", e.name, p.status)
				if last != "" {
					note = fmt.Sprintf("[%s %s after the last command; before, it printed:]\n%s", e.name, p.status, last)
				}
				notes = append(notes, note)
			}
		}
		if j != nil {
			e.setRunning(nil)
			out := fmt.Sprintf("[%s ended while the command ran; it starts again with the next command.]", e.name)
			if j.starting {
				out = fmt.Sprintf("[%s %s before it showed its prompt, so the command was not run; it starts again with the next command.]", e.name, p.status)
			} else if last != "" {
				out = last + "\n" + out
			}
			if command != "" && !key {
				out += "\n[The text was not run. Send it again to run it as a command.]"
			}
			return envs.Response{Output: out}, nil
		}
		if key {
			return envs.Response{Output: strings.Join(append(notes, envs.IdleNote(strings.TrimSpace(command))), "\n"), Success: true}, nil
		}
		if len(command) > MaxCommand {
			return envs.Response{Output: strings.Join(append(notes, e.tooLong(len(command))), "\n")}, nil
		}
		np, err := e.launch()
		if errors.Is(err, envs.ErrClosed) {
			return envs.Response{}, fmt.Errorf("interactive: execute %s: %w", e.name, err)
		}
		if err != nil {
			return envs.Response{Output: strings.Join(append(notes, fmt.Sprintf("Failed to start %s: %v", e.name, err)), "\n")}, nil
		}
		if p != nil && p.ready {
			notes = append(notes, fmt.Sprintf("[Started %s again; its state from before was lost.]", e.name))
		}
		p, j = np, &job{command: command, began: time.Now(), starting: true}
		command = ""
	}
	if j != nil && j.starting {
		resp, ready, err := e.starting(ctx, p, j, command, limits, notes)
		if !ready {
			return resp, err
		}
		command, j = j.command, nil
	}
	var out string
	var o result
	typed := command // what this call typed, to clean from the output
	switch {
	case j == nil && key:
		return envs.Response{Output: envs.IdleNote(strings.TrimSpace(command)), Success: true}, nil
	case j == nil && len(command) > MaxCommand:
		return envs.Response{Output: strings.Join(append(notes, e.tooLong(len(command))), "\n")}, nil
	case j == nil:
		if msg := e.refusal(p, command, "the command"); msg != "" {
			return envs.Response{Output: strings.Join(append(notes, msg), "\n")}, nil
		}
		j = &job{command: command, began: time.Now()}
		var between string
		between, out, o = p.send(ctx, command, limits, e.spec.OutputLimit)
		if o == incomplete && endsBlock(command) {
			// Python's REPL runs a block at the blank line after it.
			var more string
			_, more, o = p.send(ctx, "\n", limits, e.spec.OutputLimit)
			out += more
			typed = strings.TrimSuffix(command, "\n") + "\n\n"
		}
		// Blank lines alone are no news.
		if between = strings.Trim(between, "\n"); between != "" {
			notes = append(notes, "[Output since the last command:]\n"+between)
		}
	case command == "":
		out, o = p.await(ctx, limits, e.spec.OutputLimit)
	case envs.IsInterrupt(command):
		typed = ""
		o = p.interrupt()
		out, _ = p.await(ctx, envs.Limits{Until: time.Now()}, e.spec.OutputLimit)
		switch o {
		case interrupted:
			o = done
			notes = append(notes, fmt.Sprintf("[Interrupted (%s): sent Ctrl-C; %s is at its prompt again and keeps its state.]", envs.Interrupt, e.name))
		case asking:
			notes = append(notes, e.keptNote("Interrupted ("+envs.Interrupt+")"))
		}
	case !p.reading():
		out, o = p.await(ctx, envs.Limits{Until: time.Now()}, e.spec.OutputLimit)
		if o == soft {
			return e.runsOn(p, j, out, "", envs.NotReadingNote(), notes), nil
		}
	case envs.IsEndOfInput(command):
		typed = ""
		if _, err := p.master.Write([]byte{4}); err != nil {
			o = exited
			break
		}
		out, o = p.await(ctx, limits, e.spec.OutputLimit)
	default:
		var msg string
		if len(command) > MaxCommand {
			msg = fmt.Sprintf("Answer too long: %d bytes; at most %d can be typed to %s. Put the text in a file and have the program read it from there.", len(command), MaxCommand, e.name)
		} else {
			msg = e.refusal(p, command, "the answer")
		}
		if msg != "" {
			return envs.Response{Output: msg + "\n" + envs.WaitingNote(j.waiting, j.hidden), Running: true, Waiting: true, Prompt: j.waiting, Hidden: j.hidden}, nil
		}
		e.setJob(j, func(j *job) { j.waiting, j.hidden = "", false })
		if err := p.typeLine(command); err != nil {
			o = exited
			break
		}
		out, o = p.await(ctx, limits, e.spec.OutputLimit)
	}
	text := cleanOutput(envs.TrimOutput(out), typed, e.lead)
	switch o {
	case soft:
		return e.runsOn(p, j, text, "", "", notes), nil
	case asking:
		if ctx.Err() != nil && !envs.IsInterrupt(command) {
			// The call's hard limit or cancellation sent Ctrl-C (see await).
			notes = append(notes, e.keptNote(stopWord(ctx)))
		}
		q := envs.ClipQuestion(envs.LastLine(text))
		if q == "" {
			q = cmp.Or(j.last, "(no prompt text)")
		}
		resp := e.runsOn(p, j, text, q, "", notes)
		if looksLikePrompt(q) {
			resp.Output += "\n" + e.promptHint()
		}
		return resp, nil
	}
	e.setRunning(nil)
	// Ctrl-C may have cut the typing of the command short.
	parts := append(notes, text, p.typedCut)
	p.typedCut = ""
	success := o == done
	switch o {
	case exited:
		// What the run started ends with it (see the restart above).
		_ = p.stop()
		p.told = true
		e.mu.Lock()
		e.lastExit = p.status
		e.mu.Unlock()
		parts = append(parts, fmt.Sprintf("[%s %s. It starts again with the next command.]", e.name, p.status))
		success = p.status == "exited with status 0"
	case incomplete:
		parts = append(parts, fmt.Sprintf("[The input is incomplete: %s shows its continuation prompt and waits for more (a missing ; or closing bracket?). The next command continues it.]", e.name))
	case interrupted:
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			parts = append(parts, "Command timed out (no prompt detected)")
		}
		parts = append(parts, fmt.Sprintf("[%s: sent Ctrl-C; %s is at its prompt again and keeps its state.]", stopWord(ctx), e.name))
	case stopped:
		p.told = true
		e.mu.Lock()
		e.lastExit = "stopped after Ctrl-C did not bring its prompt back"
		e.mu.Unlock()
		why := stopWord(ctx)
		if envs.IsInterrupt(command) {
			// Nothing timed out: the caller interrupted the command.
			why = "Interrupted (" + envs.Interrupt + ")"
		} else if why == "Timed out" {
			parts = append(parts, "Command timed out (no prompt detected)")
		}
		parts = append(parts, fmt.Sprintf("[%s: sent Ctrl-C, but %s did not show its prompt again, so it was stopped. It starts again with the next command; its state is lost.]", why, e.name))
	}
	if envs.IsInterrupt(command) {
		success = false
	}
	var kept []string
	for _, s := range parts {
		if s != "" {
			kept = append(kept, s)
		}
	}
	return envs.Response{Output: strings.Join(kept, "\n"), Success: success}, nil
}

// endsBlock reports whether command, which left the program at its
// continuation prompt, is a whole block, to be ended with the blank line
// that Python's REPL wants after one: it holds several lines, or its line
// ends with a newline, and its last line is not blank. A single line
// without a newline ("def f():", "x = (1,") may be the start of a block
// that later commands continue.
func endsBlock(command string) bool {
	body, ended := strings.CutSuffix(command, "\n")
	last := body[strings.LastIndexByte(body, '\n')+1:]
	return (ended || strings.Contains(body, "\n")) && strings.TrimSpace(last) != ""
}

// runsOn answers for a command that runs on: the output so far, and a
// note saying what the next command can do (the waiting note when it
// asks question, else note, else the running note).
func (e *Env) runsOn(p *proc, j *job, text, question, note string, notes []string) envs.Response {
	// A secret: the question asks for one, or the program turned echo off
	// to read it.
	hidden := question != "" && (envs.SecretPrompt(question) || term.EchoOff(p.master))
	e.setJob(j, func(j *job) {
		if l := envs.LastLine(text); l != "" {
			j.last = envs.ClipQuestion(l)
		}
		j.waiting, j.hidden = question, hidden
	})
	switch {
	case question != "":
		note = envs.WaitingNote(question, j.hidden)
	case note == "":
		note = envs.RunningNote(p.softWhy)
	}
	e.setRunning(j)
	var kept []string
	for _, s := range append(notes, text, p.typingNote(), note) {
		if s != "" {
			kept = append(kept, s)
		}
	}
	return envs.Response{Output: strings.Join(kept, "\n"), Running: true, Waiting: question != "", Prompt: question, Hidden: j.hidden}
}

// keptNote says that Ctrl-C, sent for why, left the program reading its
// terminal away from its prompt, and that it was kept: it is alive, and
// stopping it would lose its state.
func (e *Env) keptNote(why string) string {
	return fmt.Sprintf("[%s: sent Ctrl-C; %s did not show its prompt again, but it reads its terminal, so it was kept, with its state: it waits at a prompt the spec does not recognise, or at a question of its own. Send %s again to stop it (its state is then lost); it starts again with the next command.]", why, e.name, envs.Interrupt)
}

// promptHint says that the program's prompt may no longer be the one the
// spec matches, for a command that ends waiting at what looks like a
// prompt (see looksLikePrompt).
func (e *Env) promptHint() string {
	return fmt.Sprintf("[If this is %s's prompt, it no longer matches the spec's prompt %q (changed by a command such as .prompt or sys.ps1?): each command runs, but ends waiting for input as this one did. Set the prompt back to one the spec matches.]", e.name, e.spec.Prompt)
}

// looksLikePrompt reports whether question, a line a command ended
// waiting at, looks like a program's prompt rather than a question: a
// short line ending in '>' or '#' ("db>", "py> py>", "mydb=#"), less the
// "^C" a line editor shows for Ctrl-C typed at it.
func looksLikePrompt(question string) bool {
	q := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(question), "^C"))
	return len(q) > 0 && len(q) <= 24 && strings.ContainsAny(q[len(q)-1:], ">#")
}

// setJob changes j under the lock, as Screen reads a running job's fields
// while the call that holds the turn updates them.
func (e *Env) setJob(j *job, change func(*job)) {
	e.mu.Lock()
	change(j)
	e.mu.Unlock()
}

func (e *Env) setRunning(j *job) {
	e.mu.Lock()
	e.running = j
	e.mu.Unlock()
}

func stopWord(ctx context.Context) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return "Timed out"
	}
	return "Cancelled"
}

// Close stops the program and everything it started: a hangup, then
// SIGTERM, then SIGKILL. It waits for a running command to return. It is
// idempotent.
func (e *Env) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	p := e.p
	e.mu.Unlock()
	var err error
	if p != nil {
		err = p.stop()
	}
	_ = e.turn.Wait(context.Background(), time.Time{})
	defer e.turn.Done()
	e.mu.Lock()
	last := e.p
	e.mu.Unlock()
	if last != nil && last != p {
		err = errors.Join(err, last.stop())
	}
	if err = errors.Join(err, e.spool.Close()); err != nil {
		return fmt.Errorf("interactive: close %s: %w", e.name, err)
	}
	return nil
}
