//go:build linux

package interactive_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/envs/envtest"
	"github.com/unfold-dev/unfold/envs/interactive"
	"github.com/unfold-dev/unfold/internal/golden"
	"github.com/unfold-dev/unfold/internal/procs"
)

func need(t *testing.T, programs ...string) {
	t.Helper()
	for _, p := range programs {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("%s is not installed", p)
		}
	}
}

var (
	pythonSpec = interactive.Spec{Command: "python3 -i -q", Prompt: `>>> `, Description: "Python interpreter"}
	sqliteSpec = interactive.Spec{Command: "sqlite3", Prompt: `sqlite> `, Description: "SQLite database shell"}
	nodeSpec   = interactive.Spec{Command: "node -i", Prompt: `> `, Description: "Node.js"}
)

func newEnv(t *testing.T, spec interactive.Spec) *interactive.Env {
	t.Helper()
	need(t, strings.Fields(spec.Command)[0])
	e, err := interactive.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return e
}

func run(t *testing.T, e *interactive.Env, command string, timeout time.Duration) envs.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	resp, err := e.Execute(ctx, command)
	if err != nil {
		t.Fatalf("Execute(%q): %v", command, err)
	}
	return resp
}

func want(t *testing.T, e *interactive.Env, command, output string, success bool) {
	t.Helper()
	resp := run(t, e, command, 30*time.Second)
	if resp.Output != output || resp.Success != success {
		t.Errorf("Execute(%q): got {%q, %v}, want {%q, %v}", command, resp.Output, resp.Success, output, success)
	}
}

func TestConformance(t *testing.T) {
	for _, c := range []struct {
		name              string
		spec              interactive.Spec
		trivial, blocking string
		phased            func(first, file, second string) string
		question          func(q string) string
		flood             func(n int) string
	}{
		{"python3", pythonSpec, "pass", "import time; time.sleep(600)",
			func(first, file, second string) string {
				return fmt.Sprintf("import os, time; print(%q); exec('while not os.path.exists(%s): time.sleep(0.05)'); print(%q)", first, strconv.Quote(file), second)
			},
			func(q string) string { return fmt.Sprintf("line = input(%q); print('got ' + line)", q) },
			func(n int) string {
				return fmt.Sprintf("print('\\n'.join('line %%d' %% i for i in range(1, %d)))", n+1)
			}},
		{"sqlite3", sqliteSpec, "select 1;", "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c;",
			func(first, file, second string) string {
				return fmt.Sprintf(".shell echo %s; while [ ! -e %s ]; do sleep 0.05; done; echo %s", first, file, second)
			},
			func(q string) string { return fmt.Sprintf(`.shell read -r -p '%s' line; echo "got $line"`, q) },
			func(n int) string { return fmt.Sprintf(".shell seq -f 'line %%g' %d", n) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			need(t, c.name)
			envtest.Run(t, func(t *testing.T) envs.Env {
				spec := c.spec
				spec.Quiet = 500 * time.Millisecond
				spec.OutputLimit = 64 << 10
				e, err := interactive.New(spec)
				if err != nil {
					t.Fatal(err)
				}
				return e
			}, c.trivial, envtest.WithBlocking(c.blocking), envtest.WithTimeout(30*time.Second),
				envtest.WithPhased(c.phased), envtest.WithQuestion(c.question), envtest.WithFlood(c.flood),
				envtest.WithDefaultQuiet(500*time.Millisecond), envtest.WithOutputLimit(64<<10))
		})
	}
}

// outputCase is a command typed to a program and the output it gives.
type outputCase struct {
	name    string
	spec    interactive.Spec
	command string
	output  string
}

// runOutputCases runs each case's command in an environment of its own.
func runOutputCases(t *testing.T, cases []outputCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, c.spec)
			want(t, e, c.command, c.output, true)
		})
	}
}

// TestMultiLineReadsLikeTheProgram: several lines typed at once come back
// as the program's output, without the prompts and continuation prompts it
// printed between them, for the REPLs agents drive.
func TestMultiLineReadsLikeTheProgram(t *testing.T) {
	runOutputCases(t, []outputCase{
		{"python3", pythonSpec, "def f(x):\n    y = x * 2\n    return y\n\nprint(f(21))\nfor i in range(2):\n    print(i)\n\n", "42\n0\n1"},
		{"sqlite3", sqliteSpec, "create table t(a);\ninsert into t\nvalues (1),\n(2);\nselect\n  sum(a)\nfrom t;", "3"},
		{"gdb", interactive.Spec{Command: "gdb -q -nx", Prompt: `\(gdb\) `, Description: "GDB", Init: []string{"set pagination off", "set confirm off", "set width 0"}},
			"print 1 + 1\nprint 2 * 3\necho hi\\n", "$1 = 2\n$2 = 6\nhi"},
		{"node", nodeSpec,
			"function f(x) {\n  return x * 2;\n}\nconst a = [1,\n2];\nf(a.length + 19)", "undefined\nundefined\n42"},
	})
}

