package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/unfold-dev/unfold/gateway"
	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/tools"
)

// follow replaces the gateway's section in d whenever a server changes,
// as unfold mcp does.
func follow(t *testing.T, g *gateway.Gateway, d *prompt.Disclosure) {
	t.Helper()
	t.Cleanup(g.Subscribe(func(*gateway.Upstream) {
		sec, err := g.Section()
		if err == nil {
			err = d.Replace(0, prompt.MustNew("test", "gw", sec).MustBind())
		}
		if err != nil {
			t.Errorf("replace the section: %v", err)
		}
	}))
}

// TestRetryAfterFailedStart: a server that failed to start is started
// again by find_tools, with backoff while it keeps failing, and its tools
// are found and called once it starts.
func TestRetryAfterFailedStart(t *testing.T) {
	up := newUpstream(t)
	up.fail.Store(true)
	cfg := up.config("mem")
	var attempts atomic.Int32
	connect := cfg.Connect
	cfg.Connect = func(ctx context.Context) (sdk.Transport, error) {
		attempts.Add(1)
		return connect(ctx)
	}
	g := newGateway(t, gateway.Options{}, cfg)
	u, _ := g.Upstream("mem")
	release := gateway.HoldBackoff(u)
	d := disclosure(t, g)
	follow(t, g, d)
	if text := d.Rendered(0).Text(); !strings.Contains(text, "it did not start (MCP server mem: start: cannot reach the server); find_tools and call_tool try it again.") {
		t.Errorf("the summary does not say how it is tried again:\n%s", text)
	}

	// Failing again: the next failure waits (the backoff) before a try.
	if res := call(t, d, gateway.FindToolsName, gateway.FindToolsInput{Query: "echo"}); res.Success {
		t.Errorf("find_tools found %q while the server fails", res.Message)
	}
	if got := attempts.Load(); got != 2 {
		t.Errorf("got %d starts after one find_tools, want 2 (New's and its)", got)
	}
	call(t, d, gateway.FindToolsName, gateway.FindToolsInput{Query: "echo"})
	if got := attempts.Load(); got != 2 {
		t.Errorf("got %d starts, want 2: the backoff should hold the third", got)
	}
	res := call(t, d, gateway.CallToolName, gateway.CallToolInput{Server: "mem", Tool: "echo"})
	if want := "The MCP server mem did not start, so its tools are not known: MCP server mem: start: cannot reach the server"; res.Message != want {
		t.Errorf("call_tool during the backoff: got %q, want %q", res.Message, want)
	}
	if got := attempts.Load(); got != 2 {
		t.Errorf("got %d starts, want 2: the backoff should hold call_tool's", got)
	}

	// It works now; after the backoff, find_tools starts it and opens
	// its tool.
	up.fail.Store(false)
	release()
	for !strings.Contains(call(t, d, gateway.FindToolsName, gateway.FindToolsInput{Query: "echo a message", Limit: 1}).Message, "mem__echo") {
		select {
		case <-t.Context().Done():
			t.Fatalf("never found after the backoff; last error %v", u.Err())
		case <-time.After(100 * time.Millisecond): // a start may be under way
		}
	}
	if !slices.Contains(toolNames(d.Tools()), "mem__echo") {
		t.Errorf("got tools %v, want mem__echo open", toolNames(d.Tools()))
	}
	res = call(t, d, gateway.CallToolName, gateway.CallToolInput{Server: "mem", Tool: "echo", Arguments: map[string]any{"message": "back"}})
	if !res.Success || res.Message != "back" {
		t.Errorf("call_tool: got %+v", res)
	}
}

// TestCallToolStartsFailedServer: call_tool starts a server that failed
// at first, and its tools open.
func TestCallToolStartsFailedServer(t *testing.T) {
	up := newUpstream(t)
	up.fail.Store(true)
	g := newGateway(t, gateway.Options{}, up.config("mem"))
	d := disclosure(t, g)
	follow(t, g, d)
	up.fail.Store(false)
	res := call(t, d, gateway.CallToolName, gateway.CallToolInput{Server: "mem", Tool: "echo", Arguments: map[string]any{"message": "hi"}})
	if want := `open_sections with key "mcp.mem.tools.echo"`; !strings.Contains(res.Message, want) {
		t.Errorf("call_tool: got %q, want the server started and %q", res.Message, want)
	}
	open(t, d, "mcp.mem")
	res = call(t, d, gateway.CallToolName, gateway.CallToolInput{Server: "mem", Tool: "echo", Arguments: map[string]any{"message": "hi"}})
	if !res.Success || res.Message != "hi" {
		t.Errorf("call_tool: got %+v, want the server started again and the call made", res)
	}
}

