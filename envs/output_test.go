package envs_test

import (
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/envs"
)

func TestOutput(t *testing.T) {
	for _, tc := range []struct {
		name   string
		limit  int
		writes []string
		want   string
	}{
		{"fits", 10, []string{"abc", "de"}, "abcde"},
		{"exactly full", 4, []string{"abcd"}, "abcd"},
		{"one big write", 4, []string{"abcdefgh"}, "ab\n[... 4 B of output dropped; showing the first 2 B and the last 2 B ...]\ngh"},
		{"many small writes wrap the ring", 4, []string{"a", "b", "c", "d", "e", "f", "g"}, "ab\n[... 3 B of output dropped; showing the first 2 B and the last 2 B ...]\nfg"},
		{"head ends with newline", 6, []string{"ab\n", "cdefghij"}, "ab\n[... 5 B of output dropped; showing the first 3 B and the last 3 B ...]\nhij"},
		{"invalid utf-8", 10, []string{"a\xff\xfeb"}, "a\uFFFDb"},
		{"split rune", 4, []string{"é", "xx", "é"}, "é\n[... 2 B of output dropped; showing the first 2 B and the last 2 B ...]\né"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := envs.NewOutput(tc.limit)
			total := 0
			for _, w := range tc.writes {
				n, err := o.Write([]byte(w))
				if err != nil || n != len(w) {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
				total += n
			}
			if got := o.String(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if o.Total() != int64(total) {
				t.Errorf("Total: got %d, want %d", o.Total(), total)
			}
		})
	}
}

// TestOutputBounded writes 50 MB through a 1 MB output: what is kept stays
// at the limit and the newest bytes survive.
func TestOutputBounded(t *testing.T) {
	o := envs.NewOutput(1 << 20)
	chunk := []byte(strings.Repeat("y\n", 4096))
	for range (50 << 20) / len(chunk) {
		_, _ = o.Write(chunk)
	}
	_, _ = o.Write([]byte("END\n"))
	s := o.String()
	if len(s) > 1<<20+200 {
		t.Errorf("kept %d bytes, want at most the 1 MB limit plus the notice", len(s))
	}
	if !strings.HasSuffix(s, "y\nEND\n") || !strings.Contains(s, "MB of output dropped") {
		t.Errorf("tail or notice missing: ...%q", s[len(s)-40:])
	}
	if o.Dropped() != o.Total()-1<<20 {
		t.Errorf("Dropped: got %d, want %d", o.Dropped(), o.Total()-1<<20)
	}
}
