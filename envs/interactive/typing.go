package interactive

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/internal/term"
)

// typeChunk is how many bytes are written to the terminal at a time: a
// terminal holds only so much input its program has not read (about 20
// KB), and a program busy with a command's first line reads the rest only
// later.
const typeChunk = 4 << 10

// typist types one text to the terminal from a goroutine of its own, so
// that a program that does not read its input holds neither the call (its
// limits and cancellation) nor the Ctrl-C that stops it.
type typist struct {
	text  string        // what is typed: the command's text, its tab lines bracketed (see pasteTabs)
	total int           // the command's bytes, without the brackets
	typed atomic.Int64  // bytes of text written so far
	done  chan struct{} // closed when the typing ended
	err   error         // why it stopped short; set before done is closed
}

// command returns how many of the command's bytes are typed: the bytes
// written, less the paste brackets among them. A command typed as a paste
// holds no ESC (see control: pastes go to programs in raw mode), so each
// ESC written starts a bracket.
func (t *typist) command() int {
	w := t.text[:t.typed.Load()]
	if len(t.text) == t.total { // no tab line bracketed
		return len(w)
	}
	n := len(w) - len(pasteStart)*strings.Count(w, "\x1b")
	if i := strings.LastIndexByte(w, 0x1b); i >= 0 && len(w)-i < len(pasteStart) {
		// A bracket cut short counts whole above.
		n += len(pasteStart) - (len(w) - i)
	}
	return n
}

func (t *typist) finished() bool {
	select {
	case <-t.done:
		return true
	default:
		return false
	}
}

// typeLine types text and a newline, unless it ends with one. It returns
// once the text is typed or typing blocks; the rest is typed as the
// program reads it (see typist; typingDone says when all is). The error
// is why typing stopped short, when it did at once.
func (p *proc) typeLine(text string) error {
	if len(text) == 0 || text[len(text)-1] != '\n' {
		text += "\n"
	}
	p.stopTyping()
	p.kept = false
	total := len(text)
	// Typed to a program in canonical mode, an ESC is text (see control),
	// and brackets would be too.
	if strings.Contains(text, "\t") && !strings.Contains(text, "\x1b") && !term.Canonical(p.slave) && p.pastes() {
		text = pasteTabs(text)
	}
	t := &typist{text: text, total: total, done: make(chan struct{})}
	p.typing = t
	go func() {
		defer close(t.done)
		for b := []byte(text); len(b) > 0; {
			n, err := p.master.Write(b[:min(len(b), typeChunk)])
			t.typed.Add(int64(n))
			b = b[n:]
			if err != nil {
				t.err = err
				return
			}
		}
	}()
	// Most commands fit the terminal at once.
	select {
	case <-t.done:
		return t.err
	case <-time.After(time.Millisecond):
		return nil
	}
}

// The brackets of a paste, of the same length.
const (
	pasteStart = "\x1b[200~"
	pasteEnd   = "\x1b[201~"
)

