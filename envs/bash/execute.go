package bash

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/internal/procs"
	"github.com/unfold-dev/unfold/internal/term"
)

// outcome is how a command ended, or why control came back before it did.
type outcome struct {
	fr             *frame // the marker, when the shell finished the command
	note           string // what happened besides the output, for the response
	running        string // the note of a response whose command runs on: a soft limit, input refused
	waiting        string // the question, when the command waits for input
	died           bool   // the shell ended
	bare           bool   // the shell is back at its prompt without a marker: the command changed PS1
	shellSignalled bool   // the interrupt went to the shell itself, which may have prompted again
}

// Execute runs command with the shell's own limits; see [Shell.ExecuteLimited].
func (s *Shell) Execute(ctx context.Context, command string) (envs.Response, error) {
	return s.ExecuteLimited(ctx, command, envs.Limits{})
}

// ExecuteLimited runs command (any bash text, several lines included) and
// returns its output (stdout and stderr together, without escape
// sequences, as printed, at most the output limit and then cut to the
// token budget) and whether it exited with status 0.
//
// Control comes back before the command ends at the soft limits (its
// output unchanged for limits.Quiet, or limits.Until passed), and as soon
// as it waits for input; the response then has Running set, and the next
// command continues it as [envs.LimitedExecutor] says: an empty command
// waits again and shows the new output, [envs.Interrupt] interrupts it,
// [envs.EndOfInput] ends its input, and other text is typed to it when it
// waits for input.
//
// When ctx is done (a hard limit), the command is interrupted: Ctrl-C,
// then SIGTERM and SIGKILL to its process group if it ignores that; the
// shell and its state stay. If the shell itself ended, or the command left
// it unable to go on (its output sent away, too few files allowed), the
// next command starts a new one in the last working directory and says
// what was lost. ExecuteLimited returns an error only when the shell is
// closed or cannot be started.
func (s *Shell) ExecuteLimited(ctx context.Context, command string, limits envs.Limits) (envs.Response, error) {
	limits = limits.Or(s.defaults, time.Now())
	if limits.Save == nil {
		limits.Save = s.save
	}
	if err := ctx.Err(); err != nil {
		if s.isClosed() {
			return envs.Response{}, fmt.Errorf("bash: execute: %w", envs.ErrClosed)
		}
		return envs.NotRun(err), nil
	}
	if err := s.turn.Wait(ctx, limits.Until); err != nil {
		return envs.NotRun(err), nil
	}
	resp, err := s.executeTurn(ctx, command, limits)
	// Saving the output needs no turn: the next command need not wait
	// for it.
	return s.spool.Fit(limits, resp), err
}

// executeTurn is execute for the holder of the turn, which it gives
// back.
func (s *Shell) executeTurn(ctx context.Context, command string, limits envs.Limits) (envs.Response, error) {
	defer s.turn.Done()
	return s.execute(ctx, command, limits)
}

