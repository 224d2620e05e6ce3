package term

import (
	"io"
	"strings"
	"unicode/utf8"
)

// MaxLine bounds the line a filter holds while it waits for a newline; a
// longer line is passed on in pieces (carriage returns then stop rewriting
// what was passed on).
const MaxLine = 64 << 10

// MaxString bounds the bytes an OSC, DCS, SOS, PM or APC string may hide.
// A string that runs on past it (its end lost: a program killed while
// writing a title or a link, a log of raw escapes shown with cat) stops
// being one, and the bytes after it are shown, so it cannot hide the rest
// of the output. Window titles and hyperlinks are far shorter; an inline
// image would show its tail as text.
const MaxString = 4 << 10

// Filter turns what a program writes to a terminal into plain text: escape
// sequences (CSI, OSC, DCS and two-byte ESC sequences) are dropped, a
// carriage return or backspace moves the cursor on the current line so a
// progress bar keeps only its final state, other control characters except
// tab and newline are dropped. It writes finished lines to w and keeps the
// current line until a newline or Flush. It is not safe for concurrent use.
//
// Sequences end as a terminal's parser (ECMA-48, as xterm and VTE follow
// it) ends them: an ESC starts a new sequence, ending the one before, a
// string ends at BEL or ST (ESC \), CAN and SUB abort any sequence, and
// the controls inside a sequence other than a string still act (a newline
// in a CSI ends the line). A string whose end was lost must not hide the
// rest of the output, so it ends too at a newline or carriage return,
// which then act (as xterm does with its brokenStringTerm resource, and
// did by default before its patch #171: titles, hyperlinks and images
// hold none), and at [MaxString].
type Filter struct {
	w     io.Writer
	line  []byte // the current line, not yet written
	col   int    // cursor position in line, a byte offset at a character start
	state escState
	taken int // bytes of the current string, in stString
	// params holds the first parameter bytes of the current CSI, np how
	// many it has taken; paste is whether the program turned bracketed
	// paste on (see BracketedPaste).
	params [16]byte
	np     int
	paste  bool
}

type escState uint8

const (
	stNormal   escState = iota
	stEsc               // after ESC
	stEscInter          // after ESC and intermediate bytes, waiting for the final byte
	stCSI               // after ESC [
	stString            // inside OSC, DCS, SOS, PM or APC, until a byte that endsString
)

// NewFilter returns a Filter that writes finished lines to w.
func NewFilter(w io.Writer) *Filter { return &Filter{w: w} }

// Write filters p. It never fails unless w does.
func (f *Filter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if f.state == stNormal && len(f.line) == 0 {
			// Fast path: whole plain lines go straight through.
			i := plainPrefix(p)
			if k := lastNewline(p[:i]); k >= 0 {
				if _, err := f.w.Write(p[:k+1]); err != nil {
					return 0, err
				}
				p = p[k+1:]
				continue
			}
		}
		if k := f.run(p); k > 0 {
			p = p[k:]
		} else {
			f.byte(p[0])
			p = p[1:]
		}
		if len(f.line) >= MaxLine {
			if err := f.Flush(); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

// run takes the bytes p starts with that the current state handles
// alike, a run at once (text, a CSI's parameters, a string), and returns
// how many it took: none when byte must see the first.
func (f *Filter) run(p []byte) int {
	switch f.state {
	case stNormal:
		return f.text(p)
	case stCSI:
		return f.csi(p)
	case stString:
		return f.str(p)
	}
	return 0
}

// text takes the printable bytes and tabs p starts with, as byte would
// one at a time, but a run at once: appended at the end of the line (up
// to MaxLine), or written over it while both are ASCII. It returns how
// many bytes it took; it is called in the normal state only. A line
// with no newline, or a progress bar redrawn after a carriage return, then
// costs a copy rather than a call per byte.
func (f *Filter) text(p []byte) int {
	n := 0
	if f.col == len(f.line) {
		for room := MaxLine - len(f.line); n < len(p) && n < room && isText(p[n]); n++ {
		}
		f.line = append(f.line, p[:n]...)
		f.col = len(f.line)
		return n
	}
	for rest := f.line[f.col:]; n < len(p) && n < len(rest) && p[n] < utf8.RuneSelf && rest[n] < utf8.RuneSelf && isText(p[n]); n++ {
	}
	copy(f.line[f.col:], p[:n])
	f.col += n
	return n
}

// isText reports whether c is a byte put on the line as it is.
func isText(c byte) bool { return c == '\t' || (c >= 0x20 && c != 0x7f) }

// plainPrefix returns the length of p's prefix that holds only printable
// bytes, tabs and newlines.
func plainPrefix(p []byte) int {
	for i, c := range p {
		if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
			return i
		}
	}
	return len(p)
}

// csi takes the parameter and intermediate bytes p starts with and the
// final byte after them, as byte would one at a time but a run at once,
// up to a byte byte must see (a control, ESC, DEL, a byte past ASCII). It
// returns how many bytes it took; it is called inside a CSI only.
func (f *Filter) csi(p []byte) int {
	for i, c := range p {
		switch {
		case c >= 0x20 && c <= 0x3f:
			if f.np < len(f.params) {
				f.params[f.np] = c
			}
			f.np++
		case c >= 0x40 && c <= 0x7e:
			f.state = stNormal
			f.mode(c)
			return i + 1
		default:
			return i
		}
	}
	return len(p)
}

// str takes the bytes p starts with that the current string hides, as
// byte would one at a time but a run at once, up to a byte that may end it
// or to MaxString. It returns how many bytes it took; it is called inside
// a string only.
func (f *Filter) str(p []byte) int {
	n := 0
	for room := MaxString - f.taken; n < len(p) && n < room && !endsString(p[n]); n++ {
	}
	f.taken += n
	if f.taken >= MaxString {
		f.state = stNormal
	}
	return n
}

// endsString reports whether c ends a string: BEL ends it, ESC ends it and
// starts a sequence (ST is ESC \), CAN and SUB abort it, and a newline or
// carriage return ends it and acts.
func endsString(c byte) bool {
	return c == 0x07 || c == 0x1b || c == 0x18 || c == 0x1a || c == '\n' || c == '\r'
}

func lastNewline(p []byte) int {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '\n' {
			return i
		}
	}
	return -1
}

