package python

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/envs/envtest"
	"github.com/unfold-dev/unfold/internal/golden"
)

// callTimeout bounds every command a test runs; it is a hang detector, not
// a performance assertion.
const callTimeout = 30 * time.Second

// needPython skips the test when there is no python3 to run.
func needPython(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skipf("python3 is not installed (%v); the Python environment needs it", err)
	}
}

// newREPL returns a REPL in a fresh temporary directory, closed at the end
// of the test.
func newREPL(t testing.TB, opts ...Option) *REPL {
	t.Helper()
	needPython(t)
	r, err := New(append([]Option{WithDir(t.TempDir())}, opts...)...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// execute runs code with a hang-detecting deadline.
func execute(t testing.TB, r *REPL, code string) envs.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	resp, err := r.Execute(ctx, code)
	if err != nil {
		t.Fatalf("Execute(%q): got error %v, want a response", code, err)
	}
	return resp
}

// executeWithin runs code with a deadline of d, as the NDJSON timeout does.
func executeWithin(t testing.TB, r *REPL, code string, d time.Duration) envs.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	resp, err := r.Execute(ctx, code)
	if err != nil {
		t.Fatalf("Execute(%q): got error %v, want a response", code, err)
	}
	return resp
}

func TestConformance(t *testing.T) {
	needPython(t)
	envtest.Run(t, func(t *testing.T) envs.Env {
		r, err := New(WithDir(t.TempDir()), WithQuiet(500*time.Millisecond), WithOutputLimit(64<<10))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}, "pass", envtest.WithBlocking("import time\ntime.sleep(600)"), envtest.WithTimeout(callTimeout),
		envtest.WithPhased(func(first, file, second string) string {
			return fmt.Sprintf("import os, time\nprint(%q)\nwhile not os.path.exists(%q):\n    time.sleep(0.05)\nprint(%q)", first, file, second)
		}),
		envtest.WithQuestion(func(q string) string { return fmt.Sprintf("line = input(%q)\nprint('got ' + line)", q) }),
		envtest.WithFlood(func(n int) string { return fmt.Sprintf("for i in range(1, %d):\n    print('line', i)", n+1) }),
		envtest.WithDefaultQuiet(500*time.Millisecond), envtest.WithOutputLimit(64<<10))
}

// step is one command and what its response must be.
type step struct {
	code    string
	want    *string  // exact output, when set
	has     []string // substrings the output must contain
	hasNot  []string // substrings it must not contain
	success bool
}

func exactly(s string) *string { return &s }

func (s step) check(t *testing.T, resp envs.Response) {
	t.Helper()
	if resp.Success != s.success {
		t.Errorf("Execute(%q): got success %v, want %v; output:\n%s", s.code, resp.Success, s.success, resp.Output)
	}
	if s.want != nil && resp.Output != *s.want {
		t.Errorf("Execute(%q): got output %q, want %q", s.code, resp.Output, *s.want)
	}
	for _, sub := range s.has {
		if !strings.Contains(resp.Output, sub) {
			t.Errorf("Execute(%q): got output %q, want it to contain %q", s.code, resp.Output, sub)
		}
	}
	for _, sub := range s.hasNot {
		if strings.Contains(resp.Output, sub) {
			t.Errorf("Execute(%q): got output %q, want it not to contain %q", s.code, resp.Output, sub)
		}
	}
	if !utf8.ValidString(resp.Output) {
		t.Errorf("Execute(%q): got output %q, want valid UTF-8", s.code, resp.Output)
	}
}

