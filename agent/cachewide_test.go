package agent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/agent/anthropic"
	"github.com/unfold-dev/unfold/agent/internal/scripted"
	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/tools"
)

type wideIn struct {
	S string `json:"s"`
}

// TestWideStepsReadTheCache: steps of many parallel calls add two blocks
// a call, more than the 20 blocks the Messages API looks back from a
// breakpoint for a written prefix; each request still reads from the
// cache all of the request before it, and none carries more than four
// breakpoints.
func TestWideStepsReadTheCache(t *testing.T) {
	echo := tools.MustNew("echo", "Echo s.", func(_ context.Context, _ tools.Context, in wideIn) (string, error) { return "echo " + in.S, nil })
	p := prompt.MustNew("wide", "task", section.New(section.Spec[section.None]{Key: "task", Title: "Task",
		Body: strings.Repeat("Be careful and thorough. ", 600), Tools: []*tools.Tool{echo}})).MustBind()
	for _, n := range []int{3, 12, 30} {
		t.Run(fmt.Sprintf("%d calls a step", n), func(t *testing.T) {
			var replies []scripted.Reply
			for s := range 3 {
				k := n
				if s == 0 {
					k = 1
				}
				var cs []scripted.Call
				for i := range k {
					cs = append(cs, call(fmt.Sprintf("toolu_%d_%d", s, i), "echo", `{"s":"`+strings.Repeat("x", 400)+`"}`))
				}
				replies = append(replies, scripted.Calls(cs...))
			}
			replies = append(replies, scripted.Text("done"))
			srv := scripted.NewMessages(t, replies...)
			srv.SimulateCache()
			m, err := anthropic.New(srv.URL, "claude-sonnet-4-5", anthropic.WithAPIKey("k"))
			if err != nil {
				t.Fatal(err)
			}
			var steps []agent.Usage
			a, err := agent.New(m, p, agent.WithOnProgress(func(p agent.Progress) {
				if p.Kind == "model" {
					steps = append(steps, p.StepUsage)
				}
			}))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.Run(context.Background(), "go"); err != nil {
				t.Fatal(err)
			}
			if v := srv.Violations(); len(v) > 0 {
				t.Fatalf("requests broke the documented shape: %v", v)
			}
			for i, b := range srv.Bodies() {
				if c := strings.Count(string(b), `"cache_control"`); c > 4 {
					t.Errorf("request %d: %d cache_control breakpoints, want at most 4", i+1, c)
				}
			}
			if len(steps) != 4 {
				t.Fatalf("got %d steps, want 4", len(steps))
			}
			for i := 1; i < len(steps); i++ {
				if got, want := steps[i].CachedTokens, steps[i-1].PromptTokens; got != want {
					t.Errorf("request %d read %d tokens from the cache, want %d: all of request %d (usage %+v)", i+1, got, want, i, steps)
				}
			}
		})
	}
}
