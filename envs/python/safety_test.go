package python

import (
	"archive/zip"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/internal/procs"
)

// TestForkInCell: a cell that forks gets its own reply; the forked copy
// of the driver never answers, so every later reply belongs to its own
// command, and the namespace is kept.
func TestForkInCell(t *testing.T) {
	for _, c := range []struct{ name, code string }{
		{"both return", "import os\nkept = 1\npid = os.fork()\n'parent' if pid else 'child'"},
		{"the child lingers", "import os, time\nkept = 1\nif os.fork() == 0:\n    time.sleep(0.3)\n    print('child done')\n'parent'"},
		{"the child exits", "import os\nkept = 1\nif os.fork() == 0:\n    os._exit(0)\n'parent'"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newREPL(t)
			pid := pidOf(t, r)
			resp := execute(t, r, c.code)
			// A child that prints may do so before the parent's value.
			if !strings.HasPrefix(strings.TrimPrefix(resp.Output, "child done\n"), "'parent'") || !strings.Contains(resp.Output, "The code forked 1 process(es).") || !resp.Success {
				t.Errorf("got %+v, want the parent's value and a note of the fork", resp)
			}
			// The child may print before the parent's reply ends (a
			// loaded machine can hold the parent longer than the child's
			// sleep): then it is the forking command's output.
			all := []string{resp.Output}
			for i := range 20 {
				code := fmt.Sprintf("%d * 2", i)
				got := execute(t, r, code)
				if own := got.Output[strings.LastIndexByte("\n"+got.Output, '\n'):]; own != strconv.Itoa(i*2) || !got.Success {
					t.Fatalf("command %d after the fork: got %+v, want it to end with %d", i, got, i*2)
				}
				all = append(all, got.Output)
			}
			if c.name == "the child lingers" {
				// The child prints when the machine lets it: wait for it
				// with more commands rather than for a set time. Printed
				// between commands, it is marked as background output;
				// on a loaded machine it may land while a command runs,
				// and is then that command's output, unmarked.
				const marked = "[Output since the last command (background threads or processes):]\nchild done"
				seen := func() bool { return strings.Contains(strings.Join(all, "\n"), "child done") }
				for deadline := time.Now().Add(time.Minute); !seen() && time.Now().Before(deadline); {
					time.Sleep(50 * time.Millisecond)
					all = append(all, execute(t, r, "0").Output)
				}
				joined := strings.Join(all, "\n")
				if strings.Count(joined, "child done") != 1 || strings.Contains(joined, "[Output since") && !strings.Contains(joined, marked) {
					t.Errorf("got %q, want the child's output once, right after the background marker if there is one", all)
				}
			}
			if joined := strings.Join(all, "\n"); strings.Contains(joined, "child'") {
				t.Errorf("got %q, want no value from the forked copy", joined)
			}
			step{code: "kept", want: exactly("1"), success: true}.check(t, execute(t, r, "kept"))
			if got := pidOf(t, r); got != pid {
				t.Errorf("the interpreter: got pid %d, want the same %d", got, pid)
			}
		})
	}
}

// TestProtocolDescriptors: a cell that closes, replaces or writes to the
// descriptors that carry commands and replies is found out; the
// interpreter is replaced, the response says the state was lost, and
// every later reply belongs to its own command.
func TestProtocolDescriptors(t *testing.T) {
	for _, c := range []struct{ name, code, has string }{
		{"closes the replies", "import os\nos.close(4)", "exited with status"},
		{"closes the requests", "import os\nos.close(3)", "closed or replaced the descriptors"},
		{"replaces the replies", "import os\nos.dup2(1, 4)", "closed or replaced the descriptors"},
		{"writes a fake reply", "import os, json\nos.write(4, (json.dumps({'status': 'ok', 'success': True, 'cwd': '/', 'vars': []}) + '\\n').encode())\nimport time\ntime.sleep(0.2)", "was not the driver's answer"},
		{"writes half a line", "import os\nos.write(4, b'{\"status\"')", "stopped answering"},
		{"closes the copies of its output",
			"import os\nfor fd in [int(n) for n in os.listdir('/proc/self/fd')]:\n    try:\n        if fd > 4 and os.path.sameopenfile(fd, 1): os.close(fd)\n    except OSError: pass",
			"or the copies of its output"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newREPL(t)
			execute(t, r, "old = 1")
			resp := execute(t, r, c.code)
			if resp.Success || !strings.Contains(resp.Output, c.has) || !strings.Contains(resp.Output, "All variables and imports were lost") {
				t.Errorf("got %+v, want a failure containing %q that says the state was lost", resp, c.has)
			}
			step{code: "old", has: []string{"NameError"}}.check(t, execute(t, r, "old"))
			for i := range 5 {
				code := fmt.Sprintf("%d + 100", i)
				step{code: code, want: exactly(strconv.Itoa(i + 100)), success: true}.check(t, execute(t, r, code))
			}
		})
	}
}

