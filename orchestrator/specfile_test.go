package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/tools"
)

// goodProcessSpec returns a valid process spec file running the fake process.
func goodProcessSpec(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{
		"kind":        "process",
		"executable":  exe,
		"description": "Test counter",
		"env":         fakeVars("counter"),
	})
	return string(b)
}

func writeProject(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "env"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, "env", name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLoadSpecsErrors(t *testing.T) {
	tests := []struct {
		file    string
		data    string
		wantErr string
	}{
		{"missing.json", `{"kind":"process","description":"x"}`, `env/missing.json: missing field "executable"`},
		{"wrongtype.json", `{"kind":"process","executable":5,"description":"x"}`, `env/wrongtype.json: field "executable": wrong type: expected string, but got number`},
		{"notjson.json", "{\n  \"kind\": \"process\",,\n}", `env/notjson.json: not valid JSON: invalid character ',' looking for beginning of object key string (line 2, column 21)`},
		{"unknownkind.json", `{"kind":"docker","image":"x"}`, `env/unknownkind.json: field "kind": unknown kind; want "interactive" or "process"`},
		{"nokind.json", `{"description":"x"}`, `env/nokind.json: missing field "kind"`},
		{"kindtype.json", `{"kind":7}`, `env/kindtype.json: field "kind": unknown kind; want "interactive" or "process"`},
		{"notobject.json", `["process"]`, `env/notobject.json: wrong type: expected object, but got array`},
		{"extra.json", `{"kind":"interactive","command":"sqlite3","prompt":"sqlite> ","description":"x","promt":"y"}`, `env/extra.json: unknown field "promt"`},
		{"several.json", `{"kind":"interactive","command":3}`, `env/several.json: field "command": wrong type: expected string, but got number; missing field "description"; missing field "prompt"`},
		{"badprompt.json", `{"kind":"interactive","command":"x","prompt":"(","description":"x"}`, "env/badprompt.json: field \"prompt\": not a valid regular expression (Go RE2 syntax): error parsing regexp: missing closing ): `(`"},
		{"argtype.json", `{"kind":"process","executable":"sh","args":["ok",1],"description":"x"}`, `env/argtype.json: field "args[1]": wrong type: expected string, but got number`},
		{"badtimeout.json", `{"kind":"process","executable":"sh","description":"x","timeout":0}`, `env/badtimeout.json: field "timeout": must be > 0 but found 0`},
		{"noexe.json", `{"kind":"process","executable":"no-such-command-unfold","description":"x"}`, `env/noexe.json: field "executable": "no-such-command-unfold" is not found in PATH`},
		{"norelexe.json", `{"kind":"process","executable":"bin/missing","description":"x"}`, `env/norelexe.json: field "executable": "bin/missing" does not exist (relative paths start at the project directory)`},
		{"nodir.json", `{"kind":"process","executable":"sh","dir":"nowhere","description":"x"}`, `env/nodir.json: field "dir": "nowhere" is not a directory`},
		{"empty.json", ``, `env/empty.json: not valid JSON: the file ends before the JSON value does`},
		{"twovalues.json", `{"kind":"process"} {}`, `env/twovalues.json: not valid JSON: more than one JSON value in the file`},
		{"my-env.json", `{"kind":"process","executable":"sh","description":"x"}`, `env/my-env.json: the file name gives the environment's name: invalid environment name "my-env": use an identifier (letters, digits and underscores, not starting with a digit); rename the file`},
		{"orchestrator.json", `{"kind":"process","executable":"sh","description":"x"}`, `env/orchestrator.json: the file name gives the environment's name: invalid environment name "orchestrator": the name is reserved for the orchestrator's own screen; rename the file`},
		{"hinttype.json", `{"kind":"process","executable":"sh","description":"x","hints":{"read_only":"yes"}}`, `env/hinttype.json: field "hints.read_only": wrong type: expected boolean, but got string`},
		{"hintname.json", `{"kind":"interactive","command":"x","prompt":"> ","description":"x","hints":{"readonly":true}}`, `env/hintname.json: field "hints": unknown field "readonly"`},
		{"echo.json", `{"kind":"process","executable":"sh","description":"x"}`, `env/echo.json: orchestrator: register echo: an environment with that name is already registered`},
		{"badcont.json", `{"kind":"interactive","command":"x","prompt":"> ","continuation":"[","description":"x"}`, "env/badcont.json: field \"continuation\": not a valid regular expression (Go RE2 syntax): error parsing regexp: missing closing ]: `[`"},
		{"emptycont.json", `{"kind":"interactive","command":"x","prompt":"> ","continuation":"(-# )*","description":"x"}`, `env/emptycont.json: field "continuation": "(-# )*" matches the empty string, so every command would end as incomplete; write the continuation prompt's text, such as "db-# "`},
		{"inittype.json", `{"kind":"interactive","command":"x","prompt":"> ","init":"set x","description":"x"}`, `env/inittype.json: field "init": wrong type: expected array, but got string`},
		{"emptyprompt.json", `{"kind":"interactive","command":"sh","prompt":"(sqlite> )?","description":"x"}`, `env/emptyprompt.json: field "prompt": "(sqlite> )?" matches the empty string, so it would match the end of any output and every command would end before its output came; write the prompt's text, such as "sqlite> "`},
		{"fraction.json", `{"kind":"process","executable":"sh","description":"x","budget":1.5}`, `env/fraction.json: field "budget": wrong type: expected integer, but got number`},
		{"toolarge.json", `{"kind":"process","executable":"sh","description":"x","limits":{"address_space":1e30}}`, `env/toolarge.json: field "limits.address_space": 1000000000000000000000000000000 is out of range; write a smaller whole number`},
		{"envempty.json", `{"kind":"process","executable":"sh","description":"x","env":{"":"y"}}`, `env/envempty.json: field "env": a variable has an empty name; give it a name`},
		{"envequals.json", `{"kind":"process","executable":"sh","description":"x","env":{"A=B":"x"}}`, `env/envequals.json: field "env": variable "A=B": a name may not hold "=" or NUL`},
		{"envnulname.json", `{"kind":"process","executable":"sh","description":"x","env":{"A\u0000":"x"}}`, `env/envnulname.json: field "env": variable "A\x00": a name may not hold "=" or NUL`},
		{"envnulvalue.json", `{"kind":"process","executable":"sh","description":"x","env":{"TOKEN":"sk\u0000x"}}`, `env/envnulvalue.json: field "env": variable "TOKEN": its value holds a NUL character, which no variable can hold`},
		{"envname.json", `{"kind":"process","executable":"sh","description":"x","env":{"UNFOLD_ENV":"spoof"}}`, `env/envname.json: field "env": variable "UNFOLD_ENV": unfold sets it (UNFOLD_ENV, UNFOLD_PROCS); use another name`},
		{"envprocs.json", `{"kind":"process","executable":"sh","description":"x","env":{"UNFOLD_PROCS":""}}`, `env/envprocs.json: field "env": variable "UNFOLD_PROCS": unfold sets it (UNFOLD_ENV, UNFOLD_PROCS); use another name`},
		{"argnul.json", `{"kind":"process","executable":"sh","description":"x","args":["a","b\u0000"]}`, `env/argnul.json: field "args[1]": holds a NUL character, which no argument can hold`},
		{"dirup.json", `{"kind":"process","executable":"sh","description":"x","dir":"../.."}`, `env/dirup.json: field "dir": "../.." is outside the project directory; give a directory inside it, relative to it`},
		{"dirabs.json", `{"kind":"process","executable":"sh","description":"x","dir":"/"}`, `env/dirabs.json: field "dir": "/" is outside the project directory; give a directory inside it, relative to it`},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSuffix(tt.file, ".json"), func(t *testing.T) {
			dir := writeProject(t, map[string]string{"good.json": goodProcessSpec(t), tt.file: tt.data})
			o := mustNew(t)
			defer o.Close()
			if err := o.Register("echo", &testEnv{}); err != nil {
				t.Fatal(err)
			}
			err := o.LoadSpecs(dir)
			var se *SpecError
			if !errors.As(err, &se) {
				t.Fatalf("got %v, want a *SpecError", err)
			}
			if err.Error() != tt.wantErr {
				t.Errorf("got error\n%s\nwant\n%s", err, tt.wantErr)
			}
			if se.File != "env/"+tt.file {
				t.Errorf("got file %q, want %q", se.File, "env/"+tt.file)
			}
			if got := o.Names(); !slices.Equal(got, []string{"echo", "good"}) {
				t.Errorf("got environments %v, want [echo good]: the good file still loads", got)
			}
			screen := o.Screens()[ScreenName]
			want := envs.Screen{Content: "Environment spec files that failed to load (fix them: they are read again before the next command):\n- " + tt.wantErr, MaxLines: DefaultMaxLines}
			if screen != want {
				t.Errorf("got orchestrator screen %+v, want %+v", screen, want)
			}
		})
	}
}

