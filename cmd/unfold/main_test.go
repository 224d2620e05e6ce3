package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/unfold-dev/unfold/envs"
)

// binary is the unfold binary built for these tests.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "unfold-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "unfold")
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", binary, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building unfold:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// shEnv is a process environment in POSIX sh: it answers screens with its
// command count and echoes commands back.
const shEnv = `n=0
while IFS= read -r line; do
  case "$line" in
    *'"type":"screen"'*) printf '{"type":"screen","content":"sh env: %d commands","max_lines":3}\n' "$n" ;;
    *'"type":"execute"'*) n=$((n+1)); printf '{"type":"response","output":"ran %d","success":true}\n' "$n" ;;
    *'"type":"shutdown"'*) exit 0 ;;
    *) printf '{"type":"error","message":"unknown request"}\n' ;;
  esac
done
`

// fullProject has a working process environment (sh), an interactive spec,
// and a bad spec file.
var fullProject = map[string]string{
	"env/sh.sh":    shEnv,
	"env/sh.json":  `{"kind":"process","executable":"sh","args":["env/sh.sh"],"description":"A sh process"}`,
	"env/db.json":  `{"kind":"interactive","command":"sqlite3","prompt":"sqlite> ","description":"SQLite shell"}`,
	"env/bad.json": `{"kind":"process","description":"no executable"}`,
}

// writeProject writes files (default fullProject) into a new project
// directory.
func writeProject(t testing.TB, files ...map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	if len(files) == 0 {
		files = append(files, fullProject)
	}
	for name, data := range files[0] {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

type serveMessage struct {
	Type     string `json:"type"`
	Message  string `json:"message"`
	Response struct {
		Output  string `json:"output"`
		Success bool   `json:"success"`
	} `json:"response"`
	Screen map[string]struct {
		Content  string `json:"content"`
		MaxLines int    `json:"max_lines"`
	} `json:"screen"`
}

// TestServeBinary starts the real binary and drives it line by line: each
// answer is read before the next line is sent.
func TestServeBinary(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("sh is not installed; the test's process environment is a sh script")
	}
	if _, err := exec.LookPath("sqlite3"); err != nil {
		t.Skip("sqlite3 is not installed; the test's interactive environment runs it")
	}
	project := writeProject(t)
	cmd, stdin, stdout, stderr := startBinary(t, "serve", "--builtins", "none", "--project", project)
	out := bufio.NewReader(stdout)
	steps := []struct {
		name  string
		in    string
		check func(t *testing.T, m serveMessage)
	}{
		{"process command", `{"type":"command","environment":"sh","command":"anything"}`, func(t *testing.T, m serveMessage) {
			if m.Type != "response" || m.Response.Output != "ran 1" || !m.Response.Success {
				t.Errorf("got %+v, want response \"ran 1\"", m)
			}
			if got := m.Screen["sh"].Content; got != "sh env: 1 commands" {
				t.Errorf("got sh screen %q, want %q", got, "sh env: 1 commands")
			}
			if got := m.Screen["orchestrator"].Content; got != "Environment spec files that failed to load (fix them: they are read again before the next command):\n- env/bad.json: missing field \"executable\"" {
				t.Errorf("got orchestrator screen %q", got)
			}
			if len(m.Screen) != 3 {
				t.Errorf("got %d screens, want sh, db and orchestrator", len(m.Screen))
			}
		}},
		{"interactive", `{"type":"command","environment":"db","command":"select 6*7;"}`, func(t *testing.T, m serveMessage) {
			if !m.Response.Success || strings.TrimSpace(m.Response.Output) != "42" {
				t.Errorf("got %+v, want sqlite3 to answer 42", m.Response)
			}
		}},
		{"unknown environment", `{"type":"command","environment":"bash","command":"ls"}`, func(t *testing.T, m serveMessage) {
			if want := "Unknown environment: bash\nAvailable: db, sh"; m.Response.Output != want || m.Response.Success {
				t.Errorf("got %+v, want failure %q", m.Response, want)
			}
		}},
		{"malformed", `{"type":`, func(t *testing.T, m serveMessage) {
			if m.Type != "error" || m.Message != "Failed to parse command: invalid JSON: unexpected end of JSON input" {
				t.Errorf("got %+v, want the invalid JSON error", m)
			}
		}},
		{"still serving", `{"type":"command","environment":"sh","command":"again","timeout":10}`, func(t *testing.T, m serveMessage) {
			if m.Response.Output != "ran 2" {
				t.Errorf("got %+v, want \"ran 2\"", m.Response)
			}
		}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			if _, err := io.WriteString(stdin, st.in+"\n"); err != nil {
				t.Fatal(err)
			}
			line, err := out.ReadBytes('\n')
			if err != nil {
				t.Fatalf("reading the answer: %v (stderr: %s)", err, stderr.String())
			}
			var m serveMessage
			if err := json.Unmarshal(line, &m); err != nil {
				t.Fatalf("answer %q is not JSON: %v", line, err)
			}
			st.check(t, m)
		})
	}
	stdin.Close()
	if rest, _ := io.ReadAll(out); len(rest) > 0 {
		t.Errorf("got output after the end of input: %q", rest)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("got exit %v, want status 0 at the end of input (stderr: %s)", err, stderr.String())
	}
	if want := "unfold: skipped env/bad.json: missing field \"executable\"\n"; stderr.String() != want {
		t.Errorf("got stderr %q, want %q", stderr.String(), want)
	}
}

