package agent_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/tools"
	"github.com/unfold-dev/unfold/visibility"
)

// The model opens a summarized section to get its tool, calls the tool and
// answers. A scripted model stands in for a real one (agent/openai).
func ExampleAgent_Run() {
	type addIn struct{ A, B int }
	add := tools.MustNew("add", "Add two integers.", func(_ context.Context, _ tools.Context, in addIn) (int, error) {
		return in.A + in.B, nil
	})
	p := prompt.MustNew("example", "agent",
		section.New(section.Spec[section.None]{Key: "task", Title: "Task", Body: "Answer with the help of the tools."}),
		section.New(section.Spec[section.None]{
			Key: "calc", Title: "Calculator", Body: "Use add to add numbers.",
			Summary: "A calculator is available.", Visibility: visibility.Const(visibility.Summary),
			Tools: []*tools.Tool{add},
		}),
	).MustBind()

	steps := []agent.Message{
		{ToolCalls: []agent.ToolCall{{ID: "1", Name: "open_sections", Arguments: `{"section_keys":["calc"],"reason":"I need to add"}`}}},
		{ToolCalls: []agent.ToolCall{{ID: "2", Name: "add", Arguments: `{"A":2,"B":40}`}}},
		{Content: "2 + 40 = 42"},
	}
	model := agent.ModelFunc(func(_ context.Context, req agent.Request) (agent.Response, error) {
		var offered []string
		for _, t := range req.Tools {
			offered = append(offered, t.Name)
		}
		fmt.Println("tools offered:", strings.Join(offered, ", "))
		if last := req.Messages[len(req.Messages)-1]; last.Role == agent.RoleTool {
			fmt.Println("  result:", last.Content)
		}
		next := steps[0]
		steps = steps[1:]
		return agent.Response{Message: next}, nil
	})

	a, err := agent.New(model, p)
	if err != nil {
		panic(err)
	}
	res, err := a.Run(context.Background(), "What is 2 + 40?")
	if err != nil {
		panic(err)
	}
	fmt.Println("answer:", res.Answer)
	// Output:
	// tools offered: open_sections
	// tools offered: add
	//   result: Opened sections: calc. New tools: add.
	// tools offered: add
	//   result: 42
	// answer: 2 + 40 = 42
}
