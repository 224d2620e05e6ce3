package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/afero"

	"github.com/unfold-dev/unfold/gateway"
	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tokens"
	"github.com/unfold-dev/unfold/tools"
)

type echoIn struct {
	Message string `json:"message" jsonschema:"the text to echo back"`
}

type sumIn struct {
	A float64 `json:"a" jsonschema:"the first number"`
	B float64 `json:"b" jsonschema:"the second number"`
}

type sumOut struct {
	Sum float64 `json:"sum"`
}

// upstream is an in-memory MCP server with a few tools.
type upstream struct {
	srv      *sdk.Server
	connects atomic.Int32
	fail     atomic.Bool // Connect fails while set
}

func newUpstream(t *testing.T) *upstream {
	t.Helper()
	u := &upstream{srv: sdk.NewServer(&sdk.Implementation{Name: "mem", Version: "1.2.3"}, &sdk.ServerOptions{
		Instructions: "A server in memory for tests. It echoes and adds.\n\nMore text nobody needs at first.",
	})}
	sdk.AddTool(u.srv, &sdk.Tool{Name: "echo", Description: "Echo a message back. Use it to test."},
		func(_ context.Context, _ *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: in.Message}}}, nil, nil
		})
	sdk.AddTool(u.srv, &sdk.Tool{Name: "get_sum", Description: "Add two numbers and return their sum."},
		func(_ context.Context, _ *sdk.CallToolRequest, in sumIn) (*sdk.CallToolResult, sumOut, error) {
			return nil, sumOut{Sum: in.A + in.B}, nil
		})
	sdk.AddTool(u.srv, &sdk.Tool{Name: "picture", Description: "Return a tiny image and a link to a resource."},
		func(_ context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.ImageContent{Data: []byte{0x89, 'P', 'N', 'G'}, MIMEType: "image/png"},
				&sdk.ResourceLink{URI: "mem://doc", Name: "doc"},
			}}, nil, nil
		})
	sdk.AddTool(u.srv, &sdk.Tool{Name: "refuse", Description: "Always fails, as a tool may."},
		func(_ context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "refused"}}}, nil, nil
		})
	sdk.AddTool(u.srv, &sdk.Tool{Name: "hang", Description: "Never answers until cancelled."},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			if tok := req.Params.GetProgressToken(); tok != nil {
				_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Total: 2, Message: "halfway"})
			}
			<-ctx.Done()
			return nil, nil, ctx.Err()
		})
	u.srv.AddResource(&sdk.Resource{URI: "mem://doc", Name: "doc", MIMEType: "text/plain"},
		func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: "mem://doc", MIMEType: "text/plain", Text: "the doc"}}}, nil
		})
	u.srv.AddPrompt(&sdk.Prompt{Name: "greet", Description: "A greeting."},
		func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "hello"}}}}, nil
		})
	return u
}

// config returns the server's configuration under name.
func (u *upstream) config(name string) gateway.ServerConfig {
	return gateway.ServerConfig{Name: name, Timeout: 5 * time.Second, Connect: func(ctx context.Context) (sdk.Transport, error) {
		if u.fail.Load() {
			return nil, errors.New("cannot reach the server")
		}
		u.connects.Add(1)
		st, ct := sdk.NewInMemoryTransports()
		if _, err := u.srv.Connect(ctx, st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}}
}

// disclosure renders a prompt holding the gateway's section.
func disclosure(t *testing.T, g *gateway.Gateway) *prompt.Disclosure {
	t.Helper()
	return disclosureIn(t, g, nil)
}

// disclosureIn is disclosure with fsys as the calls' file system.
func disclosureIn(t *testing.T, g *gateway.Gateway, fsys afero.Fs) *prompt.Disclosure {
	t.Helper()
	sec, err := g.Section()
	if err != nil {
		t.Fatal(err)
	}
	p := prompt.MustNew("test", "gw", sec).MustBind()
	d, err := prompt.NewDisclosure(session.New(), fsys, []prompt.Part{{Prompt: p}})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Render(); err != nil {
		t.Fatal(err)
	}
	return d
}

func newGateway(t *testing.T, opts gateway.Options, cfgs ...gateway.ServerConfig) *gateway.Gateway {
	t.Helper()
	g, err := gateway.New(t.Context(), cfgs, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	if err := g.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	return g
}

func toolNames(ts []*tools.Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name())
	}
	return out
}

