package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/unfold-dev/unfold/gateway"
	"github.com/unfold-dev/unfold/internal/npmcache"
	"github.com/unfold-dev/unfold/prompt"
)

// referenceServers installs the reference MCP servers from npm and returns
// their configurations: everything, filesystem (over root) and memory
// (storing into a file under root).
func referenceServers(t testing.TB, root string) []gateway.ServerConfig {
	t.Helper()
	dir := npmcache.Install(t, filepath.Join("testdata", "npm"))
	return []gateway.ServerConfig{
		{Name: "everything", Command: npmcache.Bin(dir, "mcp-server-everything"), Timeout: 30 * time.Second},
		{Name: "filesystem", Command: npmcache.Bin(dir, "mcp-server-filesystem"), Args: []string{root}, Timeout: 30 * time.Second},
		{Name: "memory", Command: npmcache.Bin(dir, "mcp-server-memory"), Env: map[string]string{"MEMORY_FILE_PATH": filepath.Join(root, "memory.jsonl")}, Timeout: 30 * time.Second},
	}
}

// TestReferenceServers runs the three reference servers behind the
// gateway: their sections, find_tools, calls through the disclosure and
// call_tool, every kind of content, progress, and the cache that starts
// nothing.
func TestReferenceServers(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "notes.txt"), []byte("the notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	cacheDir := filepath.Join(t.TempDir(), "cache")
	cfgs := referenceServers(t, root)
	g := newGateway(t, gateway.Options{CacheDir: cacheDir}, cfgs...)
	for _, u := range g.Upstreams() {
		if len(u.Manifest().Tools) == 0 {
			t.Fatalf("%s: no tools listed (%v)", u.Name(), u.Err())
		}
	}
	d := disclosure(t, g)
	text := d.Rendered(0).Text()
	for _, want := range []string{"### 1.1. everything (mcp.everything)", "### 1.2. filesystem (mcp.filesystem)", "### 1.3. memory (mcp.memory)", "read_text_file", "create_entities"} {
		if !strings.Contains(text, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, text)
		}
	}

	res := call(t, d, gateway.FindToolsName, gateway.FindToolsInput{Query: "read the text of a file", Limit: 3})
	if !strings.Contains(res.Message, "filesystem__read_text_file") {
		t.Fatalf("find_tools did not find read_text_file:\n%s", res.Message)
	}
	res = call(t, d, "filesystem__read_text_file", map[string]any{"path": filepath.Join(root, "notes.txt")})
	if !res.Success || !strings.Contains(res.Message, "the notes") {
		t.Errorf("read_text_file: got %v %q", res.Success, res.Message)
	}

	open(t, d, "mcp.memory")
	res = call(t, d, "memory__create_entities", map[string]any{"entities": []any{map[string]any{"name": "Ada", "entityType": "person", "observations": []string{"wrote programs"}}}})
	if !res.Success {
		t.Fatalf("create_entities: %q", res.Message)
	}
	res = call(t, d, gateway.CallToolName, map[string]any{"server": "memory", "tool": "read_graph", "arguments": map[string]any{}})
	if !res.Success || !strings.Contains(res.Message, "wrote programs") {
		t.Errorf("read_graph through call_tool: got %v %q", res.Success, res.Message)
	}
	res = call(t, d, gateway.CallToolName, map[string]any{"server": "memory", "tool": "create_entities", "arguments": map[string]any{"entities": "Ada"}})
	if res.Success || !strings.Contains(res.Message, "Invalid arguments: entities: expected array") {
		t.Errorf("bad arguments through call_tool: got %v %q", res.Success, res.Message)
	}

	open(t, d, "mcp.everything")
	checkTaskOnly(t, g, d, "everything")
	res = call(t, d, "everything__get-tiny-image", map[string]any{})
	up := res.Value.(*sdk.CallToolResult)
	if !slices.ContainsFunc(up.Content, func(c sdk.Content) bool {
		img, ok := c.(*sdk.ImageContent)
		return ok && img.MIMEType == "image/png" && len(img.Data) > 0
	}) {
		t.Errorf("get-tiny-image: got %s", res.Message)
	}
	res = call(t, d, "everything__get-resource-links", map[string]any{"count": 2})
	if n := strings.Count(res.Message, "[resource link: "); n != 2 {
		t.Errorf("get-resource-links: got %q, want 2 links", res.Message)
	}
	res = call(t, d, "everything__get-structured-content", map[string]any{"location": "Chicago"})
	if sc := res.Value.(*sdk.CallToolResult).StructuredContent; sc == nil {
		t.Errorf("get-structured-content: no structured content in %q", res.Message)
	}

	everything, _ := g.Upstream("everything")
	steps := make(chan float64, 16)
	ctx := gateway.WithProgress(t.Context(), func(p, total float64, msg string) { steps <- p })
	if _, err := everything.CallTool(ctx, "trigger-long-running-operation", json.RawMessage(`{"duration":0.6,"steps":3}`)); err != nil {
		t.Fatal(err)
	}
	// The steps come 0.2 s apart; the last comes with the answer and may
	// be handled after it, when the call is over and progress is not
	// passed on any more (progress ends with its request).
	for i := range 2 {
		select {
		case <-steps:
		case <-time.After(30 * time.Second):
			t.Fatalf("got %d progress notifications, want the 2 sent during the call", i)
		}
	}

	// Cancelling a call cancels it upstream; the server goes on.
	cctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	_, err := everything.CallTool(cctx, "trigger-long-running-operation", json.RawMessage(`{"duration":30,"steps":3}`))
	cancel()
	if err == nil {
		t.Error("got an answer from a cancelled 30 s operation")
	}
	if res, err := everything.CallTool(t.Context(), "echo", json.RawMessage(`{"message":"on"}`)); err != nil || !strings.Contains(gateway.ResultText(res), "on") {
		t.Errorf("after a cancelled call: %v, %v", res, err)
	}
	g.Close()

	g2 := newGateway(t, gateway.Options{CacheDir: cacheDir}, cfgs...)
	for _, u := range g2.Upstreams() {
		if u.Running() {
			t.Errorf("%s started although its manifest is cached", u.Name())
		}
	}
	fs2, _ := g2.Upstream("filesystem")
	if res, err := fs2.CallTool(t.Context(), "list_allowed_directories", nil); err != nil || res.IsError {
		t.Errorf("a call from the cache: %v, %v", res, err)
	}
	if !fs2.Running() {
		t.Error("the call did not start the server")
	}
	if e2, _ := g2.Upstream("everything"); !slices.Contains(e2.Manifest().TaskOnly, "simulate-research-query") {
		t.Errorf("the cached manifest lost the tools that run as tasks: %v", e2.Manifest().TaskOnly)
	}
}

