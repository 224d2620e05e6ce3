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

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

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
		"servers.json":  `{"servers": {"s": {"command": "x"}}}`,
		"trailing.json": `{"mcpServers": {}} x`,
		"timeout.json":  `{"mcpServers": {"s": {"command": "x", "timeout": 1e300}}}`,
	})
	tests := []struct{ file, want string }{
		{"servers.json", `servers.json: no "mcpServers" object; write the servers as {"mcpServers": {"NAME": {"command": ...}}}`},
		{"trailing.json", `trailing.json: text after the JSON object, at byte 19; remove it`},
		{"timeout.json", `timeout.json: server "s": timeout: want seconds from 0.001 to 86400, got 1e+300`},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		code := run([]string{"mcp", "--builtins", "none", "--project", project, "--mcp-config", filepath.Join(project, tt.file)}, strings.NewReader(""), &stdout, &stderr)
		if code != 1 || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("%s: got exit %d, stderr %q; want 1 and %q", tt.file, code, stderr.String(), tt.want)
		}
	}
}

// TestMCPRogueUpstream runs the unfold binary as an MCP server in front of
// a server that sends what a careless one may (gateway/testdata/rogue.py),
// beside entries it cannot start: tool schemas that are not objects,
// template actions in its texts, names that collide, a 2 MB result. The
// server starts, warns about each, offers the rest, and cuts the big
// result to the output budget. At the next start, from the cached
// manifest, the same; a tool added to that file by hand that the MCP SDK
// refuses to serve is left out too.
func TestMCPRogueUpstream(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed; the rogue server is a Python script")
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "gateway", "testdata", "rogue.py"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"rogue":  map[string]any{"command": py, "args": []string{script, "schema", "braces", "dup", "big"}},
		"remote": map[string]any{"type": "sse", "url": "http://127.0.0.1:1/sse"},
		"secret": map[string]any{"command": py, "env": map[string]string{"TOKEN": "${UNFOLD_TEST_UNSET}"}},
	}})
	project := writeProject(t, map[string]string{gateway.ProjectConfig: string(cfg)})
	for _, start := range []string{"first", "cached"} {
		if start == "cached" {
			addCachedTool(t, filepath.Join(project, gateway.CacheDir, "rogue.json"),
				map[string]any{"name": "header", "inputSchema": map[string]any{"type": "object", "properties": map[string]any{
					"a": map[string]any{"type": "object", "x-mcp-header": "X-A"}}}})
		}
		var stderr lockedBuffer
		cmd := exec.Command(binary, "mcp", "--builtins", "none", "--project", project)
		cmd.Stderr = &stderr
		client := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil)
		cs, err := client.Connect(t.Context(), &sdk.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatalf("%s start: %v\n%s", start, err, stderr.String())
		}
		text := func(name string, args any) string {
			t.Helper()
			res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: name, Arguments: args})
			if err != nil {
				t.Fatalf("%s start: %s: %v\n%s", start, name, err, stderr.String())
			}
			return res.Content[0].(*sdk.TextContent).Text
		}
		// The server starts in the background; find_tools waits for it (and
		// finds no zebra).
		text("find_tools", map[string]any{"query": "zebra"})
		text("open_sections", map[string]any{"section_keys": []string{"mcp.rogue"}, "reason": "test"})
		list, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatalf("%s start: tools/list: %v\n%s", start, err, stderr.String())
		}
		var names []string
		for _, tool := range list.Tools {
			if strings.HasPrefix(tool.Name, "rogue__") {
				names = append(names, tool.Name)
			}
		}
		slices.Sort(names)
		if want := []string{"rogue__dump", "rogue__ec_ho", "rogue__ec_ho-2", "rogue__echo"}; !slices.Equal(names, want) {
			t.Errorf("%s start: got tools %v, want %v", start, names, want)
		}
		if got := text("rogue__ec_ho-2", map[string]any{}); got != "ec_ho: " {
			t.Errorf("%s start: rogue__ec_ho-2 answered %q, want the tool ec_ho's answer", start, got)
		}
		dump := text("rogue__dump", map[string]any{"n": 200000})
		if !strings.HasPrefix(dump, "line 1\n") || !strings.HasSuffix(dump, "line 200000\n") || !strings.Contains(dump, "left out here to fit the budget of 8000 tokens; the whole output is saved in context/output/rogue__dump-") {
			t.Errorf("%s start: got %d bytes of the dump, want its head and tail within the budget", start, len(dump))
		}
		if err := cs.Ping(t.Context(), nil); err != nil {
			t.Errorf("%s start: the server is gone: %v\n%s", start, err, stderr.String())
		}
		cs.Close()
		log := stderr.String()
		for _, want := range []string{
			`server "remote": type: "sse" servers are not supported, so the server is left out`,
			`server "secret": env.TOKEN: ${UNFOLD_TEST_UNSET} is not set; set it, or write ${UNFOLD_TEST_UNSET:-default}; the server is left out`,
			`tool=untyped err="input schema: MCP tools take an object`,
			`msg="gateway: a tool renamed" server=rogue tool=ec_ho name=rogue__ec_ho-2`,
		} {
			if !strings.Contains(log, want) {
				t.Errorf("%s start: stderr lacks %s:\n%s", start, want, log)
			}
		}
		if want := `msg="mcp: a tool left out" tool=rogue__header err="the MCP SDK refused it: AddTool \"rogue__header\": invalid parameter header annotations`; start == "cached" && !strings.Contains(log, want) {
			t.Errorf("%s start: stderr lacks %s:\n%s", start, want, log)
		}
		if strings.Contains(log, "panic") {
			t.Errorf("%s start: stderr:\n%s", start, log)
		}
	}
}