func find(ts []*tools.Tool, name string) *tools.Tool {
	for _, t := range ts {
		if t.Name() == name {
			return t
		}
	}
	return nil
}

// call runs a tool through the disclosure, as a model's call.
func call(t *testing.T, d *prompt.Disclosure, name string, args any) tools.Result {
	t.Helper()
	tool := find(d.Tools(), name)
	if tool == nil {
		t.Fatalf("%s is not offered; the tools are %v", name, toolNames(d.Tools()))
	}
	data, _ := json.Marshal(args)
	res, err := d.Call(t.Context(), tool, data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func open(t *testing.T, d *prompt.Disclosure, keys ...string) tools.Result {
	t.Helper()
	return call(t, d, prompt.OpenSectionsName, prompt.OpenSectionsInput{SectionKeys: keys, Reason: "test"})
}

// TestServerSection checks the summary, then opening a server whole and a
// tool alone.
func TestServerSection(t *testing.T) {
	g := newGateway(t, gateway.Options{}, newUpstream(t).config("mem"))
	d := disclosure(t, g)
	text := d.Rendered(0).Text()
	for _, want := range []string{
		"## 1.1. mem (mcp.mem)",
		"MCP server mem 1.2.3: A server in memory for tests. It echoes and adds. Tools: echo, get_sum, hang, picture, refuse.",
		`Call ` + "`open_sections`" + ` with key "mcp.mem" to view full content including subsections: tools.`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "More text nobody needs") {
		t.Error("the summary shows the instructions in full")
	}
	if got, want := toolNames(d.Tools()), []string{"find_tools", "call_tool", "open_sections"}; !slices.Equal(got, want) {
		t.Errorf("got tools %v at start, want %v", got, want)
	}

	res := open(t, d, "mcp.mem.tools.get_sum")
	if !res.Success || !strings.Contains(res.Message, "New tools: mem__get_sum.") {
		t.Errorf("opening one tool: got %q", res.Message)
	}
	if got := toolNames(d.Tools()); slices.Contains(got, "mem__echo") || !slices.Contains(got, "mem__get_sum") {
		t.Errorf("got tools %v, want mem__get_sum alone of mem's", got)
	}
	sum := find(d.Tools(), "mem__get_sum")
	if schema := string(sum.InputSchema()); !strings.Contains(schema, `"the first number"`) {
		t.Errorf("got schema %s, want the upstream's in full", schema)
	}
	res = call(t, d, "mem__get_sum", map[string]any{"a": 2, "b": 3})
	if !res.Success || res.Message != `{"sum":5}` {
		t.Errorf("got %v %q, want the structured sum", res.Success, res.Message)
	}
	res = call(t, d, "mem__get_sum", map[string]any{"a": "two"})
	if res.Success || !strings.HasPrefix(res.Message, "Invalid arguments:") {
		t.Errorf("bad arguments: got %v %q, want them refused before the server", res.Success, res.Message)
	}

	d2 := disclosure(t, g)
	open(t, d2, "mcp.mem")
	if got := toolNames(d2.Tools()); !slices.Contains(got, "mem__echo") || !slices.Contains(got, "mem__hang") {
		t.Errorf("opening the server: got tools %v, want all of mem's", got)
	}
}

// TestBudgetChoosesNamesOrCount renders two servers under a budget that
// fits one list of tool names: the server of higher priority lists its
// tools, the other shows a count.
func TestBudgetChoosesNamesOrCount(t *testing.T) {
	low, high := newUpstream(t).config("low"), newUpstream(t).config("high")
	high.Priority = 1
	g := newGateway(t, gateway.Options{}, low, high)
	sec, err := g.Section()
	if err != nil {
		t.Fatal(err)
	}
	p := prompt.MustNew("test", "gw", sec).MustBind()
	full, err := p.Render(nil, nil, prompt.WithTokens(tokens.Estimate))
	if err != nil {
		t.Fatal(err)
	}
	r, err := p.Render(nil, nil, prompt.WithBudget(full.Tokens()-5, tokens.Estimate))
	if err != nil {
		t.Fatal(err)
	}
	text := r.Text()
	for _, want := range []string{"MCP server high 1.2.3: A server in memory for tests. It echoes and adds. Tools: echo, get_sum, hang, picture, refuse.", "MCP server low 1.2.3: 5 tools."} {
		if !strings.Contains(text, want) {
			t.Errorf("the budgeted prompt lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "MCP server low 1.2.3: A server") {
		t.Errorf("the low-priority server kept its names:\n%s", text)
	}
}

// TestProxyResults checks that results come back whole.
func TestProxyResults(t *testing.T) {
	g := newGateway(t, gateway.Options{}, newUpstream(t).config("mem"))
	d := disclosure(t, g)
	open(t, d, "mcp.mem")
	res := call(t, d, "mem__picture", nil)
	up, ok := res.Value.(*sdk.CallToolResult)
	if !ok || len(up.Content) != 2 {
		t.Fatalf("got value %#v, want the upstream result", res.Value)
	}
	if img, ok := up.Content[0].(*sdk.ImageContent); !ok || string(img.Data) != "\x89PNG" {
		t.Errorf("got %#v, want the image", up.Content[0])
	}
	if link, ok := up.Content[1].(*sdk.ResourceLink); !ok || link.URI != "mem://doc" {
		t.Errorf("got %#v, want the resource link", up.Content[1])
	}
	if want := "[image, image/png, 4 bytes]\n[resource link: mem://doc (doc)]"; res.Message != want {
		t.Errorf("got text %q, want %q", res.Message, want)
	}
	res = call(t, d, "mem__refuse", nil)
	if res.Success || res.Message != "refused" || !res.Value.(*sdk.CallToolResult).IsError {
		t.Errorf("got %v %q, want the tool's own failure", res.Success, res.Message)
	}
}

// TestProgressAndCancel checks that progress comes back and that
// cancelling a call cancels it upstream.
func TestProgressAndCancel(t *testing.T) {
	u := newUpstream(t)
	g := newGateway(t, gateway.Options{}, u.config("mem"))
	up, _ := g.Upstream("mem")
	progress := make(chan string, 1)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ctx = gateway.WithProgress(ctx, func(p, total float64, msg string) {
		progress <- msg
		go cancel()
	})
	_, err := up.CallTool(ctx, "hang", nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want the call cancelled", err)
	}
	if got := <-progress; got != "halfway" {
		t.Errorf("got progress %q, want halfway", got)
	}
	// The server is fine: the next call works.
	res, err := up.CallTool(t.Context(), "echo", json.RawMessage(`{"message":"still here"}`))
	if err != nil || gateway.ResultText(res) != "still here" {
		t.Errorf("after a cancelled call: got %v, %v", res, err)
	}
}

// TestManifestCache checks that a cached manifest starts nothing, that a
// call starts the server, and that another configuration fetches again.
func TestManifestCache(t *testing.T) {
	dir := t.TempDir()
	u := newUpstream(t)
	g := newGateway(t, gateway.Options{CacheDir: dir}, u.config("mem"))
	if u.connects.Load() != 1 {
		t.Fatalf("got %d connects without a cache, want 1", u.connects.Load())
	}
	data, err := os.ReadFile(filepath.Join(dir, "mem.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m gateway.Manifest
	if err := json.Unmarshal(data, &m); err != nil || len(m.Tools) != 5 || m.ConfigHash != u.config("mem").Hash() {
		t.Fatalf("got cached manifest %s (%v), want 5 tools and the config hash", data, err)
	}
	g.Close()

	g2 := newGateway(t, gateway.Options{CacheDir: dir}, u.config("mem"))
	if u.connects.Load() != 1 {
		t.Errorf("got %d connects with the manifest cached, want still 1", u.connects.Load())
	}
	d := disclosure(t, g2)
	if !strings.Contains(d.Rendered(0).Text(), "Tools: echo, get_sum, hang, picture, refuse.") {
		t.Error("the section from the cache lacks the tool names")
	}
	open(t, d, "mcp.mem.tools.echo")
	if res := call(t, d, "mem__echo", map[string]any{"message": "hi"}); res.Message != "hi" {
		t.Errorf("got %q, want hi", res.Message)
	}
	if u.connects.Load() != 2 {
		t.Errorf("got %d connects after a call, want 2", u.connects.Load())
	}

	other := u.config("mem")
	other.Timeout = 7 * time.Second
	newGateway(t, gateway.Options{CacheDir: dir, CachedOnly: true}, other)
	if u.connects.Load() != 2 {
		t.Errorf("got %d connects with CachedOnly, want still 2", u.connects.Load())
	}
	newGateway(t, gateway.Options{CacheDir: dir}, other)
	if u.connects.Load() != 3 {
		t.Errorf("got %d connects for another configuration, want 3: the cache is keyed by it", u.connects.Load())
	}
}

// TestListChanged adds a tool upstream: the gateway lists again, caches,
// tells its subscribers, and the next section offers the tool; a
// disclosure that replaces its prompt keeps its openings.
func TestListChanged(t *testing.T) {
	dir := t.TempDir()
	u := newUpstream(t)
	g := newGateway(t, gateway.Options{CacheDir: dir}, u.config("mem"))
	d := disclosure(t, g)
	open(t, d, "mcp.mem")
	changed := make(chan struct{}, 4)
	g.Subscribe(func(*gateway.Upstream) { changed <- struct{}{} })
	sdk.AddTool(u.srv, &sdk.Tool{Name: "later", Description: "Added at run time."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "late"}}}, nil, nil
		})
	select {
	case <-changed:
	case <-time.After(30 * time.Second):
		t.Fatal("no change notice after the upstream's list_changed")
	}
	sec, err := g.Section()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Replace(0, prompt.MustNew("test", "gw", sec).MustBind()); err != nil {
		t.Fatal(err)
	}
	if find(d.Tools(), "mem__later") == nil {
		t.Errorf("got tools %v, want mem__later offered in the opened server", toolNames(d.Tools()))
	}
	data, _ := os.ReadFile(filepath.Join(dir, "mem.json"))
	if !strings.Contains(string(data), `"later"`) {
		t.Error("the cached manifest was not refreshed")
	}
}

// TestFindTools ranks by name, description and argument names, and opens
// the best matches.
func TestFindTools(t *testing.T) {
	g := newGateway(t, gateway.Options{}, newUpstream(t).config("mem"), newUpstream(t).config("other"))
	d := disclosure(t, g)
	res := call(t, d, gateway.FindToolsName, gateway.FindToolsInput{Query: "add numbers", Limit: 2})
	if !res.Success {
		t.Fatalf("find_tools: %q", res.Message)
	}
	for _, want := range []string{"New tools: mem__get_sum, other__get_sum.", `Tools matching "add numbers"`, `"the first number"`} {
		if !strings.Contains(res.Message, want) {
			t.Errorf("the answer lacks %q:\n%s", want, res.Message)
		}
	}
	if got := toolNames(d.Tools()); slices.Contains(got, "mem__echo") {
		t.Errorf("got %v, want only the matches opened", got)
	}
	res = call(t, d, gateway.FindToolsName, gateway.FindToolsInput{Query: "message"})
	if !strings.Contains(res.Message, "mem__echo (server mem, tool echo)") {
		t.Errorf("an argument name should find echo:\n%s", res.Message)
	}
	res = call(t, d, gateway.FindToolsName, gateway.FindToolsInput{Query: "zebra"})
	if res.Success || !strings.Contains(res.Message, `no tool matches "zebra"`) {
		t.Errorf("got %v %q, want no match", res.Success, res.Message)
	}
}

// TestCallTool calls through call_tool: only open tools, arguments checked.
func TestCallTool(t *testing.T) {
	g := newGateway(t, gateway.Options{}, newUpstream(t).config("mem"))
	d := disclosure(t, g)
	args := func(tool string, a any) map[string]any {
		return map[string]any{"server": "mem", "tool": tool, "arguments": a}
	}
	tests := []struct {
		name string
		args map[string]any
		ok   bool
		want string
	}{
		{"not open", args("echo", map[string]any{"message": "x"}), false, `The tool echo of mem is not open: open it with find_tools, or open_sections with key "mcp.mem.tools.echo"`},
		{"unknown server", map[string]any{"server": "nope", "tool": "echo"}, false, `No MCP server "nope"; the servers are mem.`},
		{"unknown tool", args("nope", nil), false, `The MCP server mem has no tool "nope"`},
	}
	for _, tt := range tests {
		res := call(t, d, gateway.CallToolName, tt.args)
		if res.Success != tt.ok || !strings.Contains(res.Message, tt.want) {
			t.Errorf("%s: got %v %q, want %v and %q", tt.name, res.Success, res.Message, tt.ok, tt.want)
		}
	}
	open(t, d, "mcp.mem.tools.echo")
	if res := call(t, d, gateway.CallToolName, args("echo", map[string]any{"message": 7})); res.Success || !strings.Contains(res.Message, "Invalid arguments: message: expected string") {
		t.Errorf("bad arguments: got %v %q", res.Success, res.Message)
	}
	if res := call(t, d, gateway.CallToolName, args("echo", map[string]any{"message": "via call_tool"})); !res.Success || res.Message != "via call_tool" {
		t.Errorf("got %v %q, want the echo", res.Success, res.Message)
	}
}

// TestHTTPUpstream configures a streamable HTTP server as a client's
// configuration file would, with its bearer token from a variable: its
// tools are listed and called with the header; with a wrong token the
// server does not start, and the error names it.
func TestHTTPUpstream(t *testing.T) {
	u := newUpstream(t)
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return u.srv }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer k1" {
			http.Error(w, "wrong token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	cfgs, _, err := gateway.ParseConfig("a.json", []byte(`{"mcpServers": {
  "web": {"type": "http", "url": "`+hs.URL+`", "headers": {"Authorization": "Bearer ${KEY}"}},
  "bad": {"type": "http", "url": "`+hs.URL+`", "headers": {"Authorization": "Bearer nope"}, "timeout": 5}
}}`), env(map[string]string{"KEY": "k1"}))
	if err != nil {
		t.Fatal(err)
	}
	g := newGateway(t, gateway.Options{}, cfgs...)
	d := disclosure(t, g)
	if text := d.Rendered(0).Text(); !strings.Contains(text, "MCP server web 1.2.3: A server in memory for tests. It echoes and adds. Tools: echo,") {
		t.Errorf("the prompt lacks the HTTP server's tools:\n%s", text)
	}
	open(t, d, "mcp.web.tools.echo")
	if res := call(t, d, "web__echo", map[string]any{"message": "over http"}); !res.Success || res.Message != "over http" {
		t.Errorf("web__echo: got %v %q", res.Success, res.Message)
	}
	bad, _ := g.Upstream("bad")
	if err := bad.Err(); err == nil || !strings.Contains(err.Error(), "MCP server bad: start:") {
		t.Errorf("a wrong token: got %v, want a start error naming the server", err)
	}
}

// TestNoServers: a gateway without servers says so and offers neither
// find_tools nor call_tool, which would only answer that there is none.
func TestNoServers(t *testing.T) {
	g := newGateway(t, gateway.Options{})
	d := disclosure(t, g)
	if got := toolNames(d.Tools()); slices.Contains(got, gateway.FindToolsName) || slices.Contains(got, gateway.CallToolName) {
		t.Errorf("got tools %v, want neither find_tools nor call_tool", got)
	}
	if text := d.Rendered(0).Text(); !strings.Contains(text, "No MCP server is configured") {
		t.Errorf("got\n%s\nwant the section to say there is no server", text)
	}
}
