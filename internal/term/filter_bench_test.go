package term

import (
	"io"
	"strings"
	"testing"
)

// BenchmarkFilter measures the filter on 1 MB of output, written in
// 64 KB pieces as a reader hands them on: short lines, one line with no
// newline, progress frames ended by carriage returns, colored lines, and
// lines with a window title and a hyperlink (OSC strings).
func BenchmarkFilter(b *testing.B) {
	inputs := []struct{ name, text string }{
		{"lines", strings.Repeat("a line of output as most programs print it\n", 1<<20/43)},
		{"one long line", strings.Repeat("0123456789", 1<<20/10)},
		{"progress", strings.Repeat("\rprogress  42.0% |#####################                |", 1<<20/58)},
		{"colored", strings.Repeat("\x1b[1;32mok\x1b[0m a line with color\n", 1<<20/34)},
		{"osc", strings.Repeat("\x1b]0;build: step 3 of 9\x07see \x1b]8;;https://example.com/docs/errors#E42\x1b\\E42\x1b]8;;\x1b\\ for details\n", 1<<20/92)},
	}
	for _, in := range inputs {
		data := []byte(in.text)
		b.Run(in.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				f := NewFilter(io.Discard)
				for p := data; len(p) > 0; {
					n := min(len(p), 64<<10)
					_, _ = f.Write(p[:n])
					p = p[n:]
				}
				_ = f.Flush()
			}
		})
	}
}
