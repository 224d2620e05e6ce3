package gateway_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/gateway"
	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/rootfs"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/tokens"
)

// TestAgentOpensAServer runs the agent loop over a prompt holding the
// gateway's section, with a scripted model: the system message shows the
// server's summary, find_tools opens a tool, the model calls it, and the
// tool is offered only from then on.
func TestAgentOpensAServer(t *testing.T) {
	g := newGateway(t, gateway.Options{}, newUpstream(t).config("mem"))
	sec, err := g.Section()
	if err != nil {
		t.Fatal(err)
	}
	p := prompt.MustNew("test", "agent",
		section.New(section.Spec[section.None]{Key: "task", Title: "Task", Body: "Echo a word."}),
		sec,
	).MustBind()
	var offered [][]string
	var system string
	model, answers := findThenCall("echo a message", "mem__echo", `{"message":"unfolded"}`, func(req agent.Request) {
		var names []string
		for _, d := range req.Tools {
			names = append(names, d.Name)
		}
		offered = append(offered, names)
		system = req.Messages[0].Content
	})
	a, err := agent.New(model, p)
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Run(t.Context(), "echo")
	if err != nil {
		t.Fatal(err)
	}
	if res.Answer != "done" {
		t.Errorf("got answer %q", res.Answer)
	}
	if slices.Contains(offered[0], "mem__echo") || !slices.Contains(offered[0], "find_tools") {
		t.Errorf("first step offered %v, want find_tools and not mem__echo", offered[0])
	}
	if !slices.Contains(offered[1], "mem__echo") {
		t.Errorf("after find_tools, offered %v, want mem__echo", offered[1])
	}
	if got := *answers; len(got) != 2 || !strings.Contains(got[0], "New tools: mem__echo.") || got[1] != "unfolded" {
		t.Errorf("got tool answers %q", got)
	}
	if !strings.Contains(system, "### 2.1. mem (mcp.mem)") {
		t.Errorf("the system message lacks the server's section:\n%s", system)
	}
}

func toolCall(name, args string) agent.Response {
	return agent.Response{Message: agent.Message{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: name, Name: name, Arguments: args}}}}
}

// findThenCall is a model that calls find_tools with query, then tool
// with args, then answers "done". It hands each request to seen, when
// given, and keeps the tool results it reads in answers.
func findThenCall(query, tool, args string, seen func(agent.Request)) (model agent.Model, answers *[]string) {
	answers = new([]string)
	step := 0
	return agent.ModelFunc(func(_ context.Context, req agent.Request) (agent.Response, error) {
		if seen != nil {
			seen(req)
		}
		if last := req.Messages[len(req.Messages)-1]; last.Role == agent.RoleTool {
			*answers = append(*answers, last.Content)
		}
		step++
		switch step {
		case 1:
			return toolCall("find_tools", `{"query":"`+query+`","limit":1}`), nil
		case 2:
			return toolCall(tool, args), nil
		}
		return agent.Response{Message: agent.Message{Role: agent.RoleAssistant, Content: "done"}}, nil
	}), answers
}

// TestAgentGetsACutResult runs the agent loop over a tool whose result is
// 2 MB: the model reads at most the output budget of it, as it reads an
// environment's output.
func TestAgentGetsACutResult(t *testing.T) {
	cfg, whole := bigServer(t)
	g := newGateway(t, gateway.Options{}, cfg)
	sec, err := g.Section()
	if err != nil {
		t.Fatal(err)
	}
	p := prompt.MustNew("test", "agent", section.New(section.Spec[section.None]{Key: "task", Title: "Task", Body: "Read the log."}), sec).MustBind()
	dir := t.TempDir()
	fs, err := rootfs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fs.Close() })
	model, answers := findThenCall("dump log", "big__dump", `{}`, nil)
	a, err := agent.New(model, p, agent.WithFS(fs))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	if len(*answers) != 2 {
		t.Fatalf("got %d tool results, want 2", len(*answers))
	}
	got := (*answers)[1]
	if n := tokens.Estimate.Count(got); n > envs.DefaultBudget || !strings.Contains(got, "left out here to fit the budget of 8000 tokens") {
		t.Errorf("the model read %d tokens (%d bytes) of the result, want at most %d and a note", n, len(got), envs.DefaultBudget)
	}
	m := savedIn.FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("the note names no file:\n%.2000s", got)
	}
	if saved, err := os.ReadFile(filepath.Join(dir, m[1])); err != nil || string(saved) != whole {
		t.Errorf("the saved file holds %d bytes (%v), want the whole %d", len(saved), err, len(whole))
	}
}

// TestAgentFindsAServerThatCameBack runs the agent loop over the section
// of a server that failed its first start and works now: find_tools
// starts it, the agent's prompt follows the gateway's change, and the
// tool it opens is there to open and call.
func TestAgentFindsAServerThatCameBack(t *testing.T) {
	up := newUpstream(t)
	up.fail.Store(true)
	g := newGateway(t, gateway.Options{}, up.config("mem"))
	build := func() (*prompt.Prompt, error) {
		sec, err := g.Section()
		if err != nil {
			return nil, err
		}
		return prompt.MustNew("test", "agent",
			section.New(section.Spec[section.None]{Key: "task", Title: "Task", Body: "Echo a word."}),
			sec,
		).Bind()
	}
	at := g.Changes()
	p, err := build()
	if err != nil {
		t.Fatal(err)
	}
	up.fail.Store(false)
	model, answers := findThenCall("echo a message", "mem__echo", `{"message":"back"}`, nil)
	a, err := agent.New(model, p, agent.WithPromptChanges(at, g.Changes, build))
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Run(t.Context(), "echo")
	if err != nil {
		t.Fatal(err)
	}
	if res.Answer != "done" {
		t.Errorf("got answer %q", res.Answer)
	}
	if got := *answers; len(got) != 2 || !strings.Contains(got[0], "New tools: mem__echo.") || got[1] != "back" {
		t.Errorf("got tool answers %q", got)
	}
}