func TestExecute(t *testing.T) {
	driverFrames := []string{"unfold-driver", "_run", "exec(c, ns)"}
	for _, c := range []struct {
		name  string
		steps []step
	}{
		{"assignment then use", []step{
			{code: "x = 41", want: exactly(""), success: true},
			{code: "x + 1", want: exactly("42"), success: true},
		}},
		{"final expression echo", []step{
			{code: "1 + 1", want: exactly("2"), success: true},
			{code: "'a' * 3", want: exactly("'aaa'"), success: true},
			{code: "None", want: exactly(""), success: true},
			{code: "x = [1, 2]\nx", want: exactly("[1, 2]"), success: true},
			{code: "if True:\n    5", want: exactly(""), success: true},
			{code: "_", want: exactly("[1, 2]"), success: true},
		}},
		{"print plus expression in order", []step{
			{code: "print('a')\n'b'", want: exactly("a\n'b'"), success: true},
			{code: "import sys\nprint('1')\nsys.stderr.write('2\\n')\nprint('3', file=sys.stderr)\nprint('4')",
				want: exactly("1\n2\n3\n4"), success: true},
		}},
		{"subprocess output in order", []step{
			{code: "import os, subprocess\nprint('a')\nos.system('echo b; echo c >&2')\nsubprocess.run(['echo', 'd'])\nprint('e')",
				want: exactly("a\nb\nc\nd\ne"), success: true},
		}},
		{"multi-line definitions with blank lines", []step{
			{code: "def f(x):\n    y = x * 2\n\n    return y + 1\n\n\nclass C:\n    def __init__(self):\n        self.v = f(3)\n\n    def get(self):\n        return self.v\n",
				want: exactly(""), success: true},
			{code: "C().get()", want: exactly("7"), success: true},
			{code: "import inspect\nprint(inspect.getsource(f))",
				want: exactly("def f(x):\n    y = x * 2\n\n    return y + 1\n"), success: true},
		}},
		{"traceback from nested calls", []step{
			{code: "def outer(a):\n    return inner(a)\n\ndef inner(a):\n    return 1 / a", success: true},
			{code: "v = 3\nouter(0)",
				has: []string{
					"Traceback (most recent call last):\n",
					"File \"<cell-2>\", line 2, in <module>\n    outer(0)\n",
					"File \"<cell-1>\", line 2, in outer\n    return inner(a)\n",
					"File \"<cell-1>\", line 5, in inner\n    return 1 / a\n",
					"ZeroDivisionError: division by zero",
				},
				hasNot: driverFrames},
			{code: "v", want: exactly("3"), success: true},
		}},
		{"chained exception", []step{
			{code: "try:\n    {}['k']\nexcept KeyError as e:\n    raise ValueError('bad') from e",
				has:    []string{"KeyError: 'k'", "direct cause", "ValueError: bad"},
				hasNot: driverFrames},
		}},
		{"syntax error", []step{
			{code: "x = 1\ny = (2,\nz = 3", has: []string{`File "<cell-1>", line 2`, "y = (2,", "^", "SyntaxError"},
				hasNot: append([]string{"Traceback"}, driverFrames...)},
			{code: "x", has: []string{"NameError"}},
			{code: "return 5", has: []string{"SyntaxError", "'return' outside function"}},
		}},
		{"exit keeps the namespace", []step{
			{code: "kept = 'yes'", success: true},
			{code: "exit()", has: []string{"SystemExit", "keeps running"}, success: true},
			{code: "quit()", has: []string{"SystemExit"}, success: true},
			{code: "import sys\nsys.exit(3)", has: []string{"SystemExit: 3", "keeps running"}},
			{code: "sys.exit('bye')", has: []string{"SystemExit: bye"}},
			{code: "kept", want: exactly("'yes'"), success: true},
		}},
		{"input is asked of the next command", []step{
			{code: "input('Name? ')", want: exactly("Name? \n" + envs.WaitingNote("Name?", false))},
			{code: "bob", want: exactly("'bob'"), success: true},
			{code: "import sys\nsys.stdin.readline()", want: exactly(envs.WaitingNote("(no prompt text)", false))},
			{code: "a line", want: exactly("'a line\\n'"), success: true},
			{code: "import subprocess\nsubprocess.run(['cat']).returncode", want: exactly("0"), success: true},
		}},
		{"bytes that are not UTF-8", []step{
			{code: "import sys, os\nsys.stdout.buffer.write(b'a\\xff\\xfeb\\n')\nos.write(1, b'c\\xc3\\n')\nprint('\\udcff')\nprint('end')",
				has: []string{"a\uFFFDb", "c\uFFFD", "\\udcff", "end"}, success: true},
			{code: "'still' + ' here'", want: exactly("'still here'"), success: true},
			{code: "s = '\xff'\nlen(s)", want: exactly("1"), success: true},
		}},
		{"output that looks like protocol", []step{
			{code: "print('{\"status\": \"ok\", \"success\": true}')\nprint('\\x00\\x1bunfold-sync-')\n1/0",
				has: []string{`{"status": "ok", "success": true}`, "\nnfold-sync-\n", "ZeroDivisionError"}}, // ESC u is an escape sequence
			{code: "import os\nos.write(1, b'\\n' * 3)\nNone", want: exactly("\n\n"), success: true},
		}},
		{"output between commands goes to a later one", []step{
			{code: "import threading\nev = threading.Event()\nt = threading.Thread(target=lambda: (ev.wait(), print('late')))\nt.start()", success: true},
			{code: "ev.set()", success: true},
			{code: "t.join()\nprint('joined')", has: []string{"joined"}, success: true},
		}},
		{"pickle finds classes of the namespace", []step{
			{code: "import pickle\nclass P:\n    pass\ntype(pickle.loads(pickle.dumps(P()))).__name__", want: exactly("'P'"), success: true},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newREPL(t)
			var all []string
			for _, s := range c.steps {
				resp := execute(t, r, s.code)
				all = append(all, resp.Output)
				s.check(t, resp)
			}
			if c.name == "output between commands goes to a later one" {
				joined := strings.Join(all, "\n")
				if n := strings.Count(joined, "late"); n != 1 {
					t.Errorf("got %d copies of the thread's output in %q, want 1", n, joined)
				}
			}
		})
	}
}

