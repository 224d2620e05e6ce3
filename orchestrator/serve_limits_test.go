//go:build linux

package orchestrator

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/envs/bash"
	"github.com/unfold-dev/unfold/envs/interactive"
	"github.com/unfold-dev/unfold/envs/python"
	"github.com/unfold-dev/unfold/session"
)

// client drives Serve line by line over pipes, as a program would.
type client struct {
	t    *testing.T
	in   *io.PipeWriter
	out  *bufio.Scanner
	done chan error
}

// wire is a response or error line as a client reads it.
type wire struct {
	Type     string                 `json:"type"`
	ID       json.RawMessage        `json:"id"`
	Message  string                 `json:"message"`
	Response envs.Response          `json:"response"`
	Screen   map[string]envs.Screen `json:"screen"`
}

// serveReal starts Serve over o, with bash and python in project (and the
// session, the output budget and the project as unfold serve has them).
func serveReal(t *testing.T, project string) (*client, *Orchestrator) {
	t.Helper()
	return serveWith(t, project, nil, nil)
}

// serveWith is serveReal with options for bash and python.
func serveWith(t *testing.T, project string, bashOpts []bash.Option, pyOpts []python.Option) (*client, *Orchestrator) {
	t.Helper()
	for _, p := range []string{"bash", "python3"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("%s is not installed", p)
		}
	}
	sess := session.New()
	o := mustNew(t, WithSession(sess), WithProject(project), WithOutputBudget(DefaultOutputBudget), WithInteractive(newInteractive))
	sh, err := bash.New(append([]bash.Option{bash.WithDir(project)}, bashOpts...)...)
	if err != nil {
		t.Fatal(err)
	}
	py, err := python.New(append([]python.Option{python.WithDir(project)}, pyOpts...)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Register("bash", sh); err != nil {
		t.Fatal(err)
	}
	if err := o.Register("python", py); err != nil {
		t.Fatal(err)
	}
	if err := o.LoadSpecs(project); err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &client{t: t, in: inW, out: bufio.NewScanner(outR), done: make(chan error, 1)}
	c.out.Buffer(make([]byte, 1<<20), 64<<20)
	go func() {
		c.done <- o.Serve(context.Background(), inR, outW)
		outW.Close()
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case err := <-c.done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(time.Minute):
			t.Error("Serve did not end after the end of input")
		}
	})
	return c, o
}

// newInteractive makes an interactive spec file's environment, as unfold
// serve does.
func newInteractive(s InteractiveSpec) (envs.Env, error) {
	return interactive.New(interactive.Spec{Name: s.Name, Args: s.Args, Prompt: s.Prompt, Description: s.Description, Dir: s.Dir,
		Timeout: s.Limits.Wait, Hard: s.Hard, Quiet: s.Limits.Quiet, Budget: s.Limits.Budget, Resources: s.Resources, StartCheck: s.StartCheck})
}

// send writes one command line.
func (c *client) send(fields map[string]any) {
	c.t.Helper()
	fields["type"] = "command"
	line, err := json.Marshal(fields)
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.in.Write(append(line, '\n')); err != nil {
		c.t.Fatal(err)
	}
}

// read reads one line.
func (c *client) read() wire {
	c.t.Helper()
	got := make(chan bool, 1)
	go func() { got <- c.out.Scan() }()
	select {
	case ok := <-got:
		if !ok {
			c.t.Fatalf("no line: %v", c.out.Err())
		}
	case <-time.After(time.Minute):
		c.t.Fatal("no line within a minute")
	}
	var w wire
	if err := json.Unmarshal(c.out.Bytes(), &w); err != nil {
		c.t.Fatalf("line %q: %v", c.out.Bytes(), err)
	}
	return w
}

// do sends a command and reads its response.
func (c *client) do(fields map[string]any) envs.Response {
	c.t.Helper()
	c.send(fields)
	w := c.read()
	if w.Type != "response" {
		c.t.Fatalf("got %+v, want a response", w)
	}
	return w.Response
}

