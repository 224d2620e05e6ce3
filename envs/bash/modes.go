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
// notice, not the same words within a line of the command's. A flood of
// notices (see [proc.reclaim]) fills the terminal, and a write that has
// to wait for room may come in parts, between which other output gets
// in (the echo of a line typed meanwhile): a notice broken by newlines
// anywhere is dropped too.
func dropNotices(text string) string {
	var b strings.Builder
	last := 0 // the end of what was kept or dropped
	for i := 0; i < len(text); {
		k := strings.IndexByte(text[i:], eofNotice[0])
		if k < 0 {
			break
		}
		i += k
		n := 0
		if i == 0 || text[i-1] == '\n' {
			n = noticeAt(text[i:])
		}
		if n == 0 {
			i++
			continue
		}
		if b.Cap() == 0 {
			b.Grow(len(text))
		}
		b.WriteString(text[last:i])
		i += n
		last = i
	}
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

// noticeAt returns the length of the notice (eofNotice) that text begins
// with, newlines within it included, or 0.
func noticeAt(text string) int {
	if text == "" || text[0] != eofNotice[0] {
		return 0
	}
	k, j := 0, 0 // bytes of the notice, and of text, matched
	for j < len(text) && k < len(eofNotice) {
		switch {
		case text[j] == eofNotice[k]:
			k++
		case text[j] != '\n':
			return 0
		}
		j++
	}
	if k < len(eofNotice) {
		return 0
	}
	return j
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