// TestTabsReachTheData: a tab in a command reaches the program as a tab,
// where a line editor would take it for its completion key (dropping it,
// or completing the word before it), and the output has no echo of the
// command.
func TestTabsReachTheData(t *testing.T) {
	runOutputCases(t, []outputCase{
		{"sqlite3 value", sqliteSpec, "create table t(v text);\ninsert into t values('a\tb');\nselect length(v), hex(v) from t;", "3|610962"},
		{"sqlite3 completable", sqliteSpec, "create table tabname(v text);\nselect 'tabn\tz';", "tabn\tz"},
		{"sqlite3 between words", sqliteSpec, "select\t1;", "1"},
		{"python3 value", pythonSpec, "s = 'a\tb'\nprint(len(s), repr(s))", `3 'a\tb'`},
		{"python3 completable", pythonSpec, "import os\ns = 'os.getcw\tx'\nt = 'whil\tx'\nprint(repr(s), repr(t))", `'os.getcw\tx' 'whil\tx'`},
		{"python3 indentation", pythonSpec, "def f():\n\treturn 3\n\nprint(f())", "3"},
		{"node", nodeSpec, "const s = 'con\tx'; s.length", "5"},
		{"raw reader", rawReader(t, false), "a\tb", `got b'a\tb'`},
		{"raw reader with bracketed paste on", rawReader(t, true), "a\tb", `got b'\x1b[200~a\tb\x1b[201~'`},
	})
}

