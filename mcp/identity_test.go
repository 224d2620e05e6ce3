package mcp_test

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/gateway"
	"github.com/unfold-dev/unfold/mcp"
	"github.com/unfold-dev/unfold/orchestrator"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tools"
)

// TestToolAnnotations lists the tools of a server with environments that
// say what their commands do and one that does not, a prompt with a
// summarized section, and a gateway whose upstream annotates one tool:
// every tool carries annotations, each its own.
func TestToolAnnotations(t *testing.T) {
	srv, cfg, _ := memServer(t)
	sdk.AddTool(srv, &sdk.Tool{Name: "look", Description: "Look without touching.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)}},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "seen"}}}, nil, nil
		})
	g := newTestGateway(t, cfg)
	_, c := setup(t, mcp.Options{Gateway: g}, func(o *orchestrator.Orchestrator, sess *session.Session) {
		withCounter(t)(o, sess)
		reader, err := envs.NewDeclarative("reader", sess, envs.DeclarativeSpec{
			Description: "Reads a value",
			Commands:    []envs.Command{{Signature: "get", Description: "Get the value.", Handler: func(context.Context, string) (string, error) { return "1", nil }}},
			Hints:       &closedReadOnly,
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := o.Register("reader", reader); err != nil {
			t.Fatal(err)
		}
	})
	// open_sections is offered while something is summarized; the
	// upstream's tools once its section is open: both lists count.
	tools := listTools(t, c)
	call(t, c, "open_sections", map[string]any{"section_keys": []string{"mcp.mem"}, "reason": "test"})
	wait(t, c.toolsChanged, "tools/list_changed")
	maps.Copy(tools, listTools(t, c))

	want := map[string]hints{
		"counter":       {false, true, false, true}, // says nothing: what MCP assumes
		"reader":        {true, false, true, false},
		"help":          {true, false, true, false},
		"open_sections": {false, false, true, false},
		"find_tools":    {false, false, true, false},
		"call_tool":     {false, true, false, true},
		"mem__echo":     {false, true, false, true}, // the upstream says nothing
		"mem__look":     {true, false, false, false},
	}
	for name, w := range want {
		tool := tools[name]
		if tool == nil {
			t.Errorf("%s is not offered; the tools are %v", name, toolNames(tools))
			continue
		}
		if got := read(tool.Annotations); got != w {
			t.Errorf("%s: got %+v, want %+v", name, got, w)
		}
	}
	var missing []string
	for name, tool := range tools {
		if tool.Annotations == nil {
			missing = append(missing, name)
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		t.Errorf("tools without annotations: %v", missing)
	}
}

// hints are a tool's annotations as a client reads them: a hint left out
// is what MCP assumes (destructive and open-world), and a read-only tool
// destroys nothing.
type hints struct{ readOnly, destructive, idempotent, openWorld bool }

func read(a *sdk.ToolAnnotations) hints {
	if a == nil {
		return hints{false, true, false, true}
	}
	h := hints{a.ReadOnlyHint, !a.ReadOnlyHint, a.IdempotentHint, true}
	if a.DestructiveHint != nil && !a.ReadOnlyHint {
		h.destructive = *a.DestructiveHint
	}
	if a.OpenWorldHint != nil {
		h.openWorld = *a.OpenWorldHint
	}
	return h
}

var closedReadOnly = tools.Hints{ReadOnly: true, Idempotent: true}

// newTestGateway puts the servers of cfgs behind a gateway closed with the
// test.
func newTestGateway(t *testing.T, cfgs ...gateway.ServerConfig) *gateway.Gateway {
	t.Helper()
	g, err := gateway.New(t.Context(), cfgs, gateway.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	if err := g.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	return g
}

// TestIdentity checks how the server introduces itself by default and
// when told, and that its instructions say what it offers.
func TestIdentity(t *testing.T) {
	_, c := setup(t, mcp.Options{}, withCounter(t))
	init := c.InitializeResult()
	if info := init.ServerInfo; info.Name != "unfold" || info.Version != "devel" {
		t.Errorf("by default: got %+v, want unfold version devel (a test has no module version)", info)
	}
	for _, want := range []string{"Persistent environments (counter)", "Screens are resources (unfold://screen/<name>); subscribe to one to be told when it changes.", "Call help for an overview."} {
		if !strings.Contains(init.Instructions, want) {
			t.Errorf("the instructions lack %q: %q", want, init.Instructions)
		}
	}
	_, c = setup(t, mcp.Options{Name: "tools", Version: "v9"}, withCounter(t))
	if info := c.InitializeResult().ServerInfo; info.Name != "tools" || info.Version != "v9" {
		t.Errorf("told: got %+v, want tools v9", info)
	}
}
