package prompttest_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/prompttest"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/tokens"
	"github.com/unfold-dev/unfold/visibility"
)

func fixture() *prompt.Prompt {
	return prompt.MustNew("test", "prompttest",
		section.New(section.Spec[section.None]{Key: "task", Title: "Task", Body: "Do the thing."}),
		section.New(section.Spec[section.None]{Key: "guide", Title: "Guide", Body: strings.Repeat("guide ", 60),
			Summary: "A guide.", Visibility: visibility.Const(visibility.Summary)}),
		section.New(section.Spec[section.None]{Key: "ref", Title: "Reference", Body: strings.Repeat("ref ", 150), Summary: "Docs."}),
	).MustBind()
}

func TestCombinations(t *testing.T) {
	cases := prompttest.Combinations(t, fixture(), prompttest.Options{Budgets: []int{0, 150, 10}, Counter: tokens.Estimate})
	if len(cases) != 4*3 {
		t.Fatalf("got %d cases, want 12 (4 combinations x 3 budgets)", len(cases))
	}
	names := map[string]bool{}
	for _, c := range cases {
		names[c.Name] = true
		prompttest.Golden(t, "combinations/"+c.Name+".md", c.Text())
		switch c.Budget {
		case 10:
			if !errors.Is(c.Err, prompt.ErrOverBudget) {
				t.Errorf("%s: got %v, want a budget error", c.Name, c.Err)
			}
		case 150:
			// guide is declared SUMMARY, so guide=full is an opened section
			// the budget keeps; ref is declared FULL and the budget may
			// demote it.
			if c.Err != nil {
				if !errors.Is(c.Err, prompt.ErrOverBudget) || strings.HasPrefix(c.Name, "guide=summary") {
					t.Errorf("%s: %v", c.Name, c.Err)
				}
				continue
			}
			prompttest.TokensAtMost(t, c.Rendered, tokens.Estimate, 150)
			if c.Name == "guide=summary,ref=full@150" {
				for _, s := range c.Rendered.Report() {
					if s.Path == "ref" && s.Why != visibility.Budget {
						t.Errorf("ref: got why %v, want the budget to demote it", s.Why)
					}
				}
			}
		}
	}
	for _, want := range []string{"guide=full,ref=full", "guide=summary,ref=summary@150", "guide=full,ref=summary@10"} {
		if !names[want] {
			t.Errorf("no case named %q in %v", want, names)
		}
	}
}

func TestCombinationsSample(t *testing.T) {
	var secs []*section.Section
	for i := range 10 {
		secs = append(secs, section.New(section.Spec[section.None]{Key: "s" + string(rune('a'+i)), Title: "S", Body: "b", Summary: "s"}))
	}
	p := prompt.MustNew("test", "many", secs...).MustBind()
	cases := prompttest.Combinations(t, p, prompttest.Options{MaxCombinations: 16})
	if len(cases) != 16 {
		t.Fatalf("got %d cases, want a sample of 16", len(cases))
	}
	again := prompttest.Combinations(t, p, prompttest.Options{MaxCombinations: 16})
	for i := range cases {
		if cases[i].Name != again[i].Name {
			t.Fatalf("sample is not deterministic: %s vs %s", cases[i].Name, again[i].Name)
		}
	}
	if !strings.Contains(cases[0].Name, "sa=summary") || !strings.Contains(cases[1].Name, "sa=full") {
		t.Errorf("the sample must start with all summarized and all open, got %s, %s", cases[0].Name, cases[1].Name)
	}
}

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	failed []string
}

func (r *recorder) Helper()                           {}
func (r *recorder) Errorf(format string, args ...any) { r.failed = append(r.failed, format) }
func (r *recorder) Fatalf(format string, args ...any) { r.failed = append(r.failed, format) }

func TestTokenAssertions(t *testing.T) {
	r, err := fixture().Render(nil, nil, prompt.WithTokens(tokens.Estimate))
	if err != nil {
		t.Fatal(err)
	}
	n := tokens.Estimate.Count(r.Text())
	rec := &recorder{TB: t}
	prompttest.TokensAtMost(rec, r, tokens.Estimate, n)
	prompttest.TokensBetween(rec, r, tokens.Estimate, n, n)
	prompttest.SectionTokensAtMost(rec, r, "ref", 1000)
	if len(rec.failed) != 0 {
		t.Errorf("assertions that hold failed: %v", rec.failed)
	}
	prompttest.TokensAtMost(rec, r, tokens.Estimate, n-1)
	prompttest.TokensBetween(rec, r, tokens.Estimate, n+1, n+5)
	prompttest.SectionTokensAtMost(rec, r, "ref", 1)
	prompttest.SectionTokensAtMost(rec, r, "nope", 1)
	if len(rec.failed) != 4 {
		t.Errorf("got %d failures, want 4: %v", len(rec.failed), rec.failed)
	}
}
