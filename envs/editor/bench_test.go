package editor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchFile writes a file of about size bytes to dir/name, with five
// sections of 1,000 lines near its end: "// section k" to "// end k".
func benchFile(b *testing.B, dir, name string, size int) {
	b.Helper()
	var sb strings.Builder
	sb.Grow(size + 1<<16)
	const filler = "    value = compute(value, %07d) // some filler text\n"
	lines := size / len(fmt.Sprintf(filler, 0))
	first := lines - 5*1000 - 10
	for i := 0; i < lines; i++ {
		if k := (i - first) / 1000; i >= first && k < 5 {
			switch (i - first) % 1000 {
			case 0:
				fmt.Fprintf(&sb, "// section %d\n", k)
				continue
			case 999:
				fmt.Fprintf(&sb, "// end %d\n", k)
				continue
			}
		}
		fmt.Fprintf(&sb, filler, i)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkScreen measures a screen with five views of 1,000 lines each,
// near the end of one file, read from disk through the confined root.
// "literal" patterns contain a literal the scan looks for first; "regex"
// ones (case-insensitive) are matched line by line.
func BenchmarkScreen(b *testing.B) {
	for _, size := range []struct {
		name  string
		bytes int
	}{{"1MB", 1 << 20}, {"10MB", 10 << 20}} {
		for _, kind := range []string{"literal", "regex"} {
			b.Run(size.name+"/"+kind, func(b *testing.B) {
				dir := b.TempDir()
				benchFile(b, dir, "big.go", size.bytes)
				e, err := New(dir, nil)
				if err != nil {
					b.Fatal(err)
				}
				defer e.Close()
				for k := range 5 {
					cmd := fmt.Sprintf("view big.go /^\\/\\/ section %d$/ /^\\/\\/ end %d$/", k, k)
					if kind == "regex" {
						cmd = fmt.Sprintf("view big.go /(?i)^// SECTION %d$/ /(?i)^// END %d$/", k, k)
					}
					if r, err := e.Execute(context.Background(), cmd); err != nil || !r.Success {
						b.Fatalf("%s: %+v %v", cmd, r, err)
					}
				}
				s, _ := e.Screen()
				if n := strings.Count(s.Content, "\n"); n < 5000 {
					b.Fatalf("screen has %d lines, want the five views of 1,000 lines", n)
				}
				b.ReportAllocs()
				b.SetBytes(int64(size.bytes))
				for b.Loop() {
					if _, err := e.Screen(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/screen")
			})
		}
	}
}

// BenchmarkSearch searches a tree of 2,000 files (40 directories of 50
// files of 40 lines) for a word on one line of each.
func BenchmarkSearch(b *testing.B) {
	dir := b.TempDir()
	var body strings.Builder
	for i := range 40 {
		if i == 20 {
			body.WriteString("\t// TODO: handle the error\n")
			continue
		}
		fmt.Fprintf(&body, "\tx%d := compute(%d) // filler line\n", i, i)
	}
	for d := range 40 {
		sub := filepath.Join(dir, fmt.Sprintf("pkg%02d", d))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 50 {
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%02d.go", f)), []byte(body.String()), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	e, err := New(dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	for _, q := range []string{`search "TODO" **/*.go`, `search "(?i)todo: handle" *.go`} {
		b.Run(strings.Fields(q)[1], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r, err := e.Execute(context.Background(), q)
				if err != nil || !r.Success || !strings.Contains(r.Output, "and 1900 more matches") {
					b.Fatalf("%+v %v", r, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/search")
		})
	}
}

// BenchmarkEditScreen measures one edit near the end of a 1 MB file (read,
// verify, splice, write to a temporary file and rename) followed by the
// screen that shows it, as the orchestrator runs them.
func BenchmarkEditScreen(b *testing.B) {
	dir := b.TempDir()
	benchFile(b, dir, "big.go", 1<<20)
	e, err := New(dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	if r, _ := e.Execute(context.Background(), `view big.go /^\/\/ section 2$/ /^\/\/ end 2$/`); !r.Success {
		b.Fatal(r.Output)
	}
	s, _ := e.Screen()
	line := strings.Fields(strings.Split(s.Content, "\n")[500])[0] // a line of view [1]
	cmd := "edit big.go " + line + "-" + line + "\n    value = 0"
	b.ReportAllocs()
	for b.Loop() {
		if r, _ := e.Execute(context.Background(), cmd); !r.Success {
			b.Fatal(r.Output)
		}
		if _, err := e.Screen(); err != nil {
			b.Fatal(err)
		}
	}
}