// TestLoadSpecsTogether loads good and bad files from one project: each bad
// file has its own error, and the good ones work through the orchestrator.
func TestLoadSpecsTogether(t *testing.T) {
	dir := writeProject(t, map[string]string{
		"counter.json":     goodProcessSpec(t),
		"db.json":          `{"kind":"interactive","command":"sqlite3 data.db","prompt":"sqlite> $","description":"SQLite shell"}`,
		"lazy.json":        `{"kind":"interactive","command":"gdb","prompt":"\\(gdb\\) ","description":"GDB","on_demand":true}`,
		"missing.json":     `{"kind":"process","description":"x"}`,
		"wrongtype.json":   `{"kind":"process","executable":5,"description":"x"}`,
		"notjson.json":     `not json`,
		"unknownkind.json": `{"kind":"docker"}`,
		"README.md":        "not a spec: ignored",
	})
	o := mustNew(t)
	defer o.Close()
	err := o.LoadSpecs(dir)
	var got []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		got = append(got, e.Error())
	}
	want := []string{
		`env/missing.json: missing field "executable"`,
		`env/notjson.json: not valid JSON: invalid character 'o' in literal null (expecting 'u') (line 1, column 2)`,
		`env/unknownkind.json: field "kind": unknown kind; want "interactive" or "process"`,
		`env/wrongtype.json: field "executable": wrong type: expected string, but got number`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("got errors\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if names := o.Names(); !slices.Equal(names, []string{"counter", "db", "lazy"}) {
		t.Errorf("got environments %v, want [counter db lazy]", names)
	}
	if n := len(o.LoadErrors()); n != 4 {
		t.Errorf("got %d load errors, want 4", n)
	}

	res := o.Execute(context.Background(), "counter", "inc")
	if res.Response != (envs.Response{Output: "ok", Success: true}) {
		t.Errorf("counter: got %+v, want ok", res.Response)
	}
	if got := res.Screens["counter"]; got != (envs.Screen{Content: "Counter: 1", MaxLines: 5}) {
		t.Errorf("counter screen: got %+v, want Counter: 1", got)
	}
	res = o.Execute(context.Background(), "db", "select 1;")
	wantDB := envs.Response{Output: `Interactive environments are not available in this build: db ("sqlite3 data.db", declared in env/db.json) was validated but cannot be started. Use another environment for this command.`}
	if res.Response != wantDB {
		t.Errorf("db: got %+v, want %+v", res.Response, wantDB)
	}
	if got := res.Screens["db"].Content; got != "SQLite shell\n(not available in this build: interactive environments cannot be started yet)" {
		t.Errorf("db screen: got %q", got)
	}
	res = o.Execute(context.Background(), "counter", "exit 3")
	if want := "Environment error in counter:\nthe process stopped before answering (it ended with exit status 3); it restarts on the next command, and its state was lost"; res.Response.Output != want {
		t.Errorf("counter exit: got %q, want %q", res.Response.Output, want)
	}
}