// checkTaskOnly checks that server's simulate-research-query, which runs
// only as an MCP task, is not offered, that its open section says so, and
// that call_tool says why it cannot be called.
func checkTaskOnly(t *testing.T, g *gateway.Gateway, d *prompt.Disclosure, server string) {
	t.Helper()
	const task = "simulate-research-query"
	u, _ := g.Upstream(server)
	m := u.Manifest()
	if !slices.Contains(m.TaskOnly, task) || slices.ContainsFunc(m.Tools, func(tool *sdk.Tool) bool { return tool.Name == task }) {
		t.Errorf("%s: got TaskOnly %v, want %s there and not among the tools", server, m.TaskOnly, task)
	}
	if !slices.ContainsFunc(m.Tools, func(tool *sdk.Tool) bool { return tool.Name == "echo" }) {
		t.Errorf("%s: echo is not offered", server)
	}
	want := "Not offered, as they run only as MCP tasks, which unfold does not make: " + task + "."
	if text := d.Rendered(0).Text(); !strings.Contains(text, want) || strings.Contains(text, server+"__"+task) {
		t.Errorf("%s: the open section lacks %q or offers the tool:\n%s", server, want, text)
	}
	res := call(t, d, gateway.CallToolName, map[string]any{"server": server, "tool": task, "arguments": map[string]any{"topic": "x"}})
	if res.Success || !strings.Contains(res.Message, "runs only as an MCP task, which unfold does not make") {
		t.Errorf("%s: call_tool of %s: got %v %q", server, task, res.Success, res.Message)
	}
}

// TestTaskOnlyOverHTTP: the everything server over streamable HTTP, whose
// lists come as event streams: its tool that runs only as a task is not
// offered either.
func TestTaskOnlyOverHTTP(t *testing.T) {
	dir := npmcache.Install(t, filepath.Join("testdata", "npm"))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	cmd := exec.Command(npmcache.Bin(dir, "mcp-server-everything"), "streamableHttp")
	cmd.Env = append(os.Environ(), "PORT="+port)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	for deadline := time.Now().Add(60 * time.Second); ; {
		c, err := net.Dial("tcp", "127.0.0.1:"+port)
		if err == nil {
			c.Close()
			break
		}
		select {
		case <-exited:
			t.Fatalf("the server ended: %s", stderr.Bytes())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not listen on port %s within a minute", port)
		}
	}
	g := newGateway(t, gateway.Options{}, gateway.ServerConfig{Name: "web", URL: "http://127.0.0.1:" + port + "/mcp", Timeout: 30 * time.Second})
	d := disclosure(t, g)
	open(t, d, "mcp.web")
	checkTaskOnly(t, g, d, "web")
}