func TestInterrupt(t *testing.T) {
	for _, c := range []struct {
		name   string
		cancel bool // cancel instead of a deadline
		code   string
		has    []string
	}{
		{"timeout in a busy loop", false, "while True: pass",
			[]string{"KeyboardInterrupt", "while True: pass", "Timed out after", "Variables and imports are kept"}},
		{"timeout in sleep", false, "import time\ntime.sleep(600)",
			[]string{"KeyboardInterrupt", "time.sleep(600)", "Timed out after"}},
		{"timeout in a subprocess", false, "import subprocess\nsubprocess.run(['sleep', '600'])",
			[]string{"KeyboardInterrupt", "Timed out after"}},
		{"cancel", true, "while True: pass",
			[]string{"KeyboardInterrupt", "Cancelled after", "Variables and imports are kept"}},
		{"handled and finished", false, "import time\ntry:\n    time.sleep(600)\nexcept KeyboardInterrupt:\n    print('caught')",
			[]string{"caught", "handled it and finished"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newREPL(t)
			execute(t, r, "old = {'a': 1}")
			var resp envs.Response
			if c.cancel {
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(200*time.Millisecond, cancel)
				var err error
				if resp, err = r.Execute(ctx, c.code); err != nil {
					t.Fatalf("Execute: got error %v, want a response", err)
				}
			} else {
				resp = executeWithin(t, r, c.code, time.Second)
			}
			step{code: c.code, has: c.has, hasNot: []string{"unfold-driver", "lost"}}.check(t, resp)
			step{code: "old", want: exactly("{'a': 1}"), success: true}.check(t, execute(t, r, "old"))
			sc, _ := r.Screen()
			if !strings.Contains(sc.Content, "  old: dict\n") {
				t.Errorf("screen after the interrupt: got\n%s\nwant it to list old: dict", sc.Content)
			}
		})
	}
}

