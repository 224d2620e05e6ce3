package bash

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/internal/term"
)

// submit starts command: it types the command itself, when [typable]
// says typing it is safe, or else the sourcing of the command file holding
// it, in one write. The marker's command number tells the command's
// marker from older ones. With newID (after a command that was given an
// answer, which the shell may run what is left of as command lines
// before this one), the line first sets a new id, which the marker
// carries, and only a marker with that id ends the command: a left-over
// line that runs longer than settleInput waits cannot end it. The id is
// set by [idPrefix], which keeps $? and $_ as the last command left them.
func (s *Shell) submit(p *proc, command string, newID bool, out *envs.Output) error {
	if mayChangeTyping(command) {
		p.noTyping = true
	}
	direct := !p.noTyping && typable(command)
	if !direct {
		if err := p.writeCommand(command); err != nil {
			return err
		}
	}
	line := p.line[:0]
	if newID {
		p.id++
		line = fmt.Appendf(line, idPrefix, p.id)
	}
	p.stream.expect(p.number, p.id, out)
	if _, err := term.FixModes(p.master); err != nil {
		return err
	}
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

// inputSettle bounds the wait, after a command that was given an answer,
// for the shell to be back at its prompt with nothing typed waiting.
const inputSettle = 200 * time.Millisecond

// settleInput makes sure, before a command that follows one given an
// answer, that no line of the answer is left for the shell to read as a
// command, should the shell not have discarded it (its trap removed, say):
// it reads what the terminal holds (a marker of a line the shell ran
// meanwhile then cannot end the command) until the shell is back at its
// prompt, and discards what is still typed and not read.
func (p *proc) settleInput() {
	deadline := time.Now().Add(inputSettle)
	for {
		p.pending()
		if !p.promptKnown || p.atPrompt() || !time.Now().Before(deadline) || !p.alive() {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if !p.inputRead() {
		_ = term.FlushInput(p.tty)
		p.pending()
	}
}

// fixWait bounds the wait for the follow-up line's marker.
const fixWait = 5 * time.Second

// fix types the follow-up line after fr, a marker that counts jobs
// without listing them, whose status came from exit or set -e, or that
// ends a command that may have undone the shell's guards (check): the
// shell lists its jobs from now on while it has any, puts its guards back
// when check is set, and $? becomes fr's status. The jobs go into fr;
// output (what the guards say they put back), if any, into out.
func (s *Shell) fix(p *proc, fr *frame, check bool, out *envs.Output) {
	p.stream.expect(p.number, p.id, out)
	c := 0
	if check {
		c = 1
	}
	if _, err := fmt.Fprintf(p.master, fixLine, fr.status, c); err != nil {
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
	for w := range strings.FieldsFuncSeq(command, isSeparator) {
		switch w {
		case "alias", "source", ".", "eval", "shopt", "bind", "stty", "enable", "exec":
			return true
		}
	}
	return false
}

// mayUnguard reports whether command may undo what keeps the shell alive
// through exit and set -e and what marks a command's end (see
// __unfold_check in init.sh): define a function named builtin or enable,
// disable builtin, enable exit or trap again, turn errtrace off (set +E,
// set +o errtrace), or run code its words do not show (source, ., eval).
func mayUnguard(command string) bool {
	for w := range strings.FieldsFuncSeq(command, isSeparator) {
		switch w {
		case "builtin", "enable", "errtrace", "source", ".", "eval":
			return true
		}
		if len(w) > 1 && w[0] == '+' && strings.IndexByte(w, 'E') > 0 {
			return true
		}
	}
	return false
}

// isSeparator reports whether r separates words of a command for the
// look at its words that mayChangeTyping, mayUnguard and mayBreak take.
func isSeparator(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == ';' || r == '&' || r == '|' || r == '(' || r == ')'
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
// (return, set). Everything else goes through the command file, which costs a
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
// commands, and builtins that behave differently when typed and sourced:
// return, and set, whose -o vi and -o emacs are undone only for a
// sourced command (see __unfold_guard in init.sh).
var reserved = map[string]bool{
	"if": true, "then": true, "else": true, "elif": true, "fi": true,
	"case": true, "esac": true, "for": true, "select": true, "while": true,
	"until": true, "do": true, "done": true, "in": true, "function": true,
	"time": true, "coproc": true, "return": true, "set": true,
}

// writeCommand replaces the command file's content with command.
func (p *proc) writeCommand(command string) error {
	if _, err := p.cmdf.WriteAt([]byte(command), 0); err != nil {
		return err
	}
	if len(command) < p.cmdLen {
		if err := p.cmdf.Truncate(int64(len(command))); err != nil {
			return err
		}
	}
	p.cmdLen = len(command)
	return nil
}
