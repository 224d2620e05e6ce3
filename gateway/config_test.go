package gateway_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/gateway"
)

func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

func TestParseConfig(t *testing.T) {
	data := `{"mcpServers": {
  "fs": {"command": "npx", "args": ["-y", "server-filesystem", "${HOME}/work"], "env": {"TOKEN": "${TOKEN:-none}"}, "timeout": 30},
  "api": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${KEY}"}},
  "off": {"command": "x", "disabled": true},
  "cline": {"command": "y", "autoApprove": ["a"]}
}}`
	got, skipped, err := gateway.ParseConfig("a.json", []byte(data), env(map[string]string{"HOME": "/home/u", "KEY": "k1"}))
	if err != nil || len(skipped) > 0 {
		t.Fatal(err, skipped)
	}
	if len(got) != 3 {
		t.Fatalf("got %d servers, want 3 (disabled left out): %+v", len(got), got)
	}
	api, cline, fs := got[0], got[1], got[2]
	if api.URL != "https://example.com/mcp" || api.Headers["Authorization"] != "Bearer k1" {
		t.Errorf("api: got %+v", api)
	}
	if cline.Command != "y" {
		t.Errorf("cline: got %+v", cline)
	}
	if fs.Command != "npx" || strings.Join(fs.Args, " ") != "-y server-filesystem /home/u/work" || fs.Env["TOKEN"] != "none" || fs.Timeout != 30*time.Second || fs.File != "a.json" {
		t.Errorf("fs: got %+v", fs)
	}
}

