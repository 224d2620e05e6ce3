package envs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Defaults of the soft limits, for environments given none.
const (
	// DefaultQuiet is how long a command's output may stay unchanged
	// before control comes back while it runs on.
	DefaultQuiet = 30 * time.Second
	// DefaultWait is how long control stays with a command at most,
	// however much it prints, before it comes back while the command runs
	// on.
	DefaultWait = 2 * time.Minute
)

// The key commands: command texts that act on a running command instead
// of being typed to it (see [LimitedExecutor]).
const (
	// Interrupt interrupts the running command, as Ctrl-C would.
	Interrupt = "C-c"
	// EndOfInput ends the input of a command that waits for input, as
	// Ctrl-D at the start of a line would.
	EndOfInput = "C-d"
)

// Limits say when an environment gives control back while a command still
// runs (soft limits), and how much output a response may carry. The
// command goes on after a soft limit, and the next command continues it.
// A hard limit, which interrupts the command, is the context's deadline
// instead.
type Limits struct {
	// Quiet gives control back once the command's output has not changed
	// for this long: 0 means the environment's default ([DefaultQuiet]
	// unless set otherwise), a negative value never.
	Quiet time.Duration
	// Until gives control back at this time at the latest: the caller's
	// timeout, counted from when the command arrived. The zero time means
	// the environment's default wait ([DefaultWait] unless set
	// otherwise) from the call.
	Until time.Time
	// Budget bounds the tokens of a response's output (see [Fit]): 0
	// means the environment's default ([DefaultBudget] unless set
	// otherwise), a negative value no bound.
	Budget int
	// Save keeps the whole output of a response that the budget or the
	// memory limit cut, read from output (which may be larger than
	// memory), and returns the name to show for it (a path the editor can
	// open); nil means a new file in the system's temporary directory
	// ([SaveTemp]), or, for [Spool.Fit], in the spool's ([Spool.Save]).
	Save func(output io.Reader) (name string, err error)
	// SaveLimit bounds the bytes of one saved output whose middle only a
	// spool file holds (see [Spool.Fit]): past it the saved file keeps the
	// head and the tail of that middle and marks the place of what it
	// leaves out, and the response says so. 0 means the environment's
	// default ([DefaultSaveLimit] unless set otherwise), a negative value
	// no bound.
	SaveLimit int64
	// Read says how to read the output saved as name, in the note of a
	// cut response ("read it as the resource ..."); nil means "view it
	// with the editor, or search it with grep": a session that offers
	// neither says what it offers.
	Read func(name string) string
}

// readHow is what the note of a cut response says to read name with.
func (l Limits) readHow(name string) string {
	if l.Read != nil {
		return l.Read(name)
	}
	return "view it with the editor, or search it with grep"
}

// Defaults are an environment's own limits, for those a call leaves at
// zero.
type Defaults struct {
	Quiet  time.Duration // 0: DefaultQuiet; negative: none
	Wait   time.Duration // 0: DefaultWait; negative: none
	Budget int           // 0: DefaultBudget; negative: none
	// SaveLimit is 0 for DefaultSaveLimit, negative for none.
	SaveLimit int64
}

// Or fills in the limits left at zero from d (and, for what d leaves at
// zero, the package defaults): Until becomes start plus the wait.
func (l Limits) Or(d Defaults, start time.Time) Limits {
	if l.Quiet == 0 {
		l.Quiet = cmp.Or(d.Quiet, DefaultQuiet)
	}
	if l.Until.IsZero() {
		if wait := cmp.Or(d.Wait, DefaultWait); wait > 0 {
			l.Until = start.Add(wait)
		}
	}
	if l.Budget == 0 {
		l.Budget = cmp.Or(d.Budget, DefaultBudget)
	}
	if l.SaveLimit == 0 {
		l.SaveLimit = cmp.Or(d.SaveLimit, DefaultSaveLimit)
	}
	return l
}