// addCachedTool adds tool to the cached manifest in file, as a hand (or a
// model with a shell) may.
func addCachedTool(t *testing.T, file string, tool map[string]any) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	m["tools"] = append(m["tools"].([]any), tool)
	if data, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
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

// TestAgentGatewayCutNote runs `unfold agent --builtins none` with an
// upstream whose result passes --output-budget: the note of the cut
// result names no editor or grep, which the run does not have, and says
// what the model can do instead.
func TestAgentGatewayCutNote(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed; the upstream serves a bash environment")
	}
	project := t.TempDir()
	cfg := `{"mcpServers": {"up": {"command": "` + binary + `", "args": ["mcp", "--builtins", "bash", "--output-budget", "100000", "--project", "` + project + `"]}}}`
	if err := os.WriteFile(filepath.Join(project, gateway.ProjectConfig), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	url, reqs := fakeEndpoint(t,
		`call open_sections {"section_keys":["mcp.up.tools.bash"],"reason":"run a command"}`,
		`call use_tool {"name":"up__bash","input":{"command":"seq 1 3000"}}`,
		"All done.")
	var stdout, stderr bytes.Buffer
	code := run([]string{"agent", "count", "--project", project, "--base-url", url, "--model", "m", "--builtins", "none", "--output-budget", "200"}, strings.NewReader(""), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr.String())
	}
	if len(*reqs) != 3 {
		t.Fatalf("got %d model requests, want 3", len(*reqs))
	}
	data, _ := json.Marshal((*reqs)[2]["messages"])
	text := string(data)
	if !strings.Contains(text, "the whole output is saved in") || !strings.Contains(text, "no tool of this session reads it; call the tool again asking for less") {
		t.Errorf("the cut result does not say what this run can do:\n%s", text)
	}
	if strings.Contains(text, "view it with the editor") || strings.Contains(text, "search it with grep") {
		t.Errorf("the cut result names tools the run does not have:\n%s", text)
	}
}

// TestGatewayOnlySelf: a configuration whose only server is this unfold
// leaves it out and starts no gateway: find_tools and call_tool are not
// offered, as they would only say that there is no server.
func TestGatewayOnlySelf(t *testing.T) {
	project := t.TempDir()
	cfg := filepath.Join(project, "servers.json")
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"inner": map[string]any{"command": binary, "args": []string{"mcp"}}}})
	if err := os.WriteFile(cfg, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "agent", "x", "--dry-run", "--project", project, "--builtins", "none", "--mcp-config", cfg, "--base-url", "http://127.0.0.1:1/v1", "--model", "m")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v; stderr:\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), `server "inner" is this unfold; left out`) {
		t.Errorf("stderr: got\n%s\nwant the server left out", stderr.String())
	}
	for _, not := range []string{"- " + gateway.FindToolsName + " (", "- " + gateway.CallToolName + " (", "MCP servers"} {
		if strings.Contains(stdout.String(), not) {
			t.Errorf("the first request holds %q:\n%s", not, stdout.String())
		}
	}
}
