package bash

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/internal/term"
)

// DefaultTimeout is how long a command may run when its context has no
// deadline and [Options.Timeout] is zero.
const DefaultTimeout = 10 * time.Minute

// MaxLines is the height of the shell's screen.
const MaxLines = 50

// Summary is the shell's one-line summary (seed 001).
const Summary = "Bash shell (ready)"

// How long each step of interrupting a command may take before the next.
const (
	interruptGrace = time.Second
	signalGrace    = time.Second
)

// Interrupting a job (see [Shell.interruptJob]): how long a shell that
// holds the terminal has before it is signalled, how often the foreground
// is looked at (first, and at most, once it stays the same), how soon a
// job just started may get the signal again, and how long a signal to the
// shell gets before the next.
const (
	forkWait       = 50 * time.Millisecond
	forkPoll       = 500 * time.Microsecond
	forkPollMax    = 8 * time.Millisecond
	forkAgain      = 10 * time.Millisecond
	interruptRetry = 300 * time.Millisecond
)

// Polling for a command that waits for input: the first look, the longest
// gap between looks, and the gap that confirms a first sighting.
const (
	pollFirst   = 10 * time.Millisecond
	pollMax     = 100 * time.Millisecond
	pollConfirm = 20 * time.Millisecond
)

// DefaultSpin is how long a command's end is busy-waited for, when
// [Options.Spin] is zero, where the process may use more than one
// processor.
const DefaultSpin = 100 * time.Microsecond

// Options configure a [Shell]. The zero value is usable.
type Options struct {
	// Dir is the starting working directory; "" means the current one. A
	// restarted shell starts in the last known working directory, or here
	// when that is gone.
	Dir string
	// OutputLimit is how many bytes of a command's output are kept, half
	// from the start and half from the end; 0 means
	// [envs.DefaultOutputLimit].
	OutputLimit int
	// Timeout bounds a command whose context has no deadline; 0 means
	// [DefaultTimeout], negative means no bound. A context deadline (the
	// protocol's per-command "timeout") replaces it.
	Timeout time.Duration
	// Env holds extra "KEY=VALUE" variables, applied after the inherited
	// environment and the defaults (TERM=dumb, PAGER=cat, ...).
	Env []string
	// Bash is the bash executable; "" means "bash" looked up in PATH.
	Bash string
	// Spin is how long, from typing a command, Execute busy-waits for
	// the command's end before it sleeps until the shell answers: the
	// marker of a quick command then finds the reading thread running
	// rather than asleep. On an idle machine with two processors that
	// took a quarter to a third off the round trip of true; with every
	// processor busy it gains nothing and may cost a little. It also
	// costs up to Spin of processor time per command that takes longer.
	// Between commands nothing spins. 0 means [DefaultSpin], or none
	// where the process may use only one processor (runtime.NumCPU or
	// GOMAXPROCS is 1), as spinning would only hold the shell up there;
	// negative means none.
	Spin time.Duration
}

// Shell is a persistent bash on a pseudo-terminal: one process per Shell,
// whose working directory, variables, functions, aliases and background
// jobs carry over from command to command. It is safe for concurrent use:
// commands run one at a time, and Screen and Summary answer while one runs.
type Shell struct {
	bashPath string
	startDir string
	env      []string
	limit    int
	timeout  time.Duration
	spin     time.Duration

	run sync.Mutex // held by Execute for a whole command, and by Close to wait for it

	mu       sync.Mutex // guards the fields below
	p        *proc      // the current shell; it may have ended
	closed   bool
	cwd      string
	lastExit int
	jobs     []string
	waiting  string // the question of a command left waiting for input
}

var (
	_ envs.Env        = (*Shell)(nil)
	_ envs.Closer     = (*Shell)(nil)
	_ envs.Summarizer = (*Shell)(nil)
)