// TestOutputsRestored: a cell that leaves fd 1 or 2 closed or pointing
// elsewhere (os.dup2 of /dev/null left in place when a library raised)
// gets it put back, with a note, before its traceback is shown; the
// output of later cells, of programs they start, and their tracebacks
// come back, in the same interpreter with its variables.
func TestOutputsRestored(t *testing.T) {
	redirected := func(fd int, name, to string) string {
		return fmt.Sprintf("[The interpreter's %s (descriptor %d) went to %s instead of this session's output "+
			"(the code redirected it), so later output would be lost. It was put back; variables and imports are kept.]", name, fd, to)
	}
	closed := func(fd int, name string) string {
		return fmt.Sprintf("[The interpreter's %s (descriptor %d) was closed by the code, so what it prints would be lost. "+
			"It was put back; variables and imports are kept.]", name, fd)
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "log.txt")
	for _, c := range []struct {
		name, code string
		want       string
		success    bool
	}{
		{"output to /dev/null", "import os\nos.dup2(os.open(os.devnull, os.O_WRONLY), 1)\nprint('hidden')",
			redirected(1, "standard output", "/dev/null"), true},
		{"errors to /dev/null, then a raise",
			"import os\nos.dup2(os.open(os.devnull, os.O_WRONLY), 2)\nprint('shown')\nraise ValueError('the library failed')",
			"shown\nTraceback (most recent call last):\n  File \"<cell-3>\", line 4, in <module>\n    raise ValueError('the library failed')\n" +
				"ValueError: the library failed\n" + redirected(2, "standard error", "/dev/null"), false},
		{"both to a file", fmt.Sprintf("import os\nfd = os.open(%q, os.O_WRONLY | os.O_CREAT)\nos.dup2(fd, 1)\nos.dup2(fd, 2)\nos.system('echo to the file')", log),
			redirected(1, "standard output", log) + "\n" + redirected(2, "standard error", log), true},
		{"output closed", "import os\nos.close(1)", closed(1, "standard output"), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newREPL(t)
			execute(t, r, "kept = 1")
			pid := pidOf(t, r)
			resp := execute(t, r, c.code)
			if resp.Output != c.want || resp.Success != c.success {
				t.Errorf("got {%q, %v}, want {%q, %v}", resp.Output, resp.Success, c.want, c.success)
			}
			step{code: "print", want: exactly("NEXT 1"), success: true}.check(t, execute(t, r, "print('NEXT', kept)"))
			step{code: "os.system", want: exactly("from a program"), success: true}.check(t, execute(t, r, "import os\n_ = os.system('echo from a program')"))
			step{code: "1/0", has: []string{"Traceback", "ZeroDivisionError: division by zero"}}.check(t, execute(t, r, "1/0"))
			if got := pidOf(t, r); got != pid {
				t.Errorf("the interpreter: got pid %d, want the same %d", got, pid)
			}
		})
	}
	// The value of the cell's final expression went there too.
	if data, err := os.ReadFile(log); err != nil || string(data) != "to the file\n0\n" {
		t.Errorf("%s: got %q, %v, want what the code sent there", log, data, err)
	}
}

