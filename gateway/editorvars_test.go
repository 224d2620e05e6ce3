package gateway_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/gateway"
)

// TestEditorVariables reads a .mcp.json written for Cursor and VS Code:
// ${env:VAR} is ${VAR}, ${workspaceFolder} the project, ${userHome} the
// home directory, and envFile gives the server the variables it sets
// (env taking precedence); a real server started from it sees them.
func TestEditorVariables(t *testing.T) {
	project := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(project, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := rogue(t, "pe", "env")
	args, _ := json.Marshal(append(cfg.Args, "${env:MYTOKEN}", "${workspaceFolder}/x", "${userHome}", "${workspaceFolderBasename}"))
	write(".env", "# a comment\nFROMFILE=from the file\nBOTH=the file's\nexport QUOTED=\"a b\"\n")
	write(gateway.ProjectConfig, `{"mcpServers": {"pe": {"command": "`+cfg.Command+`", "args": `+string(args)+`,
  "env": {"API_KEY": "${env:MYTOKEN}", "TOKEN": "Bearer ${env:MYTOKEN}", "BOTH": "env's"}, "envFile": ".env"}}}`)
	cfgs, skipped, err := gateway.LoadConfigs(project, nil, env(map[string]string{"MYTOKEN": "sekrit-1234", "HOME": "/home/u"}))
	if err != nil || len(skipped) > 0 {
		t.Fatal(err, skipped)
	}
	g := newGateway(t, gateway.Options{}, cfgs...)
	d := disclosure(t, g)
	open(t, d, "mcp.pe")
	res := call(t, d, "pe__env", map[string]any{"names": []string{"API_KEY", "TOKEN", "FROMFILE", "BOTH", "QUOTED"}})
	var got struct {
		Argv []string
		Env  map[string]string
	}
	if err := json.Unmarshal([]byte(strings.TrimPrefix(res.Message, "env: ")), &got); err != nil {
		t.Fatalf("%v: %q", err, res.Message)
	}
	wantArgv := []string{"env", "sekrit-1234", project + "/x", "/home/u", filepath.Base(project)}
	if strings.Join(got.Argv, "|") != strings.Join(wantArgv, "|") {
		t.Errorf("argv: got %q, want %q", got.Argv, wantArgv)
	}
	wantEnv := map[string]string{"API_KEY": "sekrit-1234", "TOKEN": "Bearer sekrit-1234", "FROMFILE": "from the file", "BOTH": "env's", "QUOTED": "a b"}
	for k, v := range wantEnv {
		if got.Env[k] != v {
			t.Errorf("env %s: got %q, want %q", k, got.Env[k], v)
		}
	}
}

// TestEditorVariablesRefused: the editor's variables unfold does not
// know, a project variable without a project, and an envFile that is not
// there each leave the server out with an error that says which and what
// to do.
func TestEditorVariablesRefused(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct{ name, entry, want string }{
		{"file", `{"command": "x", "args": ["${file}"]}`, `args[0]: ${file} is a variable of VS Code and Cursor that unfold does not know (it is no environment variable either); write its value instead; the server is left out`},
		{"input", `{"command": "x", "env": {"K": "${input:apiKey}"}}`, `env.K: ${input:apiKey} is a variable of VS Code and Cursor that unfold does not know; write its value instead, or ${VAR} for an environment variable; the server is left out`},
		{"env unset", `{"command": "x", "args": ["${env:NOPE}"]}`, `args[0]: ${NOPE} is not set; set it, or write ${NOPE:-default}; the server is left out`},
		{"no project", `{"command": "x", "args": ["${workspaceFolder}"]}`, `args[0]: ${workspaceFolder} is VS Code's and Cursor's project folder, and unfold has no project here`},
		{"no home", `{"command": "x", "args": ["${userHome}"]}`, `args[0]: ${userHome} is the home directory, and neither HOME nor USERPROFILE is set; set HOME, or write the path instead; the server is left out`},
		{"no envFile", `{"command": "x", "envFile": "missing.env"}`, `envFile: stat ` + filepath.Join(dir, "missing.env") + `: no such file or directory; the server is left out; create the file, or remove envFile`},
		{"envFile over http", `{"type": "http", "url": "http://h/mcp", "envFile": ".env"}`, `envFile: an http server has no environment to set; the server is left out`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, tt.name+".json")
			if err := os.WriteFile(p, []byte(`{"mcpServers": {"s": `+tt.entry+`}}`), 0o644); err != nil {
				t.Fatal(err)
			}
			got, skipped, err := gateway.LoadConfigs("", []string{p}, env(nil))
			if err != nil || len(got) != 0 || len(skipped) != 1 {
				t.Fatalf("got %v %v %v, want the server left out", got, skipped, err)
			}
			if msg := skipped[0].Error(); !strings.Contains(msg, `server "s": `+tt.want) {
				t.Errorf("got %q, want it to hold %q", msg, tt.want)
			}
		})
	}
}
