package gateway_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
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
	write(".env", "# a comment\nFROMFILE=from the file # and a comment\nBOTH=the file's\nexport QUOTED=\"a b\"\n"+
		"DOLLAR=ab$HOME\nBRACED=\"x${MYTOKEN}y\\n\\\"z\\\"\"\nSINGLE='$Q7pass # kept'\nEMPTY=\nHASH=a#b # comment\n"+
		"MULTI=\"-----BEGIN KEY-----\nabc\n-----END KEY-----\" # a key\n")
	write(gateway.ProjectConfig, `{"mcpServers": {"pe": {"command": "`+cfg.Command+`", "args": `+string(args)+`,
  "env": {"API_KEY": "${env:MYTOKEN}", "TOKEN": "Bearer ${env:MYTOKEN}", "BOTH": "env's"}, "envFile": ".env"}}}`)
	cfgs, skipped, err := gateway.LoadConfigs(project, nil, env(map[string]string{"MYTOKEN": "sekrit-1234", "HOME": "/home/u"}))
	if err != nil || len(skipped) > 0 {
		t.Fatal(err, skipped)
	}
	g := newGateway(t, gateway.Options{}, cfgs...)
	d := disclosure(t, g)
	open(t, d, "mcp.pe")
	res := call(t, d, "pe__env", map[string]any{"names": []string{"API_KEY", "TOKEN", "FROMFILE", "BOTH", "QUOTED", "DOLLAR", "BRACED", "SINGLE", "EMPTY", "HASH", "MULTI"}})
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
	// An envFile's values are taken as written: $NAME is no reference.
	wantEnv := map[string]string{"API_KEY": "sekrit-1234", "TOKEN": "Bearer sekrit-1234", "FROMFILE": "from the file", "BOTH": "env's", "QUOTED": "a b",
		"DOLLAR": "ab$HOME", "BRACED": "x${MYTOKEN}y\n\"z\"", "SINGLE": "$Q7pass # kept", "EMPTY": "",
		"HASH": "a#b", "MULTI": "-----BEGIN KEY-----\nabc\n-----END KEY-----"}
	for k, v := range wantEnv {
		if got.Env[k] != v {
			t.Errorf("env %s: got %q, want %q", k, got.Env[k], v)
		}
	}
}

// TestEnvFileBadLine: a line of an envFile that does not parse leaves the
// server out with an error naming the file and the line, quoting nothing
// of it or of the lines after it (which may hold secrets).
func TestEnvFileBadLine(t *testing.T) {
	dir := t.TempDir()
	const secrets = "DB_PASSWORD=hunter2-very-secret\nSTRIPE_KEY=sk_live_xxxxxxxx\n"
	for _, tt := range []struct{ name, file, want string }{
		{"no =", "OK=1\nsk-live-SECRET oops\n" + secrets, `.env:2: not a KEY=value line: no '=' on the line; write KEY=value`},
		{"bad key", "OK=1\nsk-live-SECRET oops=x\n" + secrets, `.env:2: not a KEY=value line: the KEY holds a character other than letters, digits, '_', '.' and '-', or starts with a digit; write KEY=value`},
		{"open quote", "# c\n\nA=\"sk-live-SECRET\n" + secrets, `.env:3: not a KEY=value line: its quote is not closed`},
		{"after the quote", "A='sk-live-SECRET' oops\n" + secrets, `.env:1: not a KEY=value line: text after the closing quote`},
		{"no key", "=sk-live-SECRET\n" + secrets, `.env:1: not a KEY=value line: no KEY before '='`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(filepath.Join(dir, ".env"), []byte(tt.file), 0o600); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, "a.json")
			if err := os.WriteFile(p, []byte(`{"mcpServers": {"s": {"command": "x", "envFile": ".env"}}}`), 0o644); err != nil {
				t.Fatal(err)
			}
			got, skipped, err := gateway.LoadConfigs("", []string{p}, env(nil))
			if err != nil || len(got) != 0 || len(skipped) != 1 {
				t.Fatalf("got %v %v %v, want the server left out", got, skipped, err)
			}
			msg := skipped[0].Error()
			if !strings.Contains(msg, tt.want) || !strings.HasSuffix(msg, "; the server is left out; correct the line, or remove envFile") {
				t.Errorf("got %q, want it to hold %q and say what to do", msg, tt.want)
			}
			for _, secret := range []string{"sk-live", "SECRET", "hunter2", "sk_live", "oops"} {
				if strings.Contains(msg, secret) {
					t.Errorf("the message shows %q: %s", secret, msg)
				}
			}
		})
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

// TestEnvFileMasksSecretsOnly: a server that fails writing its settings
// to stderr shows its flags, ports and modes as written, and the values
// that look like secrets (by their name, or opaque) as ${KEY}, from an
// envFile and from "env" alike.
func TestEnvFileMasksSecretsOnly(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed; the server is a Python script")
	}
	dir := t.TempDir()
	const token = "ghp_0123456789abcdefABCDEF"
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte("DEBUG=true\nPORT=8080\nNODE_ENV=production\nDB_PASSWORD=hunter2\nGH="+token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	script := `import os, sys; e = os.environ; sys.stderr.write("config: debug %s, retry true, listening on %s in %s as %s/%s with %s, level %s\n" % (e["DEBUG"], e["PORT"], e["NODE_ENV"], e["DB_PASSWORD"], e["APP_SECRET"], e["GH"], e["LEVEL"])); sys.exit(1)`
	args, _ := json.Marshal([]string{"-c", script})
	data := `{"mcpServers": {"s": {"command": "` + py + `", "args": ` + string(args) + `, "envFile": ".env", "env": {"APP_SECRET": "${S}", "LEVEL": "${L}"}}}}`
	cfgs, skipped, err := gateway.ParseConfig(filepath.Join(dir, "a.json"), []byte(data), env(map[string]string{"S": "opensesame", "L": "info-verbose"}))
	if err != nil || len(skipped) > 0 || len(cfgs) != 1 {
		t.Fatal(err, skipped)
	}
	g := newGateway(t, gateway.Options{}, cfgs...)
	up, _ := g.Upstream("s")
	want := "config: debug true, retry true, listening on 8080 in production as ${DB_PASSWORD}/${S} with ${GH}, level info-verbose"
	if msg := fmt.Sprint(up.Err()); !strings.Contains(msg, want) {
		t.Errorf("got %q, want it to hold %q", msg, want)
	}
}