func TestInterruptSwallowed(t *testing.T) {
	needPython(t)
	before := runtime.NumGoroutine()
	r := newREPL(t, WithGrace(300*time.Millisecond))
	pid := pidOf(t, r)
	execute(t, r, "old = 1")
	code := "import time\nwhile True:\n    try:\n        time.sleep(600)\n    except KeyboardInterrupt:\n        pass"
	step{code: code, has: []string{"Timed out after", "did not stop within 300ms", "killed",
		"All variables and imports were lost", "A fresh interpreter was started"}}.
		check(t, executeWithin(t, r, code, time.Second))
	sc, _ := r.Screen()
	if !strings.Contains(sc.Content, "Variables: (none)") {
		t.Errorf("screen after the restart: got\n%s\nwant Variables: (none)", sc.Content)
	}
	step{code: "old", has: []string{"NameError"}, hasNot: []string{"lost"}}.check(t, execute(t, r, "old"))
	step{code: "1 + 1", want: exactly("2"), success: true}.check(t, execute(t, r, "1 + 1"))
	checkEnded(t, r, before, pid)
}

// pidOf returns the process id of r's interpreter.
func pidOf(t *testing.T, r *REPL) int {
	t.Helper()
	resp := execute(t, r, "import os as _os\n_os.getpid()")
	pid, err := strconv.Atoi(resp.Output)
	if err != nil {
		t.Fatalf("pid: got %q, want a number", resp.Output)
	}
	return pid
}

// checkEnded closes r and checks that the processes pids and every
// goroutine started since before have ended.
func checkEnded(t *testing.T, r *REPL, before int, pids ...int) {
	t.Helper()
	if err := r.Close(); err != nil {
		t.Errorf("Close: got %v, want nil", err)
	}
	for _, pid := range pids {
		waitFor(t, fmt.Sprintf("process %d to end", pid), func() bool { return gone(pid) })
	}
	waitFor(t, "goroutines to end", func() bool { return runtime.NumGoroutine() <= before })
}

func TestProcessDeath(t *testing.T) {
	for _, c := range []struct {
		name string
		code string
		has  []string
	}{
		{"os._exit", "import os\nos._exit(3)", []string{"exited with status 3"}},
		{"segfault", "import ctypes\nctypes.string_at(0)", []string{"killed by signal: segmentation fault"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newREPL(t)
			execute(t, r, "old = 1")
			step{code: c.code, has: append(c.has, "All variables and imports were lost", "A fresh interpreter was started")}.
				check(t, execute(t, r, c.code))
			step{code: "old", has: []string{"NameError"}, hasNot: []string{"lost"}}.check(t, execute(t, r, "old"))
		})
	}
}

func TestKilledBetweenCommands(t *testing.T) {
	needPython(t)
	before := runtime.NumGoroutine()
	r := newREPL(t)
	pid := pidOf(t, r)
	execute(t, r, "old = 1")
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the interpreter to die", func() bool {
		sc, _ := r.Screen()
		return strings.Contains(sc.Content, "Variables: (none)")
	})
	step{code: "old", has: []string{"killed by signal: killed since the last command", "All variables and imports were lost",
		"NameError"}}.check(t, execute(t, r, "old"))
	step{code: "2 * 21", want: exactly("42"), success: true}.check(t, execute(t, r, "2 * 21"))
	checkEnded(t, r, before, pidOf(t, r))
}

// waitFor polls cond until it holds, failing after a generous bound.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(callTimeout); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", callTimeout, what)
		}
	}
}