func TestParseConfigErrors(t *testing.T) {
	tests := []struct{ name, data, want string }{
		{"not JSON", `{`, `gateway: a.json: not a JSON object with "mcpServers"`},
		{"no command", `{"mcpServers": {"s": {"args": []}}}`, `gateway: a.json: server "s": command: missing`},
		{"args not strings", `{"mcpServers": {"s": {"command": "x", "args": [1]}}}`, `gateway: a.json: server "s": args: want string`},
		{"no url", `{"mcpServers": {"s": {"type": "http"}}}`, `server "s": url: missing`},
		{"bad url", `{"mcpServers": {"s": {"type": "http", "url": "ftp://h"}}}`, `server "s": url: "ftp://h" is not an http:// or https:// address`},
		{"no mcpServers", `{"servers": {"s": {"command": "x"}}}`, `gateway: a.json: no "mcpServers" object; write the servers as {"mcpServers": {"NAME": {"command": ...}}}`},
		{"mcpServers null", `{"mcpServers": null}`, `gateway: a.json: no "mcpServers" object`},
		{"text after the object", `{"mcpServers": {"s": {"command": "x"}}} {"mcpServers": {}}`, `gateway: a.json: text after the JSON object, at byte 41; remove it`},
		{"garbage after the object", "{\"mcpServers\": {}}\n,", `gateway: a.json: text after the JSON object`},
		{"negative timeout", `{"mcpServers": {"s": {"command": "x", "timeout": -1}}}`, `server "s": timeout: want seconds from 0.001 to 86400, got -1; write a number in that range, or leave it out for 1m0s`},
		{"huge timeout", `{"mcpServers": {"s": {"command": "x", "timeout": 1e300}}}`, `server "s": timeout: want seconds from 0.001 to 86400, got 1e+300`},
		{"zero timeout", `{"mcpServers": {"s": {"command": "x", "timeout": 0}}}`, `server "s": timeout: want seconds from 0.001 to 86400, got 0 (0 is not "no limit": every call is bounded); write a number in that range, or leave it out for 1m0s`},
		{"tiny timeout", `{"mcpServers": {"s": {"command": "x", "timeout": 1e-12}}}`, `server "s": timeout: want seconds from 0.001 to 86400, got 1e-12`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := gateway.ParseConfig("a.json", []byte(tt.data), env(nil))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// TestParseConfigSkips checks that an entry meant for other clients, or
// for an environment with other variables set, is left out with a
// warning, and the others are read.
func TestParseConfigSkips(t *testing.T) {
	data := `{"mcpServers": {
  "a-sse": {"type": "sse", "url": "http://h/sse"},
  "b-var": {"command": "x", "args": ["${NOPE}"]},
  "c-header": {"type": "http", "url": "http://h/mcp", "headers": {"X": "${NOPE}"}},
  "d-ws": {"type": "ws", "url": "ws://h"},
  "e-ok": {"command": "y"},
  "f.dot": {"command": "y"},
  "g space": {"command": "y"},
  "h-is-a-name-of-thirty-three-chars": {"command": "y"},
  "i-empty": {"command": "${EMPTY}"},
  "j-empty-url": {"type": "http", "url": "${EMPTY}"}
}}`
	got, skipped, err := gateway.ParseConfig("a.json", []byte(data), env(map[string]string{"EMPTY": ""}))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Name != "e-ok" {
		t.Errorf("got servers %+v, want e-ok alone", got)
	}
	want := []string{
		`gateway: a.json: server "a-sse": type: "sse" servers are not supported, so the server is left out; use the server's streamable HTTP endpoint with "type": "http"`,
		`gateway: a.json: server "b-var": args[0]: ${NOPE} is not set; set it, or write ${NOPE:-default}; the server is left out`,
		`gateway: a.json: server "c-header": headers.X: ${NOPE} is not set; set it, or write ${NOPE:-default}; the server is left out`,
		`gateway: a.json: server "d-ws": type: unknown type "ws", so the server is left out; want "stdio" or "http"`,
		`gateway: a.json: server "f.dot": names may use letters, digits, '_' and '-' (at most 32, starting with a letter or digit): they become part of tool names; the server is left out; rename it`,
		`gateway: a.json: server "g space": names may use letters, digits, '_' and '-' (at most 32, starting with a letter or digit): they become part of tool names; the server is left out; rename it`,
		`gateway: a.json: server "h-is-a-name-of-thirty-three-chars": names may use letters, digits, '_' and '-' (at most 32, starting with a letter or digit): they become part of tool names; the server is left out; rename it`,
		`gateway: a.json: server "i-empty": command: "${EMPTY}" is empty once expanded; set the variable to the program to start; the server is left out`,
		`gateway: a.json: server "j-empty-url": url: "${EMPTY}" is empty once expanded; set the variable to the server's endpoint; the server is left out`,
	}
	if len(skipped) != len(want) {
		t.Fatalf("got %d skipped %v, want %d", len(skipped), skipped, len(want))
	}
	for i, w := range want {
		if skipped[i].Error() != w {
			t.Errorf("skipped[%d]: got %q, want %q", i, skipped[i], w)
		}
	}
}

func TestLoadConfigs(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write(gateway.ProjectConfig, `{"mcpServers": {"a": {"command": "x"}}}`)
	extra := write("extra.json", `{"mcpServers": {"b": {"command": "y"}}}`)
	skips := write("skips.json", `{"mcpServers": {"c": {"type": "sse", "url": "http://h"}}}`)
	got, skipped, err := gateway.LoadConfigs(dir, []string{extra, skips}, env(nil))
	if err != nil || len(got) != 2 || got[0].Name != "a" || got[1].Name != "b" {
		t.Fatalf("got %+v, %v", got, err)
	}
	if len(skipped) != 1 || !strings.Contains(skipped[0].Error(), skips+`: server "c": type: "sse"`) {
		t.Errorf("got skipped %v, want the sse server named with its file", skipped)
	}
	dup := write("dup.json", `{"mcpServers": {"a": {"command": "z"}}}`)
	if _, _, err := gateway.LoadConfigs(dir, []string{dup}, env(nil)); err == nil || !strings.Contains(err.Error(), dup+`: server "a": declared in `+filepath.Join(dir, gateway.ProjectConfig)+` too`) {
		t.Errorf("got %v, want the duplicate named with both files", err)
	}
	upper := write("upper.json", `{"mcpServers": {"A": {"command": "z"}}}`)
	if _, _, err := gateway.LoadConfigs(dir, []string{upper}, env(nil)); err == nil || !strings.Contains(err.Error(), upper+`: server "A": differs only in case from "a", declared in `+filepath.Join(dir, gateway.ProjectConfig)+`; rename one (names that differ only in case`) {
		t.Errorf("got %v, want the names said to differ only in case", err)
	}
	cased := write("cased.json", `{"mcpServers": {"up": {"command": "z"}, "Up": {"command": "z"}}}`)
	if _, _, err := gateway.LoadConfigs("", []string{cased}, env(nil)); err == nil || !strings.Contains(err.Error(), `server "up": differs only in case from "Up", declared in `+cased+`;`) {
		t.Errorf("got %v, want the names in one file said to differ only in case", err)
	}
	if _, _, err := gateway.LoadConfigs(dir, []string{filepath.Join(dir, "none.json")}, env(nil)); err == nil || !strings.Contains(err.Error(), "none.json") {
		t.Errorf("got %v, want the missing file named", err)
	}
}

// TestDanglingProjectConfig: a project's .mcp.json that is a symbolic link
// to nothing is an error naming it, not a project without servers.
func TestDanglingProjectConfig(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, gateway.ProjectConfig)
	if err := os.Symlink(filepath.Join(dir, "gone.json"), p); err != nil {
		t.Fatal(err)
	}
	_, _, err := gateway.LoadConfigs(dir, nil, env(nil))
	want := "gateway: " + p + ": a symbolic link to " + filepath.Join(dir, "gone.json") + ", which cannot be read (no such file or directory); fix the link, or remove it"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if got, _, err := gateway.LoadConfigs(dir, nil, env(nil)); err != nil || len(got) != 0 {
		t.Errorf("without the file: got %v, %v; want no servers and no error", got, err)
	}
}

// TestServersRunWhereDeclared: a project's servers run in the project,
// wherever unfold runs: a relative command path, relative arguments, and
// a relative cwd (against the project) all work, and the cache key is the
// same whether the project is named by a relative or an absolute path.
func TestServersRunWhereDeclared(t *testing.T) {
	py, script := pidServer(t)
	project := t.TempDir()
	for _, d := range []string{"bin", "sub"} {
		if err := os.Mkdir(filepath.Join(project, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	src, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"bin/srv.py": string(src),
		"bin/srv":    "#!/bin/sh\nexec " + py + " \"$(dirname \"$0\")/srv.py\" \"$@\"\n",
		gateway.ProjectConfig: `{"mcpServers": {
  "a": {"command": "./bin/srv", "args": [".", "a"]},
  "b": {"command": "` + py + `", "args": ["bin/srv.py", ".", "b"]},
  "c": {"command": "` + py + `", "args": ["../bin/srv.py", ".", "c"], "cwd": "sub"}
}}`,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(project, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The test runs in the package's directory, not the project.
	cfgs, skipped, err := gateway.LoadConfigs(project, nil, env(nil))
	if err != nil || len(skipped) > 0 {
		t.Fatal(err, skipped)
	}
	if cfgs[0].Command != filepath.Join(project, "bin", "srv") || cfgs[2].Dir != filepath.Join(project, "sub") {
		t.Errorf("got command %q and cwd %q, want them in the project", cfgs[0].Command, cfgs[2].Dir)
	}
	g := started(t, cfgs...)
	readPids(t, project, "a", "b")
	readPids(t, filepath.Join(project, "sub"), "c")
	if err := g.Close(); err != nil {
		t.Error(err)
	}

	// Named from within, as "--project ." does: the same servers, so the
	// same cached manifests.
	t.Chdir(project)
	again, _, err := gateway.LoadConfigs(".", nil, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	for i := range cfgs {
		if again[i].Hash() != cfgs[i].Hash() {
			t.Errorf("server %s: the hash differs with the project named as .: %+v and %+v", cfgs[i].Name, again[i], cfgs[i])
		}
	}
}
