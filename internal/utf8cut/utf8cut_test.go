package utf8cut

import (
	"testing"
	"unicode/utf8"
)

func TestPrefix(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"hello", 10, "hello"},
		{"hello", 5, "hello"},
		{"hello", 3, "hel"},
		{"hello", 0, ""},
		{"hello", -1, ""},
		{"héllo", 2, "h"},      // é is 2 bytes at 1..2: not split
		{"héllo", 3, "hé"},     // ends right after é
		{"日本", 4, "日"},         // 3-byte runes
		{"日本", 2, ""},          // nothing fits whole
		{"a\xffb", 2, "a\xff"}, // an invalid byte is a start of its own
	} {
		got := Prefix(c.s, c.n)
		if got != c.want {
			t.Errorf("Prefix(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
		if utf8.ValidString(c.s) && !utf8.ValidString(got) {
			t.Errorf("Prefix(%q, %d) = %q split a sequence", c.s, c.n, got)
		}
	}
}

func TestPartial(t *testing.T) {
	for _, c := range []struct {
		b    string
		want int
	}{
		{"", 0},
		{"caf", 0},
		{"café", 0},
		{"caf\xc3", 1},           // the first of é's two bytes
		{"\xe6\x97", 2},          // two of 日's three bytes
		{"a\xf0\x9f\x98", 3},     // three of an emoji's four bytes
		{"a\xf0\x9f\x98\x80", 0}, // the emoji whole
		{"a\xff", 0},             // no byte can make it valid
		{"a\x80", 0},             // a stray continuation byte
		{"\x80\x80\x80\x80", 0},  // no start within reach
	} {
		if got := Partial([]byte(c.b)); got != c.want {
			t.Errorf("Partial(%q) = %d, want %d", c.b, got, c.want)
		}
	}
}
