package prompt_test

import (
	"errors"
	"fmt"
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

// styleGuide is the shape of cmd/unfold's sample prompt: short sections,
// two declared SUMMARY, one of them (style) with a summary and suffix that
// cost more than its content.
func styleGuide() *prompt.Prompt {
	return prompt.MustNew("test", "guide",
		section.New(section.Spec[none]{Key: "task", Title: "Task", Body: "Complete the following task: review the patch"}),
		section.New(section.Spec[none]{Key: "rules", Title: "Rules", Priority: 5, Body: "- Answer in English.\n- Keep it short.",
			Children: []*section.Section{
				section.New(section.Spec[none]{Key: "style", Title: "Code Style", Priority: 1,
					Body: "Use tabs. Name things for what they are.", Summary: "A style guide is available.",
					Visibility: visibility.Const(visibility.Summary)}),
				section.New(section.Spec[none]{Key: "naming", Title: "Naming", Body: "Short names in small scopes.", Summary: "Naming rules."}),
			}}),
		section.New(section.Spec[none]{Key: "reference", Title: "Reference", Priority: 2, Body: "Reference intro.",
			Summary: "API docs on request.", Visibility: visibility.Const(visibility.Summary),
			Children: []*section.Section{
				section.New(section.Spec[none]{Key: "calls", Title: "Calls", Priority: 3, Summary: "Call semantics.",
					Body:     strings.Repeat("Every call returns an error; check it before you use the result. ", 4),
					Children: []*section.Section{text("retries", "Retries", "Retry on 429 with backoff.")}}),
			}}),
	).MustBind()
}

// reportSum adds up the tokens of the report's visible sections.
func reportSum(r *prompt.Rendered) int {
	sum := 0
	for _, s := range r.Report() {
		if s.Visible {
			sum += s.Tokens
		}
	}
	return sum
}

// TestOneCount: for the same prompt and counter, the report's section
// counts (what `unfold render --tree` prints), the prompt's own count and
// the budget's smallest reachable prompt agree exactly, and a budget equal
// to a prompt's count is met.
func TestOneCount(t *testing.T) {
	trees := map[string]func() *prompt.Prompt{
		"guide":   styleGuide,
		"fixture": budgetFixture,
		"thousand": func() *prompt.Prompt {
			return prompt.MustNew("bench", "budget", budgetSections()...).MustBind(benchBind)
		},
	}
	counters := map[string]tokens.Counter{"o200k": bpe.O200kBase(), "cl100k": bpe.Cl100kBase(), "estimate": tokens.Estimate}
	for tn, tree := range trees {
		for cn, c := range counters {
			t.Run(tn+"/"+cn, func(t *testing.T) {
				p := tree()
				r, err := p.Render(nil, nil, prompt.WithTokens(c))
				if err != nil {
					t.Fatal(err)
				}
				if got, text := reportSum(r), c.Count(r.Text()); r.Tokens() != text || got != text {
					t.Errorf("no budget: the report adds up to %d and Tokens() is %d; the text counts %d", got, r.Tokens(), text)
				}
				_, err = p.Render(nil, nil, prompt.WithBudget(1, c))
				var be *prompt.BudgetError
				if !errors.As(err, &be) {
					t.Fatalf("budget 1: got %v, want a *BudgetError", err)
				}
				small, err := p.Render(nil, nil, prompt.WithBudget(be.Minimum, c))
				if err != nil {
					t.Fatalf("a budget of the smallest reachable prompt (%d): %v", be.Minimum, err)
				}
				if got, text := reportSum(small), c.Count(small.Text()); small.Tokens() != be.Minimum || text != be.Minimum || got != be.Minimum {
					t.Errorf("smallest reachable %d: rendered into it, Tokens() is %d, the report adds up to %d and the text counts %d",
						be.Minimum, small.Tokens(), got, text)
				}
				if _, err := p.Render(nil, nil, prompt.WithBudget(be.Minimum-1, c)); !errors.As(err, &be) {
					t.Errorf("one token under the smallest reachable prompt: got %v, want a *BudgetError", err)
				}
				for _, budget := range []int{be.Minimum + 7, (be.Minimum + r.Tokens()) / 2, r.Tokens()} {
					got, err := p.Render(nil, nil, prompt.WithBudget(budget, c))
					if err != nil {
						t.Fatalf("budget %d: %v", budget, err)
					}
					if sum, text := reportSum(got), c.Count(got.Text()); got.Tokens() != text || sum != text || text > budget {
						t.Errorf("budget %d: Tokens() %d, the report adds up to %d, the text counts %d", budget, got.Tokens(), sum, text)
					}
				}
			})
		}
	}
}

// TestSummaryNeverCostsMore: under a budget, a section whose content costs
// no more than its summary shows its content, whatever its declared mode,
// unless opening it would offer tools or the session summarized it.
func TestSummaryNeverCostsMore(t *testing.T) {
	c := bpe.O200kBase()
	p := styleGuide()
	r, err := p.Render(nil, nil, prompt.WithBudget(1000, c))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]prompt.SectionReport{}
	for _, s := range r.Report() {
		rows[s.Path] = s
	}
	if s := rows["rules.style"]; s.Mode != visibility.Full || s.Why != visibility.Budget {
		t.Errorf("rules.style: got %v/%v, want FULL/budget: its content costs less than its summary", s.Mode, s.Why)
	}
	if s := rows["reference"]; s.Mode != visibility.Summary || s.Why != visibility.Declared {
		t.Errorf("reference: got %v/%v, want SUMMARY/declared: its content costs more", s.Mode, s.Why)
	}
	if !strings.Contains(r.Text(), "### 2.1. Code Style (rules.style)\n\nUse tabs.") {
		t.Errorf("got text\n%s\nwant rules.style in full", r.Text())
	}

	t.Run("every summary shown costs less than its content", func(t *testing.T) {
		for _, budget := range []int{150, 200, 300, 500, 1000} {
			r, err := p.Render(nil, nil, prompt.WithBudget(budget, c))
			if err != nil {
				continue
			}
			for _, s := range r.Report() {
				if !s.Visible || s.Mode != visibility.Summary {
					continue
				}
				full := openedCost(t, p, s.Path, c)
				if full <= s.Tokens {
					t.Errorf("budget %d: %s shows a summary of %d tokens for content of %d", budget, s.Path, s.Tokens, full)
				}
			}
		}
	})
	t.Run("not when it would offer tools", func(t *testing.T) {
		p := prompt.MustNew("test", "tools",
			section.New(section.Spec[none]{Key: "run", Title: "Run", Body: "Runs.", Summary: "Running things, and more words to outweigh the body.",
				Visibility: visibility.Const(visibility.Summary), Tools: []*tools.Tool{echoTool("run")}}),
		).MustBind()
		r, err := p.Render(nil, nil, prompt.WithBudget(1000, c))
		if err != nil {
			t.Fatal(err)
		}
		if rep := r.Report()[0]; rep.Mode != visibility.Summary || r.Tool("run") != nil {
			t.Errorf("got %v with tools %d, want SUMMARY and no run tool", rep.Mode, len(r.Tools()))
		}
	})
}

