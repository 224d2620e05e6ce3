//go:build linux

package orchestrator

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/envs"
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

// TestSavedOutputBounded: floods through bash and python, one after
// another, each save a file within the limit on one saved output, and
// together no more than the limit on their total: the oldest go, the one
// each response names stays, and a file of the project's own there is
// left alone.
func TestSavedOutputBounded(t *testing.T) {
	for _, p := range []string{"bash", "python3"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("%s is not installed", p)
		}
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "context", "output")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(out, "notes.txt")
	if err := os.WriteFile(notes, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const file, total = 128 << 10, 400 << 10
	o := mustNew(t, WithProject(dir), WithOutputBudget(DefaultOutputBudget), WithSavedOutputLimits(file, total))
	sh, err := bash.New(bash.WithDir(dir), bash.WithOutputLimit(32<<10))
	if err != nil {
		t.Fatal(err)
	}
	py, err := python.New(python.WithDir(dir), python.WithOutputLimit(32<<10))
	if err != nil {
		t.Fatal(err)
	}
	for name, env := range map[string]envs.Env{"bash": sh, "python": py} {
		if err := o.Register(name, env); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { o.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for i := range 6 {
		cmd := Command{Environment: "bash", Text: "yes | head -c 2000000"}
		if i%2 == 1 {
			cmd = Command{Environment: "python", Text: "for _ in range(500): print('y\\n' * 2000, end='')"}
		}
		resp := o.Run(ctx, cmd).Response
		if !strings.HasPrefix(resp.OutputFile, "context/output/"+cmd.Environment+"-") ||
			!strings.Contains(resp.Output, "of its middle, left out as a saved output holds at most 128.0 KB (the file marks the place)") {
			t.Fatalf("%s: got OutputFile %q and output %q, want a file under context/output and a note saying what it leaves out", cmd.Environment, resp.OutputFile, resp.Output)
		}
		fi, err := os.Stat(filepath.Join(dir, resp.OutputFile))
		if err != nil {
			t.Fatalf("%s: the file the response names: %v", cmd.Environment, err)
		}
		if fi.Size() > file+200 {
			t.Errorf("%s: the saved output takes %d bytes, want at most %d and a note", cmd.Environment, fi.Size(), file)
		}
		es, err := os.ReadDir(out)
		if err != nil {
			t.Fatal(err)
		}
		var sum int64
		for _, e := range es {
			if info, err := e.Info(); err == nil && e.Name() != "notes.txt" {
				sum += info.Size()
			}
		}
		if sum > total {
			t.Errorf("after %d saves: the saved outputs take %d bytes, want at most %d", i+1, sum, total)
		}
	}
	if data, err := os.ReadFile(notes); err != nil || string(data) != "mine\n" {
		t.Errorf("the project's own file: got %q, %v; want it untouched", data, err)
	}
}

// TestSavedOutputWithoutProject checks that, without a project, the
// outputs cut to their budget are saved in a directory of the
// orchestrator's own under the system's temporary directory, bounded in
// total, and removed by Close: a long-lived process does not fill the
// temporary directory.
func TestSavedOutputWithoutProject(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	big := strings.Repeat("y ", 1<<20)
	env := &testEnv{execute: func(context.Context, string) (envs.Response, error) {
		return envs.Response{Output: big, Success: true}, nil
	}}
	const total = 5 << 20 // two outputs of 2 MiB fit, not three
	o := mustNew(t, WithOutputBudget(DefaultOutputBudget), WithSavedOutputLimits(0, total))
	if err := o.Register("one", env); err != nil {
		t.Fatal(err)
	}
	var files []string
	for range 4 {
		resp := o.Execute(context.Background(), "one", "big").Response
		if resp.OutputFile == "" || !filepath.IsAbs(resp.OutputFile) || !strings.HasPrefix(resp.OutputFile, tmp+string(filepath.Separator)) {
			t.Fatalf("OutputFile %q: want an absolute path under %s", resp.OutputFile, tmp)
		}
		if data, err := os.ReadFile(resp.OutputFile); err != nil || string(data) != big {
			t.Fatalf("the file the response names holds %d bytes (%v), want the whole output", len(data), err)
		}
		files = append(files, resp.OutputFile)
	}
	dir := filepath.Dir(files[0])
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 2 {
		t.Errorf("%d files in %s, want the 2 newest within %d bytes", len(es), dir, total)
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("after Close, %s holds %d entries, want none", tmp, len(left))
	}
}