// Ceiling makes hard, counted from start, a hard limit of the call that
// its own limit, soft or hard, may shorten but never lengthen: an
// environment whose spec's timeout is hard calls it after [Limits.Or].
// The returned context's deadline is the earlier of start plus hard and
// l.Until; its cause is cause when start plus hard comes first (nil, as
// for [context.WithDeadline], otherwise). The returned limits have no
// Until, as the deadline is hard now. A hard of 0 or less changes
// nothing. The caller calls the returned cancel when the call is done.
func (l Limits) Ceiling(ctx context.Context, start time.Time, hard time.Duration, cause error) (context.Context, Limits, context.CancelFunc) {
	if hard <= 0 {
		return ctx, l, func() {}
	}
	deadline := start.Add(hard)
	if !l.Until.IsZero() && l.Until.Before(deadline) {
		deadline, cause = l.Until, nil
	}
	ctx, cancel := context.WithDeadlineCause(ctx, deadline, cause)
	l.Until = time.Time{}
	return ctx, l, cancel
}

// Due reports whether a command whose output last changed at changed has
// reached a limit at now, and why (for [RunningNote]); otherwise it
// returns when to look again: the earlier of the quiet limit and Until,
// or the zero time when there is neither.
func (l Limits) Due(now, changed time.Time) (why string, next time.Time) {
	if !l.Until.IsZero() {
		if !now.Before(l.Until) {
			return "the time limit passed", time.Time{}
		}
		next = l.Until
	}
	if l.Quiet > 0 {
		q := changed.Add(l.Quiet)
		if !now.Before(q) {
			return "no new output for " + Round(l.Quiet).String(), time.Time{}
		}
		if next.IsZero() || q.Before(next) {
			next = q
		}
	}
	return "", next
}

// IsInterrupt reports whether command is the [Interrupt] key command.
func IsInterrupt(command string) bool { return strings.TrimSpace(command) == Interrupt }

// IsEndOfInput reports whether command is the [EndOfInput] key command.
func IsEndOfInput(command string) bool { return strings.TrimSpace(command) == EndOfInput }

// RunningNote is the note ending a response whose command still runs;
// why says what gave control back, such as "no new output for 30s".
func RunningNote(why string) string {
	return "[Still running (" + why + "). Send an empty command to wait and see new output, " +
		Interrupt + " to interrupt it, or text to type to it when it waits for input.]"
}

// WaitingNote is the note ending a response whose command waits for
// input; prompt is the last line of its output (clipped by
// [ClipQuestion]), hidden reports a secret.
func WaitingNote(prompt string, hidden bool) string {
	prompt = ClipQuestion(prompt)
	if hidden {
		return fmt.Sprintf("[Waiting for a secret (a password?): %q. Send it as the next command: it is typed to the program with a newline, is not shown, and transcripts record it as hidden. "+
			"An empty command keeps waiting, %s interrupts it, %s ends its input.]", prompt, Interrupt, EndOfInput)
	}
	return fmt.Sprintf("[Waiting for input: %q. Send the answer as the next command: it is typed to the program with a newline. "+
		"An empty command keeps waiting, %s interrupts it, %s ends its input.]", prompt, Interrupt, EndOfInput)
}

// NotReadingNote is the note of a response that refused text because the
// running command was not waiting for input.
func NotReadingNote() string {
	return "[The command is still running and is not waiting for input, so the text was not typed to it (it would be read later, perhaps as a command). " +
		"Send an empty command to wait and see new output, or " + Interrupt + " to interrupt it first.]"
}

// EndedNote is the note of a response to text that arrived for a running
// command which had ended meanwhile: the text is not run.
func EndedNote() string {
	return "[The command ended before this text arrived, so the text was not run. Send it again to run it as a command.]"
}

// IdleNote is the response to a key command when nothing runs.
func IdleNote(key string) string {
	return "[No command is running; " + key + " has nothing to act on.]"
}

