package printable_test

import (
	"testing"

	"github.com/unfold-dev/unfold/internal/printable"
)

func TestString(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"plain", "scripts/extract.py", "scripts/extract.py"},
		{"spaces and unicode", "références/été 2.md", "références/été 2.md"},
		{"newline", "a\n## 9. System", `a\n## 9. System`},
		{"carriage return and tab", "a\rb\tc", `a\rb\tc`},
		{"terminal escape", "\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"NUL and DEL", "a\x00b\x7f", `a\x00b\x7f`},
		{"line separator", "a\u2028b", `a\u2028b`},
		{"right-to-left override", "a\u202eb", `a\u202eb`},
		{"not UTF-8", "a\xffb", "a\uFFFDb"},
		{"not UTF-8 and a newline", "a\xff\nb", "a\uFFFD\\nb"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := printable.String(c.in); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}
