package prompt_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tokens"
	"github.com/unfold-dev/unfold/tokens/bpe"
	"github.com/unfold-dev/unfold/tools"
	"github.com/unfold-dev/unfold/visibility"
)

// genParams are the params of generated trees. A body that calls Fail
// fails to render unless On.
type genParams struct {
	Name string
	On   bool
}

func (p genParams) Fail() (string, error) {
	if !p.On {
		return "", errors.New("not now")
	}
	return "fine", nil
}

var genWords = strings.Fields(`the release of a prompt with 42 steps, each one short; "quoted" /path # and more words to fill it`)

func genText(rng *rand.Rand, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			if rng.Intn(12) == 0 {
				b.WriteString("\n\n")
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteString(genWords[rng.Intn(len(genWords))])
	}
	return b.String()
}

// genSections builds a random tree: bodies fixed, templates, failing
// templates and Content; summaries (some templates), briefs, sections
// summarized by default, disabled, with tools; priorities from -2 to 3.
func genSections(rng *rand.Rand, depth int, prefix string) []*section.Section {
	n := rng.Intn(5)
	if depth == 0 {
		n = 1 + rng.Intn(6)
	}
	var out []*section.Section
	for i := range n {
		spec := section.Spec[genParams]{Key: fmt.Sprintf("k%d", i), Title: fmt.Sprintf("T %s%d", prefix, i), Priority: rng.Intn(6) - 2}
		switch rng.Intn(5) {
		case 0:
		case 1:
			spec.Body = genText(rng, 1+rng.Intn(80))
		case 2:
			spec.Body = "{{.Fail}} " + genText(rng, 5)
		default:
			spec.Body = "{{.Name}} " + genText(rng, 1+rng.Intn(40))
		}
		if rng.Intn(10) < 7 {
			spec.Summary = genText(rng, 1+rng.Intn(25))
			if rng.Intn(3) == 0 {
				spec.Summary = "{{.Name}}: " + spec.Summary
			}
			if rng.Intn(3) == 0 {
				spec.Brief = genText(rng, 1+rng.Intn(4))
			}
			if rng.Intn(5) == 0 {
				spec.Visibility = visibility.Const(visibility.Summary)
			}
		}
		if rng.Intn(12) == 0 {
			spec.Enabled = func(p genParams) bool { return p.On }
		}
		if rng.Intn(15) == 0 {
			name := "t_" + strings.ReplaceAll(prefix, ".", "_") + fmt.Sprint(i)
			spec.Tools = []*tools.Tool{tools.MustNew(name, "A tool.", func(context.Context, tools.Context, struct{}) (struct{}, error) { return struct{}{}, nil })}
		}
		if rng.Intn(12) == 0 {
			content := genText(rng, 1+rng.Intn(30))
			spec.Body, spec.Content = "", func(genParams) (string, error) { return content, nil }
		}
		if depth < 3 {
			spec.Children = genSections(rng, depth+1, fmt.Sprintf("%s%d.", prefix, i))
		}
		out = append(out, section.New(spec))
	}
	return out
}

// fitView is what a fit gives: its report, text and count, or its error.
func fitView(r *prompt.Rendered, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	report, _ := json.MarshalIndent(r.Report(), "", " ")
	var names []string
	for _, tool := range r.Tools() {
		names = append(names, tool.Name())
	}
	return fmt.Sprintf("%d tokens, tools %v\n%s\n%s", r.Tokens(), names, report, r.Text())
}

// fitCase is a tree to fit: its template, the params to bind, the session
// to render with (nil for none).
type fitCase struct {
	tmpl   *prompt.Template
	params []any
	sess   *session.Session
}

// TestBudgetFitAgain: a prompt fitted again, into budgets in any order,
// gives at each budget the prompt a new one gives. What a fit keeps from
// the ones before (counts, bounds, the blocks it wrote, the floors of
// sections' children) changes its work, never its result, nor which
// section's failure fails it. Generated trees mix failing bodies, Content,
// briefs, tools, disabled sections and sections the session opened.
func TestBudgetFitAgain(t *testing.T) {
	cases := map[string]func(t *testing.T) fitCase{
		"fixture": func(*testing.T) fitCase { return fitCase{tmpl: budgetFixture().Template()} },
		"thousand": func(*testing.T) fitCase {
			return fitCase{tmpl: prompt.MustNew("bench", "budget", budgetSections()...), params: []any{benchBind}}
		},
	}
	for seed := range 60 {
		cases[fmt.Sprintf("generated/%d", seed)] = func(t *testing.T) fitCase {
			rng := rand.New(rand.NewSource(int64(seed)))
			tmpl, err := prompt.New("test", "generated", genSections(rng, 0, "")...)
			if err != nil {
				t.Fatal(err)
			}
			c := fitCase{tmpl: tmpl, params: []any{genParams{Name: "N", On: rng.Intn(2) == 0}}}
			if rng.Intn(3) == 0 {
				// Sections the session opened, which a budget never summarizes.
				c.sess = session.New()
				paths := tmpl.Paths()
				r, err := tmpl.MustBind(c.params...).Render(c.sess, nil)
				if err == nil {
					// A disabled section cannot be opened; then none is.
					if ov, err := r.Open(paths[rng.Intn(len(paths))], paths[rng.Intn(len(paths))]); err == nil {
						if err := ov.Apply(c.sess); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			return c
		}
	}
	counters := map[string]tokens.Counter{"bounded": bpe.O200kBase(), "counted": countOnly{bpe.O200kBase()}}
	for name, newCase := range cases {
		for cname, counter := range counters {
			t.Run(name+"/"+cname, func(t *testing.T) {
				c := newCase(t)
				full := 2000
				if r, err := c.tmpl.MustBind(c.params...).Render(c.sess, nil, prompt.WithTokens(counter)); err == nil {
					full = r.Tokens()
				}
				var budgets []int
				wants := map[int]string{}
				for _, pct := range []int{2, 10, 25, 40, 55, 70, 85, 95, 100, 120} {
					budget := max(1, full*pct/100)
					budgets = append(budgets, budget)
					wants[budget] = fitView(c.tmpl.MustBind(c.params...).Render(c.sess, nil, prompt.WithBudget(budget, counter)))
				}
				// Up and down, so each budget follows fits into smaller
				// and into larger ones.
				again := c.tmpl.MustBind(c.params...)
				for i, budget := range append(budgets, reversed(budgets)...) {
					got, want := fitView(again.Render(c.sess, nil, prompt.WithBudget(budget, counter))), wants[budget]
					if got != want {
						t.Fatalf("fit %d, into %d tokens: a prompt fitted again gives\n%s\nwant, as a new prompt gives:\n%s", i+1, budget, got, want)
					}
				}
			})
		}
	}
}

func reversed(s []int) []int {
	out := make([]int, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}