// New starts a shell. It fails when bash cannot be found or started, or
// when opts are invalid.
func New(opts Options) (*Shell, error) {
	fail := func(format string, args ...any) (*Shell, error) {
		return nil, fmt.Errorf("bash: new: "+format, args...)
	}
	if !term.Supported {
		return fail("bash environments need Linux (they read the terminal's state from /proc)")
	}
	if opts.OutputLimit < 0 {
		return fail("OutputLimit is %d; use 0 for the default or a positive number of bytes", opts.OutputLimit)
	}
	for _, kv := range opts.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return fail("Env entry %q is not KEY=VALUE", kv)
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
		return fail("Dir %q is not a directory", opts.Dir)
	}
	name := opts.Bash
	if name == "" {
		name = "bash"
	}
	bashPath, err := exec.LookPath(name)
	if err != nil {
		return fail("%v", err)
	}
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	s := &Shell{
		bashPath: bashPath,
		startDir: dir,
		env:      environ(opts.Env),
		limit:    opts.OutputLimit,
		timeout:  timeout,
		spin:     spinFor(opts.Spin),
		cwd:      dir,
	}
	p, err := startProc(bashPath, dir, s.env)
	if err != nil {
		return fail("start %s: %v", bashPath, err)
	}
	s.p = p
	return s, nil
}

// spinFor returns how long a command's end is busy-waited for, given
// [Options.Spin]: on a machine with one processor, or a process that may
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
	if s.waiting != "" {
		fmt.Fprintf(&b, "Waiting for input: %q (the next command is typed as the answer)\n", s.waiting)
	}
	b.WriteString("\nAny bash command. Use & for background jobs.")
	return envs.Screen{Content: b.String(), MaxLines: MaxLines}, nil
}

// keepKey marks a context from [AnswerLater].
type keepKey struct{}

// AnswerLater returns a context under which a command that stops to wait
// for input is left waiting instead of interrupted: Execute returns at once
// with the question, and the text of the next command is typed to the
// waiting program as its answer (a line each).
func AnswerLater(ctx context.Context) context.Context {
	return context.WithValue(ctx, keepKey{}, true)
}

// outcome is how a command ended.
type outcome struct {
	fr             *frame // the marker, when the shell finished the command
	note           string // what happened besides the output, for the response
	waiting        string // the question, when the command was left waiting
	died           bool   // the shell ended
	bare           bool   // the shell is back at its prompt without a marker: the command changed PS1
	shellSignalled bool   // the interrupt went to the shell itself, which may have prompted again
}

// Execute runs command (any bash text, several lines included) and returns
// its output (stdout and stderr together, without escape sequences, at most
// the output limit) and whether it exited with status 0.
//
// When ctx is done or the timeout passes, the command is interrupted: Ctrl-C,
// then SIGTERM and SIGKILL to its process group if it ignores that; the
// shell and its state stay. A command that waits for input is interrupted
// as soon as it waits (unless ctx comes from [AnswerLater]) and the response
// quotes the question. If the shell itself ended, the next command starts a
// new one in the last working directory and says what was lost. Execute
// returns an error only when the shell is closed or cannot be started.
func (s *Shell) Execute(ctx context.Context, command string) (envs.Response, error) {
	s.run.Lock()
	defer s.run.Unlock()
	s.mu.Lock()
	closed, p, answering := s.closed, s.p, s.waiting != ""
	s.mu.Unlock()
	if closed {
		return envs.Response{}, fmt.Errorf("bash: execute: %w", envs.ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return envs.Response{Output: fmt.Sprintf("[Not run: %s before it started.]", stopWord(err))}, nil
	}
	var parts []string
	p.settle()
	if !p.alive() {
		np, note, err := s.restart(p)
		if err != nil {
			return envs.Response{}, fmt.Errorf("bash: execute: %w", err)
		}
		p, answering = np, false
		parts = append(parts, note)
	}
	p.claim()
	defer p.release()
	// Blank lines alone are no news (the shell writes one when a Ctrl-C
	// meets its prompt).
	if bg := strings.Trim(p.stream.background(), "\n"); bg != "" {
		parts = append(parts, "[Output since the last command (background jobs):]\n"+bg)
	}
	// The default timeout is kept here rather than in a derived context,
	// which would cost a timer and a goroutine wake-up on every command.
	var timeout time.Duration
	if _, ok := ctx.Deadline(); !ok && s.timeout > 0 {
		timeout = s.timeout
	}
	if ctx.Done() != nil {
		stopKick := context.AfterFunc(ctx, p.kick)
		defer stopKick()
	}
	out := envs.NewOutput(s.limit)
	var o outcome
	if answering {
		s.mu.Lock()
		s.waiting = ""
		s.mu.Unlock()
		p.stream.Redirect(out)
		text := command
		if !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		if _, err := p.master.Write([]byte(text)); err != nil {
			o = s.died(p)
		}
	} else if err := s.submit(p, command, out); err != nil {
		o = s.died(p)
	}
	if o.note == "" {
		o = s.await(ctx, p, time.Now(), timeout)
	}
	var cut, cutAfter, extra string
	if o.bare || o.fr != nil && o.fr.psLen != p.psLen {
		o, cut, cutAfter, extra = s.restorePrompt(ctx, p, o, out)
	}
	if o.fr != nil {
		p.number = o.fr.number
		if o.fr.override || o.fr.jobCount > 0 && !o.fr.listed {
			s.fix(p, o.fr, out)
		}
	}
	if o.waiting == "" {
		p.stream.finish()
	}
	copies := 1
	if o.shellSignalled {
		copies = 3
	}
	text := cutPrompt(out.String(), cut, copies) + extra
	if text = strings.TrimRight(text, "\n"); text != "" {
		parts = append(parts, text)
	}
	if cutAfter != "" {
		// The changed prompt's end came after the marker, as output
		// between commands.
		bg := p.stream.background()
		if promptAt(bg, 0, cutAfter) {
			bg = bg[len(cutAfter):]
		}
		if bg = strings.Trim(bg, "\n"); bg != "" {
			parts = append(parts, "[Output since the last command (background jobs):]\n"+bg)
		}
	}
	if o.note != "" {
		parts = append(parts, o.note)
	}
	resp := envs.Response{Output: strings.Join(parts, "\n")}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case o.fr != nil:
		s.cwd, s.lastExit, s.jobs = o.fr.cwd, o.fr.status, o.fr.jobs
		resp.Success = o.fr.status == 0 && o.note == ""
	case o.waiting != "":
		s.waiting = o.waiting
	case o.died:
		s.jobs = nil
	}
	return resp, nil
}

