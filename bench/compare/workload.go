package main

import (
	"fmt"
	"math/rand/v2"
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

// markdown returns about size bytes of mixed markdown: headings, prose,
// lists, tables, code in several languages, links, numbers, non-Latin
// scripts and emoji. The same seed gives the same text.
func markdown(size int) string {
	r := rand.New(rand.NewPCG(9, 9))
	words := strings.Fields(`the a of to and in is for that with on as by this be are from or it an at
		function return error value config server request response token budget prompt section render
		environment command output screen session event reducer snapshot orchestrator unfold parser`)
	pick := func() string { return words[r.IntN(len(words))] }
	var b strings.Builder
	b.Grow(size + 4096)
	for n := 0; b.Len() < size; n++ {
		switch n % 9 {
		case 0:
			w := pick()
			fmt.Fprintf(&b, "## %d. %s %s (%s.%s-%d)\n\n", n, strings.ToUpper(w[:1])+w[1:], pick(), pick(), pick(), n)
		case 1, 2:
			for range 3 + r.IntN(4) {
				s := make([]string, 8+r.IntN(12))
				for k := range s {
					s[k] = pick()
				}
				fmt.Fprintf(&b, "%s, %d%% of %s. ", strings.Join(s, " "), r.IntN(100), pick())
			}
			b.WriteString("\n\n")
		case 3:
			for k := range 4 {
				fmt.Fprintf(&b, "- [ ] %s `%s_%d()` — %s\n", pick(), pick(), k, pick())
			}
			b.WriteString("\n")
		case 4:
			fmt.Fprintf(&b, "```go\nfunc %s%d(ctx context.Context, in []byte) (int, error) {\n\tif len(in) > %d {\n\t\treturn 0, fmt.Errorf(\"%s: %%w\", ErrTooLong)\n\t}\n\treturn strconv.Atoi(string(in[:%d]))\n}\n```\n\n",
				pick(), n, r.IntN(4096), pick(), r.IntN(64))
		case 5:
			b.WriteString("| name | value | notes |\n| --- | ---: | --- |\n")
			for range 3 {
				fmt.Fprintf(&b, "| %s | %.3f | %s %s |\n", pick(), r.Float64()*1000, pick(), pick())
			}
			b.WriteString("\n")
		case 6:
			fmt.Fprintf(&b, "See [%s](https://example.com/%s/%d?q=%s#L%d) and <mailto:%s@example.org>.\n\n", pick(), pick(), n, pick(), r.IntN(900), pick())
		case 7:
			fmt.Fprintf(&b, "> 注意: %s を確認してください。Ελληνικά κείμενο, русский текст, عربي %d 🚀✨ café naïve\n\n", pick(), n)
		case 8:
			fmt.Fprintf(&b, "```python\ndef %s_%d(xs):\n    return {k: v ** 2 for k, v in enumerate(xs) if v %% %d}\n```\n\n", pick(), n, 2+r.IntN(7))
		}
	}
	return b.String()
}
