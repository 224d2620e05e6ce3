package markdown

import "testing"

func TestOpenFence(t *testing.T) {
	for _, tc := range []struct {
		text string
		want int
	}{
		{"", 0},
		{"no fences", 0},
		{"```\ncode\n```", 0},
		{"```go\ncode", 1},
		{"a\n\n~~~\nx\n```\n", 3},
		{"````\n```\n````", 0},
		{"```\n````", 0},
		{"    ```\nindented code, not a fence", 0},
		{"``` a`b\nnot a fence", 0},
		{"```\n```not closing\n", 1},
		{"```\r\ncode\r\n```\r\n", 0},
	} {
		if got := OpenFence(tc.text); got != tc.want {
			t.Errorf("OpenFence(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
}

func TestDedent(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"  a\n  b", "a\nb"},
		{"\n\t\ta\n\t\t  b\n\n\t\tc\n", "a\n  b\n\nc"},
		{"  a\n b", "a\nb"},
		{"a\n  b", "a\n  b"},
		{"  a\n   \n  b", "a\n\nb"},
		{"\t a\n\t b", "a\nb"},
	} {
		if got := Dedent(tc.in); got != tc.want {
			t.Errorf("dedent(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
