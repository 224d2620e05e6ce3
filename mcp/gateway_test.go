package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/unfold-dev/unfold/gateway"
	"github.com/unfold-dev/unfold/mcp"
	"github.com/unfold-dev/unfold/orchestrator"
	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/session"
)

// memServer is an in-memory upstream MCP server: echo, a picture with a
// resource link, a call that reports progress and waits to be cancelled, a
// resource and a prompt. cancelled receives when the waiting call is.
func memServer(t *testing.T) (*sdk.Server, gateway.ServerConfig, chan struct{}) {
	t.Helper()
	cancelled := make(chan struct{}, 1)
	srv := sdk.NewServer(&sdk.Implementation{Name: "mem", Version: "1"}, &sdk.ServerOptions{Instructions: "Tools in memory."})
	sdk.AddTool(srv, &sdk.Tool{Name: "echo", Description: "Echo a message."},
		func(_ context.Context, _ *sdk.CallToolRequest, in struct {
			Message string `json:"message"`
		}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: in.Message}}}, nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "picture", Description: "An image, a resource link and structured content."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, map[string]any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.ImageContent{Data: []byte("PNG"), MIMEType: "image/png"},
				&sdk.ResourceLink{URI: "mem://doc", Name: "doc"},
			}}, map[string]any{"width": 1}, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "wait", Description: "Report progress, then wait until cancelled."},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			if tok := req.Params.GetProgressToken(); tok != nil {
				_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Total: 2, Message: "halfway"})
			}
			<-ctx.Done()
			cancelled <- struct{}{}
			return nil, nil, ctx.Err()
		})
	srv.AddResource(&sdk.Resource{URI: "mem://doc", Name: "doc", MIMEType: "text/plain"},
		func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: "mem://doc", MIMEType: "text/plain", Text: "the doc"}}}, nil
		})
	srv.AddPrompt(&sdk.Prompt{Name: "greet", Description: "A greeting."},
		func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "hello"}}}}, nil
		})
	cfg := gateway.ServerConfig{Name: "mem", Connect: func(ctx context.Context) (sdk.Transport, error) {
		st, ct := sdk.NewInMemoryTransports()
		if _, err := srv.Connect(ctx, st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}}
	return srv, cfg, cancelled
}

// TestGatewayOverMCP drives unfold's MCP server with a gateway in front of
// an in-memory upstream: tools open with list_changed, results pass through
// whole, progress comes back, cancellation goes up, the upstream's
// resources and prompts are listed under its name, and its list_changed
// reaches the client.
func TestGatewayOverMCP(t *testing.T) {
	srv, cfg, cancelled := memServer(t)
	g, err := gateway.New(t.Context(), []gateway.ServerConfig{cfg}, gateway.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	if err := g.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	_, c := setup(t, mcp.Options{Gateway: g}, func(*orchestrator.Orchestrator, *session.Session) {})
	progress := make(chan string, 4)
	if got, want := toolNames(listTools(t, c)), []string{"call_tool", "find_tools", "help", "open_sections"}; !slices.Equal(got, want) {
		t.Fatalf("got tools %v at start, want %v", got, want)
	}
	if ins := c.InitializeResult().Instructions; !strings.Contains(ins, "mem (echo, picture, wait)") {
		t.Errorf("the instructions do not list the upstream's tools: %q", ins)
	}

	res := call(t, c, prompt.OpenSectionsName, prompt.OpenSectionsInput{SectionKeys: []string{"mcp.mem"}, Reason: "test"})
	if res.IsError || !strings.Contains(texts(res)[0], "New tools: mem__echo, mem__picture, mem__wait.") {
		t.Fatalf("open: got %v", texts(res))
	}
	wait(t, c.toolsChanged, "tools/list_changed")
	tools := listTools(t, c)
	if tools["mem__echo"] == nil || !strings.Contains(string(mustJSON(t, tools["mem__echo"].InputSchema)), `"message"`) {
		t.Fatalf("got tools %v, want mem__echo with its schema", toolNames(tools))
	}

	res = call(t, c, "mem__picture", nil)
	if len(res.Content) != 2 {
		t.Fatalf("got %d blocks, want the image and the link", len(res.Content))
	}
	if img, ok := res.Content[0].(*sdk.ImageContent); !ok || string(img.Data) != "PNG" {
		t.Errorf("got %#v, want the image", res.Content[0])
	}
	if link, ok := res.Content[1].(*sdk.ResourceLink); !ok || link.URI != "mem://doc" {
		t.Errorf("got %#v, want the resource link", res.Content[1])
	}
	if got := string(mustJSON(t, res.StructuredContent)); got != `{"width":1}` {
		t.Errorf("got structured content %s", got)
	}

	// Progress comes back under the client's token; cancelling goes up.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		select {
		case <-progress:
			cancel()
		case <-time.After(30 * time.Second):
		}
	}()
	params := &sdk.CallToolParams{Name: "mem__wait", Arguments: map[string]any{}}
	params.SetProgressToken("client-token")
	progressSeen := make(chan struct{})
	c2 := connectWithProgress(t, g, func(p *sdk.ProgressNotificationParams) {
		if p.ProgressToken == "client-token" && p.Message == "halfway" {
			close(progressSeen)
			progress <- p.Message
		}
	})
	call(t, c2, prompt.OpenSectionsName, prompt.OpenSectionsInput{SectionKeys: []string{"mcp.mem.tools.wait"}, Reason: "test"})
	if _, err := c2.CallTool(ctx, params); err == nil {
		t.Error("got an answer to a cancelled call")
	}
	select {
	case <-progressSeen:
	case <-time.After(30 * time.Second):
		t.Error("no progress notification reached the client")
	}
	select {
	case <-cancelled:
	case <-time.After(30 * time.Second):
		t.Error("the upstream call was never cancelled")
	}

	// Resources and prompts, under the server's name.
	rl, err := c.ListResources(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(rl.Resources, func(r *sdk.Resource) bool { return r.URI == "mem://doc" && r.Name == "mem__doc" }) {
		t.Errorf("got resources %v, want mem://doc named mem__doc", mustJSON(t, rl.Resources))
	}
	if got, err := readResource(t, c, "mem://doc"); err != nil || got != "the doc" {
		t.Errorf("read mem://doc: got %q, %v", got, err)
	}
	pr, err := c.GetPrompt(t.Context(), &sdk.GetPromptParams{Name: "mem__greet"})
	if err != nil || pr.Messages[0].Content.(*sdk.TextContent).Text != "hello" {
		t.Errorf("prompt mem__greet: got %v, %v", pr, err)
	}

	// The upstream's list_changed reaches the client.
	drain(c.toolsChanged)
	sdk.AddTool(srv, &sdk.Tool{Name: "later", Description: "Added at run time."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "late"}}}, nil, nil
		})
	deadline := time.After(30 * time.Second)
	for listTools(t, c)["mem__later"] == nil {
		select {
		case <-c.toolsChanged:
		case <-deadline:
			t.Fatal("the upstream's new tool never reached the client")
		}
	}
}