// TestServeBinarySignal stops the server with SIGTERM: it shuts down and
// exits with status 143.
func TestServeBinarySignal(t *testing.T) {
	project := writeProject(t)
	cmd := exec.Command(binary, "serve", "--builtins", "none", "--project", project)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	io.WriteString(stdin, `{"type":"command","environment":"sh","command":"x"}`+"\n")
	if _, err := bufio.NewReader(stdout).ReadBytes('\n'); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 143 {
		t.Errorf("got %v, want exit status 143", err)
	}
	if !strings.HasSuffix(stderr.String(), "\nunfold serve: stopped by SIGTERM; the environments were shut down\n") {
		t.Errorf("got stderr %q, want the cancellation reported", stderr.String())
	}
}

func TestReplBinary(t *testing.T) {
	project := writeProject(t)
	cmd := exec.Command(binary, "repl", "--builtins", "none", "--project", project)
	cmd.Stdin = strings.NewReader("sh: one\n```sh\ntwo\nlines\n```\nbash: ls\n:quit\nsh: never run\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("got %v, want exit 0 (stderr: %s)", err, stderr.String())
	}
	screens := "=== screen db ===\nSQLite shell\nStatus: not started; it starts with the first command\n\n" +
		"Each command is typed at the db prompt and its output returned. The program and its state persist across commands.\n" +
		"=== screen orchestrator ===\nEnvironment spec files that failed to load (fix them: they are read again before the next command):\n- env/bad.json: missing field \"executable\"\n"
	want := "unfold repl: environments db, sh. Type `env: command`, a fenced block, or :help.\n" +
		"--- sh: ok ---\nran 1\n" + screens + "=== screen sh ===\nsh env: 1 commands\n" +
		"--- sh: ok ---\nran 2\n" + screens + "=== screen sh ===\nsh env: 2 commands\n" +
		"--- bash: failed ---\nUnknown environment: bash\nAvailable: db, sh\n" + screens + "=== screen sh ===\nsh env: 2 commands\n"
	if got := stdout.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestReplPrintsPlainText: what an environment shows reaches the user's
// terminal without escape sequences (the clipboard, clearing the screen),
// here a file's line in the editor's screen.
func TestReplPrintsPlainText(t *testing.T) {
	project := writeProject(t, map[string]string{"f.txt": "first\nbad \x1b]52;c;ZXZpbA==\x07 \x1b[2Jend\nlast\n"})
	cmd := exec.Command(binary, "repl", "--builtins", "editor", "--project", project)
	cmd.Stdin = strings.NewReader("editor: view f.txt /first/ /last/\n:quit\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("got %v, want exit 0 (stderr: %s)", err, stderr.String())
	}
	got := stdout.String()
	if strings.ContainsAny(got, "\x1b\a") || !strings.Contains(got, "2  bad  end\n") {
		t.Errorf("got %q, want plain text: no ESC or BEL, the line as a terminal would show it", got)
	}
}

// TestReplContinues: a command that waits for input gives the prompt
// back saying it still runs; the next line to its environment answers it,
// and `env:` alone waits for what comes next.
func TestReplContinues(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	in := "bash: read -p 'Name? ' n; echo \"hi $n\"; read -p 'Again? ' m; echo \"bye $m\"\nbash: Ada\nbash:\nbash: Bo\n"
	var stdout, stderr bytes.Buffer
	if code := run([]string{"repl", "--builtins", "bash", "--project", t.TempDir()}, strings.NewReader(in), &stdout, &stderr); code != 0 {
		t.Fatalf("got exit %d, stderr %q", code, stderr.String())
	}
	var got []string
	for _, part := range strings.Split(stdout.String(), "--- bash: ")[1:] {
		head, _, _ := strings.Cut(part, "=== screen")
		got = append(got, strings.TrimSpace(head))
	}
	running := "still running (send `bash:` to wait, `bash: C-c` to interrupt) ---\n"
	want := []string{
		running + "Name? \n" + envs.WaitingNote("Name?", false),
		running + "hi Ada\nAgain? \n" + envs.WaitingNote("Again?", false),
		running + envs.WaitingNote("Again?", false),
		"ok ---\nbye Bo",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

func TestHelp(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string // a piece the output must contain
		wantStderr string
	}{
		{"--help", []string{"--help"}, 0, "Commands:\n  serve   run the environments behind the NDJSON orchestrator protocol", ""},
		{"-h", []string{"-h"}, 0, "Usage:\n  unfold <command> [flags]", ""},
		{"help", []string{"help"}, 0, "  repl    drive the same environments by hand", ""},
		{"help serve", []string{"help", "serve"}, 0, "Usage: unfold serve [--project DIR]", ""},
		{"serve --help", []string{"serve", "--help"}, 0, "-max-line-bytes bytes", ""},
		{"repl --help", []string{"repl", "--help"}, 0, "Usage: unfold repl [--project DIR]", ""},
		{"help repl", []string{"help", "repl"}, 0, "Ctrl-C interrupts a running command", ""},
		{"no command", nil, 2, "", "Usage:\n  unfold <command>"},
		{"unknown command", []string{"frobnicate"}, 2, "", "unfold: unknown command \"frobnicate\""},
		{"help --help", []string{"help", "--help"}, 0, "  repl    drive the same environments by hand", ""},
		{"help -h", []string{"help", "-h"}, 0, "Usage:\n  unfold <command> [flags]", ""},
		{"help help", []string{"help", "help"}, 0, "Usage:\n  unfold <command> [flags]", ""},
		{"agent --help", []string{"agent", "--help"}, 0, "  -disclosure string\n    \twhere opened sections go: append (the default: keep the system message and tools, for the prompt cache) or rerender\n", ""},
		{"help unknown", []string{"help", "frobnicate"}, 2, "", "unfold help: unknown command \"frobnicate\""},
		{"bad flag", []string{"serve", "--nope"}, 2, "", "unfold serve: flag provided but not defined: -nope"},
		{"stray argument", []string{"repl", "extra"}, 2, "", "unfold repl: unexpected arguments [\"extra\"]"},
		{"output budget", []string{"serve", "--output-budget", "0"}, 2, "", "unfold serve: --output-budget must be 1 or more, got 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args, strings.NewReader(""), &stdout, &stderr)
			if code != tt.wantCode {
				t.Errorf("got exit %d, want %d", code, tt.wantCode)
			}
			if !strings.Contains(stdout.String(), tt.wantStdout) {
				t.Errorf("got stdout\n%s\nwant it to contain %q", stdout.String(), tt.wantStdout)
			}
			if !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("got stderr\n%s\nwant it to contain %q", stderr.String(), tt.wantStderr)
			}
		})
	}
}