func (s *Shell) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// execute runs command, or continues the running one, as the holder of the
// turn.
func (s *Shell) execute(ctx context.Context, command string, limits envs.Limits) (envs.Response, error) {
	s.mu.Lock()
	closed, p, j := s.closed, s.p, s.running
	s.mu.Unlock()
	if closed {
		return envs.Response{}, fmt.Errorf("bash: execute: %w", envs.ErrClosed)
	}
	var parts []string
	p.settle()
	if !p.alive() {
		np, note, err := s.restart(p)
		if err != nil {
			return envs.Response{}, fmt.Errorf("bash: execute: %w", err)
		}
		p = np
		parts = append(parts, note)
		if j != nil {
			// The command that ran ended with the shell: what was sent
			// for it is not a command.
			if command != "" && !envs.IsInterrupt(command) && !envs.IsEndOfInput(command) {
				parts = append(parts, "[The command that was running ended with the shell, so the text was not run. Send it again to run it as a command.]")
			}
			return envs.Response{Output: strings.Join(parts, "\n")}, nil
		}
	}
	p.claim()
	defer p.release()
	if ctx.Done() != nil {
		stopKick := context.AfterFunc(ctx, p.kick)
		defer stopKick()
	}
	if j != nil {
		return s.resume(ctx, p, j, command, limits, parts), nil
	}
	if envs.IsInterrupt(command) || envs.IsEndOfInput(command) {
		return envs.Response{Output: envs.IdleNote(strings.TrimSpace(command)), Success: true}, nil
	}
	p.takeTerminal() // nothing is typed for an idle key
	answered := p.answered
	if answered {
		p.answered = false
		p.settleInput()
	}
	// Blank lines alone are no news (the shell writes one when a Ctrl-C
	// meets its prompt).
	if bg := strings.Trim(dropNotices(p.stream.background()), "\n"); bg != "" {
		parts = append(parts, "[Output since the last command (background jobs):]\n"+bg)
	}
	out := s.spool.Output(s.limit)
	j = &job{command: command, began: time.Now(), pend: out}
	var o outcome
	if err := s.submit(p, command, answered, out); err != nil {
		o = s.died(p)
	} else {
		o = s.await(ctx, p, j, limits)
	}
	return s.conclude(ctx, p, j, o, parts, ""), nil
}

// resume continues j, the command still running, with command: an empty
// one waits, a key command acts on it, text is typed to it when it waits
// for input.
func (s *Shell) resume(ctx context.Context, p *proc, j *job, command string, limits envs.Limits, parts []string) envs.Response {
	var o outcome
	extra := ""
	switch {
	case command == "":
		o = s.await(ctx, p, j, limits)
	case envs.IsInterrupt(command):
		o = s.interrupt(p, j, "[Interrupted ("+envs.Interrupt+").", "")
	default:
		if fr, ok := p.pending(); ok {
			o, extra = outcome{fr: &fr}, envs.EndedNote()
			break
		}
		if e, ok := s.ended(p); ok {
			o, extra = e, envs.EndedNote()
			break
		}
		if !s.reading(p) {
			o = outcome{running: envs.NotReadingNote()}
			break
		}
		text := command
		if envs.IsEndOfInput(command) {
			// Ctrl-D at the start of a line: the read gets end of input.
			text = "\x04"
		} else if !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		if line, n := term.LongLine(p.master, text); line > 0 {
			// The line discipline would drop the end of the line, and the
			// program would read the rest as it is.
			parts = append(parts, fmt.Sprintf("[Not typed: line %d of the answer has %d bytes, and the program reads its terminal a line at a time, which keeps at most %d bytes of a line and drops the rest. "+
				"Put the text in a file and have the program read it from there, or split it into shorter lines.]", line, n, term.MaxCanonLine))
			o = outcome{waiting: j.waiting} // it still waits
			break
		}
		j.newline = text != command
		j.waiting, j.hidden, j.handled = "", false, false
		// Before the answer goes out, the shell learns that one is coming:
		// at its next prompt it discards what the program left unread,
		// rather than read it as a command line (see signalAnswer).
		p.answered = true
		if err := p.signalAnswer(); err != nil {
			o = s.died(p)
		} else if _, err := p.master.Write([]byte(text)); err != nil {
			o = s.died(p)
		} else {
			o = s.await(ctx, p, j, limits)
		}
	}
	return s.conclude(ctx, p, j, o, parts, extra)
}

// reading reports whether the command's foreground process waits to read
// the terminal.
func (s *Shell) reading(p *proc) bool {
	pg, err := term.Foreground(p.master)
	if err != nil {
		return false
	}
	if pg == p.pid && p.atPrompt() {
		return false
	}
	return p.asks(pg) && p.inputRead()
}

// asks reports whether process group pg waits to read the terminal for an
// answer: surely (blocked in read, a line editor's pselect), or in an event
// loop that watches the terminal while the output ends in an unfinished
// line, as a question leaves it. A program that forwards the terminal as
// it works (script, ssh, docker run -it), or an event loop that read it
// once and keeps watching it (node after rl.close()), watches it too, and
// what such a program prints as it works ends in a newline: text typed
// then would answer a question not asked yet.
func (p *proc) asks(pg int) bool {
	_, w := term.TerminalReaderUnder(p.pid, pg, p.tty)
	return w == term.Waits || w == term.MayWait && p.stream.unfinished()
}