func TestLoadSpecsInteractiveFactory(t *testing.T) {
	dir := writeProject(t, map[string]string{
		"db.json": `{"kind":"interactive","command":"sqlite3","prompt":"sqlite> ","continuation":"   \\.\\.\\.> ","init":[".mode csv",".headers on"],"description":"SQLite shell"}`,
		"no.json": `{"kind":"interactive","command":"cat -u","prompt":"> ","description":"refused"}`,
	})
	var got []InteractiveSpec
	o := mustNew(t, WithInteractive(func(s InteractiveSpec) (envs.Env, error) {
		if s.Command == "cat -u" {
			return nil, errors.New("field \"command\": cat is refused")
		}
		got = append(got, s)
		return &testEnv{}, nil
	}))
	err := o.LoadSpecs(dir)
	if err == nil || err.Error() != `env/no.json: field "command": cat is refused` {
		t.Errorf("got %v, want the factory's error for env/no.json", err)
	}
	want := []InteractiveSpec{{Name: "db", File: "env/db.json", Command: "sqlite3", Args: []string{"sqlite3"}, Prompt: "sqlite> ", Continuation: `   \.\.\.> `, Init: []string{".mode csv", ".headers on"}, Description: "SQLite shell", Dir: dir}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got specs %+v, want %+v", got, want)
	}
}