// connectWithProgress connects another client to a server over g whose
// progress notifications go to fn.
func connectWithProgress(t *testing.T, g *gateway.Gateway, fn func(*sdk.ProgressNotificationParams)) *client {
	t.Helper()
	sess := session.New()
	o, err := orchestrator.New(orchestrator.WithSession(sess))
	if err != nil {
		t.Fatal(err)
	}
	s, err := mcp.New(only(o), mcp.Options{Gateway: g})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	st, ct := sdk.NewInMemoryTransports()
	if _, err := s.Connect(t.Context(), st); err != nil {
		t.Fatal(err)
	}
	cl := sdk.NewClient(&sdk.Implementation{Name: "test"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) { fn(req.Params) },
	})
	cs, err := cl.Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return &client{ClientSession: cs, toolsChanged: make(chan struct{}, 16), resourcesChanged: make(chan struct{}, 16)}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func drain(ch chan struct{}) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

// TestGatewayInstructions reads the instructions a client gets at
// initialize: a server of 25 tools is named with its first 20 and the
// count of the rest, one starting and one that did not start say so
// rather than naming no tool.
func TestGatewayInstructions(t *testing.T) {
	many := sdk.NewServer(&sdk.Implementation{Name: "many", Version: "1"}, nil)
	for i := range 25 {
		sdk.AddTool(many, &sdk.Tool{Name: fmt.Sprintf("t%02d", i)},
			func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
				return nil, nil, nil
			})
	}
	release := make(chan struct{})
	defer close(release)
	cfgs := []gateway.ServerConfig{
		{Name: "many", Connect: func(ctx context.Context) (sdk.Transport, error) {
			st, ct := sdk.NewInMemoryTransports()
			if _, err := many.Connect(ctx, st, nil); err != nil {
				return nil, err
			}
			return ct, nil
		}},
		{Name: "down", Connect: func(context.Context) (sdk.Transport, error) { return nil, errors.New("refused") }},
		{Name: "slow", Connect: func(ctx context.Context) (sdk.Transport, error) {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil, errors.New("released")
		}},
	}
	g, err := gateway.New(t.Context(), cfgs, gateway.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	up := func(name string) *gateway.Upstream { u, _ := g.Upstream(name); return u }
	for up("many").Manifest().ConfigHash == "" || up("down").Err() == nil {
		select {
		case <-t.Context().Done():
			t.Fatal("the servers never started")
		case <-time.After(10 * time.Millisecond):
		}
	}
	_, c := setup(t, mcp.Options{Gateway: g}, func(*orchestrator.Orchestrator, *session.Session) {})
	ins := c.InitializeResult().Instructions
	for _, want := range []string{
		" many (t00, t01, t02, t03, t04, t05, t06, t07, t08, t09, t10, t11, t12, t13, t14, t15, t16, t17, t18, t19 and 5 more);",
		" down (it did not start; find_tools and call_tool try it again);",
		" slow (starting; find_tools finds its tools once it has listed them).",
	} {
		if !strings.Contains(ins, want) {
			t.Errorf("the instructions lack %q:\n%s", want, ins)
		}
	}
}