// TestNewDoesNotWait: New returns while a server starts; its section
// says so until it has listed its tools, when the subscribers are told;
// Close stops a start under way.
func TestNewDoesNotWait(t *testing.T) {
	up := newUpstream(t)
	release := make(chan struct{})
	cfg := up.config("mem")
	connect := cfg.Connect
	cfg.Connect = func(ctx context.Context) (sdk.Transport, error) {
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return connect(ctx)
	}
	stuck := gateway.ServerConfig{Name: "stuck", Timeout: time.Hour, Connect: func(ctx context.Context) (sdk.Transport, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	g, err := gateway.New(t.Context(), []gateway.ServerConfig{cfg, stuck}, gateway.Options{})
	if err != nil {
		t.Fatal(err)
	}
	changed := make(chan string, 4)
	defer g.Subscribe(func(u *gateway.Upstream) { changed <- u.Name() })()
	if got := g.Starting(); !slices.Equal(got, []string{"mem", "stuck"}) {
		t.Errorf("starting: got %v", got)
	}
	d := disclosure(t, g)
	if text := d.Rendered(0).Text(); !strings.Contains(text, "MCP server mem. It is starting: its tools are offered once it has listed them.") {
		t.Errorf("the section does not say mem is starting:\n%s", text)
	}
	close(release)
	if name := <-changed; name != "mem" {
		t.Errorf("got a change of %s, want mem", name)
	}
	if text := disclosure(t, g).Rendered(0).Text(); !strings.Contains(text, "Tools: echo, get_sum") {
		t.Errorf("mem's section does not list its tools:\n%s", text)
	}
	closed := make(chan error)
	go func() { closed <- g.Close() }()
	select {
	case <-closed:
	case <-time.After(time.Minute): // a guard against a hang only
		t.Fatal("Close did not stop the start under way")
	}
	if err := g.Wait(t.Context()); err != nil {
		t.Errorf("wait after close: %v", err)
	}
}

// TestRelistOrdered: the server says its tools changed twice, and answers
// the first list after the second; the manifest kept is the newest.
func TestRelistOrdered(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "re", Version: "1"}, nil)
	addTool := func(name string) {
		sdk.AddTool(srv, &sdk.Tool{Name: name}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{}, nil, nil
		})
	}
	addTool("v1")
	var (
		mu       sync.Mutex // guards lists, inFlight and most
		lists    int
		inFlight int
		most     int
	)
	second := make(chan struct{}) // closed when the second re-list arrives
	var checking atomic.Bool      // the test's own client lists the tools
	srv.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if method != "tools/list" || checking.Load() {
				return next(ctx, method, req)
			}
			mu.Lock()
			lists++
			n := lists
			inFlight++
			most = max(most, inFlight)
			mu.Unlock()
			defer func() {
				mu.Lock()
				inFlight--
				mu.Unlock()
			}()
			switch n {
			case 2: // the first re-list: list v2, then change to v3 before answering
				res, err := next(ctx, method, req)
				srv.RemoveTools("v2")
				addTool("v3")
				// Answer after the next list if the client sends it now
				// (it must not); the wait is a guard only.
				select {
				case <-second:
				case <-time.After(2 * time.Second):
				}
				return res, err
			case 3:
				close(second)
			}
			return next(ctx, method, req)
		}
	})
	cfg := gateway.ServerConfig{Name: "re", Timeout: time.Minute, Connect: func(ctx context.Context) (sdk.Transport, error) {
		st, ct := sdk.NewInMemoryTransports()
		if _, err := srv.Connect(ctx, st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}}
	g := newGateway(t, gateway.Options{CacheDir: t.TempDir()}, cfg)
	changed := make(chan []string, 8)
	defer g.Subscribe(func(u *gateway.Upstream) {
		var names []string
		for _, tool := range u.Manifest().Tools {
			names = append(names, tool.Name)
		}
		changed <- names
	})()
	srv.RemoveTools("v1")
	addTool("v2") // list_changed: the first re-list (or two, when they come apart)
	// The lists settle on what the server has at last: v3, and v2 too
	// when the first re-list answered before v2 was added. A client of
	// its own asks the server.
	serverTools := func() []string {
		checking.Store(true)
		defer checking.Store(false)
		st, ct := sdk.NewInMemoryTransports()
		ss, err := srv.Connect(t.Context(), st, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ss.Close()
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "check"}, nil).Connect(t.Context(), ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		var names []string
		for tool, err := range cs.Tools(t.Context(), nil) {
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, tool.Name)
		}
		slices.Sort(names)
		return names
	}
	wait, cancel := context.WithTimeout(t.Context(), time.Minute) // a guard against a hang only
	defer cancel()
	for done := false; !done; {
		select {
		case names := <-changed:
			slices.Sort(names)
			done = slices.Contains(names, "v3") && slices.Equal(names, serverTools())
		case <-wait.Done():
			t.Fatal("the lists never settled on the server's tools")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if most > 1 {
		t.Errorf("%d lists ran at once, want one at a time", most)
	}
	u, _ := g.Upstream("re")
	var got []string
	for _, tool := range u.Manifest().Tools {
		got = append(got, tool.Name)
	}
	slices.Sort(got)
	if want := serverTools(); !slices.Equal(got, want) {
		t.Errorf("got the manifest's tools %v, want the server's %v", got, want)
	}
}

// TestRetryDoesNotWaitForAHangingStart: find_tools and call_tool start a
// server again in the background and do not wait for it while it hangs:
// find_tools answers with the other server's tools and names the one
// still starting.
func TestRetryDoesNotWaitForAHangingStart(t *testing.T) {
	var hang atomic.Bool
	entered := make(chan struct{}, 4)
	release := make(chan struct{})
	stuck := gateway.ServerConfig{Name: "stuck", Timeout: time.Hour, Connect: func(ctx context.Context) (sdk.Transport, error) {
		if !hang.Load() {
			return nil, errors.New("cannot reach the server")
		}
		entered <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil, errors.New("gave up")
	}}
	g := newGateway(t, gateway.Options{}, newUpstream(t).config("mem"), stuck)
	t.Cleanup(func() { close(release) }) // before the gateway's Close
	d := disclosure(t, g)
	follow(t, g, d)
	hang.Store(true)

	// Guards against a hang: without the bound, the call waits for the
	// start's timeout of an hour.
	calls := func(name string, args any) tools.Result {
		t.Helper()
		type answer struct {
			res tools.Result
			err error
		}
		done := make(chan answer, 1)
		data, _ := json.Marshal(args)
		tool := find(d.Tools(), name)
		go func() {
			res, err := d.Call(t.Context(), tool, data)
			done <- answer{res, err}
		}()
		select {
		case a := <-done:
			if a.err != nil {
				t.Fatalf("%s: %v", name, a.err)
			}
			return a.res
		case <-time.After(time.Minute):
			t.Fatalf("%s waits for the server that hangs at its start", name)
		}
		return tools.Result{}
	}
	res := calls(gateway.FindToolsName, gateway.FindToolsInput{Query: "echo a message", Limit: 1})
	select {
	case <-entered:
	default:
		t.Fatal("find_tools did not start the failed server again")
	}
	if !strings.Contains(res.Message, "mem__echo") || !strings.Contains(res.Message, "Still starting, not searched yet: stuck;") {
		t.Errorf("find_tools: got %q, want mem's tool and stuck named as starting", res.Message)
	}
	res = calls(gateway.CallToolName, gateway.CallToolInput{Server: "stuck", Tool: "any"})
	if want := "The MCP server stuck is still starting, so its tools are not known yet; call again in a moment."; res.Message != want {
		t.Errorf("call_tool: got %q, want %q", res.Message, want)
	}
	if !slices.Equal(g.Starting(), []string{"stuck"}) {
		t.Errorf("starting: got %v, want stuck still blocked", g.Starting())
	}
}

// TestNoMatchCountsNow: a find_tools that matches nothing counts each
// server's tools as they are then, not as they were when the tool was
// built: a server that failed at first and started for this call has
// its tools counted.
func TestNoMatchCountsNow(t *testing.T) {
	up := newUpstream(t)
	up.fail.Store(true)
	g := newGateway(t, gateway.Options{}, up.config("mem"))
	d := disclosure(t, g)
	up.fail.Store(false)
	res := call(t, d, gateway.FindToolsName, gateway.FindToolsInput{Query: "zebra"})
	if want := `no tool matches "zebra"; the servers are mem (5 tools); try other words`; res.Success || res.Message != want {
		t.Errorf("got %q, want %q", res.Message, want)
	}
}

// TestOpenWhileStarting opens a real server while it is still starting:
// the opening shows its section in place, which says it is starting, and
// its tools join once it has listed them, without opening it again.
func TestOpenWhileStarting(t *testing.T) {
	cfg := rogue(t, "slow")
	gate := filepath.Join(t.TempDir(), "gate")
	args := append([]string{cfg.Command}, cfg.Args...)
	cfg.Args = []string{"-c", `while [ ! -e "$0" ]; do sleep 0.05; done; exec "$@"`, gate}
	cfg.Args = append(cfg.Args, args...)
	cfg.Command = "sh"
	g, err := gateway.New(t.Context(), []gateway.ServerConfig{cfg}, gateway.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	d := disclosure(t, g)
	follow(t, g, d)
	res := open(t, d, "mcp.slow")
	if op, ok := res.Value.(*prompt.Opened); !ok || !slices.Contains(op.Paths, "mcp.slow") {
		t.Fatalf("got %q, want mcp.slow opened in place", res.Message)
	}
	if text := d.Rendered(0).Text(); !strings.Contains(text, "It is starting: its tools join once it has listed them") {
		t.Errorf("the opened section does not say the server is starting:\n%s", text)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := g.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := toolNames(d.Tools()); !slices.Contains(got, "slow__echo") {
		t.Errorf("got tools %v, want slow__echo offered once the server listed it", got)
	}
}