// TestServeOutputBudget: unfold serve cuts a reply to --output-budget
// tokens and saves the whole output under the project's context/output.
func TestServeOutputBudget(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	project := t.TempDir()
	in := `{"type":"command","environment":"bash","command":"seq 3000"}` + "\n"
	var stdout, stderr bytes.Buffer
	if code := run([]string{"serve", "--batch", "--builtins", "bash", "--project", project, "--output-budget", "200"}, strings.NewReader(in), &stdout, &stderr); code != 0 {
		t.Fatalf("got exit %d, stderr %q", code, stderr.String())
	}
	var m struct {
		Response struct {
			Output     string `json:"output"`
			OutputFile string `json:"output_file"`
		} `json:"response"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &m); err != nil {
		t.Fatalf("%q: %v", stdout.String(), err)
	}
	if !strings.Contains(m.Response.Output, "to fit the budget of 200 tokens") || !strings.HasPrefix(m.Response.OutputFile, "context/output/bash-") {
		t.Fatalf("got %+v, want the output cut to 200 tokens and a file under context/output", m.Response)
	}
	data, err := os.ReadFile(filepath.Join(project, m.Response.OutputFile))
	if err != nil || strings.Count(string(data), "\n") != 2999 {
		t.Errorf("the saved output: %d lines, %v; want 3000", strings.Count(string(data), "\n")+1, err)
	}
}

func TestReplParser(t *testing.T) {
	type step struct {
		line string
		want action
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"one line", []step{{"bash: ls -la", action{kind: actionRun, env: "bash", text: "ls -la"}}}},
		{"colon in command", []step{{"bash: echo a:b", action{kind: actionRun, env: "bash", text: "echo a:b"}}}},
		{"spaces around", []step{{"  py :  1+1  ", action{kind: actionRun, env: "py", text: "1+1"}}}},
		{"empty command", []step{{"timer:", action{kind: actionRun, env: "timer", text: ""}}}},
		{"blank line", []step{{"   ", action{}}}},
		{"fenced block", []step{
			{"```python", action{}},
			{"x = 1", action{}},
			{"", action{}},
			{"  print(x)", action{}},
			{"```", action{kind: actionRun, env: "python", text: "x = 1\n\n  print(x)"}},
		}},
		{"longer fence keeps shorter ones", []step{
			{"````md", action{}},
			{"```", action{}},
			{"````", action{kind: actionRun, env: "md", text: "```"}},
		}},
		{"fence without a name", []step{{"```", action{kind: actionMessage, text: "error: name the environment after the fence, like ```bash"}}}},
		{"meta", []step{
			{":quit", action{kind: actionQuit}},
			{":help", action{kind: actionHelp}},
			{":screens", action{kind: actionScreens}},
			{":nope", action{kind: actionMessage, text: "error: unknown :nope; use :help, :screens or :quit"}},
		}},
		{"no environment", []step{{"ls -la", action{kind: actionMessage, text: "error: type `env: command` (like `counter: add 5`), a fenced block starting with ```env, or :help"}}}},
		{"spaces in the name", []step{{"my env: x", action{kind: actionMessage, text: "error: type `env: command` (like `counter: add 5`), a fenced block starting with ```env, or :help"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p replParser
			for i, st := range tt.steps {
				if got := p.feed(st.line); got != st.want {
					t.Errorf("step %d (%q): got %+v, want %+v", i, st.line, got, st.want)
				}
			}
		})
	}
}