// conclude turns o into the response: for a command that runs on, the
// output so far with a note saying what the next command can do; for one
// that ended, its output, its status and the shell's new state.
func (s *Shell) conclude(ctx context.Context, p *proc, j *job, o outcome, parts []string, extra string) envs.Response {
	out := j.pend
	secret := false
	if o.waiting != "" {
		o.waiting = envs.ClipQuestion(o.waiting)
		// A secret: the question asks for one, or the program turned echo
		// off to read it.
		secret = envs.SecretPrompt(o.waiting) || term.EchoOff(p.master)
		o.running = envs.WaitingNote(o.waiting, secret)
	}
	if o.running != "" {
		// The rest of the output goes to the next response; the line
		// unfinished so far (a question, say) is this one's.
		pend := s.spool.Output(s.limit)
		p.stream.Redirect(pend)
		text := envs.TrimOutput(p.ownLines(dropNotices(out.String()), j.command))
		if last := envs.LastLine(text); last != "" {
			j.last = last
		}
		j.pend = pend
		j.waiting, j.hidden = o.waiting, secret
		s.mu.Lock()
		s.running = j
		s.mu.Unlock()
		if text != "" {
			parts = append(parts, text)
		}
		if o.note != "" {
			parts = append(parts, o.note)
		}
		parts = append(parts, o.running)
		return envs.Response{Output: strings.Join(parts, "\n"), Running: true, Waiting: j.waiting != "", Prompt: j.waiting, Hidden: j.hidden}
	}
	s.mu.Lock()
	s.running = nil
	s.mu.Unlock()
	if !o.died {
		o = s.fixModes(p, o)
	}
	var cut, cutAfter, extraOut string
	if o.bare || o.fr != nil && o.fr.psLen != p.psLen {
		o, cut, cutAfter, extraOut = s.restorePrompt(ctx, p, o, out)
	}
	if records, n := p.stream.takeDrained(); records > 0 {
		// The newline typed after the answer is not the agent's text.
		if j.newline {
			n--
		}
		if n > 0 {
			note := fmt.Sprintf("[%d bytes of the answer were not read by the program and were discarded.]", n)
			if n == 1 {
				note = "[1 byte of the answer was not read by the program and was discarded.]"
			}
			extra = joinNote(note, extra)
		}
	}
	if o.fr != nil {
		p.number = o.fr.number
		// set -e left on is turned off (see __unfold_check in init.sh).
		if check := mayUnguard(j.command) || o.fr.errexit; check || o.fr.override || o.fr.jobCount > 0 && !o.fr.listed {
			s.fix(p, o.fr, check, out)
		}
		if mayBreak(j.command) {
			if why := broken(p); why != "" {
				_ = p.stop()
				o = outcome{died: true, note: "[The shell can no longer run commands: " + why + ". It was ended; " + s.lostState() + "]"}
			}
		}
	}
	p.stream.finish()
	copies := 1
	if o.shellSignalled {
		copies = 3
	}
	text := cutPrompt(p.ownLines(dropNotices(out.String()), j.command), cut, copies) + extraOut
	if o.note == "" && (o.fr == nil || !o.fr.override) {
		// As printed: blank lines at the end stay.
		text = envs.TrimOutput(text)
	} else {
		// Interrupted, or stopped by exit or set -e: the shell's own
		// newline after the interrupt is no output.
		text = strings.TrimRight(text, "\n")
	}
	if text != "" {
		parts = append(parts, text)
	}
	if cutAfter != "" {
		// The changed prompt's end came after the marker, as output
		// between commands.
		bg := dropNotices(p.stream.background())
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
	if o.died && strings.HasPrefix(p.status, "exited") && setsErrexit(j.command) {
		parts = append(parts, errexitNote)
	}
	if extra != "" {
		parts = append(parts, extra)
	}
	resp := envs.Response{Output: strings.Join(parts, "\n")}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case o.fr != nil:
		s.cwd, s.lastExit, s.jobs = o.fr.cwd, o.fr.status, o.fr.jobs
		resp.Success = o.fr.status == 0 && o.note == ""
	case o.died:
		s.jobs = nil
	}
	return resp
}

