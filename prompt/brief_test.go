package prompt_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tokens"
	"github.com/unfold-dev/unfold/visibility"
)

// briefPrompt is a task and six summarized sections, each with a long
// summary and a brief.
func briefPrompt(t *testing.T) *prompt.Prompt {
	t.Helper()
	secs := []*section.Section{section.New(section.Spec[section.None]{Key: "task", Title: "Task", Body: "Pick the right tool."})}
	for i := range 6 {
		secs = append(secs, section.New(section.Spec[section.None]{
			// A body longer than the summary: a budget shows a summary
			// only where the content costs more.
			Key: fmt.Sprintf("tool-%d", i), Title: fmt.Sprintf("Tool %d", i), Body: strings.Repeat("How to use it, step by step. ", 20),
			Summary:    fmt.Sprintf("Tool %d does one thing well. ", i) + strings.Repeat("It is described at length here so that its summary costs tokens. ", 3),
			Brief:      fmt.Sprintf("Tool %d does one thing well. …", i),
			Visibility: visibility.Const(visibility.Summary),
		}))
	}
	return prompt.MustNew("test", "briefs", secs...).MustBind()
}

// shown counts the sections rendered with their summary and with their
// brief, and checks each is one of the two.
func shown(t *testing.T, r *prompt.Rendered) (summaries, briefs int, order string) {
	t.Helper()
	for _, s := range r.Report() {
		if !strings.HasPrefix(s.Path, "tool-") {
			continue
		}
		switch {
		case s.Brief && s.Why == visibility.Budget:
			briefs++
			order += "b"
		case !s.Brief && s.Mode == visibility.Summary && s.Why == visibility.Declared:
			summaries++
			order += "s"
		default:
			t.Errorf("%s: got mode %s, why %s, brief %v", s.Path, s.Mode, s.Why, s.Brief)
		}
	}
	return summaries, briefs, order
}