// openedCost is what the section at path costs shown in full with its
// children as the prompt declares them: its block and its children's.
func openedCost(t *testing.T, p *prompt.Prompt, path string, c tokens.Counter) int {
	t.Helper()
	sess := sessionOpening(t, path)
	r, err := p.Render(sess, nil, prompt.WithTokens(c))
	if err != nil {
		t.Fatal(err)
	}
	sum := 0
	for _, s := range r.Report() {
		if s.Visible && (s.Path == path || strings.HasPrefix(s.Path, path+".")) {
			sum += s.Tokens
		}
	}
	return sum
}

// TestCompactSuffix: a budget that cannot show a section in full with the
// default suffixes' child keys shows it with compact ones, and gives the
// default suffix back where room is left.
func TestCompactSuffix(t *testing.T) {
	c := bpe.O200kBase()
	p := prompt.MustNew("bench", "budget", budgetSections()...).MustBind(benchBind)
	r, err := p.Render(nil, nil, prompt.WithBudget(4000, c))
	if err != nil {
		t.Fatal(err)
	}
	compact, def := 0, 0
	for _, s := range r.Report() {
		if !s.Visible || s.Mode != visibility.Summary || s.Depth != 0 {
			continue
		}
		switch {
		case strings.Contains(r.Text(), fmt.Sprintf("with key %q to write content (including 19 subsections)", s.Path)):
			compact++
		case strings.Contains(r.Text(), fmt.Sprintf("with key %q to write content (including subsections: step-0, step-1,", s.Path)):
			def++
		default:
			t.Errorf("%s: no suffix found", s.Path)
		}
	}
	if compact == 0 || def == 0 {
		t.Errorf("got %d compact and %d default suffixes, want some of each at 4,000 tokens", compact, def)
	}
	if fill := float64(r.Tokens()) / 4000; fill < 0.97 {
		t.Errorf("filled %.1f%% of the budget, want at least 97%%", fill*100)
	}
	// Without a budget the default suffix stays.
	r, err = p.Render(nil, nil, prompt.WithTokens(c))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(r.Text(), " subsections)") {
		t.Error("a render without a budget uses the compact suffix")
	}
}

