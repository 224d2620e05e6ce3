package bash

import (
	"strings"
	"time"

	"github.com/unfold-dev/unfold/internal/term"
)

// eofNotice is what bash prints when it reads an end of file at its prompt
// and IGNOREEOF keeps it going (see init.sh): after a command that left
// the terminal with VMIN 0 (see [Shell.fixModes]), or when an interrupt
// met bash between starting a program and waiting for it, after which
// bash reads a terminal the program holds until the program ends.
const eofNotice = "Use \"exit\" to leave the shell.\n"

var eofNoticeBytes = []byte(eofNotice)

// dropNotices returns text without bash's notices of an end of file
// ignored, which are no output of the command's: lines that are the
// notice, not the same words within a line of the command's.
func dropNotices(text string) string {
	if !strings.Contains(text, eofNotice) {
		return text
	}
	var b strings.Builder
	for line := range strings.SplitAfterSeq(text, "\n") {
		if line != eofNotice {
			b.WriteString(line)
		}
	}
	return b.String()
}

// fixModes sets the terminal's modes back ([term.FixModes]) once a command
// is over. A command that left canonical input off with VMIN 0 (a loop
// polling for a key, interrupted before it set the terminal back) has the
// shell's read of its next line return at once with nothing: an end of
// file, which IGNOREEOF has the shell answer with a notice (which
// [dropNotices] removes) and its prompt again rather than exit, until the
// modes are back. So when it set anything back, fixModes waits (up to
// inputSettle) for the shell to wait for its next line, reading what it
// prints meanwhile, and, should the shell have ended all the same, returns the outcome of a
// shell that died: a response never says the state was kept when it was
// not.
func (s *Shell) fixModes(p *proc, o outcome) outcome {
	if changed, err := term.FixModes(p.master); err != nil || !changed {
		return o
	}
	deadline := time.Now().Add(inputSettle)
	for p.alive() && !p.atPrompt() && time.Now().Before(deadline) {
		p.pending()
		time.Sleep(time.Millisecond)
	}
	p.pending()
	p.settle()
	if !p.alive() {
		return s.died(p)
	}
	return o
}
