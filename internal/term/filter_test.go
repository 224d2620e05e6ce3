package term

import (
	"bytes"
	"strings"
	"testing"
)

func TestFilter(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"plain", "a\nb\n", "a\nb\n"},
		{"carriage return", "10%\r50%\r100%\n", "100%\n"},
		{"shorter overwrite", "abcdef\rXY\n", "XYcdef\n"},
		{"crlf", "a\r\nb\r\n", "a\nb\n"},
		{"backspace", "abc\b\bX\n", "aXc\n"},
		{"backspace over UTF-8", "café\bE\n", "cafE\n"},
		{"overwrite UTF-8", "éé\rab\n", "ab\n"},
		{"CSI", "\x1b[1;31mred\x1b[0m\n", "red\n"},
		{"OSC with BEL", "\x1b]0;title\x07text\n", "text\n"},
		{"OSC with ST", "\x1b]8;;http://x\x1b\\link\n", "link\n"},
		{"two-byte ESC", "\x1b(Bok\x1b=\n", "ok\n"},
		{"controls dropped", "a\x00b\x07c\x1ed\n", "abcd\n"},
		{"tab kept", "a\tb\n", "a\tb\n"},
		{"unfinished line", "no newline", "no newline"},
		{"OSC ended by a new sequence", "\x1b]0;t\x1b[32mgreen\x1b[0m\nplain\n", "green\nplain\n"},
		{"OSC aborted by CAN", "\x1b]0;t\x18after\n", "after\n"},
		{"OSC aborted by SUB", "\x1b]0;t\x1aafter\n", "after\n"},
		{"DCS with ST", "\x1bP1$r0m\x1b\\ok\n", "ok\n"},
		{"DCS ended by a new sequence", "\x1bPq#0;2\x1b(Bafter\n", "after\n"},
		{"APC ended by a new sequence", "\x1b_data\x1b[0mafter\n", "after\n"},
		{"string at its bound", "\x1b]0;" + strings.Repeat("x", MaxString-2) + "shown\n", "shown\n"},
		{"string within its bound", "\x1b]0;" + strings.Repeat("x", MaxString-3) + "\x07ok\n", "ok\n"},
		{"string ended by a newline", "before\x1b]0;t\nafter\n", "before\nafter\n"},
		{"string ended by a carriage return", "50%\x1b]0;t\rdone\n", "done\n"},
		{"CSI aborted by CAN", "\x1b[1\x18;2mX\n", ";2mX\n"},
		{"CSI ended by a new sequence", "\x1b[1\x1b[31mred\n", "red\n"},
		{"newline inside CSI", "\x1b[1\n2mok\n", "\nok\n"},
		{"ESC then ESC", "\x1b\x1b[31mred\n", "red\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, size := range []int{1, 2, 3, len(c.in)} {
				var out bytes.Buffer
				f := NewFilter(&out)
				for in := []byte(c.in); len(in) > 0; {
					n := min(size, len(in))
					f.Write(in[:n])
					in = in[n:]
				}
				f.Flush()
				if out.String() != c.want {
					t.Errorf("in chunks of %d: got %q, want %q", size, out.String(), c.want)
				}
			}
		})
	}
	t.Run("long line bounded", func(t *testing.T) {
		var out bytes.Buffer
		f := NewFilter(&out)
		f.Write(bytes.Repeat([]byte("x"), 3*MaxLine))
		if len(f.Line()) >= MaxLine {
			t.Errorf("held line: got %d bytes, want less than %d", len(f.Line()), MaxLine)
		}
	})
}

// FuzzFilterRuns checks that Write, which takes runs of text at once,
// leaves the same text as the filter fed one byte at a time, however the
// input is cut into writes.
func FuzzFilterRuns(f *testing.F) {
	for _, seed := range []string{
		"\rprogress 10%\rprogress 100%\n",
		"abc\b\bX\rcafé\r\xc3\n",
		"caf\xc3\xa9\rcafe\n\x1b[1mbold\x1b[0m\r12",
		"\x1b]0;title\x07text\tand tab\r\x7fover\n",
		"\x1b]0;t\x1b[32mgreen\x1b[0m\n\x1bPq\x18after\x1b[1\n2m\n",
		"\x1b]8;;" + strings.Repeat("u", MaxString) + "\x1b\\link\n",
		strings.Repeat("long ", MaxLine/4) + "\r" + strings.Repeat("é", 100),
	} {
		f.Add([]byte(seed), uint16(7))
	}
	f.Fuzz(func(t *testing.T, in []byte, size uint16) {
		var want bytes.Buffer
		ref := NewFilter(&want)
		for _, c := range in {
			ref.byte(c)
			if len(ref.line) >= MaxLine {
				ref.Flush()
			}
		}
		ref.Flush()
		var got bytes.Buffer
		fl := NewFilter(&got)
		n := max(int(size), 1)
		for p := in; len(p) > 0; {
			k := min(n, len(p))
			fl.Write(p[:k])
			p = p[k:]
		}
		fl.Flush()
		if got.String() != want.String() {
			t.Errorf("in writes of %d: got %q, want %q (byte by byte)", n, got.String(), want.String())
		}
	})
}

// TestBracketedPaste: the filter follows the program's bracketed paste
// mode, set and reset alone or among other modes, and in pieces.
func TestBracketedPaste(t *testing.T) {
	for _, c := range []struct {
		name string
		in   []string
		want bool
	}{
		{"never set", []string{"sqlite> "}, false},
		{"set", []string{"\x1b[?2004h(gdb) "}, true},
		{"set then reset", []string{"\x1b[?2004h", "x\n\x1b[?2004l\r\n"}, false},
		{"reset then set", []string{"\x1b[?2004l", "\x1b[?2004h"}, true},
		{"among other modes", []string{"\x1b[?1;2004h"}, true},
		{"split", []string{"\x1b[?20", "04h"}, true},
		{"other mode", []string{"\x1b[?2004h\x1b[?1l\x1b[?20041l"}, true},
		{"not private", []string{"\x1b[2004h"}, false},
		{"long parameters", []string{"\x1b[?2004;1;1;1;1;1;1;1;1;1h"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := NewFilter(&bytes.Buffer{})
			for _, s := range c.in {
				_, _ = f.Write([]byte(s))
			}
			if got := f.BracketedPaste(); got != c.want {
				t.Errorf("BracketedPaste after %q: got %v, want %v", c.in, got, c.want)
			}
		})
	}
}
