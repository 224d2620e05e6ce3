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
		{"bad name", `{"mcpServers": {"a b": {"command": "x"}}}`, `gateway: a.json: server "a b": names may use letters`},
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
  "e-ok": {"command": "y"}
}}`
	got, skipped, err := gateway.ParseConfig("a.json", []byte(data), env(nil))
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
	dup := write("dup.json", `{"mcpServers": {"A": {"command": "z"}}}`)
	if _, _, err := gateway.LoadConfigs(dir, []string{dup}, env(nil)); err == nil || !strings.Contains(err.Error(), `server "A": declared in `+filepath.Join(dir, gateway.ProjectConfig)+` too`) {
		t.Errorf("got %v, want the duplicate named with both files", err)
	}
	if _, _, err := gateway.LoadConfigs(dir, []string{filepath.Join(dir, "none.json")}, env(nil)); err == nil || !strings.Contains(err.Error(), "none.json") {
		t.Errorf("got %v, want the missing file named", err)
	}
}
