package orchestrator

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// protoProgram is a process environment's program that answers every
// command with its version, and exits on "die".
const protoProgram = `import json, os, sys
V = "v1"
for line in sys.stdin:
    req = json.loads(line)
    if req["type"] == "execute":
        if req["command"] == "die":
            os._exit(3)
        print(json.dumps({"type": "response", "output": V, "success": True}), flush=True)
    elif req["type"] == "screen":
        print(json.dumps({"type": "screen", "content": V}), flush=True)
    else:
        break
`

// replProgram is an interactive environment's program that answers every
// line with its version, and exits on "die".
const replProgram = `V = "v1"
while True:
    try:
        line = input("rp> ")
    except EOFError:
        break
    if line == "die":
        raise SystemExit(3)
    print(V)
`

// TestWithoutSpecReloadPinsPrograms: with spec reloads off, a program
// whose script changed after the spec files were loaded is not started
// again, and the response names the file; the same content back, or a
// run with reloads on, starts it.
func TestWithoutSpecReloadPinsPrograms(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	for _, tc := range []struct {
		kind, script, program, spec string
	}{
		{"process", "env/build.py", protoProgram, `{"kind":"process","executable":"python3","args":["env/build.py"],"description":"builds"}`},
		{"interactive", "env/build.py", replProgram, `{"kind":"interactive","command":"python3 env/build.py","prompt":"rp> $","description":"builds"}`},
		{"interactive, a path made later", "tools/run.py", replProgram, `{"kind":"interactive","command":"python3 env/build.py ./tools/run.py","prompt":"rp> $","description":"builds"}`},
		{"process, a variable", "conf/build.toml", protoProgram, `{"kind":"process","executable":"python3","args":["env/build.py"],"env":{"BUILD_CONF":"conf/build.toml"},"description":"builds"}`},
	} {
		for _, fixed := range []bool{true, false} {
			name := tc.kind
			if !fixed {
				name += ", reloads on"
			}
			t.Run(name, func(t *testing.T) {
				dir := writeProject(t, map[string]string{"build.json": tc.spec})
				write := func(rel, data string) {
					t.Helper()
					path := filepath.Join(dir, rel)
					if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				write("env/build.py", tc.program)
				made := tc.script != "env/build.py" // the file did not exist at load
				if !made {
					write(tc.script, tc.program)
				}
				opts := []Option{WithInteractive(newInteractive)}
				if fixed {
					opts = append(opts, WithoutSpecReload("only the editor is on"))
				}
				o := mustNew(t, opts...)
				defer o.Close()
				if err := o.LoadSpecs(dir); err != nil {
					t.Fatal(err)
				}
				ctx := context.Background()
				if res := o.Execute(ctx, "build", "go"); res.Response.Output != "v1" {
					t.Fatalf("first run: got %+v, want v1", res.Response)
				}
				changed := strings.Replace(tc.program, `"v1"`, `"v2"`, 1)
				if made {
					changed = "x = 1\n"
				}
				write(tc.script, changed)
				o.Execute(ctx, "build", "die")
				res := o.Execute(ctx, "build", "go")
				if !fixed {
					if res.Response.Output == "" || strings.Contains(res.Response.Output, "not started") {
						t.Errorf("reloads on: got %+v, want the program started", res.Response)
					}
					return
				}
				how := "changed"
				if made {
					how = "was made"
				}
				want := "the file " + tc.script + " " + how + " since env/build.json was loaded, and a changed program is not started, because only the editor is on. Restart to accept the change"
				if strings.Contains(tc.spec, "./tools") {
					want = strings.Replace(want, "tools/run.py", "./tools/run.py", 1)
				}
				if res.Response.Success || !strings.Contains(res.Response.Output, want) || strings.Contains(res.Response.Output, "v2") {
					t.Errorf("after the change: got %q, want it to contain %q", res.Response.Output, want)
				}
				if made {
					if err := os.Remove(filepath.Join(dir, tc.script)); err != nil {
						t.Fatal(err)
					}
				} else {
					write(tc.script, tc.program)
				}
				if res := o.Execute(ctx, "build", "go"); !strings.HasSuffix(res.Response.Output, "v1") {
					t.Errorf("changed back: got %+v, want v1", res.Response)
				}
			})
		}
	}
}