// sessionOpening returns a session that opens the section at path.
func sessionOpening(t *testing.T, path string) *session.Session {
	t.Helper()
	sess := session.New()
	if err := visibility.Register(sess); err != nil {
		t.Fatal(err)
	}
	if err := sess.Dispatch(visibility.SetOverride{Path: path, Mode: visibility.Full}); err != nil {
		t.Fatal(err)
	}
	return sess
}

// failing is params whose template method fails.
type failing struct{}

func (failing) Fail() (string, error) { return "", errors.New("not now") }

// TestBudgetSkipsBodiesItNeedNotShow: a summarized section whose body fails
// to render is left summarized by a budget, as without one, instead of
// failing the render.
func TestBudgetSkipsBodiesItNeedNotShow(t *testing.T) {
	broken := section.New(section.Spec[failing]{Key: "broken", Title: "Broken", Body: "{{.Fail}}", Summary: "S.",
		Visibility: visibility.Const(visibility.Summary)})
	p := prompt.MustNew("test", "broken",
		section.New(section.Spec[none]{Key: "top", Title: "Top", Body: "Top.", Summary: "T.", Children: []*section.Section{broken}}),
		text("after", "After", "After."),
	).MustBind(failing{})
	for _, budget := range []int{0, 1000} {
		r, err := p.Render(nil, nil, prompt.WithBudget(budget, bpe.O200kBase()))
		if err != nil {
			t.Fatalf("budget %d: %v", budget, err)
		}
		if !strings.Contains(r.Text(), "S.\n\n---\n[This section is summarized.") {
			t.Errorf("budget %d: got\n%s\nwant broken summarized", budget, r.Text())
		}
	}
}

// joinTax counts what Estimate does plus 3 tokens for each blank line
// before a heading, so that a text costs more than its blocks: it is not
// tokens.Additive.
type joinTax struct{}

func (joinTax) Count(s string) int {
	return tokens.Estimate.Count(s) + 3*strings.Count(s, "\n\n#")
}

// TestBudgetCounterNotAdditive: with a counter whose counts do not add up,
// the prompt's count is its text's, and a budget is still met, by
// summarizing further when the text is over.
func TestBudgetCounterNotAdditive(t *testing.T) {
	p := prompt.MustNew("bench", "budget", budgetSections()...).MustBind(benchBind)
	full, err := p.Render(nil, nil, prompt.WithTokens(joinTax{}))
	if err != nil {
		t.Fatal(err)
	}
	if got := (joinTax{}).Count(full.Text()); full.Tokens() != got {
		t.Errorf("no budget: Tokens() %d, the text counts %d", full.Tokens(), got)
	}
	for _, budget := range []int{8000, 20000, full.Tokens() - 1} {
		r, err := p.Render(nil, nil, prompt.WithBudget(budget, joinTax{}))
		if err != nil {
			t.Fatalf("budget %d: %v", budget, err)
		}
		if got := (joinTax{}).Count(r.Text()); r.Tokens() != got || got > budget {
			t.Errorf("budget %d: Tokens() %d, the text counts %d", budget, r.Tokens(), got)
		}
	}
	_, err = p.Render(nil, nil, prompt.WithBudget(100, joinTax{}))
	var be *prompt.BudgetError
	if !errors.As(err, &be) {
		t.Fatalf("got %v, want a *BudgetError", err)
	}
	small, err := p.Render(nil, nil, prompt.WithBudget(be.Minimum, joinTax{}))
	if err != nil {
		t.Fatalf("a budget of the smallest reachable prompt (%d): %v", be.Minimum, err)
	}
	if small.Tokens() != be.Minimum {
		t.Errorf("the smallest reachable prompt: got %d tokens, want %d", small.Tokens(), be.Minimum)
	}
}
