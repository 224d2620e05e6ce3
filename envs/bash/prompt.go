package bash

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/internal/term"
)

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

// learnWait bounds the wait for a new shell to block reading its first
// command line.
const learnWait = 200 * time.Millisecond

// learnPromptRead returns how the shell pid reads a command line, seen
// while it waits for its first one: the read(2) of its input at the place
// and with the count it always uses there. The read builtin, readarray
// and the rest read elsewhere or with other counts. It reports false when
// that cannot be seen (no /proc/<pid>/syscall to read), or when the count
// is 1, which could be a read of a single key anywhere.
func learnPromptRead(pid int) (term.ReadCall, bool) {
	for deadline := time.Now().Add(learnWait); time.Now().Before(deadline); time.Sleep(100 * time.Microsecond) {
		if rc, ok := term.BlockedRead(pid); ok {
			return rc, rc.FD == 0 && rc.Count > 1
		}
	}
	return term.ReadCall{}, false
}

// atPrompt reports whether the shell is reading a command line with
// nothing typed waiting for it: it ended the command without the marker,
// as after a command that changed PS1 or turned promptvars off. A line
// typed a moment ago may not be queued yet; callers confirm a while later.
func (p *proc) atPrompt() bool {
	if !p.promptKnown {
		return false
	}
	if rc, ok := term.BlockedRead(p.pid); !ok || rc != p.promptRead {
		return false
	}
	return p.inputRead()
}

// inputRead reports whether everything typed to the terminal has been
// read: nothing waits in its input queue.
func (p *proc) inputRead() bool {
	f, err := os.OpenFile(p.tty, os.O_RDWR|syscall.O_NOCTTY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	n, err := term.InputQueued(f)
	return err == nil && n == 0
}

// guardGrace bounds the wait for the guard line's marker once the
// caller's context is done: the line takes a millisecond or so.
const guardGrace = 500 * time.Millisecond

// guard types guardLine, as the holder of readMu, with status (a number,
// or "$?"): from then on PROMPT_COMMAND puts PS1 back before every
// prompt. It returns the guard line's frame, the text the changed prompt
// printed before and after its marker (the whole prompt when it had none),
// for the caller to cut from the output, and other output that came
// meanwhile (from background jobs, say), for the caller to add after the
// cut. It waits up to fixWait, or guardGrace once ctx is done.
//
// A marker that comes before the guard line's (whose text holds the
// secret) is the command's, whose line the shell had not read yet: what
// came before it is the command's output, and goes to out.
func (p *proc) guard(ctx context.Context, status string, out *envs.Output, limit int) (fr frame, before, after, extra string, ok bool) {
	mine := envs.NewOutput(limit)
	p.stream.expect(p.number, p.id, mine)
	if _, err := fmt.Fprintf(p.master, guardLine, status); err != nil {
		return frame{}, "", "", "", false
	}
	deadline := time.Now().Add(fixWait)
	for range 2 {
		fr, ev := p.next(ctx, deadline)
		if ev == evCtx {
			ctx = context.Background()
			if d := time.Now().Add(guardGrace); d.Before(deadline) {
				deadline = d
			}
			fr, ev = p.next(ctx, deadline)
		}
		if ev != evFrame {
			return frame{}, "", "", "", false
		}
		p.number = fr.number
		text := mine.String()
		if parts := strings.SplitN(text, p.secret, 4); len(parts) == 4 {
			return fr, parts[1], parts[2], parts[0] + parts[3], true
		}
		_, _ = out.Write([]byte(text))
		mine = envs.NewOutput(limit)
		p.stream.expect(p.number, p.id, mine)
	}
	return frame{}, "", "", "", false
}
