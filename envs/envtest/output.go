package envtest

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/tokens"
)

// floodSize is how many bytes of output, at least, the WholeOutput check
// has the flood command print: at least this, and 16 times the output
// limit.
const floodSize = 1 << 20

// floodLines returns how many lines "line 1" to "line n" print at least
// size bytes.
func floodLines(size int) int {
	n, total := 0, 0
	for total < size {
		n++
		total += len("line \n") + len(strconv.Itoa(n))
	}
	return n
}

// checkWholeOutput floods more output than the environment keeps in
// memory, with no token budget and then with one: each response stays
// bounded, names a saved file, and the file holds every line in order. A
// quick command leaves no spool files, and Close leaves none either.
func checkWholeOutput(r reporter, s *suite) {
	if s.cfg.Flood == nil || s.cfg.OutputLimit == 0 {
		r.Skipf("envtest: no command that prints many lines (WithFlood) or no output limit (WithOutputLimit)")
		return
	}
	tmp := s.tempDir()
	s.setenv("TMPDIR", tmp)
	env := s.newEnv()
	le, _ := limited(env)
	if !s.limitedWorks(r, le, "the start") {
		return
	}
	if left := spoolFiles(r, tmp); len(left) > 0 {
		r.Errorf("after a quick command: got %q in the temporary directory, want no file: spool only past the output limit", left)
		return
	}
	lines := floodLines(max(floodSize, 16*s.cfg.OutputLimit))
	save := saveIn(s.tempDir(), "out")
	for _, c := range []struct {
		name   string
		budget int
	}{{"no budget", -1}, {"a budget", 2000}} {
		resp, ok := s.limitedRun(r, context.Background(), le, s.cfg.Flood(lines), envs.Limits{Quiet: -1, Budget: c.budget, Save: save})
		if !ok {
			return
		}
		if resp.Running {
			r.Errorf("%s: a flood of output with no quiet limit: got Running, want the command to end", c.name)
			return
		}
		if c.budget > 0 {
			if got := tokens.Estimate.Count(resp.Output); got > c.budget {
				r.Errorf("%s: a response under a budget of %d tokens: got %d tokens", c.name, c.budget, got)
			}
		} else if bound := s.cfg.OutputLimit + 8<<10; len(resp.Output) > bound {
			r.Errorf("%s: a response of output past the limit of %d bytes kept in memory: got %d bytes, want at most about the limit (%d)", c.name, s.cfg.OutputLimit, len(resp.Output), bound)
		}
		last := fmt.Sprintf("line %d", lines)
		if !strings.HasPrefix(resp.Output, "line 1\n") || !strings.Contains(resp.Output, last) {
			r.Errorf("%s: a cut response: got %q, want its head (line 1) and its tail (%s)", c.name, clip(resp.Output), last)
		}
		if resp.OutputFile == "" || !strings.Contains(resp.Output, resp.OutputFile) {
			r.Errorf("%s: a cut response: got OutputFile %q and output %q, want the file that holds the whole output, named in the output", c.name, resp.OutputFile, clip(resp.Output))
			return
		}
		if !inOrder(r, c.name, resp.OutputFile, lines) {
			return
		}
	}
	if !s.limitedWorks(r, le, "output past the limit") {
		return
	}
	closeBounded(r, env, s.cfg.timeout())
	if left := spoolFiles(r, tmp); len(left) > 0 {
		r.Errorf("after Close: got %q in the temporary directory, want every spool file removed", left)
	}
}

// inOrder checks that the file name holds the lines "line 1" to "line n",
// each once and in order; other lines (notes, echoed input) may come
// between.
func inOrder(r reporter, what, name string, n int) bool {
	data, err := os.ReadFile(name)
	if err != nil {
		r.Errorf("%s: the saved output: %v", what, err)
		return false
	}
	next := 1
	for l := range strings.Lines(string(data)) {
		num, ok := strings.CutPrefix(strings.TrimRight(l, "\r\n"), "line ")
		if !ok {
			continue
		}
		if num != strconv.Itoa(next) {
			r.Errorf("%s: the saved output (%d bytes): got %q where line %d belongs, want every line in order", what, len(data), "line "+num, next)
			return false
		}
		next++
	}
	if next != n+1 {
		r.Errorf("%s: the saved output (%d bytes): got lines up to %d, want %d", what, len(data), next-1, n)
		return false
	}
	return true
}

// saveIn returns a [envs.Limits.Save] that saves each output to a new
// file in dir: prefix-1.txt, prefix-2.txt, ...
func saveIn(dir, prefix string) func(io.Reader) (string, error) {
	n := 0
	return func(output io.Reader) (string, error) {
		n++
		name := filepath.Join(dir, fmt.Sprintf("%s-%d.txt", prefix, n))
		f, err := os.Create(name)
		if err != nil {
			return "", err
		}
		_, err = io.Copy(f, output)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return name, err
	}
}

// spoolFiles lists what is left in dir, the temporary directory.
func spoolFiles(r reporter, dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		r.Errorf("reading the temporary directory: %v", err)
		return nil
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// clip shortens long output for messages: its start and its end.
func clip(s string) string {
	if len(s) <= 400 {
		return s
	}
	return s[:200] + " ... " + s[len(s)-200:]
}
