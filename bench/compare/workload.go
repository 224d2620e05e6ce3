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
	w.Budget = budgetSpecs(50)
	return w
}

// budgetSpecs is the budget workload's tree with parts parts of 19 steps
// (20 sections a part), every one with a summary and a priority.
func budgetSpecs(parts int) []*spec {
	out := make([]*spec, 0, parts)
	for i := range parts {
		top := &spec{Key: fmt.Sprintf("part-%d", i), Title: fmt.Sprintf("Part %d", i), Body: budgetBody,
			Summary: "Part details on request.", Priority: 3 + i%4}
		for j := range 19 {
			top.Children = append(top.Children, &spec{Key: fmt.Sprintf("step-%d", j), Title: fmt.Sprintf("Step %d", j),
				Body: budgetBody, Summary: "Step details on request.", Priority: (i + j) % 7})
		}
		out = append(out, top)
	}
	return out
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

// Generations number the fresh inputs of a workload: each timed iteration
// renders the next one, the Go side counting from goGen and the Node.js side
// from peerGen, and the text checks use checkGen. The numbers have as many
// digits, so every generation's text is as long.
const (
	goGen    = 1_000_000
	peerGen  = 2_000_000
	checkGen = 3_000_000
)

// fresh returns a copy of specs whose bodies end with a line naming gen and
// the section's path ("Revision 1000001 of part-3.step-2."), so that no two
// sections, in no two iterations, share a body: each iteration compiles its
// templates, as the peers fill theirs, and no cache keyed by a body's text
// serves it. peer.cjs makes the same bodies.
func fresh(specs []*spec, gen int, prefix string) []*spec {
	out := make([]*spec, len(specs))
	for i, s := range specs {
		path := s.Key
		if prefix != "" {
			path = prefix + "." + s.Key
		}
		c := *s
		c.Body = fmt.Sprintf("%s\n\nRevision %d of %s.", strings.TrimRight(s.Body, " \n"), gen, path)
		c.Children = fresh(s.Children, gen, path)
		out[i] = &c
	}
	return out
}