// rawReader is a program that reads its terminal in raw mode a byte at a
// time, with no line editor, and shows the bytes of each line it read; with
// paste, it turns bracketed paste on first, as a line editor that reads a
// paste does.
func rawReader(t *testing.T, paste bool) interactive.Spec {
	on := ""
	if paste {
		on = `os.write(1, b"\x1b[?2004h")`
	}
	script := filepath.Join(t.TempDir(), "raw.py")
	err := os.WriteFile(script, []byte(`import os, tty
tty.setraw(0)
`+on+`
while True:
    os.write(1, b"raw> ")
    line = b""
    while (c := os.read(0, 1)) not in (b"\r", b"\n"):
        line += c
    os.write(1, b"got " + repr(line).encode() + b"\r\n")
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	return interactive.Spec{Command: "python3 '" + script + "'", Prompt: `raw> `, Description: "raw reader"}
}

// TestPromptLikeOutputKept: output lines that start like a prompt or a
// continuation prompt (a Markdown quote, a doctest) keep it; only the
// echo of the command loses its prompts.
func TestPromptLikeOutputKept(t *testing.T) {
	runOutputCases(t, []outputCase{
		{"node", nodeSpec, `console.log('> quoted line\nplain')`, "> quoted line\nplain\nundefined"},
		{"python3", pythonSpec, `print('>>> example()\n... more\n-> arrow')`, ">>> example()\n... more\n-> arrow"},
		{"sqlite3", sqliteSpec, "select 'sqlite> x' union all select '   ...> y';", "sqlite> x\n   ...> y"},
	})
}

// TestAnswerInput: a program that asks a question of its own (not its
// prompt) gives control back waiting; the next command is its answer.
func TestAnswerInput(t *testing.T) {
	e := newEnv(t, pythonSpec)
	resp := run(t, e, "name = input('Your name? ')", 30*time.Second)
	if !resp.Running || !resp.Waiting || resp.Prompt != "Your name?" {
		t.Fatalf("got %+v, want it waiting for an answer to %q", resp, "Your name?")
	}
	if sc, _ := e.Screen(); !strings.Contains(sc.Content, `Waiting for input: "Your name?"`) {
		t.Errorf("screen: got %q, want the question", sc.Content)
	}
	resp = run(t, e, "Ada", 30*time.Second)
	if resp.Running || !resp.Success {
		t.Errorf("after the answer: got %+v, want the command over", resp)
	}
	want(t, e, "print('hello ' + name)", "hello Ada", true)
}

// TestEchoOffIsSecret: a question read with echo turned off is a secret,
// whatever its words; the same question with echo as usual is not.
func TestEchoOffIsSecret(t *testing.T) {
	e := newEnv(t, sqliteSpec)
	for _, c := range []struct {
		name, stty string
		hidden     bool
	}{
		{"echo as usual", "", false},
		{"echo turned off", "stty -echok; ", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp := run(t, e, ".shell "+c.stty+`read -r -p 'Enter value: ' v; stty echok; echo "got $v"`, 30*time.Second)
			if !resp.Waiting || resp.Prompt != "Enter value:" || resp.Hidden != c.hidden {
				t.Fatalf("got %+v, want it waiting for an answer to %q, Hidden %v", resp, "Enter value:", c.hidden)
			}
			if resp = run(t, e, "v-5R2", 30*time.Second); resp.Running || !strings.Contains(resp.Output, "got v-5R2") {
				t.Errorf("after the answer: got %+v, want the command over", resp)
			}
		})
	}
}

// TestCloseEndsEscapedProcesses: a process the program started in a
// session of its own ends when the environment closes.
func TestCloseEndsEscapedProcesses(t *testing.T) {
	need(t, "python3")
	e, err := interactive.New(pythonSpec)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	resp := run(t, e, "import subprocess; p = subprocess.Popen(['sleep', '1005'], start_new_session=True); p.pid", 30*time.Second)
	pid, err := strconv.Atoi(resp.Output)
	if err != nil {
		t.Fatalf("got %q, want a pid", resp.Output)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); procs.Alive(pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d (started with setsid) is still running after Close", pid)
		}
	}
}

// TestResources: resource limits from the spec apply to the program.
func TestResources(t *testing.T) {
	spec := sqliteSpec
	spec.Dir = t.TempDir()
	spec.Resources = procs.Limits{FileSize: 1 << 20}
	e := newEnv(t, spec)
	resp := run(t, e, ".shell head -c 2000000 /dev/zero > big; echo status $?; stat -c %s big", 30*time.Second)
	if !strings.Contains(resp.Output, "status 153") || !strings.HasSuffix(resp.Output, "1048576") {
		t.Errorf("a write past the file size limit: got %q, want it killed by SIGXFSZ (153) at 1 MiB", resp.Output)
	}
}

func TestSQLite(t *testing.T) {
	e := newEnv(t, sqliteSpec)
	want(t, e, "create table t(a, b);\ninsert into t values (1, 'one'), (2, 'two');", "", true)
	want(t, e, "select a, b from t order by a;", "1|one\n2|two", true)
	t.Run("incomplete statement continues", func(t *testing.T) {
		resp := run(t, e, "select count(*)", 30*time.Second)
		if resp.Success || !strings.HasPrefix(resp.Output, "[The input is incomplete: sqlite3 shows its continuation prompt") {
			t.Errorf("got {%q, %v}, want a note that the input is incomplete", resp.Output, resp.Success)
		}
		want(t, e, "from t;", "2", true)
	})
	t.Run("exit is reported and the program restarts", func(t *testing.T) {
		want(t, e, ".quit", "[sqlite3 exited with status 0. It starts again with the next command.]", true)
		sc, err := e.Screen()
		if err != nil || !strings.Contains(sc.Content, "Status: stopped (exited with status 0)") {
			t.Errorf("screen: got %q, %v, want the stopped status", sc.Content, err)
		}
		want(t, e, "select 40+2;", "[Started sqlite3 again; its state from before was lost.]\n42", true)
	})
}

func TestPython(t *testing.T) {
	e := newEnv(t, pythonSpec)
	for _, c := range []struct{ name, command, output string }{
		{"expression", "1 + 1", "2"},
		{"statements", "x = 20\nprint(x + 1)", "21"},
		{"block", "def f(n):\n    return n * 2\n\nf(x)", "40"},
		{"traceback keeps the source line", "1/0", "Traceback (most recent call last):\n  File \"<stdin>\", line 1, in <module>\nZeroDivisionError: division by zero"},
		{"output that looks like the input", "print('print(1)')", "print(1)"},
	} {
		t.Run(c.name, func(t *testing.T) { want(t, e, c.command, c.output, true) })
	}
}

func TestTimeout(t *testing.T) {
	e := newEnv(t, pythonSpec)
	want(t, e, "kept = 'yes'", "", true)
	// A 1000 s sleep can only end this way by the timeout's interrupt.
	resp := run(t, e, "import time; time.sleep(1000)", time.Second)
	if resp.Success || !strings.Contains(resp.Output, "KeyboardInterrupt\nCommand timed out (no prompt detected)\n[Timed out: sent Ctrl-C; python3 is at its prompt again and keeps its state.]") {
		t.Errorf("got {%q, %v}, want the timeout message and that state is kept", resp.Output, resp.Success)
	}
	want(t, e, "kept", "'yes'", true)
	t.Run("a program that ignores Ctrl-C is stopped", func(t *testing.T) {
		resp := run(t, e, "import signal; signal.signal(signal.SIGINT, signal.SIG_IGN); time.sleep(1000)", 500*time.Millisecond)
		if resp.Success || !strings.Contains(resp.Output, "Command timed out (no prompt detected)\n[Timed out: sent Ctrl-C, but python3 did not show its prompt again, so it was stopped.") {
			t.Errorf("got {%q, %v}, want a note that it was stopped", resp.Output, resp.Success)
		}
		want(t, e, "'kept' in dir()", "[Started python3 again; its state from before was lost.]\nFalse", true)
	})
}

func TestGDB(t *testing.T) {
	need(t, "gdb", "gcc")
	dir := t.TempDir()
	src := filepath.Join(dir, "prog.c")
	code := "#include <stdio.h>\nint square(int n) { return n * n; }\nint main(void) { int v = square(7); printf(\"%d\\n\", v); return 0; }\n"
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-g", "-O0", "-o", filepath.Join(dir, "prog"), src).CombinedOutput(); err != nil {
		t.Skipf("gcc could not build the test program: %v\n%s", err, out)
	}
	e := newEnv(t, interactive.Spec{
		Command:     "gdb -q -nx ./prog",
		Prompt:      `\(gdb\) `,
		Description: "GDB debugger",
		Dir:         dir,
		Init:        []string{"set pagination off", "set confirm off", "set width 0"},
	})
	resp := run(t, e, "break square", 30*time.Second)
	if !strings.HasPrefix(resp.Output, "Breakpoint 1 at ") {
		t.Errorf("break: got %q, want a breakpoint", resp.Output)
	}
	resp = run(t, e, "run", 30*time.Second)
	if !strings.Contains(resp.Output, "Breakpoint 1, square (n=7)") {
		t.Skipf("gdb cannot run the program here (ptrace not permitted?): %q", resp.Output)
	}
	resp = run(t, e, "backtrace", 30*time.Second)
	if !regexp.MustCompile(`(?s)#0 +square \(n=7\).*#1 +0x[0-9a-f]+ in main \(\)`).MatchString(resp.Output) {
		t.Errorf("backtrace: got %q, want square called from main", resp.Output)
	}
	want(t, e, "print n * 6", "$1 = 42", true)
	resp = run(t, e, "continue", 30*time.Second)
	if !strings.Contains(resp.Output, "49\n") || !strings.Contains(resp.Output, "exited normally") {
		t.Errorf("continue: got %q, want the program's output and its exit", resp.Output)
	}
}

func TestScreenGolden(t *testing.T) {
	e := newEnv(t, sqliteSpec)
	pid := regexp.MustCompile(`pid \d+`)
	screen := func() string {
		sc, err := e.Screen()
		if err != nil {
			t.Fatal(err)
		}
		return pid.ReplaceAllString(sc.Content, "pid <pid>")
	}
	checkGolden(t, "screen_not_started.golden", screen())
	run(t, e, "select 1;", 30*time.Second)
	checkGolden(t, "screen_running.golden", screen())
	run(t, e, ".exit 3", 30*time.Second)
	checkGolden(t, "screen_stopped.golden", screen())
	if got := e.Summary(); got != "SQLite database shell" {
		t.Errorf("Summary: got %q, want the description", got)
	}
}

// checkGolden compares got with testdata/name, or rewrites it with
// UNFOLD_UPDATE_GOLDEN=1.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, name, got)
}

func TestNewErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		spec interactive.Spec
		want string
	}{
		{"no program", interactive.Spec{Prompt: "> ", Description: "d"}, `interactive: new "": no program: set Command (a command line) or Args`},
		{"both", interactive.Spec{Command: "cat", Args: []string{"cat"}, Prompt: "> ", Description: "d"}, `interactive: new "cat": both Command and Args are set; use one`},
		{"bad quote", interactive.Spec{Command: "cat 'x", Prompt: "> ", Description: "d"}, `interactive: new "cat 'x": Command: unterminated single quote in "cat 'x"`},
		{"no prompt", interactive.Spec{Command: "cat", Description: "d"}, `interactive: new "cat": Prompt is empty; give a regular expression matching the program's prompt`},
		{"bad prompt", interactive.Spec{Command: "cat", Prompt: "(", Description: "d"}, "interactive: new \"cat\": Prompt is not a valid regular expression (Go RE2 syntax): error parsing regexp: missing closing ): `(?:()\\z`"},
		{"empty-matching prompt", interactive.Spec{Command: "cat", Prompt: "(> )?", Description: "d"}, `interactive: new "cat": Prompt "(> )?" matches the empty string, so it would match any output; write the prompt's text, such as "sqlite> "`},
		{"bad continuation", interactive.Spec{Command: "cat", Prompt: "> ", Continuation: "[", Description: "d"}, "interactive: new \"cat\": Continuation is not a valid regular expression (Go RE2 syntax): error parsing regexp: missing closing ]: `[`"},
		{"empty-matching continuation", interactive.Spec{Command: "cat", Prompt: "> ", Continuation: "(-# )*", Description: "d"}, `interactive: new "cat": Continuation "(-# )*" matches the empty string, so every command would end as incomplete; write the continuation prompt's text, such as "db-# "`},
		{"no description", interactive.Spec{Command: "cat", Prompt: "> "}, `interactive: new "cat": Description is empty; say in one line what the program is`},
		{"missing program", interactive.Spec{Command: "/nonexistent/prog", Prompt: "> ", Description: "d"}, `interactive: new "/nonexistent/prog": exec: "/nonexistent/prog": stat /nonexistent/prog: no such file or directory`},
		{"bad dir", interactive.Spec{Command: "cat", Prompt: "> ", Description: "d", Dir: "/nonexistent"}, `interactive: new "cat": Dir "/nonexistent" is not a directory`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := interactive.New(c.spec)
			if err == nil || err.Error() != c.want {
				t.Errorf("got %v, want %q", err, c.want)
			}
		})
	}
}