func (f *Filter) byte(c byte) {
	if f.state != stNormal && !f.inSequence(c) {
		return
	}
	switch {
	case c == 0x1b:
		f.state = stEsc
	case c == '\n':
		f.line = append(f.line, '\n')
		_, _ = f.w.Write(f.line)
		f.line, f.col = f.line[:0], 0
	case c == '\r':
		f.col = 0
	case c == '\b':
		if f.col > 0 {
			_, size := utf8.DecodeLastRune(f.line[:f.col])
			f.col -= size
		}
	case isText(c):
		f.put(c)
	}
}

// inSequence takes c inside an escape sequence and reports whether c then
// acts as it does outside one: an ESC, which starts a new sequence; a
// newline or carriage return, which ends a string; a control inside
// another sequence, which leaves it unchanged (a tab or newline in a CSI
// still moves the cursor).
func (f *Filter) inSequence(c byte) bool {
	switch {
	case c == 0x1b:
		return true
	case f.state == stString:
		switch {
		case c == '\n' || c == '\r':
			f.state = stNormal
			return true
		case endsString(c):
			f.state = stNormal
		default:
			f.str([]byte{c})
		}
		return false
	case c == 0x18 || c == 0x1a:
		// CAN and SUB abort a sequence.
		f.state = stNormal
		return false
	case c < 0x20:
		return true
	case c == 0x7f:
		return false
	}
	switch f.state {
	case stEsc:
		switch {
		case c == '[':
			f.state, f.np = stCSI, 0
		case c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_':
			f.state, f.taken = stString, 0
		case c >= 0x20 && c <= 0x2f:
			f.state = stEscInter
		default:
			f.state = stNormal
		}
	case stEscInter:
		if c > 0x2f {
			f.state = stNormal
		}
	case stCSI:
		if c >= 0x40 && c <= 0x7e {
			f.state = stNormal
		}
	}
	return false
}

// mode notes a CSI ending in final that sets or resets DEC private mode
// 2004, bracketed paste: ESC [ ? 2004 h or l, 2004 maybe among other modes.
func (f *Filter) mode(final byte) {
	if (final != 'h' && final != 'l') || f.np > len(f.params) || f.np == 0 || f.params[0] != '?' {
		return
	}
	for m := range strings.SplitSeq(string(f.params[1:f.np]), ";") {
		if m == "2004" {
			f.paste = final == 'h'
		}
	}
}

// BracketedPaste reports whether the program turned bracketed paste mode
// on (it wrote ESC [ ? 2004 h, as GNU readline does on a terminal it knows
// while it reads a line) and has not turned it off since: it then reads
// text between ESC [ 200 ~ and ESC [ 201 ~ as pasted, not as keys.
func (f *Filter) BracketedPaste() bool { return f.paste }

// put writes c at the cursor. A byte that starts a character replaces the
// whole character under the cursor, so overwriting multi-byte text keeps the
// line valid.
func (f *Filter) put(c byte) {
	if f.col == len(f.line) {
		f.line = append(f.line, c)
		f.col++
		return
	}
	if !utf8.RuneStart(c) {
		f.line = append(f.line[:f.col+1], f.line[f.col:]...)
		f.line[f.col] = c
		f.col++
		return
	}
	_, size := utf8.DecodeRune(f.line[f.col:])
	if size == 1 {
		f.line[f.col] = c
	} else {
		f.line[f.col] = c
		f.line = append(f.line[:f.col+1], f.line[f.col+size:]...)
	}
	f.col++
}

// Flush writes the current line without ending it and starts a new one. An
// escape sequence cut in the middle is dropped.
func (f *Filter) Flush() error {
	f.state = stNormal
	if len(f.line) == 0 {
		return nil
	}
	_, err := f.w.Write(f.line)
	f.line, f.col = f.line[:0], 0
	return err
}

// Line returns the current, unfinished line. The slice is valid until the
// next Write or Flush.
func (f *Filter) Line() []byte { return f.line }

// Cut drops the current line from byte offset i on.
func (f *Filter) Cut(i int) {
	f.line = f.line[:i]
	f.col = min(f.col, i)
}

// Plain returns s as a [Filter] leaves it: text a program meant for a
// terminal (a process environment's reply, a screen) made plain, for
// output that does not come through a filter on its way.
func Plain(s string) string {
	var b strings.Builder
	f := NewFilter(&b)
	_, _ = f.Write([]byte(s))
	_ = f.Flush()
	return b.String()
}
