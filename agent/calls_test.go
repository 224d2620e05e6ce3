package agent_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/agent/anthropic"
	"github.com/unfold-dev/unfold/agent/internal/scripted"
	"github.com/unfold-dev/unfold/agent/openai"
	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/tools"
)

// manyCalls is a reply that calls echo n times, ids c0, c1, ...
func manyCalls(n int) scripted.Reply {
	calls := make([]scripted.Call, n)
	for i := range calls {
		calls[i] = call(fmt.Sprintf("c%d", i), "echo", `{"text":"x"}`)
	}
	return scripted.Calls(calls...)
}

// echoTool counts its runs.
func echoTool(runs *atomic.Int32) *tools.Tool {
	return tools.MustNew("echo", "Echo text.", func(_ context.Context, _ tools.Context, in struct {
		Text string `json:"text"`
	}) (string, error) {
		runs.Add(1)
		return in.Text, nil
	})
}

// TestToolCallsPerReply: of one reply's calls, MaxToolCalls run and the
// others are answered without running; the run goes on.
func TestToolCallsPerReply(t *testing.T) {
	var runs atomic.Int32
	p := prompt.MustNew("test/agent", "echo", section.New(section.Spec[section.None]{Key: "task", Title: "Task", Body: "Echo."})).MustBind()
	n := agent.MaxToolCalls + 2
	srv := scripted.New(t, manyCalls(n), scripted.Text("done"))
	a, err := agent.New(newModel(t, srv), p, agent.WithTools(echoTool(&runs)))
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Run(context.Background(), "echo")
	if err != nil || res.Answer != "done" {
		t.Fatalf("run: %+v, %v", res, err)
	}
	if got := int(runs.Load()); got != agent.MaxToolCalls {
		t.Errorf("echo ran %d times, want %d", got, agent.MaxToolCalls)
	}
	req := srv.Requests()[1]
	for i := range n {
		got, ok := req.ToolResult(fmt.Sprintf("c%d", i))
		want := "x"
		if i >= agent.MaxToolCalls {
			want = fmt.Sprintf("This call did not run: one reply may make at most %d tool calls.", agent.MaxToolCalls)
		}
		if !ok || !strings.HasPrefix(got, want) {
			t.Fatalf("result of c%d: %q (%v), want it to start with %q", i, got, ok, want)
		}
	}
}

// TestTooManyCallsRefused: each adapter stops reading a reply that makes
// more than 1,024 tool calls, streamed or not, and the run ends saying so;
// no call runs.
func TestTooManyCallsRefused(t *testing.T) {
	p := prompt.MustNew("test/agent", "echo", section.New(section.Spec[section.None]{Key: "task", Title: "Task", Body: "Echo."})).MustBind()
	for _, api := range []string{"chat", "responses", "messages"} {
		t.Run(api, func(t *testing.T) {
			var m agent.Model
			var err error
			switch api {
			case "chat":
				m = newModel(t, scripted.New(t, manyCalls(1025)))
			case "responses":
				m, err = openai.NewResponses(scripted.NewResponses(t, manyCalls(1025)).URL, "gpt-5", openai.WithAPIKey("k"))
			case "messages":
				m, err = anthropic.New(scripted.NewMessages(t, manyCalls(1025)).URL, "claude-sonnet-4-5", anthropic.WithAPIKey("k"))
			}
			if err != nil {
				t.Fatal(err)
			}
			var runs atomic.Int32
			a, err := agent.New(m, p, agent.WithTools(echoTool(&runs)))
			if err != nil {
				t.Fatal(err)
			}
			_, err = a.Run(context.Background(), "echo")
			if err == nil || !strings.Contains(err.Error(), "the reply makes more than 1024 tool calls; stopped reading it") {
				t.Errorf("run: %v, want the reply refused for its calls", err)
			}
			if runs.Load() != 0 {
				t.Errorf("echo ran %d times, want none", runs.Load())
			}
		})
	}
}
