package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/gateway"
	"github.com/unfold-dev/unfold/internal/npmcache"
)

// gatewayProject writes a project whose .mcp.json lists the three
// reference MCP servers, installed from npm; it returns the project and the
// install directory.
func gatewayProject(t *testing.T) (string, string) {
	t.Helper()
	dir := npmcache.Install(t, filepath.Join("..", "..", "gateway", "testdata", "npm"))
	project := t.TempDir()
	cfg := map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"command": npmcache.Bin(dir, "mcp-server-everything")},
		"filesystem": map[string]any{"command": npmcache.Bin(dir, "mcp-server-filesystem"), "args": []string{project}},
		"memory":     map[string]any{"command": npmcache.Bin(dir, "mcp-server-memory"), "env": map[string]string{"MEMORY_FILE_PATH": filepath.Join(project, "memory.jsonl")}},
	}}
	data, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(project, gateway.ProjectConfig), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return project, dir
}

// inspect runs the official MCP Inspector's CLI against `unfold mcp` on
// stdio with args, and decodes its JSON answer.
func inspect(t *testing.T, dir, project string, args ...string) map[string]any {
	t.Helper()
	cmd := exec.Command(npmcache.Bin(dir, "mcp-inspector"), append([]string{"--cli", binary, "mcp", "--builtins", "none", "--project", project}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("inspector %v: %v\nstdout:\n%s\nstderr:\n%s", args, err, stdout.String(), stderr.String())
	}
	var out map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("inspector %v: %v\n%s", args, err, stdout.String())
	}
	return out
}

// TestMCPInspectorGateway drives `unfold mcp` with three reference servers
// behind it with the official MCP Inspector CLI: the tool list at start,
// find_tools, the upstream's prompts and resources under its name; the
// manifests are cached in the project.
func TestMCPInspectorGateway(t *testing.T) {
	project, dir := gatewayProject(t)
	list := inspect(t, dir, project, "--method", "tools/list")
	var names []string
	for _, tool := range list["tools"].([]any) {
		names = append(names, tool.(map[string]any)["name"].(string))
	}
	slices.Sort(names)
	if want := []string{"call_tool", "find_tools", "help", "open_sections"}; !slices.Equal(names, want) {
		t.Errorf("got tools %v at start, want %v", names, want)
	}

	// The servers start in the background; find_tools waits for them.
	found := inspect(t, dir, project, "--method", "tools/call", "--tool-name", "find_tools", "--tool-arg", "query=sum of two numbers", "limit=1")
	for _, name := range []string{"everything", "filesystem", "memory"} {
		if _, err := os.Stat(filepath.Join(project, gateway.CacheDir, name+".json")); err != nil {
			t.Errorf("manifest of %s not cached: %v", name, err)
		}
	}
	text := found["content"].([]any)[0].(map[string]any)["text"].(string)
	for _, want := range []string{"New tools: everything__get-sum.", `"First number"`} {
		if !strings.Contains(text, want) {
			t.Errorf("find_tools answer lacks %q:\n%s", want, text)
		}
	}

	prompt := inspect(t, dir, project, "--method", "prompts/get", "--prompt-name", "everything__simple-prompt")
	data, _ := json.Marshal(prompt)
	if !strings.Contains(string(data), "This is a simple prompt without arguments.") {
		t.Errorf("prompts/get everything__simple-prompt: got %s", data)
	}
	resources := inspect(t, dir, project, "--method", "resources/list")
	data, _ = json.Marshal(resources)
	if !strings.Contains(string(data), `"name":"everything__architecture.md"`) {
		t.Errorf("resources/list lacks the everything server's resources under its name: %.500s", data)
	}
}

func TestMCPConfigErrors(t *testing.T) {
	project := writeProject(t, map[string]string{
		"bad.json":  `{"mcpServers": {"s": {"command": "x", "args": ["${UNFOLD_TEST_UNSET}"]}}}`,
		".mcp.json": `{"mcpServers": {"t": {"type": "ws"}}}`,
	})
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"project file", []string{"--builtins", "none", "--project", project}, `.mcp.json: server "t": type: unknown type "ws"`},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"mcp"}, tt.args...), strings.NewReader(""), &stdout, &stderr)
		if code != 1 || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("%s: got exit %d, stderr %q; want 1 and %q", tt.name, code, stderr.String(), tt.want)
		}
	}
	os.Remove(filepath.Join(project, ".mcp.json"))
	var stdout, stderr bytes.Buffer
	code := run([]string{"mcp", "--builtins", "none", "--project", project, "--mcp-config", filepath.Join(project, "bad.json")}, strings.NewReader(""), &stdout, &stderr)
	if want := `bad.json: server "s": args[0]: ${UNFOLD_TEST_UNSET} is not set`; code != 1 || !strings.Contains(stderr.String(), want) {
		t.Errorf("--mcp-config: got exit %d, stderr %q; want 1 and %q", code, stderr.String(), want)
	}
}

// TestAgentCommandGateway runs `unfold agent` in a project whose .mcp.json
// lists `unfold mcp` on the same project as an upstream server: the model
// opens the upstream's bash tool and runs a command with it, through
// use_tool (the tool list of chat completions stays as it started). The
// upstream unfold does not read the .mcp.json again (it would start itself
// without end).
func TestAgentCommandGateway(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed; the upstream serves a bash environment")
	}
	project := t.TempDir()
	cfg := `{"mcpServers": {"up": {"command": "` + binary + `", "args": ["mcp", "--builtins", "bash", "--project", "` + project + `"]}}}`
	if err := os.WriteFile(filepath.Join(project, gateway.ProjectConfig), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	url, reqs := fakeEndpoint(t,
		`call open_sections {"section_keys":["mcp.up.tools.bash"],"reason":"run a command"}`,
		`call use_tool {"name":"up__bash","input":{"command":"echo hi-from-upstream"}}`,
		"All done.")
	var stdout, stderr bytes.Buffer
	code := run([]string{"agent", "use the upstream", "--project", project, "--base-url", url, "--model", "m", "--builtins", "none"}, strings.NewReader(""), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr.String())
	}
	toolNames := func(req map[string]any) []string {
		var names []string
		list, _ := req["tools"].([]any)
		for _, tl := range list {
			names = append(names, tl.(map[string]any)["function"].(map[string]any)["name"].(string))
		}
		return names
	}
	if len(*reqs) != 3 {
		t.Fatalf("got %d model requests, want 3", len(*reqs))
	}
	if first := toolNames((*reqs)[0]); slices.Contains(first, "up__bash") || !slices.Contains(first, "find_tools") || !slices.Contains(first, "use_tool") {
		t.Errorf("first request offered %v, want find_tools and use_tool, not up__bash", first)
	}
	data, _ := json.Marshal((*reqs)[1]["messages"])
	if !strings.Contains(string(data), "up__bash") {
		t.Errorf("the opening's answer does not name up__bash: %s", data)
	}
	data, _ = json.Marshal((*reqs)[2]["messages"])
	if !strings.Contains(string(data), "hi-from-upstream") {
		t.Errorf("the upstream's output is not in the conversation: %s", data)
	}
}