// TestStreamsRestored: a cell that leaves in the place of sys.stdout or
// sys.stderr something whose output does not reach the session (a file, a
// StringIO, None) gets the stream put back, with a note, before its
// traceback is shown; a wrapper that writes to the session's descriptors
// stays, with no note.
func TestStreamsRestored(t *testing.T) {
	tee := filepath.Join(t.TempDir(), "tee.log")
	replaced := func(stream, with string) string {
		return fmt.Sprintf("[The code replaced sys.%s with %s, which does not write to this session's output, so what later code prints would be lost. "+
			"sys.%s was put back; variables and imports are kept. To capture output within one command, use contextlib.redirect_%s.]", stream, with, stream, stream)
	}
	closed := func(stream string) string {
		return fmt.Sprintf("[The code closed sys.%s (or detached its buffer), so nothing could be written to it any more. A new sys.%s writing to this session's output was put in its place; variables and imports are kept.]", stream, stream)
	}
	for _, c := range []struct {
		name, code string
		want       string
		success    bool
	}{
		{"output to a file", "import os, sys\nsys.stdout = open(os.devnull, 'w')\nprint('hidden')",
			replaced("stdout", "/dev/null"), true},
		{"errors to a StringIO, then a raise", "import io, sys\nsys.stderr = io.StringIO()\nraise ValueError('lost?')",
			"Traceback (most recent call last):\n  File \"<cell-2>\", line 3, in <module>\n    raise ValueError('lost?')\nValueError: lost?\n" +
				replaced("stderr", "a StringIO"), false},
		{"output None", "import sys\nsys.stdout = None", replaced("stdout", "None"), true},
		{"output closed", "import sys\nsys.stdout.close()", closed("stdout"), true},
		{"output detached", "import sys\nsys.stdout.detach()\nNone", closed("stdout"), true},
		{"output replaced, then closed", "import io, sys\nsys.stdout = io.StringIO()\nprint('hidden')\nsys.stdout.close()",
			replaced("stdout", "a StringIO"), true},
		{"output closed by a with block", "import sys\nwith sys.stdout as f:\n    f.write('once\\n')\nNone", "once\n" + closed("stdout"), true},
		{"errors closed, then a raise", "import sys\nsys.stderr.close()\nraise ValueError('seen')",
			"Traceback (most recent call last):\n  File \"<cell-2>\", line 3, in <module>\n    raise ValueError('seen')\nValueError: seen\n" + closed("stderr"), false},
		{"a wrapper of a copy of descriptor 1", "import os, sys\nsys.stdout = os.fdopen(os.dup(1), 'w', buffering=1)\nprint('through a copy')",
			"through a copy", true},
		{"a tee that logs and prints", fmt.Sprintf("import sys\nclass Tee:\n    def __init__(self, out):\n        self.out, self.log = out, open(%q, 'a')\n"+
			"    def write(self, s):\n        self.log.write(s); self.log.flush(); return self.out.write(s)\n"+
			"    def flush(self):\n        self.out.flush()\nsys.stdout = Tee(sys.stdout)\nprint('logged')", tee),
			"logged", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newREPL(t)
			execute(t, r, "kept = 1")
			resp := execute(t, r, c.code)
			if resp.Output != c.want || resp.Success != c.success {
				t.Errorf("got {%q, %v}, want {%q, %v}", resp.Output, resp.Success, c.want, c.success)
			}
			step{code: "print", want: exactly("NEXT 1"), success: true}.check(t, execute(t, r, "print('NEXT', kept)"))
			step{code: "1/0", has: []string{"Traceback", "ZeroDivisionError: division by zero"}}.check(t, execute(t, r, "1/0"))
		})
	}
	// The tee stayed: it logged the later cell's output too.
	if data, err := os.ReadFile(tee); err != nil || string(data) != "logged\nNEXT 1\n" {
		t.Errorf("%s: got %q, %v, want the output of both cells", tee, data, err)
	}
}