// TestLargeOutput: output past the output limit keeps its head and tail
// in the response, and the whole of it in the file the response names.
func TestLargeOutput(t *testing.T) {
	for _, c := range []struct {
		name  string
		limit int
		code  string
		head  string
		tail  string
		size  int // of the whole output
	}{
		{"50 MB in big writes", 0,
			"import sys\nfor i in range(50):\n    sys.stdout.write(str(i % 10) * (1 << 20))\nprint('END')",
			"0000", "9999END", 50<<20 + len("END")},
		{"many lines", 1 << 20,
			"for i in range(200000):\n    print('line', i)",
			"line 0\nline 1\n", "line 199999", 200000*len("line \n") + 10*1 + 90*2 + 900*3 + 9000*4 + 90000*5 + 100000*6 - 1},
		{"one 50 MB string echoed", 1 << 20,
			"'y' * (50 << 20)", "'yyy", "yyy'", 50<<20 + 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			r := newREPL(t, WithOutputLimit(c.limit), WithBudget(-1), WithSave(func(out io.Reader) (string, error) {
				return envs.SaveIn(dir, "out-*.txt", out)
			}))
			resp := execute(t, r, c.code)
			step{code: c.name, has: []string{"left out here, past the", "the whole output is saved in " + resp.OutputFile}, success: true}.check(t, resp)
			if fi, err := os.Stat(resp.OutputFile); err != nil || fi.Size() != int64(c.size) {
				t.Errorf("the saved output: got %v, want a file of %d bytes", err, c.size)
			}
			limit := c.limit
			if limit == 0 {
				limit = envs.DefaultOutputLimit
			}
			if len(resp.Output) > limit+1024 {
				t.Errorf("got %d bytes of output, want at most the limit %d plus a notice", len(resp.Output), limit)
			}
			if !strings.HasPrefix(resp.Output, c.head) || !strings.HasSuffix(resp.Output, c.tail) {
				t.Errorf("got output starting %q and ending %q, want %q ... %q",
					resp.Output[:min(20, len(resp.Output))], resp.Output[max(0, len(resp.Output)-20):], c.head, c.tail)
			}
			step{code: "'ok'", want: exactly("'ok'"), success: true}.check(t, execute(t, r, "'ok'"))
		})
	}
}

// screenOf returns the screen with the working directory replaced by $DIR.
func screenOf(t *testing.T, r *REPL, dir string) string {
	t.Helper()
	sc, err := r.Screen()
	if err != nil {
		t.Fatalf("Screen: %v", err)
	}
	if sc.MaxLines != ScreenLines {
		t.Errorf("Screen: got MaxLines %d, want %d", sc.MaxLines, ScreenLines)
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return strings.ReplaceAll(sc.Content, dir, "$DIR")
}

func TestScreen(t *testing.T) {
	for _, c := range []struct {
		name  string
		steps []string
	}{
		{"initial", nil},
		{"empty namespace", []string{"pass"}},
		{"varied types", []string{
			"import os, sys as system\nfrom collections import OrderedDict\nimport json as _json",
			"n = 1\nf = 1.5\ns = 'text'\nl = [1]\nd = {}\nt = (1,)\nb = b''\nnothing = None\nod = OrderedDict()",
			"def fn(): pass\nclass Model:\n    pass\nm = Model()\ng = (i for i in [])\nlam = lambda: 0",
			"_private = 1\n__dunder = 2\nprint = print\nlen2 = len",
		}},
		{"ordered by mentions", []string{
			"a = 1", "b = 2", "c = 3",
			"a + 1",
			"ab = 10\nb_c = 20",
			"print(b)  # mentions b only: not ab or b_c",
			"del c",
		}},
		{"at most 100", []string{
			"for i in range(150):\n    globals()['v%03d' % i] = i",
		}},
		{"chdir", []string{
			"import os\nos.mkdir('sub')\nos.chdir('sub')\nhere = os.getcwd()",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			r := newREPL(t, WithDir(dir))
			for _, code := range c.steps {
				if resp := execute(t, r, code); !resp.Success {
					t.Fatalf("Execute(%q): got %q, want success", code, resp.Output)
				}
			}
			checkGolden(t, "screen_"+strings.ReplaceAll(c.name, " ", "_")+".golden", screenOf(t, r, dir))
		})
	}
}

// checkGolden compares got with testdata/name, or rewrites it with
// UNFOLD_UPDATE_GOLDEN=1.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, name, got)
}

