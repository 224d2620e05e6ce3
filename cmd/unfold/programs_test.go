package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// serveDriver drives `unfold serve` line by line.
type serveDriver struct {
	t      *testing.T
	stdin  io.WriteCloser
	out    *bufio.Reader
	stderr *bytes.Buffer
}

// serveIn starts `unfold serve` with args, in dir as its working
// directory; it is stopped at the end of the test.
func serveIn(t *testing.T, dir string, args ...string) *serveDriver {
	t.Helper()
	cmd, stdin, stdout, stderr := startBinaryIn(t, dir, append([]string{"serve"}, args...)...)
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Wait()
	})
	return &serveDriver{t: t, stdin: stdin, out: bufio.NewReader(stdout), stderr: stderr}
}

// do sends one command and returns the response.
func (d *serveDriver) do(cmd map[string]any) serveMessage {
	d.t.Helper()
	cmd["type"] = "command"
	b, _ := json.Marshal(cmd)
	if _, err := d.stdin.Write(append(b, '\n')); err != nil {
		d.t.Fatal(err)
	}
	line, err := d.out.ReadBytes('\n')
	if err != nil {
		d.t.Fatalf("reading the answer to %s: %v (stderr: %s)", b, err, d.stderr)
	}
	var m serveMessage
	if err := json.Unmarshal(line, &m); err != nil {
		d.t.Fatalf("answer %q is not JSON: %v", line, err)
	}
	return m
}

// buildProgram is a process environment's program, as in
// docs/process-environments.md; "die" ends it.
const buildProgram = `import json, os, sys
for line in sys.stdin:
    req = json.loads(line)
    if req["type"] == "execute":
        if req["command"] == "die":
            os._exit(3)
        print(json.dumps({"type": "response", "output": "built", "success": True}), flush=True)
    elif req["type"] == "screen":
        print(json.dumps({"type": "screen", "content": "builder"}), flush=True)
    else:
        break
`

// TestServeEditorCannotChangeAProgram: with only the editor on, the model
// edits the script a spec file runs; the program, once stopped, is not
// started again with the edit, and the response says which file changed
// and what to do.
func TestServeEditorCannotChangeAProgram(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	project := writeProject(t, map[string]string{
		"env/build.py":   buildProgram,
		"env/build.json": `{"kind":"process","executable":"python3","args":["env/build.py"],"description":"builds the project"}`,
	})
	marker := filepath.Join(t.TempDir(), "ran")
	d := serveIn(t, project, "--builtins", "editor", "--project", project)
	if m := d.do(map[string]any{"environment": "build", "command": "go"}); m.Response.Output != "built" {
		t.Fatalf("first command: got %+v, want built", m.Response)
	}
	if m := d.do(map[string]any{"environment": "editor", "command": "view env/build.py 1-1"}); !m.Response.Success {
		t.Fatalf("view: %+v", m.Response)
	}
	// The editor refuses to write the program's file: the edit cannot
	// race the program's next start.
	edit := "edit env/build.py 1-1\nimport json, os, sys; open(" + strconvQuote(marker) + ", 'w').write('x')"
	want := "env/build.py is part of the program env/build.json starts, so it is kept as it is: no environment of this run runs programs (bash, python): only the editor is on, and a file it writes could make a program run. Restart with bash or python on to change it; nothing was written"
	if m := d.do(map[string]any{"environment": "editor", "command": edit}); m.Response.Success || !strings.Contains(m.Response.Output, want) {
		t.Errorf("edit: got %q, want it refused with %q", m.Response.Output, want)
	}
	if got, _ := os.ReadFile(filepath.Join(project, "env", "build.py")); string(got) != buildProgram {
		t.Errorf("the program's file was changed:\n%s", got)
	}
	if m := d.do(map[string]any{"environment": "editor", "command": "create notes.txt\nother files are written"}); !m.Response.Success {
		t.Errorf("create notes.txt: %+v", m.Response)
	}
	d.do(map[string]any{"environment": "build", "command": "die"})
	if m := d.do(map[string]any{"environment": "build", "command": "go"}); !strings.HasSuffix(m.Response.Output, "it was restarted and its earlier state was lost.]\nbuilt") {
		t.Errorf("after the refused edit: got %+v, want the program started again", m.Response)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the edited program ran")
	}
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestServeRelativeProgram: an interactive spec file's program given by a
// relative path is found in the project directory, wherever unfold
// starts.
func TestServeRelativeProgram(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("sh is not installed")
	}
	project := writeProject(t, map[string]string{
		"bin/repl.sh":     "#!/bin/sh\nwhile printf 'rs> ' && IFS= read -r line; do echo \"got $line\"; done\n",
		"env/myrepl.json": `{"kind":"interactive","command":"./bin/repl.sh","prompt":"rs> $","description":"a REPL in the project"}`,
	})
	if err := os.Chmod(filepath.Join(project, "bin", "repl.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	d := serveIn(t, t.TempDir(), "--builtins", "none", "--project", project)
	if m := d.do(map[string]any{"environment": "myrepl", "command": "hi"}); m.Response.Output != "got hi" || !m.Response.Success {
		t.Errorf("got %+v (stderr %q), want got hi", m.Response, d.stderr)
	}
}

// TestServeInteractiveContinuationInit: an interactive spec file's
// continuation prompt (a psql-style "db-# ") tells an unfinished
// statement, and its init commands run at the start.
func TestServeInteractiveContinuationInit(t *testing.T) {
	if _, err := exec.LookPath("sqlite3"); err != nil {
		t.Skip("sqlite3 is not installed")
	}
	project := writeProject(t, map[string]string{
		"env/db.json": `{"kind":"interactive","command":"sqlite3 -cmd \".prompt 'db=# ' 'db-# '\"","prompt":"db=# ","continuation":"db-# ",` +
			`"init":[".headers on"],"description":"a psql-style prompt"}`,
	})
	d := serveIn(t, t.TempDir(), "--builtins", "none", "--project", project)
	for _, c := range []struct {
		command, output string
		success         bool
	}{
		{"select 1 as a, 2 as b;", "a|b\n1|2", true},
		{"select 3 as c", "[The input is incomplete: db shows its continuation prompt and waits for more (a missing ; or closing bracket?). The next command continues it.]", false},
		{";", "c\n3", true},
	} {
		if m := d.do(map[string]any{"environment": "db", "command": c.command}); m.Response.Output != c.output || m.Response.Success != c.success {
			t.Errorf("%q: got %+v (stderr %q), want %q, success %v", c.command, m.Response, d.stderr, c.output, c.success)
		}
	}
}