// secretPrompt matches questions that ask for a secret.
var secretPrompt = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)pass(word|phrase|code)?\b|\bpin\b|secret|token|api[ _-]?key|credential`)
})

// SecretPrompt reports whether prompt, the question a command waits on,
// asks for a secret (a password, passphrase, PIN, token or key).
func SecretPrompt(prompt string) bool { return secretPrompt().MatchString(prompt) }

// ErrBusy is what [Queue.Wait] returns when the caller's soft limit passed
// while another command held the environment.
var ErrBusy = errors.New("envs: the environment was busy until the command's time limit")

// Queue gives an environment's commands their turn one at a time, in the
// order they arrive. The zero value is not usable; create one with
// [NewQueue].
type Queue struct {
	turn chan struct{} // holds a value while a command has the turn
}

// NewQueue returns a free queue.
func NewQueue() *Queue { return &Queue{turn: make(chan struct{}, 1)} }

// Wait waits for the turn: it returns nil once the caller has it (and must
// call [Queue.Done]), ctx's error when ctx ends first, or [ErrBusy] when
// until passes first (at once when it has passed and the turn is taken;
// never, for the zero time). Waiters get the turn in the order they came.
func (q *Queue) Wait(ctx context.Context, until time.Time) error {
	select {
	case q.turn <- struct{}{}:
		return nil
	default:
	}
	var limit <-chan time.Time
	if !until.IsZero() {
		t := time.NewTimer(time.Until(until))
		defer t.Stop()
		limit = t.C
	}
	select {
	case q.turn <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-limit:
		return ErrBusy
	}
}

// Done gives the turn to the next waiter.
func (q *Queue) Done() { <-q.turn }

// NotRun is the response to a command that did not get its turn: err is
// what [Queue.Wait] returned, or the error of a context that had ended
// before the command started.
func NotRun(err error) Response {
	switch {
	case errors.Is(err, ErrBusy):
		return Response{Output: "[Not run: an earlier command held the environment until this command's time limit passed. " +
			"Send it again, or " + Interrupt + " to interrupt the running command first.]"}
	case errors.Is(err, context.DeadlineExceeded):
		return Response{Output: "[Not run: its deadline passed before it started.]"}
	}
	return Response{Output: "[Not run: it was cancelled before it started.]"}
}

// Round rounds d for messages: to the millisecond under a tenth of a
// second, to a tenth of a second under 10 seconds, to the second above.
func Round(d time.Duration) time.Duration {
	switch {
	case d < 100*time.Millisecond:
		return d.Round(time.Millisecond)
	case d < 10*time.Second:
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}

// TrimOutput removes the newline that ends the output's last line, and
// only that: blank lines a command printed at its end stay, as printed.
func TrimOutput(s string) string {
	return strings.TrimSuffix(strings.TrimSuffix(s, "\n"), "\r")
}

// LastLine returns the last line of text that is not blank, trimmed: most
// likely the question of a command that waits for input.
func LastLine(text string) string {
	text = strings.TrimRight(text, "\n \t")
	if i := strings.LastIndexByte(text, '\n'); i >= 0 {
		text = text[i+1:]
	}
	return strings.TrimSpace(text)
}

// MaxQuestion is how many characters of a question [ClipQuestion] keeps.
const MaxQuestion = 200

// ClipQuestion bounds the question of a command that waits for input: a
// program may print megabytes without a newline before it reads. It keeps
// the last [MaxQuestion] characters, where the question usually is, and
// puts "…" in front when it cut any. Clipping twice changes nothing.
func ClipQuestion(q string) string {
	if len(q) <= MaxQuestion {
		return q
	}
	i := len(q)
	for n := 0; n < MaxQuestion && i > 0; n++ {
		_, size := utf8.DecodeLastRuneInString(q[:i])
		i -= size
	}
	if i == 0 {
		return q
	}
	return "…" + q[i:]
}

// Abbrev shortens a command for a screen: its first line, at most 80
// bytes, with " ..." when anything was left out.
func Abbrev(command string) string {
	line, _, more := strings.Cut(strings.TrimSpace(command), "\n")
	if len(line) > 80 {
		// A character cut in two is dropped.
		line, more = strings.ToValidUTF8(line[:80], ""), true
	}
	if more {
		line += " ..."
	}
	return line
}
