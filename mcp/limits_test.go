//go:build linux

package mcp_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/envs/bash"
	"github.com/unfold-dev/unfold/envs/interactive"
	"github.com/unfold-dev/unfold/envs/python"
	"github.com/unfold-dev/unfold/mcp"
	"github.com/unfold-dev/unfold/orchestrator"
	"github.com/unfold-dev/unfold/session"
)

// setupShells serves a bash and a python environment working in project,
// with the project's context directory for output cut to its budget, as
// unfold mcp has them; more, when given, adds to the orchestrator before
// the server is made.
func setupShells(t *testing.T, project string, more ...func(*orchestrator.Orchestrator)) (*client, *orchestrator.Orchestrator) {
	t.Helper()
	for _, p := range []string{"bash", "python3"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("%s is not installed", p)
		}
	}
	sess := session.New()
	o, err := orchestrator.New(orchestrator.WithSession(sess), orchestrator.WithProject(project),
		orchestrator.WithOutputBudget(orchestrator.DefaultOutputBudget))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	sh, err := bash.New(bash.WithDir(project))
	if err != nil {
		t.Fatal(err)
	}
	py, err := python.New(python.WithDir(project))
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Register("bash", sh); err != nil {
		t.Fatal(err)
	}
	if err := o.Register("python", py); err != nil {
		t.Fatal(err)
	}
	for _, f := range more {
		f(o)
	}
	s, err := mcp.New(only(o), mcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, ct := sdk.NewInMemoryTransports()
	ss, err := s.Connect(t.Context(), st)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	return connect(t, ct), o
}

// run calls an environment's tool and returns its structured output,
// checking that only a command that ended and failed is an error result.
func run(t *testing.T, c *client, env string, args map[string]any) orchestrator.CommandOutput {
	t.Helper()
	res := call(t, c, env, args)
	out := structured(t, res)
	if res.IsError != (!out.Success && !out.Running) {
		t.Errorf("%s %v: got isError %v for %+v, want it only for a command that ended and failed", env, args, res.IsError, out)
	}
	if got := texts(res); len(got) == 0 || got[0] != out.Output && !(out.Output == "" && got[0] == "(no output)") {
		t.Errorf("%s %v: got text %q, want the output %q", env, args, got, out.Output)
	}
	return out
}

// gather calls env's tool with empty commands, and the extra arguments
// given, while out says its command runs and the output so far lacks
// want; it returns the output of out and of every result after it. Tests
// wait for output this way, not for a set time.
func gather(t *testing.T, c *client, env string, out orchestrator.CommandOutput, args map[string]any, want string) string {
	t.Helper()
	all := out.Output
	for range 400 {
		if !out.Running || strings.Contains(all, want) {
			break
		}
		next := map[string]any{"command": ""}
		for k, v := range args {
			next[k] = v
		}
		out = run(t, c, env, next)
		all += "\n" + out.Output
	}
	return all
}

// timedOut matches the note of a command a hard limit interrupted (the
// time it gives is measured, so it is not matched).
var timedOut = regexp.MustCompile(`\[Timed out after [0-9.]+m?s\. Interrupted it with Ctrl-C\.`)

// TestSoftLimitOverMCP (item 1): a command still running at its quiet
// limit or timeout comes back marked running, with the output so far, and
// is not an error; C-c interrupts it; with hard, the timeout does.
func TestSoftLimitOverMCP(t *testing.T) {
	c, _ := setupShells(t, t.TempDir())
	out := run(t, c, "bash", map[string]any{"command": "echo started; sleep 600", "quiet": 0.3})
	if !out.Running || !strings.HasSuffix(out.Output, envs.RunningNote("no new output for 300ms")) {
		t.Errorf("quiet: got %+v, want it running", out)
	}
	if all := gather(t, c, "bash", out, map[string]any{"quiet": 0.3}, "started"); !strings.HasPrefix(all, "started\n") {
		t.Errorf("quiet: got %q, want the output so far", all)
	}
	if !strings.Contains(out.Screen, "Running: echo started; sleep 600") {
		t.Errorf("screen: got %q, want the running command", out.Screen)
	}
	if out = run(t, c, "bash", map[string]any{"command": "C-c"}); out.Running || !strings.Contains(out.Output, "Interrupted it with Ctrl-C") {
		t.Errorf("C-c: got %+v, want it interrupted", out)
	}
	if out = run(t, c, "bash", map[string]any{"command": "sleep 600", "timeout": 0.3}); !out.Running || out.Output != envs.RunningNote("the time limit passed") {
		t.Errorf("timeout: got %+v, want it running", out)
	}
	run(t, c, "bash", map[string]any{"command": "C-c"})
	if out = run(t, c, "bash", map[string]any{"command": "sleep 600", "timeout": 0.3, "hard": true}); out.Running || !timedOut.MatchString(out.Output) {
		t.Errorf("hard: got %+v, want it interrupted", out)
	}
}

