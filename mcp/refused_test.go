package mcp_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/mcp"
	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/tools"
	"github.com/unfold-dev/unfold/visibility"
)

// TestRefusedOpeningIsAToolError: an opening whose render fails (here a
// section whose content cannot be computed) is an MCP tool error that
// says so; nothing opens, and the server goes on serving.
func TestRefusedOpeningIsAToolError(t *testing.T) {
	probe := tools.MustNew("probe", "Probes the feed.", func(context.Context, tools.Context, struct{}) (string, error) { return "ok", nil })
	tmpl, err := prompt.New("test", "feed",
		section.New(section.Spec[section.None]{Key: "task", Title: "Task", Body: "Watch the feed."}),
		section.New(section.Spec[section.None]{Key: "feed", Title: "Feed", Summary: "The live feed.",
			Visibility: visibility.Const(visibility.Summary), Tools: []*tools.Tool{probe},
			Content: func(section.None) (string, error) { return "", errors.New("the feed is down") }}),
	)
	if err != nil {
		t.Fatal(err)
	}
	_, c := setup(t, mcp.Options{Prompt: tmpl}, withCounter(t))
	res := call(t, c, prompt.OpenSectionsName, prompt.OpenSectionsInput{SectionKeys: []string{"feed"}, Reason: "watch"})
	got := strings.Join(texts(res), "\n")
	if !res.IsError || !strings.HasPrefix(got, "Section feed could not be opened: ") || !strings.Contains(got, "the feed is down") {
		t.Errorf("got isError %v %q, want the refused opening", res.IsError, got)
	}
	offered := toolNames(listTools(t, c))
	if strings.Contains(strings.Join(offered, ","), "probe") {
		t.Errorf("got tools %v: the refused section's tool is offered", offered)
	}
	if out := structured(t, call(t, c, "counter", map[string]any{"command": "add 2"})); !out.Success || out.Output != "Total: 2" {
		t.Errorf("after the refused opening: got %+v, want the counter to work", out)
	}
}