// TestNotebookLines: !command runs a shell command and %pip installs into
// the environment's own interpreter (here a virtual environment, from a
// local wheel: no network).
func TestNotebookLines(t *testing.T) {
	needPython(t)
	r := newREPL(t)
	step{code: "!echo hi", want: exactly("hi"), success: true}.check(t, execute(t, r, "!echo hi"))
	step{code: "x", want: exactly("shell says hi\n3"), success: true}.check(t,
		execute(t, r, "for w in ['hi']:\n    !echo shell says $(echo hi)\nx = 3\nx"))
	step{code: "bad", has: []string{"SyntaxError"}}.check(t, execute(t, r, "x = (1,\n!echo no"))
	step{code: "string", want: exactly("'!not a command'"), success: true}.check(t, execute(t, r, "'''\n!not a command'''[1:]"))
	step{code: "in a string", want: exactly("hi\n\n!important\n\nTrue"), success: true}.check(t,
		execute(t, r, "!echo hi\nmsg = '''\n!important\n'''\nprint(msg)\na, b = 1, 2\nc = (a\n     != b)\nc"))

	dir := t.TempDir()
	venv := filepath.Join(dir, "venv")
	if out, err := exec.Command("python3", "-m", "venv", "--without-pip", "--system-site-packages", venv).CombinedOutput(); err != nil {
		t.Skipf("cannot make a virtual environment: %v\n%s", err, out)
	}
	python := filepath.Join(venv, "bin", "python")
	if err := exec.Command(python, "-m", "pip", "--version").Run(); err != nil {
		t.Skipf("pip is not available to %s: %v", python, err)
	}
	wheel := writeWheel(t, dir)
	v := newREPL(t, WithPython(python))
	resp := execute(t, v, "%pip install --no-index --no-deps "+wheel)
	if !resp.Success || !strings.Contains(resp.Output, "Successfully installed unfoldprobe-1.0") {
		t.Fatalf("%%pip install: got %+v, want it installed", resp)
	}
	step{code: "import", want: exactly("'probe 42'"), success: true}.check(t, execute(t, v, "import unfoldprobe\nunfoldprobe.VALUE"))
	step{code: "where", want: exactly("True"), success: true}.check(t,
		execute(t, v, "unfoldprobe.__file__.startswith("+strconv.Quote(venv)+")"))
	if _, err := os.Stat(filepath.Join(venv, "lib")); err != nil {
		t.Errorf("the virtual environment: %v", err)
	}
}

// writeWheel writes a wheel of a package unfoldprobe into dir and returns
// its path.
func writeWheel(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "unfoldprobe-1.0-py3-none-any.whl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	files := map[string]string{
		"unfoldprobe/__init__.py":                 "VALUE = 'probe 42'\n",
		"unfoldprobe-1.0.dist-info/METADATA":      "Metadata-Version: 2.1\nName: unfoldprobe\nVersion: 1.0\n",
		"unfoldprobe-1.0.dist-info/WHEEL":         "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
		"unfoldprobe-1.0.dist-info/top_level.txt": "unfoldprobe\n",
	}
	var record strings.Builder
	for name, body := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
		record.WriteString(name + ",,\n")
	}
	record.WriteString("unfoldprobe-1.0.dist-info/RECORD,,\n")
	w, err := zw.Create("unfoldprobe-1.0.dist-info/RECORD")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte(record.String())); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSecretInput: getpass asks for a hidden line; the answer reaches the
// code and is not in the output.
func TestSecretInput(t *testing.T) {
	r := newREPL(t)
	resp := execute(t, r, "import getpass\npw = getpass.getpass('Key: ')")
	if !resp.Waiting || !resp.Hidden || resp.Prompt != "Key:" {
		t.Fatalf("got %+v, want it waiting for a hidden answer to %q", resp, "Key:")
	}
	resp = execute(t, r, "s3cret")
	if !resp.Success || strings.Contains(resp.Output, "s3cret") {
		t.Errorf("after the answer: got %+v, want success and no echo of the secret", resp)
	}
	step{code: "len(pw)", want: exactly("6"), success: true}.check(t, execute(t, r, "len(pw)"))
}

// TestCloseEndsEscapedProcesses: a process the code started in a session
// of its own ends when the environment closes.
func TestCloseEndsEscapedProcesses(t *testing.T) {
	r := newREPL(t)
	resp := execute(t, r, "import subprocess\np = subprocess.Popen(['sleep', '1004'], start_new_session=True)\np.pid")
	pid, err := strconv.Atoi(resp.Output)
	if err != nil {
		t.Fatalf("got %q, want a pid", resp.Output)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the setsid sleep to end", func() bool { return gone(pid) })
}

// TestResources: resource limits apply to the interpreter and what it
// starts.
func TestResources(t *testing.T) {
	r := newREPL(t, WithResources(procs.Limits{FileSize: 1 << 20}))
	// Python ignores SIGXFSZ: the write fails instead.
	step{code: "write", has: []string{"OSError: [Errno 27] File too large"}}.check(t,
		execute(t, r, "with open('big', 'wb') as f:\n    f.write(b'0' * 2000000)"))
	step{code: "size", want: exactly("1048576"), success: true}.check(t, execute(t, r, "import os\nos.path.getsize('big')"))
}