// TestLoadSpecsNotRegular loads a project whose env directory holds, beside
// a good spec, a named pipe, a directory, a file over the size limit and
// files named for the front ends' own tools: each is skipped with its
// error, without waiting on the pipe, and the good spec loads.
func TestLoadSpecsNotRegular(t *testing.T) {
	dir := writeProject(t, map[string]string{
		"good.json":          goodProcessSpec(t),
		"help.json":          goodProcessSpec(t),
		"open_sections.json": goodProcessSpec(t),
		"find_tools.json":    goodProcessSpec(t),
		"call_tool.json":     goodProcessSpec(t),
		"use_tool.json":      goodProcessSpec(t),
		"up__echo.json":      goodProcessSpec(t),
		"big.json":           `{"kind":"process","description":"` + strings.Repeat("x", maxSpecBytes) + `"}`,
	})
	fifo := filepath.Join(dir, "env", "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	if err := os.Mkdir(filepath.Join(dir, "env", "dir.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	o := mustNew(t)
	defer o.Close()
	done := make(chan error, 1)
	go func() { done <- o.LoadSpecs(dir) }()
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		// Let the blocked open return, then fail.
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			_ = w.Close()
		}
		t.Fatal("LoadSpecs blocked on a named pipe")
	}
	want := []string{
		"env/big.json: file too large: " + strconv.Itoa(len(`{"kind":"process","description":""}`)+maxSpecBytes) + " bytes, more than the 1048576-byte limit",
		"env/call_tool.json: the name call_tool is taken by a tool the front ends offer (help, open_sections, find_tools, call_tool, use_tool); rename the file",
		"env/dir.json: not a regular file: it is a directory; give the path of a regular file",
		"env/fifo.json: not a regular file: it is a named pipe (FIFO); give the path of a regular file",
		"env/find_tools.json: the name find_tools is taken by a tool the front ends offer (help, open_sections, find_tools, call_tool, use_tool); rename the file",
		"env/help.json: the name help is taken by a tool the front ends offer (help, open_sections, find_tools, call_tool, use_tool); rename the file",
		"env/open_sections.json: the name open_sections is taken by a tool the front ends offer (help, open_sections, find_tools, call_tool, use_tool); rename the file",
		"env/up__echo.json: the name up__echo holds __, which MCP tools' names (SERVER__TOOL) hold: an environment could take an MCP tool's name; rename the file without __",
		"env/use_tool.json: the name use_tool is taken by a tool the front ends offer (help, open_sections, find_tools, call_tool, use_tool); rename the file",
	}
	var got []string
	for _, e := range o.LoadErrors() {
		got = append(got, e.Error())
	}
	if !slices.Equal(got, want) {
		t.Errorf("got errors\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if err == nil {
		t.Error("LoadSpecs returned nil, want the errors joined")
	}
	if names := o.Names(); !slices.Equal(names, []string{"good"}) {
		t.Errorf("got environments %v, want [good]", names)
	}
}

func TestLoadSpecsNoEnvDir(t *testing.T) {
	o := mustNew(t)
	if err := o.LoadSpecs(t.TempDir()); err != nil {
		t.Errorf("got %v, want nil for a project without env/", err)
	}
	if _, ok := o.Screens()[ScreenName]; ok {
		t.Error("got an orchestrator screen, want none without load errors")
	}
}

