package envs

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KB", 1536: "1.5 KB", 10 << 20: "10.0 MB", 3 << 30: "3.0 GB"} {
		if got := formatBytes(n); got != want {
			t.Errorf("formatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestValidReader: read whole or a byte at a time, what passes is what
// strings.ToValidUTF8 makes of the text: characters cut by a read are
// whole, and a run of invalid bytes across reads is one U+FFFD.
func TestValidReader(t *testing.T) {
	for _, in := range []string{
		"",
		"abc",
		"a\xffb",
		"a\xff\xfe\xfdb",
		"é\xffé",
		"\xff\xff",
		"ends cut \xc3",
		strings.Repeat("é", 20000) + "\xff\xfe" + strings.Repeat("x", 40000) + "\xe2\x82",
	} {
		want := strings.ToValidUTF8(in, "\uFFFD")
		for name, r := range map[string]func() io.Reader{
			"whole":       func() io.Reader { return strings.NewReader(in) },
			"byte a time": func() io.Reader { return iotest.OneByteReader(strings.NewReader(in)) },
		} {
			got, err := io.ReadAll(&validReader{r: r()})
			if err != nil || string(got) != want {
				t.Errorf("%s, %.40q: got %.40q (%d bytes), %v; want %.40q (%d bytes)", name, in, got, len(got), err, want, len(want))
			}
		}
	}
}
