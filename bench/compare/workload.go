package main

import (
	"fmt"
	"strings"

	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/visibility"
)

// params are the template parameters every section is bound with.
type params struct {
	Project string
	Owner   string
}

// spec is one section of a workload, as both sides build it: the Go side
// into a section.Section, the Node.js side into a prompt-tsx element.
type spec struct {
	Key        string  `json:"key"`
	Title      string  `json:"title"`
	Body       string  `json:"body"`
	Summary    string  `json:"summary,omitempty"`
	Summarized bool    `json:"summarized,omitempty"`
	Priority   int     `json:"priority"`
	Children   []*spec `json:"children,omitempty"`
}

// workload is the input both sides share, written to a JSON file for the
// Node.js worker.
type workload struct {
	Params       params  `json:"params"`
	Render       []*spec `json:"render"`
	Budget       []*spec `json:"budget"`
	BudgetTokens int     `json:"budgetTokens"`
}

// renderBody is prompt's BenchmarkRender body: a few hundred bytes of prose
// with two template fields.
var renderBody = strings.Repeat("This paragraph explains one part of the task for {{.Project}} in plain words. ", 3) +
	"\n\nAsk {{.Owner}} before changing anything that ships.\n\n- keep changes small\n- test what you touch\n"

// budgetBody is prompt's BenchmarkRenderBudget body.
var budgetBody = strings.Repeat("Section {{.Project}} explains one step of the release in plain words for {{.Owner}}. ", 2) + "\n\n- check logs"

func newWorkload() *workload {
	w := &workload{
		Params:       params{Project: "unfold", Owner: "the release owner"},
		BudgetTokens: 8000,
	}
	// render: 50 x 20, every second child summarized.
	for i := range 50 {
		top := &spec{Key: fmt.Sprintf("section-%d", i), Title: fmt.Sprintf("Section %d", i), Body: renderBody}
		for j := range 20 {
			c := &spec{Key: fmt.Sprintf("child-%d", j), Title: fmt.Sprintf("Child %d", j), Body: renderBody}
			if j%2 == 1 {
				c.Summary = "A summary of this child, available on request."
				c.Summarized = true
			}
			top.Children = append(top.Children, c)
		}
		w.Render = append(w.Render, top)
	}
	// budget: 50 x 19 (1,000 sections), every one with a summary and a
	// priority.
	for i := range 50 {
		top := &spec{Key: fmt.Sprintf("part-%d", i), Title: fmt.Sprintf("Part %d", i), Body: budgetBody,
			Summary: "Part details on request.", Priority: 3 + i%4}
		for j := range 19 {
			top.Children = append(top.Children, &spec{Key: fmt.Sprintf("step-%d", j), Title: fmt.Sprintf("Step %d", j),
				Body: budgetBody, Summary: "Step details on request.", Priority: (i + j) % 7})
		}
		w.Budget = append(w.Budget, top)
	}
	return w
}

// sections builds the Go side of a workload's tree.
func sections(specs []*spec) []*section.Section {
	out := make([]*section.Section, len(specs))
	for i, s := range specs {
		sp := section.Spec[params]{Key: s.Key, Title: s.Title, Body: s.Body, Summary: s.Summary,
			Priority: s.Priority, Children: sections(s.Children)}
		if s.Summarized {
			sp.Visibility = visibility.Const(visibility.Summary)
		}
		out[i] = section.New(sp)
	}
	return out
}