// TestContinueOverMCP (item 2): empty commands return only the new output,
// marked running, until the command ends with its status and screen.
func TestContinueOverMCP(t *testing.T) {
	dir := t.TempDir()
	c, _ := setupShells(t, dir)
	trigger := filepath.Join(dir, "go")
	out := run(t, c, "python", map[string]any{"command": fmt.Sprintf("import os, time\nprint('one')\nwhile not os.path.exists(%q):\n    time.sleep(0.05)\nprint('two')\n'done'", trigger), "quiet": 0.5})
	if all := gather(t, c, "python", out, map[string]any{"quiet": 0.5}, "one"); !out.Running || !strings.HasPrefix(all, "one\n") {
		t.Fatalf("got %+v, then %q, want it running after one", out, all)
	}
	if err := os.WriteFile(trigger, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for range 100 {
		if out = run(t, c, "python", map[string]any{"command": "", "quiet": 0.5}); !out.Running {
			break
		}
	}
	if !out.Success || out.Output != "two\n'done'" {
		t.Errorf("the end: got %+v, want only the new output and success", out)
	}
}

// TestInputOverMCP (item 3): a command waiting for input comes back
// waiting, with its question; the next call answers it; a secret is
// recorded as hidden.
func TestInputOverMCP(t *testing.T) {
	c, o := setupShells(t, t.TempDir())
	out := run(t, c, "bash", map[string]any{"command": "read -p 'Continue? [y/N] ' a; echo \"answer $a\""})
	if !out.Waiting || out.Prompt != "Continue? [y/N]" || out.Hidden {
		t.Fatalf("got %+v, want it waiting for an answer", out)
	}
	if out = run(t, c, "bash", map[string]any{"command": "y"}); out.Output != "answer y" || !out.Success {
		t.Errorf("after the answer: got %+v, want answer y", out)
	}
	out = run(t, c, "bash", map[string]any{"command": "read -s -p 'Password: ' pw; echo ${#pw}"})
	if !out.Waiting || !out.Hidden {
		t.Fatalf("got %+v, want it waiting for a hidden answer", out)
	}
	if out = run(t, c, "bash", map[string]any{"command": "hunter2"}); out.Output != "\n7" && out.Output != "7" {
		t.Errorf("after the secret: got %+v, want its length", out)
	}
	for _, e := range o.Session().Events() {
		if strings.Contains(fmt.Sprint(e), "hunter2") {
			t.Errorf("the session recorded the secret: %v", e)
		}
	}
}

// TestBudgetOverMCP (item 4): a reply over its budget keeps the head and
// the tail and names the file in the project's context directory.
func TestBudgetOverMCP(t *testing.T) {
	dir := t.TempDir()
	c, _ := setupShells(t, dir)
	out := run(t, c, "bash", map[string]any{"command": "seq 5000", "budget": 300})
	if !strings.HasPrefix(out.Output, "1\n2\n") || !strings.HasSuffix(out.Output, "5000") || !strings.HasPrefix(out.OutputFile, "context/output/bash-") {
		t.Fatalf("got %+v, want the head, the tail and the file", out)
	}
	data, err := os.ReadFile(filepath.Join(dir, out.OutputFile))
	if err != nil || strings.Count(string(data), "\n") != 4999 {
		t.Errorf("the saved output: %d lines, %v; want 5000 lines", strings.Count(string(data), "\n")+1, err)
	}
}

// TestWholeOutputOverMCP: output past an environment's memory limit is
// cut in the reply and saved whole, every line in order, under the
// project's context/output.
func TestWholeOutputOverMCP(t *testing.T) {
	dir := t.TempDir()
	c, _ := setupShells(t, dir, func(o *orchestrator.Orchestrator) {
		small, err := bash.New(bash.WithDir(dir), bash.WithOutputLimit(64<<10))
		if err != nil {
			t.Fatal(err)
		}
		if err := o.Register("small", small); err != nil {
			t.Fatal(err)
		}
	})
	const n = 100000 // about 1.1 MB, past the 64 KB limit
	out := run(t, c, "small", map[string]any{"command": fmt.Sprintf("seq -f 'line %%g' %d", n)})
	if !strings.HasPrefix(out.Output, "line 1\n") || !strings.HasSuffix(out.Output, fmt.Sprintf("line %d", n)) || !strings.HasPrefix(out.OutputFile, "context/output/small-") {
		t.Fatalf("got output file %q and %d bytes of output, want the head, the tail and a file under context/output", out.OutputFile, len(out.Output))
	}
	data, err := os.ReadFile(filepath.Join(dir, out.OutputFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != n {
		t.Fatalf("the saved output: got %d lines, want %d", len(lines), n)
	}
	for i, l := range lines {
		if l != fmt.Sprintf("line %d", i+1) {
			t.Fatalf("the saved output: got %q as line %d, want every line in order", l, i+1)
		}
	}
}

// TestQueueOverMCP (item 5): a long command in one environment does not
// hold up a call to another; a call queued behind the long one comes back
// at its own timeout.
func TestQueueOverMCP(t *testing.T) {
	dir := t.TempDir()
	c, _ := setupShells(t, dir)
	trigger := filepath.Join(dir, "go")
	var wg sync.WaitGroup
	var long orchestrator.CommandOutput
	wg.Go(func() {
		long = run(t, c, "bash", map[string]any{"command": fmt.Sprintf("while [ ! -e %s ]; do sleep 0.05; done; echo long done", trigger), "quiet": 600})
	})
	// While bash runs its long command, python answers, and a second bash
	// call comes back at its own timeout, not run.
	for range 100 {
		out := run(t, c, "bash", map[string]any{"command": "echo queued", "timeout": 0.3})
		if strings.HasPrefix(out.Output, "[Not run: an earlier command held the environment") {
			break
		}
	}
	if out := run(t, c, "python", map[string]any{"command": "6 * 7"}); out.Output != "42" {
		t.Errorf("python while bash runs: got %+v, want 42", out)
	}
	if err := os.WriteFile(trigger, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if long.Output != "long done" || !long.Success {
		t.Errorf("the long command: got %+v, want it done", long)
	}
}

// TestREPLOverMCP (item 6): several lines sent at once to a REPL come back
// as its output, without the prompts it printed between them; a spec file
// changed while serving is picked up by the next call.
func TestREPLOverMCP(t *testing.T) {
	for _, p := range []string{"python3", "sh"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("%s is not installed", p)
		}
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "env"), 0o755); err != nil {
		t.Fatal(err)
	}
	spec := func(desc string) []byte {
		return []byte(`{"kind":"process","executable":"sh","args":["env/count.sh"],"description":"` + desc + `"}`)
	}
	script := `n=0
while IFS= read -r line; do
  case "$line" in
    *'"type":"screen"'*) printf '{"type":"screen","content":"%d commands"}\n' "$n" ;;
    *'"type":"execute"'*) n=$((n+1)); printf '{"type":"response","output":"ran %d","success":true}\n' "$n" ;;
    *'"type":"shutdown"'*) exit 0 ;;
  esac
done
`
	if err := os.WriteFile(filepath.Join(dir, "env", "count.sh"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "env", "count.json"), spec("first"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, _ := setupShells(t, dir, func(o *orchestrator.Orchestrator) {
		e, err := interactive.New(interactive.Spec{Command: "python3 -i -q", Prompt: `>>> `, Description: "Python REPL"})
		if err != nil {
			t.Fatal(err)
		}
		if err := o.Register("repl", e); err != nil {
			t.Fatal(err)
		}
		if err := o.LoadSpecs(dir); err != nil {
			t.Fatal(err)
		}
	})
	out := run(t, c, "repl", map[string]any{"command": "def f(x):\n    y = x * 2\n    return y\n\nprint(f(21))\nfor i in range(2):\n    print(i)\n\n"})
	if out.Output != "42\n0\n1" || !out.Success {
		t.Errorf("several lines: got %+v, want the output without prompts", out)
	}
	run(t, c, "count", map[string]any{"command": "one"})
	if out = run(t, c, "count", map[string]any{"command": "two"}); out.Output != "ran 2" {
		t.Fatalf("the spec file's environment: got %+v, want ran 2", out)
	}
	if err := os.WriteFile(filepath.Join(dir, "env", "count.json"), spec("second"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out = run(t, c, "count", map[string]any{"command": "three"}); out.Output != "[count was stopped because env/count.json changed; its state from before was lost.]\nran 1" || out.Screen != "1 commands" {
		t.Errorf("after the spec file changed: got %+v, want a new environment", out)
	}
}

// TestBrokenShellOverMCP (item 7): a command that breaks the shell says so
// and that the state was lost, and the next call gets a fresh shell;
// output comes as printed; Python runs !commands.
func TestBrokenShellOverMCP(t *testing.T) {
	c, _ := setupShells(t, t.TempDir())
	run(t, c, "bash", map[string]any{"command": "LOST=no"})
	out := run(t, c, "bash", map[string]any{"command": "ulimit -n 3"})
	if out.Success || !strings.Contains(out.Output, "[The shell can no longer run commands: it may open only 3 files") ||
		!strings.Contains(out.Output, "aliases and background jobs are lost") {
		t.Errorf("ulimit -n 3: got %+v, want a failure that says the shell broke and its state was lost", out)
	}
	if out = run(t, c, "bash", map[string]any{"command": `echo "LOST=$LOST"`}); !out.Success || !strings.HasSuffix(out.Output, "\nLOST=") {
		t.Errorf("the next call: got %+v, want a fresh shell", out)
	}
	if out = run(t, c, "bash", map[string]any{"command": `printf 'a\n\n\n'`}); out.Output != "a\n\n" {
		t.Errorf("blank lines at the end: got %q, want them as printed", out.Output)
	}
	if out = run(t, c, "python", map[string]any{"command": "!echo from the shell"}); out.Output != "from the shell" || !out.Success {
		t.Errorf("!echo: got %+v, want the shell's output", out)
	}
}
