package interactive

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"time"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/internal/term"
)

// launch starts the program, unless Spec.StartCheck refuses. It is the
// environment's from then on, so that Close stops it while it starts.
func (e *Env) launch() (*proc, error) {
	if e.spec.StartCheck != nil {
		if err := e.spec.StartCheck(); err != nil {
			return nil, err
		}
	}
	p, err := startProc(e.args, e.spec.Dir, term.Environ(nil, e.spec.Env), e.prompt, e.cont, e.lead, e.spec.Resources)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		_ = p.stop()
		return nil, envs.ErrClosed
	}
	p.name = e.name
	e.p, e.lastExit = p, ""
	e.started++
	return p, nil
}

// errStart is why a program could not be started; the response says it.
type errStart struct{ why string }

func (err *errStart) Error() string { return err.why }

// boot waits for the first prompt of p, a program just launched, then
// sends the init commands. The wait ends as a command's does: at the
// time limit (soft; p goes on starting, and boot may be called again),
// or when ctx ends (cancelled; p is stopped). The quiet limit does not
// count: programs start without a word. Spec.StartTimeout, counted
// from the launch, bounds it too: past it p is stopped and the error
// says so, as it does when the program exits first.
func (e *Env) boot(ctx context.Context, p *proc, limits envs.Limits) (result, error) {
	bound := ctx
	if e.spec.StartTimeout > 0 {
		var cancel context.CancelFunc
		bound, cancel = context.WithDeadline(ctx, p.began.Add(e.spec.StartTimeout))
		defer cancel()
	}
	fail := func(why string) (result, error) {
		_ = p.stop()
		e.mu.Lock()
		defer e.mu.Unlock()
		e.lastExit = "did not start"
		if e.closed {
			return exited, envs.ErrClosed
		}
		return exited, &errStart{why}
	}
	limits.Quiet = -1
	switch o := p.waitPrompt(bound, limits); {
	case o == soft:
		return soft, nil
	case o == cancelled && ctx.Err() != nil:
		_ = p.stop()
		e.mu.Lock()
		e.lastExit = "stopped while it started"
		e.mu.Unlock()
		return cancelled, nil
	case o == cancelled:
		return fail(fmt.Sprintf("no prompt matching %q within %v, the start timeout (StartTimeout)%s", e.spec.Prompt, e.spec.StartTimeout, p.lastWords()))
	case o == asking:
		return fail(fmt.Sprintf("it waits for input before showing a prompt matching %q%s", e.spec.Prompt, p.lastWords()))
	case o != done:
		return fail(fmt.Sprintf("no prompt matching %q (%s)%s", e.spec.Prompt, describe(o, p), p.lastWords()))
	}
	for _, c := range e.spec.Init {
		// Bounded by the call's time limit too: an init command that never
		// brings the prompt back fails the start instead of holding it.
		switch _, _, o := p.send(bound, c, envs.Limits{Quiet: -1, Until: limits.Until}, 0); {
		case o == soft:
			return fail(fmt.Sprintf("init command %q did not bring the prompt back within the call's time limit%s", c, p.lastWords()))
		case o != done:
			return fail(fmt.Sprintf("init command %q: %s", c, e.initFailure(ctx, bound, o, p)))
		}
	}
	// The output of commands from now on keeps its whole past the limit
	// (the start's and the init commands' is dropped).
	p.spool = e.spool
	p.size = term.Size{Rows: term.Rows, Cols: term.Cols}
	if size, err := term.GetSize(p.master); err == nil {
		p.size = size // as the program's start-up and the init commands chose
	}
	p.ready = true
	p.idle()
	return done, nil
}

// starting continues a command j that waits for the first prompt of p, a
// program launched for it: an empty command waits for the prompt (see
// [Env.boot]), C-c stops the program, other text is refused. It reports
// ready once the prompt shows, and j's command is to be typed; until
// then, resp is the response.
func (e *Env) starting(ctx context.Context, p *proc, j *job, command string, limits envs.Limits, notes []string) (resp envs.Response, ready bool, err error) {
	switch {
	case envs.IsInterrupt(command):
		e.setRunning(nil)
		_ = p.stop()
		e.mu.Lock()
		e.lastExit = "stopped while it started"
		e.mu.Unlock()
		return envs.Response{Output: fmt.Sprintf("[Interrupted (%s): %s had not shown its prompt yet, so it was stopped and the command was not run. It starts again with the next command.]", envs.Interrupt, e.name)}, false, nil
	case command != "":
		return envs.Response{Output: fmt.Sprintf("[%s is still starting (its prompt has not shown yet), so the text was not typed. Send an empty command to wait for it, or %s to stop it.]", e.name, envs.Interrupt), Running: true}, false, nil
	}
	o, err := e.boot(ctx, p, limits)
	switch {
	case errors.Is(err, envs.ErrClosed):
		return envs.Response{}, false, fmt.Errorf("interactive: execute %s: %w", e.name, err)
	case err != nil:
		e.setRunning(nil)
		return envs.Response{Output: strings.Join(append(notes, fmt.Sprintf("Failed to start %s: %v", e.name, err)), "\n")}, false, nil
	case o == soft:
		e.setRunning(j)
		return envs.Response{Output: strings.Join(append(notes, fmt.Sprintf("[Still starting (%s): %s has not shown its prompt yet, after %v%s. The command is typed once it does. Send an empty command to wait for it, or %s to stop it.]",
			p.softWhy, e.name, envs.Round(time.Since(p.began)), p.lastWords(), envs.Interrupt)), "\n"), Running: true}, false, nil
	case o == cancelled:
		e.setRunning(nil)
		return envs.Response{Output: strings.Join(append(notes, fmt.Sprintf("[%s: %s had not shown its prompt yet, so it was stopped and the command was not run. It starts again with the next command.]", stopWord(ctx), e.name)), "\n")}, false, nil
	}
	e.setRunning(nil)
	return envs.Response{}, true, nil
}