// errexitNote names the likely cause of a shell that exited during a
// command that turned set -e on.
const errexitNote = "[Likely cause: the command turned on set -e, under which bash itself exits on an expansion error (an unset variable under set -u, ${VAR:?message}, a bad substitution) before anything can stop the command. " +
	"Run such commands in a subshell, ( set -euo pipefail; ... ), where the error ends only the subshell.]"

// setsErrexit reports whether command may turn set -e on: set with an
// option word holding e (set -e, set -euo pipefail), or errexit named.
func setsErrexit(command string) bool {
	if strings.Contains(command, "errexit") {
		return true
	}
	set := false
	for w := range strings.FieldsFuncSeq(command, isSeparator) {
		switch {
		case w == "set":
			set = true
		case set && len(w) > 1 && w[0] == '-' && w[1] != '-' && strings.IndexByte(w, 'e') > 0:
			return true
		case !strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "+"):
			set = false
		}
	}
	return false
}

// ownLines returns text with bash's messages about the command file, as
// "bash: <file>: line N: ...", shown as about the command itself, "bash:
// line N: ...", as for bash -c: the file's path means nothing to the
// reader. N is at most the command's number of lines: bash puts an
// unexpected end of file on the line after the last.
func (p *proc) ownLines(text, command string) string {
	prefix := p.fileLine
	if !strings.Contains(text, prefix) {
		return text
	}
	lines := strings.Count(strings.TrimSuffix(command, "\n"), "\n") + 1
	var b strings.Builder
	for {
		i := strings.Index(text, prefix)
		if i < 0 {
			break
		}
		b.WriteString(text[:i])
		b.WriteString("bash: line ")
		text = text[i+len(prefix):]
		digits := len(text) - len(strings.TrimLeft(text, "0123456789"))
		if n, err := strconv.Atoi(text[:digits]); err == nil && n > lines {
			b.WriteString(strconv.Itoa(lines))
			text = text[digits:]
		}
	}
	b.WriteString(text)
	return b.String()
}

// joinNote joins two notes of a response, either of which may be "".
func joinNote(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + "\n" + b
}

// mayBreak reports whether command may leave the shell unable to run
// commands: exec can send its output away, ulimit can forbid the files
// it needs.
func mayBreak(command string) bool {
	if !strings.Contains(command, "exec") && !strings.Contains(command, "ulimit") {
		return false
	}
	for w := range strings.FieldsFuncSeq(command, isSeparator) {
		if w == "exec" || w == "ulimit" {
			return true
		}
	}
	return false
}

// minOpenFiles is the fewest open files a shell may be allowed and still
// read its commands: its own descriptors, the command file's, and a few
// for redirections.
const minOpenFiles = 16

// broken says why the shell can no longer run commands, or "": its
// standard streams no longer reach the terminal (as after exec >/dev/null),
// or it may open too few files (ulimit -n 3).
func broken(p *proc) string {
	for fd, name := range []string{"input", "output", "error"} {
		link, err := os.Readlink("/proc/" + strconv.Itoa(p.pid) + "/fd/" + strconv.Itoa(fd))
		switch {
		case err != nil:
			return "its standard " + name + " is closed, so what it prints would be lost"
		case link != p.tty && link != "/dev/tty":
			return fmt.Sprintf("its standard %s goes to %s instead of the terminal (exec redirected it), so later output would be lost", name, link)
		}
	}
	if n, err := procs.OpenFiles(p.pid); err == nil && n < minOpenFiles {
		return fmt.Sprintf("it may open only %d files (ulimit -n), too few to read its commands", n)
	}
	return ""
}
