package anthropic

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/agent/internal/scripted"
)

// TestToolSearchModels: the models Anthropic lists for the tool search
// tool defer tools; the earlier ones do not; a name not known as Claude's
// does.
func TestToolSearchModels(t *testing.T) {
	for model, want := range map[string]bool{
		"claude-sonnet-4-5":                            true,
		"claude-sonnet-4-5-20250929":                   true,
		"claude-opus-4-5-20251101":                     true,
		"claude-haiku-4-5":                             true,
		"claude-sonnet-4-6":                            true,
		"claude-opus-5":                                true,
		"claude-haiku-4-5@20251001":                    true,
		"us.anthropic.claude-sonnet-4-5-20250929-v1:0": true,
		"my-proxy-model":                               true,
		"claude-sonnet-4-20250514":                     false,
		"claude-sonnet-4-0":                            false,
		"claude-opus-4-20250514":                       false,
		"claude-opus-4-1":                              false,
		"claude-opus-4-1-20250805":                     false,
		"claude-3-5-haiku-20241022":                    false,
		"claude-3-7-sonnet-latest":                     false,
		"claude-3-opus-20240229":                       false,
		"anthropic.claude-3-5-sonnet-20240620-v1:0":    false,
	} {
		c, err := New("http://127.0.0.1:1", model)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Features().DefersTools; got != want {
			t.Errorf("%s: DefersTools %v, want %v", model, got, want)
		}
	}
}

// TestToolSearchRefused: a model not known as Claude's keeps its deferred
// tools; when the API refuses them, the error says to use the rerender
// disclosure, and stays a *StatusError.
func TestToolSearchRefused(t *testing.T) {
	refusal := "tools.1: tool type 'tool_search_tool_regex_20251119' is not supported by this model"
	srv := scripted.NewMessages(t, scripted.Reply{Status: 400, Error: refusal}, scripted.Reply{Status: 400, Error: "messages: roles must alternate"})
	c, err := New(srv.URL, "house-model", WithAPIKey("k"))
	if err != nil {
		t.Fatal(err)
	}
	help := agent.ToolDef{Name: "help", Description: "Help.", Parameters: []byte(`{"type":"object","properties":{}}`)}
	req := agent.Request{Messages: hello, Tools: []agent.ToolDef{help}, Deferred: []agent.ToolGroup{deployGroup}}
	_, err = c.Complete(context.Background(), req)
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != 400 || !strings.Contains(err.Error(), refusal) || !strings.Contains(err.Error(), "--disclosure rerender") {
		t.Errorf("got %v, want the refusal and --disclosure rerender named", err)
	}
	if _, err := c.Complete(context.Background(), req); err == nil || strings.Contains(err.Error(), "rerender") {
		t.Errorf("another 400: got %v, want it as it came", err)
	}
}