// gather sends empty commands to env, with the extra fields given, while
// resp says its command runs and the output so far lacks want; it returns
// the output of resp and of every response after it. Tests wait for
// output this way, not for a set time, so a slow machine only takes more
// rounds.
func (c *client) gather(env string, resp envs.Response, fields map[string]any, want string) string {
	c.t.Helper()
	all := resp.Output
	for range 400 {
		if !resp.Running || strings.Contains(all, want) {
			break
		}
		next := map[string]any{"environment": env, "command": ""}
		for k, v := range fields {
			next[k] = v
		}
		resp = c.do(next)
		all += "\n" + resp.Output
	}
	return all
}

// timedOut matches the note of a command a hard limit interrupted (the
// time it gives is measured, so it is not matched).
var timedOut = regexp.MustCompile(`\[Timed out after [0-9.]+m?s\. Interrupted it with Ctrl-C\.`)

// TestServeSoftLimit (item 1): a command still running at its quiet limit
// or its timeout comes back marked running, with the output so far and what
// the next command can do; C-c interrupts it; with "hard" the timeout
// interrupts.
func TestServeSoftLimit(t *testing.T) {
	c, _ := serveReal(t, t.TempDir())
	quiet := map[string]any{"quiet": 0.3}
	resp := c.do(map[string]any{"environment": "bash", "command": "echo started; sleep 600", "quiet": 0.3})
	if !resp.Running || resp.Success || !strings.HasSuffix(resp.Output, envs.RunningNote("no new output for 300ms")) {
		t.Errorf("quiet: got %+v, want it running and the note", resp)
	}
	if all := c.gather("bash", resp, quiet, "started"); !strings.HasPrefix(all, "started\n") {
		t.Errorf("quiet: got %q, want the output so far", all)
	}
	resp = c.do(map[string]any{"environment": "bash", "command": "C-c"})
	if resp.Running || resp.Success || !strings.Contains(resp.Output, "Interrupted it with Ctrl-C") {
		t.Errorf("C-c: got %+v, want it interrupted", resp)
	}
	c.do(map[string]any{"environment": "python", "command": "pass"}) // the interpreter starts
	resp = c.do(map[string]any{"environment": "python", "command": "import time\nfor i in range(10000):\n    print(i)\n    time.sleep(0.01)", "timeout": 0.5})
	if !resp.Running || !strings.HasSuffix(resp.Output, envs.RunningNote("the time limit passed")) {
		t.Errorf("timeout: got %+v, want it running", resp)
	}
	if all := c.gather("python", resp, map[string]any{"timeout": 0.5}, "\n1\n"); !strings.HasPrefix(all, "0\n1\n") {
		t.Errorf("timeout: got %q, want the output so far", all)
	}
	resp = c.do(map[string]any{"environment": "python", "command": "C-c"})
	if resp.Running || !strings.Contains(resp.Output, "KeyboardInterrupt") {
		t.Errorf("C-c: got %+v, want KeyboardInterrupt", resp)
	}
	resp = c.do(map[string]any{"environment": "bash", "command": "sleep 600", "timeout": 0.3, "hard": true})
	if resp.Running || resp.Success || !timedOut.MatchString(resp.Output) {
		t.Errorf("hard: got %+v, want it interrupted at the timeout", resp)
	}
}