// TestBudgetBriefs: under a budget, the budget decides how many sections
// show their summary in full and how many their brief, earlier sections
// first at equal priority; without a budget, none is shortened.
func TestBudgetBriefs(t *testing.T) {
	p := briefPrompt(t)
	r, err := p.Render(session.New(), nil, prompt.WithTokens(tokens.Estimate))
	if err != nil {
		t.Fatal(err)
	}
	if s, b, _ := shown(t, r); s != 6 || b != 0 {
		t.Fatalf("no budget: got %d summaries and %d briefs, want 6 and 0", s, b)
	}
	all := r.Tokens()
	last, mixed := -1, 0
	for budget := all; ; budget -= 10 {
		r, err := p.Render(session.New(), nil, prompt.WithBudget(budget, tokens.Estimate))
		if errors.Is(err, prompt.ErrOverBudget) {
			if last != 0 {
				t.Errorf("budget %d: over budget while %d summaries still showed", budget, last)
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if r.Tokens() > budget {
			t.Fatalf("budget %d: got %d tokens", budget, r.Tokens())
		}
		s, b, order := shown(t, r)
		if s+b != 6 || strings.Contains(order, "bs") {
			t.Errorf("budget %d: got %q, want summaries first, then briefs", budget, order)
		}
		if last >= 0 && s > last {
			t.Errorf("budget %d: %d summaries, more than the %d a larger budget showed", budget, s, last)
		}
		for i := range 6 {
			key := fmt.Sprintf("tool-%d", i)
			full := strings.Contains(r.Text(), fmt.Sprintf("Tool %d does one thing well. It is described", i))
			brief := strings.Contains(r.Text(), fmt.Sprintf("Tool %d does one thing well. …\n\n---\n", i))
			if full == brief || !strings.Contains(r.Text(), `open_sections`+"` with key \""+key+`"`) {
				t.Errorf("budget %d: %s shows its summary %v, its brief %v, want one of them and how to open it", budget, key, full, brief)
			}
		}
		if s > 0 && b > 0 {
			mixed++
		}
		last = s
	}
	if mixed < 3 {
		t.Errorf("%d budgets showed some summaries and some briefs, want several", mixed)
	}
	if last != 0 {
		t.Errorf("the smallest budget that fits showed %d summaries, want 0: every brief", last)
	}
}

// TestBriefOfFullSection: a section in full with a summary and a brief goes
// to its summary, then to its brief, as the budget shrinks.
func TestBriefOfFullSection(t *testing.T) {
	p := prompt.MustNew("test", "full", section.New(section.Spec[section.None]{
		Key: "guide", Title: "Guide", Body: strings.Repeat("A long guide to the whole thing. ", 40),
		Summary: "The guide covers setup, use and repair, each in detail, with examples for every step.",
		Brief:   "A guide.",
	})).MustBind()
	for _, c := range []struct {
		budget int
		want   string
		mode   visibility.Mode
		brief  bool
	}{
		{400, "A long guide", visibility.Full, false},
		{100, "each in detail", visibility.Summary, false},
		{55, "A guide.\n\n---", visibility.Summary, true},
	} {
		r, err := p.Render(session.New(), nil, prompt.WithBudget(c.budget, tokens.Estimate))
		if err != nil {
			t.Fatalf("budget %d: %v", c.budget, err)
		}
		rep := r.Report()[0]
		if !strings.Contains(r.Text(), c.want) || rep.Mode != c.mode || rep.Brief != c.brief {
			t.Errorf("budget %d: got %s (brief %v, %d tokens):\n%s\nwant %s, brief %v, %q", c.budget, rep.Mode, rep.Brief, r.Tokens(), r.Text(), c.mode, c.brief, c.want)
		}
	}
}

// TestOpenBriefSection opens a section a budget shortened to its brief.
func TestOpenBriefSection(t *testing.T) {
	p := briefPrompt(t)
	// The smallest budget that fits: every section shows its brief.
	_, err := p.Render(session.New(), nil, prompt.WithBudget(1, tokens.Estimate))
	var be *prompt.BudgetError
	if !errors.As(err, &be) {
		t.Fatalf("budget 1: got %v, want a budget error", err)
	}
	fs := afero.NewMemMapFs()
	d, err := prompt.NewDisclosure(nil, fs, []prompt.Part{{Prompt: p, Options: []prompt.RenderOption{prompt.WithBudget(be.Minimum, tokens.Estimate)}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Render(); err != nil {
		t.Fatal(err)
	}
	if !d.Rendered(0).Report()[6].Brief {
		t.Fatalf("tool-5 under the budget: want its brief, got:\n%s", d.Rendered(0).Text())
	}
	op, err := d.Open(t.Context(), []string{"tool-5"}, "need it")
	if err != nil {
		t.Fatal(err)
	}
	data, err := afero.ReadFile(fs, "context/tool-5.md")
	if err != nil || strings.Join(op.Files, ",") != "context/tool-5.md" || string(data) != "## Tool 5 (tool-5)\n\n"+strings.TrimSpace(strings.Repeat("How to use it, step by step. ", 20))+"\n" {
		t.Errorf("open tool-5: got %v, %q, %v", op.Files, data, err)
	}
}

// TestBudgetBriefCostingMoreThanSummary: a brief is meant to be shorter
// than its summary, but only a count says which costs fewer tokens. A
// budget that the summary meets renders, with the summary, and the smallest
// prompt a BudgetError reports is the one with the summary.
func TestBudgetBriefCostingMoreThanSummary(t *testing.T) {
	for _, tc := range []struct{ name, summary, brief string }{
		{"longer brief", "Short.", "A brief that is longer than the summary it stands for, by a good margin."},
		// Fewer bytes, more tokens: digits cost more than a word.
		{"fewer bytes", "foo_baralpha", "b1234"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := section.New(section.Spec[section.None]{Key: "doc", Title: "Doc", Body: strings.Repeat("long body text ", 50),
				Summary: tc.summary, Brief: tc.brief})
			p := prompt.MustNew("test", "brief", doc).MustBind()
			sess := session.New()
			if err := (prompt.Overrides{"doc": visibility.Summary}).Apply(sess); err != nil {
				t.Fatal(err)
			}
			small, err := p.Render(sess, nil, prompt.WithTokens(tokens.Estimate))
			if err != nil {
				t.Fatal(err)
			}
			r, err := p.Render(nil, nil, prompt.WithBudget(small.Tokens(), tokens.Estimate))
			if err != nil {
				t.Fatalf("budget %d, met by the summary: %v", small.Tokens(), err)
			}
			if r.Text() != small.Text() {
				t.Errorf("got\n%s\nwant\n%s", r.Text(), small.Text())
			}
			if rep := r.Report()[0]; rep.Brief || rep.Mode != visibility.Summary || rep.Why != visibility.Budget {
				t.Errorf("got mode %s, why %s, brief %v; want SUMMARY, budget, not brief", rep.Mode, rep.Why, rep.Brief)
			}
			_, err = p.Render(nil, nil, prompt.WithBudget(small.Tokens()-1, tokens.Estimate))
			var be *prompt.BudgetError
			if !errors.As(err, &be) || be.Minimum != small.Tokens() {
				t.Errorf("budget %d: got %v, want a BudgetError with minimum %d", small.Tokens()-1, err, small.Tokens())
			}
		})
	}
}

// TestBriefCostingMoreKeepsDeclaredSummary: a section declared SUMMARY
// whose brief costs more than its summary shows its summary under any
// budget, as declared, not as the budget's.
func TestBriefCostingMoreKeepsDeclaredSummary(t *testing.T) {
	doc := section.New(section.Spec[section.None]{Key: "doc", Title: "Doc", Body: strings.Repeat("long body text ", 50),
		Summary: "Short.", Brief: "A brief that is longer than the summary it stands for, by a good margin.",
		Visibility: visibility.Const(visibility.Summary)})
	p := prompt.MustNew("test", "brief", doc).MustBind()
	small, err := p.Render(nil, nil, prompt.WithTokens(tokens.Estimate))
	if err != nil {
		t.Fatal(err)
	}
	r, err := p.Render(nil, nil, prompt.WithBudget(small.Tokens(), tokens.Estimate))
	if err != nil {
		t.Fatal(err)
	}
	if rep := r.Report()[0]; rep.Brief || rep.Mode != visibility.Summary || rep.Why != visibility.Declared {
		t.Errorf("got mode %s, why %s, brief %v; want SUMMARY, declared, not brief", rep.Mode, rep.Why, rep.Brief)
	}
}

// TestBudgetFallbackTakesCheaperSummary: with a counter whose counts do
// not add up, a prompt whose blocks fit but whose text does not has the
// budget summarize one more section as it ends: as the cheaper of its
// summary and its brief, here the summary.
func TestBudgetFallbackTakesCheaperSummary(t *testing.T) {
	long := "A brief that is longer than the summary it stands for, by a good margin."
	var secs []*section.Section
	for _, k := range []string{"a", "b", "c"} {
		secs = append(secs, section.New(section.Spec[section.None]{Key: k, Title: strings.ToUpper(k), Body: strings.Repeat("body text ", 100), Summary: "Short.", Brief: long}))
	}
	p := prompt.MustNew("test", "brief", secs...).MustBind()
	full, err := p.Render(nil, nil, prompt.WithTokens(joinTax{}))
	if err != nil {
		t.Fatal(err)
	}
	r, err := p.Render(nil, nil, prompt.WithBudget(full.Tokens()-1, joinTax{}))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(r.Text(), long) || !strings.Contains(r.Text(), "Short.") {
		t.Errorf("got\n%s\nwant a section summarized as Short., no brief", r.Text())
	}
}