// pasteTabs returns text, ending with a newline, with each line that
// holds a tab typed as a bracketed paste (between ESC [200~ and ESC
// [201~), for a line editor that reads one (see pastes): reading the
// terminal key by key (raw mode), it takes a typed tab for its completion
// key, and drops it or completes the word before it, where a paste is
// text. GNU readline (sqlite3, python3 -i, gdb, psql) reads a paste as
// text even on a dumb terminal. Only lines with a tab are bracketed: a
// paste of several lines is one line to readline.
func pasteTabs(text string) string {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	for i, l := range lines {
		if strings.Contains(l, "\t") {
			lines[i] = pasteStart + l + pasteEnd
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

// pastes reports whether the program reading the terminal takes a
// bracketed paste as text: it turned bracketed paste on, or it has GNU
// readline loaded, which reads a paste as text whether or not it turned
// it on (it does not on TERM=dumb, and Python's readline module turns it
// off). Another program in raw mode (a raw reader, a linenoise or libedit
// prompt) would get the brackets as data. Node, which never turns it on,
// keeps a typed tab as text on these terminals.
func (p *proc) pastes() bool {
	p.mu.Lock()
	on := p.f.BracketedPaste()
	p.mu.Unlock()
	if on {
		return true
	}
	pid, pg := p.terminalReader()
	if pid == 0 {
		pid = pg
	}
	return pid > 0 && term.LoadsLibrary(pid, "libreadline.so")
}

// typingDone reports whether all that was typed reached the terminal.
func (p *proc) typingDone() bool { return p.typing == nil || p.typing.finished() }

// stopTyping ends the typing under way, dropping what the program has not
// read (as Ctrl-C would), and returns a note saying how much of the text
// was typed, or "" when all of it was.
func (p *proc) stopTyping() string {
	t := p.typing
	if t == nil {
		return ""
	}
	p.typing = nil
	if t.finished() {
		return ""
	}
	// A deadline in the past ends the pending write at once.
	_ = p.master.SetWriteDeadline(time.Now())
	<-t.done
	_ = p.master.SetWriteDeadline(time.Time{})
	_ = term.FlushInput(p.slave.Name())
	return fmt.Sprintf("[Typed %d of the command's %d bytes: %s read no more of it, so the rest was not typed, and what it had not read was dropped.]", t.command(), t.total, p.name)
}

// typingNote says how much of the text under way is typed, for a response
// that gives control back before it all is; "" when it all is.
func (p *proc) typingNote() string {
	t := p.typing
	if t == nil || t.finished() {
		return ""
	}
	return fmt.Sprintf("[%d of the command's %d bytes typed so far: the rest is typed as %s reads it.]", t.command(), t.total, p.name)
}

// refusal returns why text, what (the command or the answer) to type to
// p, is not typed, or "" when it is: a key in it (see control), or a line
// the program would get cut (see cut).
func (e *Env) refusal(p *proc, text, what string) string {
	if msg := e.control(p, text, what); msg != "" {
		return msg
	}
	return e.cut(p, text, what)
}

// cut returns why text, what (the command or the answer) to type to p,
// would reach the program cut, or "" when it would not: a program that
// reads its terminal in canonical mode gets at most [term.MaxCanonLine]
// bytes of a line, and the line discipline drops the rest silently.
// Line editors read the terminal in raw mode and take any length.
func (e *Env) cut(p *proc, text, what string) string {
	line, n := term.LongLine(p.slave, text)
	if line == 0 {
		return ""
	}
	return fmt.Sprintf("Line too long: line %d of %s has %d bytes, and %s reads its terminal a line at a time (canonical mode), which keeps at most %d bytes of a line and drops the rest. Nothing was typed. "+
		"Put the text in a file and have the program read it from there (such as open() in Python), or split it into shorter lines.", line, what, n, e.name, term.MaxCanonLine)
}

// tooLong is the response to a command of n bytes, more than MaxCommand.
func (e *Env) tooLong(n int) string {
	return fmt.Sprintf("Command too long: %d bytes; at most %d can be typed at the %s prompt. Put the input in a file and load it with the program's own command (such as .read in sqlite3 or source in gdb).", n, MaxCommand, e.name)
}

// control returns why text, what (the command or the answer) to type to
// p, is refused for a character the terminal would take as a key, not as
// text, or "" when it holds none. A program that reads its terminal in
// canonical mode gets every byte but the keys of the line discipline
// (see [term.LineKeys]): its interrupt, end-of-input and erase keys,
// ESC and Ctrl-A are text. A line editor, or another program reading key
// by key, takes any control character but newline and tab as a key
// (Ctrl-C interrupts, Ctrl-D ends the input or exits, Ctrl-U and Ctrl-W
// erase, ESC starts a key sequence), and DEL erases the character before
// it.
func (e *Env) control(p *proc, text, what string) string {
	keys, canonical := term.LineKeys(p.slave)
	i := -1
	for j := 0; j < len(text) && i < 0; j++ {
		c := text[j]
		key := c < 0x20 && c != '\t' || c == 0x7f
		if canonical {
			_, key = keys[c]
		}
		if key && c != '\n' {
			i = j
		}
	}
	if i < 0 {
		return ""
	}
	c := text[i]
	kind, name := "a control character", "DEL"
	switch {
	case c == 0x1b:
		name = "ESC"
	case c < 0x20:
		name = "Ctrl-" + string(rune('@'+c))
	case c != 0x7f:
		// A special character set to a printing one (stty erase _).
		kind, name = "a character", "set as a key"
	}
	takes := "which a terminal takes as a key, not as text"
	if canonical {
		takes = fmt.Sprintf("which %s's terminal takes as its %s key (it reads the terminal a line at a time), not as text", e.name, keys[c])
	}
	return fmt.Sprintf("Not typed: %s holds %s, %q (%s) at byte %d, %s. Nothing was typed. "+
		"To interrupt, send %s as a command of its own; to end the input, %s. To put the character in data, make it the program's own way (an escape or a function that makes a character from its code), or have the program read it from a file.",
		what, kind, c, name, i+1, takes, envs.Interrupt, envs.EndOfInput)
}