// restorePrompt follows a command that changed PS1, seen from the
// marker's length field or, when no marker came, from the shell reading
// its next command line: it types guardLine, which puts PS1 back and has
// PROMPT_COMMAND do so before every prompt from then on, and returns the
// outcome with the guard line's marker and the changed prompt's text
// before and after the marker, for the caller to cut from the output.
// When the guard line gets no marker, the shell cannot be relied on and is
// ended.
func (s *Shell) restorePrompt(ctx context.Context, p *proc, o outcome, out *envs.Output) (_ outcome, before, after, extra string) {
	status := "$?"
	if o.fr != nil {
		status = strconv.Itoa(o.fr.status)
	}
	p.stream.finish()
	fr, before, after, extra, ok := p.guard(ctx, status, out, s.limit)
	if ok {
		o.fr, o.bare = &fr, false
		return o, before, after, extra
	}
	p.stream.Redirect(out)
	_ = p.stop()
	why := "The command changed the shell's prompt (PS1), and the shell did not take it back"
	if o.bare {
		why = "The shell came back to its prompt without the end-of-command marker, and did not take the marker back (the command may have changed PS1, or redirected the shell's standard error)"
	}
	note := "[" + why + ", so it was ended; " + s.lostState() + "]"
	if o.note != "" {
		note = o.note + "\n" + note
	}
	return outcome{died: true, note: note}, "", "", ""
}

// lostState says what ending the shell lost, for a note that begins
// "... so it was ended; ".
func (s *Shell) lostState() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return "the next command starts a new shell in " + s.cwd + ". Variables, functions, aliases and background jobs are lost."
}

// cutPrompt returns text without prompt, the changed prompt's text, at its
// end, up to copies times, newline-separated: a Ctrl-C that met the
// changed prompt had the shell print a newline and the prompt again.
func cutPrompt(text, prompt string, copies int) string {
	if prompt == "" {
		return text
	}
	for i := range copies {
		t := text
		if i > 0 {
			var ok bool
			if t, ok = strings.CutSuffix(t, "\n"); !ok {
				break
			}
		}
		n := len(t) - len(prompt)
		if !promptAt(t, n, prompt) {
			break
		}
		text = t[:n]
	}
	return text
}