func TestSpecSchemaIsValidJSON(t *testing.T) {
	var v map[string]any
	if err := json.Unmarshal([]byte(SpecSchema()), &v); err != nil {
		t.Fatalf("the embedded schema is not JSON: %v", err)
	}
	if _, err := specSchemas(); err != nil {
		t.Fatalf("the embedded schema does not compile: %v", err)
	}
}

// TestWithProcesses: a process spec file becomes the environment the
// factory makes, given the resolved spec.
func TestWithProcesses(t *testing.T) {
	dir := writeProject(t, map[string]string{"counter.json": goodProcessSpec(t)})
	var got ProcessSpec
	o := mustNew(t, WithProcesses(func(s ProcessSpec) (envs.Env, error) {
		got = s
		return &trivialEnv{}, nil
	}))
	defer o.Close()
	if err := o.LoadSpecs(dir); err != nil {
		t.Fatal(err)
	}
	if got.Name != "counter" || got.Description != "Test counter" || got.File != "env/counter.json" || got.Dir != dir {
		t.Errorf("spec: got %+v", got)
	}
	if names := o.Names(); len(names) != 1 || names[0] != "counter" {
		t.Errorf("names: got %v", names)
	}
}

// TestSectionFollowsSpecChanges: an environment's section, taken once as
// the agent and the MCP server take them, shows the environment its spec
// file registers now: a changed file's new one, then a note once the file
// is gone.
func TestSectionFollowsSpecChanges(t *testing.T) {
	dir := writeProject(t, map[string]string{"counter.json": goodProcessSpec(t)})
	o := mustNew(t)
	defer o.Close()
	if err := o.LoadSpecs(dir); err != nil {
		t.Fatal(err)
	}
	secs, err := o.Sections()
	if err != nil {
		t.Fatal(err)
	}
	p := prompt.MustNew("test", "follow", secs...).MustBind()
	text := func() string {
		t.Helper()
		r, err := p.Render(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r.Text()
	}
	ctx := context.Background()
	if res := o.Execute(ctx, "counter", "inc"); !res.Response.Success {
		t.Fatalf("inc: got %+v", res.Response)
	}
	if got := text(); !strings.Contains(got, "Counter: 1") {
		t.Fatalf("before the change: got %q, want Counter: 1", got)
	}
	changed := strings.Replace(goodProcessSpec(t), "Test counter", "Test counter, again", 1)
	if err := os.WriteFile(filepath.Join(dir, "env", "counter.json"), []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	if res := o.Execute(ctx, "counter", "get"); res.Response.Output != "[counter was stopped because env/counter.json changed; its state from before was lost.]\n0" {
		t.Fatalf("after the change: got %+v, want the new environment's 0", res.Response)
	}
	if got := text(); !strings.Contains(got, "Counter: 0") || strings.Contains(got, "Counter: 1") {
		t.Errorf("after the change: got %q, want the new environment's screen", got)
	}
	if err := os.Remove(filepath.Join(dir, "env", "counter.json")); err != nil {
		t.Fatal(err)
	}
	o.Execute(ctx, "counter", "get")
	if got := text(); !strings.Contains(got, "[counter is gone: its spec file was removed or no longer loads.]") {
		t.Errorf("after the removal: got %q, want a note that it is gone", got)
	}
}

// hinted is an environment that says what its commands do.
type hinted struct {
	testEnv
	hints func() tools.Hints
}

func (h *hinted) Hints() tools.Hints { return h.hints() }

// TestCommandToolHints checks where a command tool's hints come from: the
// registration, else the environment, else what MCP assumes; a spec file's
// hints, with the fields it leaves out as MCP assumes them.
func TestCommandToolHints(t *testing.T) {
	closed := tools.Hints{Idempotent: true}
	dir := writeProject(t, map[string]string{
		"query.json": `{"kind":"interactive","command":"sqlite3","prompt":"sqlite> ","description":"x","hints":{"read_only":true,"open_world":false}}`,
		"net.json":   `{"kind":"process","executable":"sh","description":"x","hints":{"idempotent":true}}`,
		"plain.json": `{"kind":"process","executable":"sh","description":"x"}`,
	})
	o := mustNew(t, WithInteractive(func(InteractiveSpec) (envs.Env, error) { return &testEnv{}, nil }))
	defer o.Close()
	say := func(h tools.Hints) *hinted { return &hinted{hints: func() tools.Hints { return h }} }
	for name, env := range map[string]envs.Env{
		"silent": &testEnv{},
		"says":   say(closed),
		"panics": &hinted{hints: func() tools.Hints { panic("no") }},
	} {
		if err := o.Register(name, env); err != nil {
			t.Fatal(err)
		}
	}
	if err := o.Register("overridden", say(closed), Hints(tools.Hints{ReadOnly: true})); err != nil {
		t.Fatal(err)
	}
	if err := o.LoadSpecs(dir); err != nil {
		t.Fatal(err)
	}
	want := map[string]tools.Hints{
		"silent":     tools.AssumedHints,
		"says":       closed,
		"panics":     tools.AssumedHints,
		"overridden": {ReadOnly: true},
		"query":      {ReadOnly: true},
		"net":        {Destructive: true, Idempotent: true, OpenWorld: true},
		"plain":      tools.AssumedHints,
	}
	for name, w := range want {
		tool, err := o.CommandTool(name)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := tool.Hints(); !ok || got != w {
			t.Errorf("%s: got hints %+v (%v), want %+v", name, got, ok, w)
		}
	}
}

// TestLoadSpecsRelativeProgram: an interactive spec file's program given
// by a relative path starts at the project directory, not at the working
// directory; a missing one names the field.
func TestLoadSpecsRelativeProgram(t *testing.T) {
	dir := writeProject(t, map[string]string{
		"rel.json":  `{"kind":"interactive","command":"./bin/repl.sh -q","prompt":"> ","description":"REPL"}`,
		"gone.json": `{"kind":"interactive","command":"bin/gone.sh","prompt":"> ","description":"REPL"}`,
	})
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bin", "repl.sh"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var got []string
	o := mustNew(t, WithInteractive(func(s InteractiveSpec) (envs.Env, error) {
		got = s.Args
		return &testEnv{}, nil
	}))
	err := o.LoadSpecs(dir)
	if want := `env/gone.json: field "command": "bin/gone.sh" does not exist (relative paths start at the project directory)`; err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
	if want := []string{filepath.Join(dir, "bin", "repl.sh"), "-q"}; !slices.Equal(got, want) {
		t.Errorf("got args %q, want %q", got, want)
	}
}

// TestLoadSpecsNoProject: a project directory that does not exist, or a
// file given as one, is an error, not a project without spec files.
func TestLoadSpecsNoProject(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, dir, want string
	}{
		{"missing", filepath.Join(t.TempDir(), "no", "such"), "no such file or directory; give a directory that exists"},
		{"a file", file, "is not a directory; give the directory that holds env/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := mustNew(t)
			defer o.Close()
			err := o.LoadSpecs(tt.dir)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error saying %q", err, tt.want)
			}
		})
	}
}

// TestLoadSpecsWholeNumbers: whole numbers written with an exponent or a
// fraction (4e9, 8000.0), which the schema counts as integers, load.
func TestLoadSpecsWholeNumbers(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var got ProcessSpec
	o := mustNew(t, WithProcesses(func(ps ProcessSpec) (envs.Env, error) {
		got = ps
		return &testEnv{}, nil
	}))
	defer o.Close()
	spec := `{"kind":"process","executable":` + strconv.Quote(exe) + `,"description":"x","budget":8000.0,"timeout":2e1,"limits":{"address_space":4e9,"file_size":1.5e3}}`
	if err := o.LoadSpecs(writeProject(t, map[string]string{"nums.json": spec})); err != nil {
		t.Fatal(err)
	}
	if got.Budget != 8000 || got.Timeout != 20*time.Second || got.Resources.AddressSpace != 4e9 || got.Resources.FileSize != 1500 {
		t.Errorf("got budget %d, timeout %v, limits %+v; want 8000, 20s, 4000000000 and 1500 bytes", got.Budget, got.Timeout, got.Resources)
	}
}
