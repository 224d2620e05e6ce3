package term

import (
	"bytes"
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