// errHardTimeout is the cause of a call's context that the spec's hard
// Timeout ended.
var errHardTimeout = errors.New("the spec's hard timeout passed")

// initFailure says why an init command sent with ctx, bounded by bound,
// ended with o instead of the prompt, naming the limit that cut it off:
// the user who wrote the spec changes the command or the limit.
func (e *Env) initFailure(ctx, bound context.Context, o result, p *proc) string {
	switch {
	case o == incomplete:
		return "it left the program at its continuation prompt, waiting for the rest of the command (a missing ; or closing bracket?)" + p.lastWords()
	case o == asking:
		return "it waits for input away from the prompt" + p.lastWords()
	case o == exited:
		return describe(o, p)
	case errors.Is(context.Cause(ctx), errHardTimeout):
		return fmt.Sprintf("the prompt did not come back within %v, the spec's hard timeout, so it was interrupted", e.spec.Timeout)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return "the prompt did not come back within the call's hard time limit, so it was interrupted"
	case ctx.Err() != nil:
		return "the call was cancelled before the prompt came back, so it was interrupted"
	case bound.Err() != nil:
		return fmt.Sprintf("the prompt did not come back within %v, the start timeout (StartTimeout), so it was interrupted", e.spec.StartTimeout)
	}
	return describe(o, p)
}

func describe(o result, p *proc) string {
	switch o {
	case exited:
		return "the program " + p.status
	case done:
		return "done"
	case cancelled:
		return "timed out"
	default:
		return "no prompt"
	}
}

// cleanOutput removes from out the program's echo of the command and the
// prompts printed between its lines (at line starts, at most one per
// line sent). When the first line is the echo of the first line sent, the
// program echoes: each line sent, in order, is dropped where it appears
// as a line of its own after prompts, and the program's own output keeps
// its lines whole, a line that starts like a prompt ("> quoted", ">>>
// example()") included. A program that does not echo prints the prompts
// before the output of the lines that follow: as many as there are lines
// after the first are stripped from the starts of lines, and the rest is
// kept, lines that happen to look like the input included.
func cleanOutput(out, command string, lead *regexp.Regexp) string {
	if command == "" {
		return out
	}
	// The blank lines sent count: Python echoes a blank line that ends a
	// block after its continuation prompt.
	sent := strings.Split(strings.TrimSuffix(command, "\n"), "\n")
	lines := strings.Split(out, "\n")
	budget := len(sent)
	trim := func(s string) string { return strings.TrimRight(s, " \t\r") }
	// strip returns line less up to max prompts at its start, and how
	// many it took; until(rest) stops it early.
	strip := func(line string, max int, until func(rest string) bool) (string, int) {
		n := 0
		for ; n < max && !until(line); n++ {
			loc := lead.FindStringIndex(line)
			if loc == nil || loc[1] == 0 {
				break
			}
			line = line[loc[1]:]
		}
		return line, n
	}
	if len(lines) == 0 || trim(lines[0]) != trim(sent[0]) || trim(sent[0]) == "" {
		// A prompt comes before each line read after the first one (the
		// one before the first was shown with the last command).
		budget--
		for i, line := range lines {
			var n int
			lines[i], n = strip(line, budget, func(string) bool { return false })
			budget -= n
		}
		return strings.Join(lines, "\n")
	}
	kept := lines[:0]
	j := 0
	for _, line := range lines {
		if j < len(sent) {
			want := trim(sent[j])
			echo := func(rest string) bool { return trim(rest) == want }
			rest, n := strip(line, budget, echo)
			// A blank line's echo follows a prompt; a blank line of output
			// does not.
			if echo(rest) && (want != "" || n > 0) {
				j++
				budget -= n
				continue
			}
		}
		kept = append(kept, line)
	}
	return strings.Join(kept, "\n")
}

// lastWords says how the program's output so far ends, for a message
// about a start that failed: most often the prompt is not what the spec
// says it is.
func (p *proc) lastWords() string {
	p.mu.Lock()
	last := envs.LastLine(p.out.String() + strings.ToValidUTF8(string(p.f.Line()), "\uFFFD"))
	p.mu.Unlock()
	if last == "" {
		return "; it printed nothing"
	}
	return fmt.Sprintf("; its output ends with %q", envs.ClipQuestion(last))
}

// openEnded returns expr without the end-of-text anchors (`$`, `\z`) that
// end it, so that it matches a prompt followed by more text on its line.
func openEnded(expr string) (string, error) {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return "", err
	}
	return dropEnd(re).String(), nil
}

// dropEnd replaces the end-of-text and end-of-line anchors at the ends of
// re's alternatives with empty matches.
func dropEnd(re *syntax.Regexp) *syntax.Regexp {
	switch re.Op {
	case syntax.OpEndText, syntax.OpEndLine:
		return &syntax.Regexp{Op: syntax.OpEmptyMatch}
	case syntax.OpConcat:
		if n := len(re.Sub); n > 0 {
			re.Sub[n-1] = dropEnd(re.Sub[n-1])
		}
	case syntax.OpAlternate, syntax.OpCapture:
		for i, sub := range re.Sub {
			re.Sub[i] = dropEnd(sub)
		}
	}
	return re
}
