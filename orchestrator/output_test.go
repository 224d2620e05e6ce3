//go:build linux

package orchestrator

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/envs/bash"
	"github.com/unfold-dev/unfold/envs/python"
	"github.com/unfold-dev/unfold/tokens"
)

// TestServeWholeOutput (item 4): output far past what an environment
// keeps in memory comes back cut to the budget, and the file under the
// project's context/output that the response names holds all of it,
// every line in order, for bash, python and a process environment. Once
// the environments close, no spool file is left in the temporary
// directory.
func TestServeWholeOutput(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dir := t.TempDir()
	const limit = 64 << 10
	c, o := serveWith(t, dir, []bash.Option{bash.WithOutputLimit(limit)}, []python.Option{python.WithOutputLimit(limit)})
	p := newFake(t, "counter")
	p.spec.OutputLimit = limit
	if err := o.Register("counter", p); err != nil {
		t.Fatal(err)
	}
	const n = 100000 // 1.1 MB of lines
	for _, cmd := range []struct{ env, command string }{
		{"bash", "seq -f 'line %g' " + strconv.Itoa(n)},
		{"python", "for i in range(1, " + strconv.Itoa(n+1) + "):\n    print('line', i)"},
		{"counter", "flood " + strconv.Itoa(n)},
	} {
		resp := c.do(map[string]any{"environment": cmd.env, "command": cmd.command})
		if got := tokens.Estimate.Count(resp.Output); got > DefaultOutputBudget {
			t.Errorf("%s: got %d tokens, want at most the budget of %d", cmd.env, got, DefaultOutputBudget)
		}
		if !strings.HasPrefix(resp.OutputFile, "context/output/"+cmd.env+"-") || !strings.Contains(resp.Output, "the whole output is saved in "+resp.OutputFile) ||
			!strings.HasPrefix(resp.Output, "line 1\n") || !strings.HasSuffix(strings.TrimSpace(resp.Output), "line "+strconv.Itoa(n)) {
			t.Errorf("%s: got OutputFile %q and output %q, want the head, the tail and a note naming a file under context/output", cmd.env, resp.OutputFile, resp.Output)
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, resp.OutputFile))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		if len(lines) != n {
			t.Errorf("%s: the saved output: got %d lines, want %d", cmd.env, len(lines), n)
			continue
		}
		for i, l := range lines {
			if l != "line "+strconv.Itoa(i+1) {
				t.Errorf("%s: the saved output: got %q as line %d, want every line in order", cmd.env, l, i+1)
				break
			}
		}
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		var names []string
		for _, e := range left {
			names = append(names, e.Name())
		}
		t.Errorf("after Close: got %q in the temporary directory, want no spool file left", names)
	}
}