func TestSummary(t *testing.T) {
	r, err := New(WithDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.Summary(), "Python REPL (ready)"; got != want {
		t.Errorf("Summary: got %q, want %q", got, want)
	}
}

func TestNewErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		opts []Option
		want string
	}{
		{"negative limit", []Option{WithOutputLimit(-1)}, "python: new: output limit -1: want 0 (the default) or more"},
		{"negative grace", []Option{WithGrace(-time.Second)}, "python: new: grace -1s: want 0 (the default) or more"},
		{"bad environment entry", []Option{WithEnv("NOEQUALS")}, `python: new: environment entry "NOEQUALS": want KEY=value`},
		{"missing directory", []Option{WithDir(filepath.Join(file, "nope"))}, "python: new: working directory: stat "},
		{"file as directory", []Option{WithDir(file)}, "python: new: working directory " + file + ": not a directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := New(c.opts...)
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("New: got error %v, want one starting %q", err, c.want)
			}
		})
	}
}

func TestCannotStart(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "old-python")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho 'this is not python 3' >&2\nexit 2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, python string
		has          []string
	}{
		{"missing", filepath.Join(dir, "no-python"), []string{"Cannot start Python", "no-python"}},
		{"exits at once", script, []string{"Cannot start Python", "exited with status 2", "this is not python 3"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := New(WithPython(c.python), WithDir(dir))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			for range 2 {
				step{code: "pass", has: c.has}.check(t, execute(t, r, "pass"))
			}
		})
	}
}

func TestEnvAndDir(t *testing.T) {
	dir := t.TempDir()
	r := newREPL(t, WithDir(dir), WithEnv("UNFOLD_TEST_VALUE=42"))
	real, _ := filepath.EvalSymlinks(dir)
	for _, s := range []step{
		{code: "import os\nos.environ['UNFOLD_TEST_VALUE']", want: exactly("'42'"), success: true},
		{code: "os.getcwd()", want: exactly("'" + real + "'"), success: true},
		{code: "os.environ['TERM'], os.environ['PAGER']", want: exactly("('dumb', 'cat')"), success: true},
		{code: "import sys\nsys.argv", want: exactly("['']"), success: true},
		{code: "__name__", want: exactly("'__main__'"), success: true},
		{code: "[k for k in globals() if not k.startswith('__')]", want: exactly("['os', 'sys']"), success: true},
		{code: "open('/dev/tty')", has: []string{"OSError"}},
	} {
		s.check(t, execute(t, r, s.code))
	}
}

func TestClose(t *testing.T) {
	needPython(t)
	before := runtime.NumGoroutine()
	r, err := New(WithDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	resp := execute(t, r, "import os, subprocess, threading, time\n"+
		"child = subprocess.Popen(['sleep', '600'])\n"+
		"threading.Thread(target=time.sleep, args=(600,)).start()\n"+
		"print(os.getpid(), child.pid)")
	var pids [2]int
	if _, err := fmt.Sscan(resp.Output, &pids[0], &pids[1]); err != nil {
		t.Fatalf("pids: got %q, want two numbers", resp.Output)
	}
	checkEnded(t, r, before, pids[:]...)
	if _, err := r.Execute(context.Background(), "pass"); !errors.Is(err, envs.ErrClosed) {
		t.Errorf("Execute after Close: got %v, want an error wrapping envs.ErrClosed", err)
	}
}

func TestCloseWhileRunning(t *testing.T) {
	r := newREPL(t)
	done := make(chan envs.Response, 1)
	go func() {
		resp, _ := r.Execute(context.Background(), "import time\ntime.sleep(600)")
		done <- resp
	}()
	waitFor(t, "the command to start", func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.proc != nil
	})
	if err := r.Close(); err != nil {
		t.Errorf("Close: got %v, want nil", err)
	}
	select {
	case resp := <-done:
		if resp.Success {
			t.Errorf("Execute during Close: got success, want a failed response")
		}
	case <-time.After(callTimeout):
		t.Fatalf("Execute did not return within %v of Close", callTimeout)
	}
}

// gone reports whether pid no longer runs (a zombie waiting for a reaper
// counts as gone).
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return os.IsNotExist(err)
	}
	m := regexp.MustCompile(`\) (\S) `).FindSubmatch(stat)
	return m != nil && string(m[1]) == "Z"
}