func TestReadReplLine(t *testing.T) {
	long := strings.Repeat("x", 100)
	br := bufio.NewReaderSize(strings.NewReader("short\r\n"+long+"\nafter\nlast"), 16)
	want := []struct {
		line string
		err  error
	}{{"short", nil}, {"", errLineTooLong}, {"after", nil}, {"last", nil}, {"", io.EOF}}
	for i, w := range want {
		got, err := readReplLine(br, 50)
		if got != w.line || err != w.err {
			t.Errorf("read %d: got (%q, %v), want (%q, %v)", i, got, err, w.line, w.err)
		}
	}
}

// BenchmarkServeBinary sends commands to the real binary over pipes, one at
// a time, and reports commands per second.
func BenchmarkServeBinary(b *testing.B) {
	for _, bc := range []struct {
		name  string
		env   string
		files map[string]string
	}{
		{"in-process environment", "db", map[string]string{"env/db.json": fullProject["env/db.json"]}},
		{"sh process environment", "sh", map[string]string{"env/sh.json": fullProject["env/sh.json"], "env/sh.sh": shEnv}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			project := writeProject(b, bc.files)
			cmd := exec.Command(binary, "serve", "--builtins", "none", "--project", project)
			stdin, _ := cmd.StdinPipe()
			stdout, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			out := bufio.NewReaderSize(stdout, 1<<20)
			msg := []byte(`{"type":"command","environment":"` + bc.env + `","command":"x"}` + "\n")
			for b.Loop() {
				if _, err := stdin.Write(msg); err != nil {
					b.Fatal(err)
				}
				if _, err := out.ReadSlice('\n'); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commands/s")
			stdin.Close()
			if err := cmd.Wait(); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// startBinary starts the unfold binary with args, its stdin and stdout
// piped and its stderr kept; it is killed at the end of the test if it is
// still running.
func startBinary(t *testing.T, args ...string) (cmd *exec.Cmd, stdin io.WriteCloser, stdout io.ReadCloser, stderr *bytes.Buffer) {
	t.Helper()
	return startBinaryIn(t, "", args...)
}

// startBinaryIn is startBinary with dir as the working directory ("" for
// the test's).
func startBinaryIn(t *testing.T, dir string, args ...string) (cmd *exec.Cmd, stdin io.WriteCloser, stdout io.ReadCloser, stderr *bytes.Buffer) {
	t.Helper()
	cmd = exec.Command(binary, args...)
	cmd.Dir = dir
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if stdout, err = cmd.StdoutPipe(); err != nil {
		t.Fatal(err)
	}
	stderr = &bytes.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd, stdin, stdout, stderr
}