func TestStartFailure(t *testing.T) {
	e, err := interactive.New(interactive.Spec{Command: "sh -c 'echo no prompt here; exit 3'", Prompt: `never> `, Description: "d"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	resp := run(t, e, "x", 30*time.Second)
	if resp.Success || resp.Output != `Failed to start sh: no prompt matching "never> " (the program exited with status 3); its output ends with "no prompt here"` {
		t.Errorf("got {%q, %v}, want a failure saying the program exited before its prompt", resp.Output, resp.Success)
	}
}

// TestCloseWhileStarting: a command whose program is still starting when
// Close comes fails with envs.ErrClosed, as a command after Close does,
// and Close does not wait for the prompt: it stops the program.
func TestCloseWhileStarting(t *testing.T) {
	need(t, "sh", "cat")
	fifo := filepath.Join(t.TempDir(), "go")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// The prompt comes once the test writes a line to the fifo.
	e, err := interactive.New(interactive.Spec{Command: "sh -c 'read x < \"$0\"; printf \"ready> \"; exec cat' '" + fifo + "'", Prompt: `ready> `, Description: "d"})
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		resp envs.Response
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := e.Execute(context.Background(), "x")
		done <- result{resp, err}
	}()
	// Opening the fifo waits for the program to open it: Execute is then
	// starting it.
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	go func() { closed <- e.Close() }()
	for {
		s, err := e.Screen()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(s.Content, "Status: closed") {
			break
		}
		time.Sleep(time.Millisecond)
	}
	defer w.Close()
	r := <-done
	if !errors.Is(r.err, envs.ErrClosed) {
		t.Errorf("Execute while Close came: got %+v, %v, want an error wrapping envs.ErrClosed", r.resp, r.err)
	}
	if err := <-closed; err != nil {
		t.Errorf("Close: %v", err)
	}
}

// TestBlockEnds: a Python block sent as one command runs, with or without
// a newline after its last line: the environment types the blank line
// that ends a block at the REPL. A single line without a newline starts
// a block that the next commands continue, and input that is still
// incomplete after the blank line (an open bracket) is reported so.
func TestBlockEnds(t *testing.T) {
	e := newEnv(t, pythonSpec)
	incomplete := "[The input is incomplete: python3 shows its continuation prompt and waits for more (a missing ; or closing bracket?). The next command continues it.]"
	for _, c := range []struct{ command, output string }{
		{"def f():\n    return 1\n", ""},
		{"f()", "1"},
		{"if 1:\n    print('x')\n", "x"},
		{"if 1:\n\tprint('tab')", "tab"},
		{"for i in range(2): print(i)\n", "0\n1"},
		{"def g():", incomplete},
		{"    return 5\n", ""},
		{"g()", "5"},
		{"x = (1,\n2", incomplete},
		{")", ""},
		{"print(x)", "(1, 2)"},
	} {
		resp := run(t, e, c.command, 30*time.Second)
		if resp.Output != c.output || resp.Running {
			t.Errorf("Execute(%q): got %+v, want output %q", c.command, resp, c.output)
		}
	}
}