// TestServeContinue (item 2): an empty command returns only the output new
// since the last response, marked running, until the command ends; then
// the response has the status, and the screen the exit code.
func TestServeContinue(t *testing.T) {
	dir := t.TempDir()
	c, _ := serveReal(t, dir)
	trigger := filepath.Join(dir, "go")
	resp := c.do(map[string]any{"environment": "bash", "command": fmt.Sprintf("echo one; while [ ! -e %s ]; do sleep 0.05; done; echo two; exit 3", trigger), "quiet": 0.3})
	if all := c.gather("bash", resp, map[string]any{"quiet": 0.3}, "one"); !resp.Running || !strings.HasPrefix(all, "one\n") {
		t.Fatalf("got %+v, then %q, want it running after one", resp, all)
	}
	resp = c.do(map[string]any{"environment": "bash", "command": "", "quiet": 0.3})
	if !resp.Running || resp.Output != envs.RunningNote("no new output for 300ms") {
		t.Errorf("an empty command with nothing new: got %+v, want only the note", resp)
	}
	if err := os.WriteFile(trigger, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var w wire
	for range 100 {
		c.send(map[string]any{"environment": "bash", "command": "", "quiet": 0.3})
		if w = c.read(); !w.Response.Running {
			break
		}
	}
	if w.Response.Running || w.Response.Success || !strings.HasPrefix(w.Response.Output, "two\n[exit: the shell stays open") || strings.Contains(w.Response.Output, "one") {
		t.Errorf("the end: got %+v, want only the new output and a failure", w.Response)
	}
	if sc := w.Screen["bash"].Content; !strings.Contains(sc, "Last exit code: 3") {
		t.Errorf("screen: got %q, want the exit code", sc)
	}
}

// TestServeInput (item 3): a command that waits for input comes back
// waiting, with the question; the next command is its answer; a secret is
// recorded as hidden in the session.
func TestServeInput(t *testing.T) {
	c, o := serveReal(t, t.TempDir())
	resp := c.do(map[string]any{"environment": "bash", "command": `read -p 'Name? ' n; echo "hello $n"`})
	if !resp.Running || !resp.Waiting || resp.Prompt != "Name?" || resp.Hidden {
		t.Fatalf("got %+v, want it waiting for an answer to Name?", resp)
	}
	if resp = c.do(map[string]any{"environment": "bash", "command": "Ada"}); resp.Output != "hello Ada" || !resp.Success {
		t.Errorf("after the answer: got %+v, want hello Ada", resp)
	}
	resp = c.do(map[string]any{"environment": "python", "command": "import getpass\npw = getpass.getpass()\nlen(pw)"})
	if !resp.Waiting || !resp.Hidden || resp.Prompt != "Password:" {
		t.Fatalf("got %+v, want it waiting for a hidden answer", resp)
	}
	if resp = c.do(map[string]any{"environment": "python", "command": "s3cret-value"}); !strings.HasSuffix(resp.Output, "12") || strings.Contains(resp.Output, "s3cret") {
		t.Errorf("after the secret: got %+v, want its length and not the secret", resp)
	}
	for _, e := range o.Session().Events() {
		if strings.Contains(fmt.Sprint(e), "s3cret") {
			t.Errorf("the session recorded the secret: %v", e)
		}
	}
}

// TestServeBudget (item 4): a reply over its token budget keeps the head
// and the tail, says how much was left out, and names the file in the
// project's context directory that holds all of it.
func TestServeBudget(t *testing.T) {
	dir := t.TempDir()
	c, _ := serveReal(t, dir)
	resp := c.do(map[string]any{"environment": "bash", "command": "seq 5000", "budget": 300})
	if !strings.HasPrefix(resp.Output, "1\n2\n") || !strings.HasSuffix(resp.Output, "4999\n5000") || !strings.HasPrefix(resp.OutputFile, "context/output/bash-") {
		t.Fatalf("got %+v, want the head, the tail and a file under context/output", resp)
	}
	if !strings.Contains(resp.Output, "left out here to fit the budget of 300 tokens; the whole output is saved in "+resp.OutputFile) {
		t.Errorf("got %q, want a note naming the file", resp.Output)
	}
	data, err := os.ReadFile(filepath.Join(dir, resp.OutputFile))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(string(data), "\n"); len(lines) != 5000 || lines[4999] != "5000" {
		t.Errorf("the saved output: got %d lines, want 5000", len(lines))
	}
	// The default budget of unfold serve.
	resp = c.do(map[string]any{"environment": "python", "command": "print('x ' * 100000)"})
	if resp.OutputFile == "" {
		t.Errorf("200,000 bytes under the default budget: got %d bytes and no file, want them cut", len(resp.Output))
	}
}

// TestOutputStaysInProject: the whole output is saved through the
// project's root, so a context directory that links outside the project
// is not written to; the response then shows the output whole and says
// why it was not saved.
func TestOutputStaysInProject(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "context")); err != nil {
		t.Fatal(err)
	}
	c, _ := serveReal(t, dir)
	resp := c.do(map[string]any{"environment": "bash", "command": "seq 5000", "budget": 300})
	if resp.OutputFile != "" || !strings.HasPrefix(resp.Output, "1\n2\n") || !strings.Contains(resp.Output, "\n2500\n") ||
		!strings.Contains(resp.Output, "could not be saved to a file") {
		t.Errorf("got OutputFile %q and output %.200q..., want the whole output and a note that it could not be saved", resp.OutputFile, resp.Output)
	}
	if entries, err := os.ReadDir(outside); err != nil || len(entries) != 0 {
		t.Errorf("the directory the context link points to: got %v, %v, want it empty", entries, err)
	}
}

