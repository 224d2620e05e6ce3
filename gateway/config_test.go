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
	got, err := gateway.ParseConfig("a.json", []byte(data), env(map[string]string{"HOME": "/home/u", "KEY": "k1"}))
	if err != nil {
		t.Fatal(err)
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
		{"bad name", `{"mcpServers": {"a b": {"command": "x"}}}`, `gateway: a.json: server "a b": names may use letters`},
		{"no command", `{"mcpServers": {"s": {"args": []}}}`, `gateway: a.json: server "s": command: missing`},
		{"args not strings", `{"mcpServers": {"s": {"command": "x", "args": [1]}}}`, `gateway: a.json: server "s": args: want string`},
		{"unset variable", `{"mcpServers": {"s": {"command": "x", "args": ["${NOPE}"]}}}`, `gateway: a.json: server "s": args[0]: ${NOPE} is not set`},
		{"unset in a header", `{"mcpServers": {"s": {"type": "http", "url": "http://h/mcp", "headers": {"X": "${NOPE}"}}}}`, `server "s": headers.X: ${NOPE} is not set`},
		{"no url", `{"mcpServers": {"s": {"type": "http"}}}`, `server "s": url: missing`},
		{"bad url", `{"mcpServers": {"s": {"type": "http", "url": "ftp://h"}}}`, `server "s": url: "ftp://h" is not an http:// or https:// address`},
		{"sse", `{"mcpServers": {"s": {"type": "sse", "url": "http://h"}}}`, `server "s": type: "sse" servers are not supported`},
		{"unknown type", `{"mcpServers": {"s": {"type": "ws"}}}`, `server "s": type: unknown type "ws"`},
		{"bad timeout", `{"mcpServers": {"s": {"command": "x", "timeout": -1}}}`, `server "s": timeout: want a positive number of seconds`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := gateway.ParseConfig("a.json", []byte(tt.data), env(nil))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
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
	got, err := gateway.LoadConfigs(dir, []string{extra}, env(nil))
	if err != nil || len(got) != 2 || got[0].Name != "a" || got[1].Name != "b" {
		t.Fatalf("got %+v, %v", got, err)
	}
	dup := write("dup.json", `{"mcpServers": {"A": {"command": "z"}}}`)
	if _, err := gateway.LoadConfigs(dir, []string{dup}, env(nil)); err == nil || !strings.Contains(err.Error(), `server "A": declared in `+filepath.Join(dir, gateway.ProjectConfig)+` too`) {
		t.Errorf("got %v, want the duplicate named with both files", err)
	}
	if _, err := gateway.LoadConfigs(dir, []string{filepath.Join(dir, "none.json")}, env(nil)); err == nil || !strings.Contains(err.Error(), "none.json") {
		t.Errorf("got %v, want the missing file named", err)
	}
}
