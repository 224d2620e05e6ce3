package editor

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
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

// BenchmarkScreen measures a screen with five views of 1,000 lines each
// (drawn within the views' byte budget), near the end of one file, read from disk through the confined root.
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
				// Each view resolves its 1,000 lines; the screen draws
				// those that fit the views' byte budget.
				s, _ := e.Screen()
				if n := strings.Count(s.Content, "] big.go /"); n != 5 {
					b.Fatalf("screen has %d views of big.go, want five", n)
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

// writeSearchTree writes 2,000 files (40 directories of 50 files of 40
// lines) with a word on one line of each.
func writeSearchTree(b *testing.B, dir string) {
	b.Helper()
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
}

// BenchmarkSearch searches a tree of 2,000 files for a word on one line of
// each.
func BenchmarkSearch(b *testing.B) {
	dir := b.TempDir()
	writeSearchTree(b, dir)
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

// BenchmarkSearchGrep runs search and grep -rn side by side on the same
// 2,000 files, alternating, and reports each one's time and their ratio
// (search over grep; below 1 means search is faster). Both list every
// matching line, and the lists are checked equal first. grep runs as a
// process, as an agent would run it, so its time includes starting it.
func BenchmarkSearchGrep(b *testing.B) {
	grep, err := exec.LookPath("grep")
	if err != nil {
		b.Skip("grep is not installed")
	}
	dir := b.TempDir()
	writeSearchTree(b, dir)
	e, err := New(dir, nil, WithMaxMatches(10_000))
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	const query = `search "TODO" *.go`
	searchLines := func() ([]string, error) {
		r, err := e.Execute(context.Background(), query)
		if err != nil || !r.Success {
			return nil, fmt.Errorf("%s: %+v %v", query, r, err)
		}
		lines := strings.Split(r.Output, "\n")
		return lines[1 : len(lines)-1], nil // without "Matches:" and "Searched ..."
	}
	grepLines := func() ([]string, error) {
		cmd := exec.Command(grep, "-rn", "TODO", "--include=*.go", ".")
		cmd.Dir = dir
		out, err := cmd.Output()
		return strings.Split(strings.TrimSuffix(string(out), "\n"), "\n"), err
	}
	got, err := searchLines()
	if err != nil {
		b.Fatal(err)
	}
	want, err := grepLines()
	if err != nil {
		b.Fatal(err)
	}
	for i, l := range got {
		got[i] = strings.Replace(strings.TrimPrefix(l, "  "), ": ", ":", 1)
	}
	for i, l := range want {
		want[i] = strings.TrimPrefix(l, "./")
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		b.Fatalf("search and grep differ: %d lines and %d lines", len(got), len(want))
	}
	var searchTime, grepTime time.Duration
	for b.Loop() {
		t0 := time.Now()
		if _, err := searchLines(); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := grepLines(); err != nil {
			b.Fatal(err)
		}
		searchTime += t1.Sub(t0)
		grepTime += time.Since(t1)
	}
	b.ReportMetric(float64(searchTime.Microseconds())/1000/float64(b.N), "ms/search")
	b.ReportMetric(float64(grepTime.Microseconds())/1000/float64(b.N), "ms/grep")
	b.ReportMetric(float64(searchTime)/float64(grepTime), "search/grep")
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