// TestServeQueue (item 5): commands with an id run alongside those to
// other environments and are answered as soon as they are ready; a
// command queued behind a busy environment counts its deadline from its
// arrival.
func TestServeQueue(t *testing.T) {
	dir := t.TempDir()
	c, _ := serveReal(t, dir)
	trigger := filepath.Join(dir, "go")
	c.send(map[string]any{"id": "slow", "environment": "bash", "command": fmt.Sprintf("while [ ! -e %s ]; do sleep 0.05; done; echo slow done", trigger), "quiet": 600})
	c.send(map[string]any{"id": 2, "environment": "bash", "command": "echo queued", "timeout": 0.3})
	c.send(map[string]any{"id": "quick", "environment": "python", "command": "6 * 7"})
	got := map[string]wire{}
	for range 2 {
		w := c.read()
		got[string(w.ID)] = w
	}
	if w := got[`"quick"`]; w.Response.Output != "42" {
		t.Errorf("python, sent after a long bash command: got %+v, want its answer first", w)
	}
	if w := got["2"]; w.Response.Output != "[Not run: an earlier command held the environment until this command's time limit passed. Send it again, or C-c to interrupt the running command first.]" {
		t.Errorf("a command queued behind the long one: got %+v, want it back at its deadline, not run", w)
	}
	if err := os.WriteFile(trigger, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if w := c.read(); string(w.ID) != `"slow"` || w.Response.Output != "slow done" {
		t.Errorf("the long command: got %+v, want its answer last", w)
	}
}

// TestServeQueueNewSpec: a command with an id to an environment whose
// spec file was added while serving runs in that environment's lane, not
// on the line reader: a command to another environment sent after it is
// answered first.
func TestServeQueueNewSpec(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "env"), 0o755); err != nil {
		t.Fatal(err)
	}
	c, _ := serveReal(t, dir)
	c.do(map[string]any{"environment": "python", "command": "1"})
	spec := `{"kind": "interactive", "command": "python3 -i -q", "prompt": ">>> ", "description": "a late REPL"}`
	if err := os.WriteFile(filepath.Join(dir, "env", "late.json"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	trigger := filepath.Join(dir, "go")
	c.send(map[string]any{"id": "slow", "environment": "late", "quiet": 600, "timeout": 600,
		"command": fmt.Sprintf("import os, time\nwhile not os.path.exists(%q): time.sleep(0.05)\n\nprint('slow done')", trigger)})
	c.send(map[string]any{"id": "quick", "environment": "python", "command": "6 * 7"})
	if w := c.read(); string(w.ID) != `"quick"` || w.Response.Output != "42" {
		t.Errorf("python, sent after a long command to a new environment: got %+v, want its answer first", w)
	}
	if err := os.WriteFile(trigger, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if w := c.read(); string(w.ID) != `"slow"` || w.Response.Output != "slow done" {
		t.Errorf("the long command: got %+v, want its answer last", w)
	}
}

// TestServeSpecChanges (item 6): spec files added, changed and removed
// while serving are picked up on the next command.
func TestServeSpecChanges(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "env"), 0o755); err != nil {
		t.Fatal(err)
	}
	c, _ := serveReal(t, dir)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	spec := func(desc string) string {
		b, _ := json.Marshal(map[string]any{"kind": "process", "executable": exe, "description": desc, "env": fakeVars("counter")})
		return string(b)
	}
	path := filepath.Join(dir, "env", "counter.json")
	if resp := c.do(map[string]any{"environment": "counter", "command": "inc"}); !strings.HasPrefix(resp.Output, "Unknown environment: counter") {
		t.Fatalf("before the file: got %+v, want an unknown environment", resp)
	}
	if err := os.WriteFile(path, []byte(spec("first")), 0o644); err != nil {
		t.Fatal(err)
	}
	c.do(map[string]any{"environment": "counter", "command": "inc"})
	if resp := c.do(map[string]any{"environment": "counter", "command": "get"}); resp.Output != "1" {
		t.Errorf("added: got %+v, want the new environment", resp)
	}
	if err := os.WriteFile(path, []byte(spec("second")), 0o644); err != nil {
		t.Fatal(err)
	}
	if resp := c.do(map[string]any{"environment": "counter", "command": "get"}); resp.Output != "[counter was stopped because env/counter.json changed; its state from before was lost.]\n0" {
		t.Errorf("changed: got %+v, want a new environment, its counter at 0", resp)
	}
	if err := os.WriteFile(path, []byte(`{"kind":"process"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	c.send(map[string]any{"environment": "bash", "command": "true"})
	if w := c.read(); !strings.Contains(w.Screen[ScreenName].Content, `env/counter.json: missing field "description"`) {
		t.Errorf("broken: got screens %v, want the error on the orchestrator's screen", w.Screen)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if resp := c.do(map[string]any{"environment": "counter", "command": "get"}); !strings.HasPrefix(resp.Output, "[counter was stopped because env/counter.json changed; its state from before was lost.]\nUnknown environment: counter") {
		t.Errorf("removed: got %+v, want the note of its change to a broken file, then an unknown environment", resp)
	}
}

// TestServeREPLReadsLike (item 6): several lines sent at once to an
// interactive spec file's REPL come back as the program's output, without
// the prompts and continuation prompts it printed between them.
func TestServeREPLReadsLike(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "env"), 0o755); err != nil {
		t.Fatal(err)
	}
	specs := map[string]string{
		"py": `{"kind":"interactive","command":"python3 -i -q","prompt":">>> ","description":"Python REPL"}`,
		"db": `{"kind":"interactive","command":"sqlite3","prompt":"sqlite> ","description":"SQLite shell"}`,
	}
	if _, err := exec.LookPath("sqlite3"); err != nil {
		delete(specs, "db")
	}
	for name, spec := range specs {
		if err := os.WriteFile(filepath.Join(dir, "env", name+".json"), []byte(spec), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, _ := serveReal(t, dir)
	for _, step := range []struct{ env, command, output string }{
		{"py", "def f(x):\n    y = x * 2\n    return y\n\nprint(f(21))\nfor i in range(2):\n    print(i)\n\n", "42\n0\n1"},
		{"db", "create table t(a);\ninsert into t\nvalues (1),\n(2);\nselect\n  sum(a)\nfrom t;", "3"},
	} {
		if _, ok := specs[step.env]; !ok {
			continue
		}
		if resp := c.do(map[string]any{"environment": step.env, "command": step.command}); resp.Output != step.output || !resp.Success {
			t.Errorf("%s: got %+v, want %q", step.env, resp, step.output)
		}
	}
}

// TestServeBrokenShell (item 7): a command that breaks the shell, or the
// Python driver's descriptors, says so and that the state was lost, and
// the next command gets a fresh one; output comes as printed, blank lines
// at its end included; Python runs !commands.
func TestServeBrokenShell(t *testing.T) {
	c, _ := serveReal(t, t.TempDir())
	c.do(map[string]any{"environment": "bash", "command": "LOST=no"})
	resp := c.do(map[string]any{"environment": "bash", "command": "exec >/dev/null"})
	if resp.Success || !strings.Contains(resp.Output, "[The shell can no longer run commands: its standard output goes to /dev/null") ||
		!strings.Contains(resp.Output, "aliases and background jobs are lost") {
		t.Errorf("exec >/dev/null: got %+v, want a failure that says the shell broke and its state was lost", resp)
	}
	if resp = c.do(map[string]any{"environment": "bash", "command": `echo "LOST=$LOST"`}); !resp.Success || !strings.HasSuffix(resp.Output, "\nLOST=") {
		t.Errorf("the next command: got %+v, want a fresh shell", resp)
	}
	if resp = c.do(map[string]any{"environment": "bash", "command": `printf 'a\n\n\n'`}); resp.Output != "a\n\n" {
		t.Errorf("blank lines at the end: got %q, want them as printed", resp.Output)
	}
	c.do(map[string]any{"environment": "python", "command": "old = 1"})
	resp = c.do(map[string]any{"environment": "python", "command": "import os\nos.close(3)"})
	if resp.Success || !strings.Contains(resp.Output, "All variables and imports were lost") {
		t.Errorf("a cell closing the protocol's descriptor: got %+v, want a failure that says the state was lost", resp)
	}
	if resp = c.do(map[string]any{"environment": "python", "command": "'old' in dir()"}); resp.Output != "False" {
		t.Errorf("the next cell: got %+v, want a fresh interpreter", resp)
	}
	if resp = c.do(map[string]any{"environment": "python", "command": "!echo from the shell"}); resp.Output != "from the shell" || !resp.Success {
		t.Errorf("!echo: got %+v, want the shell's output", resp)
	}
}

// TestSpecFileLimits: a spec file's resource limits reach its program and
// what that starts, and its quiet limit gives control back while a
// command runs on.
func TestSpecFileLimits(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := json.Marshal(map[string]any{"kind": "process", "executable": exe, "description": "Test counter", "env": fakeVars("counter"),
		"quiet": 0.3, "limits": map[string]any{"file_size": 1 << 20}})
	dir := writeProject(t, map[string]string{"counter.json": string(spec)})
	o := mustNew(t)
	defer o.Close()
	if err := o.LoadSpecs(dir); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	resp := o.Execute(ctx, "counter", "sh head -c 2000000 /dev/zero > big; echo status $?; wc -c < big").Response
	for i := 0; i < 30 && resp.Running; i++ {
		// A busy machine may keep the command quiet past the 300 ms.
		out := resp.Output
		resp = o.Execute(ctx, "counter", "").Response
		resp.Output = out + "\n" + resp.Output
	}
	if !strings.Contains(resp.Output, "status 153") || !strings.Contains(resp.Output, "1048576") {
		t.Errorf("a write past the spec file's file size limit: got %+v, want it killed by SIGXFSZ at 1 MiB", resp)
	}
	resp = o.Execute(ctx, "counter", "sh sleep 600").Response
	if !resp.Running || !strings.HasSuffix(resp.Output, envs.RunningNote("no new output for 300ms")) {
		t.Errorf("a silent command under the spec file's quiet limit: got %+v, want control back with it running", resp)
	}
	if resp = o.Execute(ctx, "counter", envs.Interrupt).Response; resp.Running {
		t.Errorf("C-c: got %+v, want the command over", resp)
	}
}
