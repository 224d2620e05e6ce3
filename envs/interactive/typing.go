package interactive

import (
	"fmt"

	"github.com/unfold-dev/unfold/internal/term"
)

// typeLine types text and a newline, unless it ends with one.
func (p *proc) typeLine(text string) error {
	if len(text) == 0 || text[len(text)-1] != '\n' {
		text += "\n"
	}
	_, err := p.master.Write([]byte(text))
	return err
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