// promptAt reports whether text holds prompt, the changed prompt expanded
// again, at i. A prompt that shows the time (\t, \D{...}) may have ticked
// over in between, so digits may differ, but the digits must not go on
// past either end: a count may have grown a digit.
func promptAt(text string, i int, prompt string) bool {
	j := i + len(prompt)
	if prompt == "" || i < 0 || j > len(text) {
		return false
	}
	if i > 0 && isDigit(text[i-1]) && isDigit(prompt[0]) || j < len(text) && isDigit(text[j]) && isDigit(prompt[len(prompt)-1]) {
		return false
	}
	for k := range len(prompt) {
		if a, b := text[i+k], prompt[k]; a != b && !(isDigit(a) && isDigit(b)) {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// submit starts command: it types the command itself, when [typable]
// says typing it is safe, or else the sourcing of the command file holding
// it, in one write. The marker's command number, not a nonce set by the
// line, tells the command's marker from older ones.
func (s *Shell) submit(p *proc, command string, out *envs.Output) error {
	if mayChangeTyping(command) {
		p.noTyping = true
	}
	direct := !p.noTyping && typable(command)
	if !direct {
		if err := p.writeCommand(command); err != nil {
			return err
		}
	}
	p.stream.expect(p.number, out)
	if _, err := term.FixModes(p.master); err != nil {
		return err
	}
	line := p.line[:0]
	if direct {
		line = append(line, command...)
	} else {
		line = append(line, ". "...)
		line = append(line, p.quotedFile...)
	}
	line = append(line, '\n')
	p.line = line
	if s.spin > 0 {
		p.reader.SpinUntil(time.Now().Add(s.spin))
	}
	_, err := p.master.Write(line)
	return err
}

// fixWait bounds the wait for the follow-up line's marker.
const fixWait = 5 * time.Second

// fix types the follow-up line after fr, a marker that counts jobs
// without listing them or whose status came from exit or set -e: the
// shell lists its jobs from now on while it has any, and $? becomes fr's
// status. The jobs go into fr; output, if any, into out.
func (s *Shell) fix(p *proc, fr *frame, out *envs.Output) {
	p.stream.expect(p.number, out)
	if _, err := fmt.Fprintf(p.master, fixLine, fr.status); err != nil {
		return
	}
	if next, ev := p.next(context.Background(), time.Now().Add(fixWait)); ev == evFrame {
		p.number = next.number
		fr.jobs = next.jobs
	}
}

// mayChangeTyping reports whether command may define aliases or change how
// the shell reads a typed line (alias, source, eval, shopt, bind, stty, ...).
// An alias can turn a typed line into a syntax error or an unfinished
// compound command, which a sourced file survives and a typed line does not,
// so after such a command this shell sources every command.
func mayChangeTyping(command string) bool {
	for w := range strings.FieldsFuncSeq(command, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == ';' || r == '&' || r == '|' || r == '(' || r == ')'
	}) {
		switch w {
		case "alias", "source", ".", "eval", "shopt", "bind", "stty", "enable", "exec":
			return true
		}
	}
	return false
}

// maxTyped bounds the commands typed on the terminal instead of sourced
// from the command file: well under the 4,095 bytes a terminal line holds.
const maxTyped = 512

// typable reports whether command can be typed as it is: one line of
// printable ASCII that is one simple command, so the shell reads it whole
// without a continuation prompt, cannot meet a syntax error (which would
// leave the command number, and so the marker, unchanged), and sees nothing
// the terminal itself would act on (control characters, erase and kill
// characters). It leaves out blank lines, quotes, $, operators, brackets,
// and words that are reserved or that act differently in a sourced file
// (return). Everything else goes through the command file, which costs a
// few microseconds more.
func typable(command string) bool {
	if len(command) == 0 || len(command) > maxTyped {
		return false
	}
	for i := 0; i < len(command); i++ {
		c := command[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte(" -_./=:,+%@^~*?", c) >= 0:
		default:
			return false
		}
	}
	words := 0
	for w := range strings.FieldsSeq(command) {
		if reserved[w] {
			return false
		}
		words++
	}
	// A blank line is no command: the shell would only prompt again,
	// with the same command number.
	return words > 0
}

// reserved holds bash's reserved words, which open or close compound
// commands, and builtins that behave differently when typed and sourced.
var reserved = map[string]bool{
	"if": true, "then": true, "else": true, "elif": true, "fi": true,
	"case": true, "esac": true, "for": true, "select": true, "while": true,
	"until": true, "do": true, "done": true, "in": true, "function": true,
	"time": true, "coproc": true, "return": true,
}

// await waits for the command's marker, the shell's end, the context, the
// timeout (when not 0), the command stopping to wait for input, or the
// shell reading its next command line without having printed the marker,
// reading the terminal meanwhile.
func (s *Shell) await(ctx context.Context, p *proc, start time.Time, timeout time.Duration) outcome {
	interval := pollFirst
	pollAt := start.Add(interval)
	seen, seenTotal := false, int64(0)
	for {
		until := pollAt
		if end := start.Add(timeout); timeout > 0 && end.Before(until) {
			until = end
		}
		fr, ev := p.next(ctx, until)
		switch ev {
		case evFrame:
			return outcome{fr: &fr}
		case evExited:
			return s.died(p)
		case evCtx:
			if o, ok := s.ended(p); ok {
				return o
			}
			return s.interrupt(p, stopReason(ctx, start), "")
		}
		now := time.Now()
		if timeout > 0 && !now.Before(start.Add(timeout)) {
			if o, ok := s.ended(p); ok {
				return o
			}
			return s.interrupt(p, fmt.Sprintf("[Timed out after %v.", roundDuration(timeout)), "")
		}
		if now.Before(pollAt) {
			continue
		}
		interval = min(interval*2, pollMax)
		if pg, err := term.Foreground(p.master); err == nil {
			if pg == p.pid {
				if o, ok := s.ended(p); ok {
					return o
				}
			}
			if _, ok := term.ReadingTerminal(pg, p.tty); ok {
				total := p.stream.outputTotal()
				if seen && total == seenTotal {
					// The shell itself reads the terminal once a command is
					// over, so the marker may be written and not yet read:
					// read what is there before calling it a question.
					switch fr, ev := p.next(ctx, time.Now().Add(pollConfirm)); ev {
					case evFrame:
						return outcome{fr: &fr}
					case evExited:
						return s.died(p)
					case evCtx:
						return s.interrupt(p, stopReason(ctx, start), "")
					}
					if p.stream.outputTotal() != seenTotal {
						seen = false // more output came: not waiting after all
						pollAt = time.Now().Add(interval)
						continue
					}
					q := s.question(p)
					if ctx.Value(keepKey{}) != nil {
						return outcome{waiting: q, note: fmt.Sprintf("[Waiting for input: %q. The command is still running; the text of the next command is typed to it as the answer.]", q)}
					}
					return s.interrupt(p, fmt.Sprintf("[The command is waiting for input: %q (the last line of its output).", q), inputHint)
				}
				seen, seenTotal, interval = true, total, pollConfirm
			} else {
				seen = false
			}
		}
		pollAt = time.Now().Add(interval)
	}
}

// ended reports a command that is over although its marker never came, as
// when it changed PS1: the shell reads its next command line, twice
// pollConfirm apart with no marker in between. A Ctrl-C then would only
// make the shell prompt again.
func (s *Shell) ended(p *proc) (outcome, bool) {
	if !p.atPrompt() {
		return outcome{}, false
	}
	if fr, ev := p.next(context.Background(), time.Now().Add(pollConfirm)); ev == evFrame {
		return outcome{fr: &fr}, true
	} else if ev == evExited {
		return s.died(p), true
	}
	if p.atPrompt() {
		return outcome{bare: true}, true
	}
	return outcome{}, false
}

const inputHint = " Commands here cannot answer prompts: use the program's non-interactive flags (such as -y, --yes, --assume-yes, --batch, --non-interactive, --no-input), give the answer on stdin (printf 'y\\n' | command), or pass secrets in files or environment variables."

// question returns the last non-empty line of the command's output.
func (s *Shell) question(p *proc) string {
	if line := strings.TrimSpace(p.stream.lastLine()); line != "" {
		return line
	}
	p.stream.mu.Lock()
	var text string
	if p.stream.out != nil {
		text = p.stream.out.String()
	}
	p.stream.mu.Unlock()
	lines := strings.Split(strings.TrimRight(text, "\n \t"), "\n")
	if q := strings.TrimSpace(lines[len(lines)-1]); q != "" {
		return q
	}
	return "(no prompt text)"
}

// interrupt stops the running command; why says what prompted it, hint
// what to do instead (or ""). The ladder: SIGINT, as Ctrl-C sends it, to
// the job in the foreground (see [Shell.interruptJob]); SIGTERM to the
// foreground process group; SIGKILL to it; and when the shell itself still
// does not answer, the shell is ended.
func (s *Shell) interrupt(p *proc, why, hint string) outcome {
	state := " The shell and its state (working directory, variables, background jobs) are kept." + hint + "]"
	p.stream.repeatEnds()
	repeats := p.stream.repeated()
	if o, j, ok := s.interruptJob(p, time.Now().Add(interruptGrace)); ok {
		switch {
		case o.died:
			o.note = why + "]\n" + o.note
		case j.signalled:
			o.shellSignalled = j.shell
			if j.shell && o.fr != nil && o.fr.status != 130 {
				// The command ended by itself as the interrupt went out,
				// which then met the prompt: the shell answers it with a
				// prompt of its own, and would drop the first key typed
				// before that.
				p.awaitRepeat(repeats, repeatWait)
			}
			o.note = why + " Interrupted it with Ctrl-C." + state
		}
		// Otherwise the command ended by itself before anything was
		// sent: its outcome stands.
		return o
	}
	if pg, err := term.Foreground(p.master); err == nil && pg > 1 && pg != p.pid {
		term.SignalGroup(pg, syscall.SIGTERM)
		if o, ok := s.settle(p, signalGrace); ok {
			o.note = why + " It ignored Ctrl-C, so its process group was sent SIGTERM and it ended." + state
			return o
		}
		term.SignalGroup(pg, syscall.SIGKILL)
		if o, ok := s.settle(p, signalGrace); ok {
			o.note = why + " It ignored Ctrl-C and SIGTERM, so its process group was killed (SIGKILL)." + state
			return o
		}
	}
	_ = p.stop()
	return outcome{died: true, note: why + " The shell itself did not answer Ctrl-C or signals to the command, so it was ended; " + s.lostState() + hint + "]"}
}

// interruptJob sends the SIGINT that Ctrl-C would to the command's
// foreground job until the command ends or until end, and reports how it
// ended, what was signalled, and whether it ended. It does not catch the
// shell between forking a job and waiting for it, as Ctrl-C typed at a loop
// that runs program after program often does: bash interrupted there loses
// track of the job it just started, and then either hangs or exits on
// reading a terminal the job holds. It looks at the terminal's foreground
// process group, every forkPoll at first:
//   - A job that holds the terminal gets the signal directly (Ctrl-C typed
//     would be acted on a little later, by when the job may have ended and
//     the shell forked the next one), after what was typed to the terminal
//     and not read yet is discarded, as Ctrl-C discards it. Each job gets it
//     once, and a loop that goes on to its next job (the last one had
//     ended, or was just forked and took the signal as the shell would,
//     exiting instead of dying of it) gets it again. A job signalled
//     within forkAgain of appearing that still runs the shell's program
//     (not exec'd yet, or a subshell) gets it a second time after
//     forkAgain.
//   - A shell that holds the terminal and waits for its next line (or for
//     the read builtin's) gets Ctrl-C typed, which also discards the
//     command's line when the shell has not read it yet; but not once a
//     job was seen (the shell is then back at its prompt, its marker on
//     the way), and not at its prompt with nothing typed waiting (the
//     command ended without a marker; [Shell.ended] tells).
//   - A shell that holds the terminal otherwise may be starting a job; when
//     it keeps the terminal for forkWait (a loop of builtins, the wait
//     builtin, a command substitution, the read builtin after a job), it
//     gets the signal itself, again every interruptRetry.
func (s *Shell) interruptJob(p *proc, end time.Time) (o outcome, j jobSignals, ended bool) {
	var (
		last    = -1      // the foreground group at the last look
		since   time.Time // when it became the foreground
		sent    = -1      // the job last signalled
		sentAt  time.Time // when
		resent  bool      // it got the signal a second time
		shellAt time.Time // when the shell last got the signal
		jobSeen bool      // a job held the terminal at some look
		poll    = forkPoll
	)
	// Every signal comes after the input not read yet is discarded.
	sigint := func(pg int) {
		_ = term.FlushInput(p.tty)
		term.SignalGroup(pg, syscall.SIGINT)
	}
	for time.Now().Before(end) {
		pg, err := term.Foreground(p.master)
		now := time.Now()
		if err != nil || pg <= 1 {
			pg = p.pid // unknown: treat the terminal as the shell's
		}
		if pg != last {
			last, since, poll = pg, now, forkPoll
		}
		jobSeen = jobSeen || pg != p.pid
		shellDue := shellAt.IsZero() || now.Sub(shellAt) >= interruptRetry
		switch {
		case pg != p.pid:
			// A job just forked runs the shell's program until it execs
			// (a subshell never does), and early on takes the signal as
			// the shell would, which need not end it: such a job gets it
			// once more after forkAgain.
			again := pg == sent && !resent && now.Sub(sentAt) >= forkAgain && sentAt.Sub(since) < forkAgain &&
				p.exe != "" && term.Executable(pg) == p.exe
			if pg != sent || again {
				sigint(pg)
				resent = pg == sent
				sent, sentAt, j.signalled = pg, now, true
			}
		case !shellDue:
		case p.atPrompt():
			// Back at its prompt without a marker (a Ctrl-C would only
			// lose the command's status), or about to read the command's
			// line: settle tells which.
		case !jobSeen && term.ReadsTerminal(p.pid, p.tty):
			_, _ = p.master.Write([]byte{3})
			shellAt, j.signalled, j.shell = now, true, true
		case now.Sub(since) >= forkWait:
			sigint(p.pid)
			shellAt, j.signalled, j.shell = now, true, true
		}
		if o, ok := s.settle(p, min(poll, time.Until(end))); ok {
			return o, j, true
		}
		poll = min(2*poll, forkPollMax)
	}
	return outcome{}, j, false
}

// jobSignals says what [Shell.interruptJob] signalled.
type jobSignals struct {
	signalled bool // anything: a job or the shell
	shell     bool // the shell itself, which may have been at its prompt
}

// repeatWait bounds the wait for the prompt a Ctrl-C that met the prompt
// makes the shell write again.
const repeatWait = 100 * time.Millisecond

// settle waits up to d for the command's marker or the shell's end, and
// then sees whether the command ended without a marker ([Shell.ended]).
func (s *Shell) settle(p *proc, d time.Duration) (outcome, bool) {
	fr, ev := p.next(context.Background(), time.Now().Add(d))
	switch ev {
	case evFrame:
		return outcome{fr: &fr}, true
	case evExited:
		return s.died(p), true
	}
	return s.ended(p)
}

// died reports a shell that ended during a command, after collecting its
// last output and ending what it left running.
func (s *Shell) died(p *proc) outcome {
	p.drainOutput()
	_ = p.stop()
	<-p.exited
	s.mu.Lock()
	cwd := s.cwd
	s.mu.Unlock()
	return outcome{died: true, note: fmt.Sprintf("[The shell ended during this command (%s). The next command starts a new shell in %s; variables, functions, aliases and background jobs are lost.]", p.status, cwd)}
}

// restart replaces a shell that ended with a new one in the last working
// directory, and returns the note for the response.
func (s *Shell) restart(old *proc) (*proc, string, error) {
	_ = old.stop()
	s.mu.Lock()
	dir := s.cwd
	s.mu.Unlock()
	where := dir
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		dir = s.startDir
		where = fmt.Sprintf("%s (%s no longer exists)", dir, where)
	}
	p, err := startProc(s.bashPath, dir, s.env)
	if err != nil {
		return nil, "", fmt.Errorf("start %s: %v", s.bashPath, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		_ = p.stop()
		return nil, "", envs.ErrClosed
	}
	s.p, s.cwd, s.jobs, s.waiting = p, dir, nil, ""
	return p, fmt.Sprintf("[The shell had ended (%s); started a new one in %s. Variables, functions, aliases and background jobs from before were lost.]", old.status, where), nil
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
	s.run.Lock()
	defer s.run.Unlock()
	s.mu.Lock()
	last := s.p
	s.mu.Unlock()
	if last != p {
		err = errors.Join(err, last.stop())
	}
	if err != nil {
		return fmt.Errorf("bash: close: %w", err)
	}
	return nil
}

// stopReason says why a command is being stopped, from its context.
func stopReason(ctx context.Context, start time.Time) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		if d, ok := ctx.Deadline(); ok {
			return fmt.Sprintf("[Timed out after %v.", roundDuration(d.Sub(start)))
		}
		return "[Timed out."
	}
	return "[Cancelled."
}

func stopWord(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return "the deadline had passed"
	}
	return "the command was cancelled"
}

// roundDuration rounds d for messages: 1.5s, 2m0s.
func roundDuration(d time.Duration) time.Duration {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}
