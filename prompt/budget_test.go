package prompt_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tokens"
	"github.com/unfold-dev/unfold/tokens/bpe"
	"github.com/unfold-dev/unfold/tools"
	"github.com/unfold-dev/unfold/visibility"
)

func words(n int, word string) string { return strings.TrimSpace(strings.Repeat(word+" ", n)) }

// budgetFixture: rules (no summary, never demoted), and sections of varied
// size and priority with summaries.
func budgetFixture() *prompt.Prompt {
	sec := func(key string, prio int, size int, children ...*section.Section) *section.Section {
		return section.New(section.Spec[none]{
			Key: key, Title: strings.ToUpper(key[:1]) + key[1:], Body: words(size, key),
			Summary: key + " on request.", Priority: prio, Children: children,
		})
	}
	return prompt.MustNew("test", "budget",
		section.New(section.Spec[none]{Key: "rules", Title: "Rules", Body: words(20, "rule")}),
		sec("guide", 5, 100, sec("style", 1, 80), sec("naming", 3, 40)),
		sec("history", 0, 150),
		sec("api", 2, 120, section.New(section.Spec[none]{Key: "calls", Title: "Calls", Body: words(30, "call"),
			Summary: "Call tools.", Priority: 4, Tools: []*tools.Tool{echoTool("call")}})),
	).MustBind()
}

func reportTable(r *prompt.Rendered) string {
	var b strings.Builder
	fmt.Fprintf(&b, "total %d tokens\n", r.Tokens())
	for _, s := range r.Report() {
		if !s.Enabled {
			continue
		}
		state := s.Mode.String()
		if !s.Visible {
			state = "hidden"
		}
		fmt.Fprintf(&b, "%-12s %-8s %-9s prio=%d tokens=%d\n", s.Path, state, s.Why, s.Priority, s.Tokens)
	}
	return b.String()
}

// TestBudgetMatrix renders the fixture into budgets from tiny to ample;
// each golden holds the report and the text.
func TestBudgetMatrix(t *testing.T) {
	p := budgetFixture()
	full, err := p.Render(nil, nil, prompt.WithTokens(bpe.O200kBase()))
	if err != nil {
		t.Fatal(err)
	}
	for _, budget := range []int{40, 80, 150, 250, 350, 450, 550, full.Tokens()} {
		t.Run(fmt.Sprint(budget), func(t *testing.T) {
			r, err := p.Render(session.New(), nil, prompt.WithBudget(budget, bpe.O200kBase()))
			if err != nil {
				var be *prompt.BudgetError
				if !errors.As(err, &be) || !errors.Is(err, prompt.ErrOverBudget) {
					t.Fatalf("got %v, want a *BudgetError", err)
				}
				golden(t, fmt.Sprintf("budget/%d.txt", budget), "error: "+err.Error()+"\n")
				return
			}
			if r.Tokens() > budget {
				t.Errorf("rendered %d tokens into a budget of %d", r.Tokens(), budget)
			}
			if got := bpe.O200kBase().Count(r.Text()); got != r.Tokens() {
				t.Errorf("Tokens() = %d, but the text counts %d", r.Tokens(), got)
			}
			golden(t, fmt.Sprintf("budget/%d.txt", budget), reportTable(r)+"\n"+r.Text()+"\n")
		})
	}
}

func TestBudgetDemotionOrder(t *testing.T) {
	p := budgetFixture()
	// Just under the full size: exactly one section goes, the lowest
	// priority one (history, priority 0).
	full, err := p.Render(nil, nil, prompt.WithTokens(bpe.O200kBase()))
	if err != nil {
		t.Fatal(err)
	}
	r, err := p.Render(nil, nil, prompt.WithBudget(full.Tokens()-1, bpe.O200kBase()))
	if err != nil {
		t.Fatal(err)
	}
	var demoted []string
	for _, s := range r.Report() {
		if s.Why == visibility.Budget {
			demoted = append(demoted, s.Path)
		}
	}
	if strings.Join(demoted, ",") != "history" {
		t.Errorf("demoted %v, want [history]", demoted)
	}
}

func TestBudgetNeverDemotesOpenedSections(t *testing.T) {
	p := budgetFixture()
	sess := session.New()
	if err := visibility.Register(sess); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"history", "guide.style"} {
		if err := sess.Dispatch(visibility.SetOverride{Path: path, Mode: visibility.Full}); err != nil {
			t.Fatal(err)
		}
	}
	r, err := p.Render(sess, nil, prompt.WithBudget(520, bpe.O200kBase()))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range r.Report() {
		switch s.Path {
		case "history", "guide.style", "guide":
			if s.Mode != visibility.Full || !s.Visible {
				t.Errorf("%s: got %v visible=%v, want FULL and visible (opened, or holding an opened section)", s.Path, s.Mode, s.Visible)
			}
		}
	}
	// The ancestors of opened sections stay, so a small budget cannot be met.
	_, err = p.Render(sess, nil, prompt.WithBudget(100, bpe.O200kBase()))
	var be *prompt.BudgetError
	if !errors.As(err, &be) {
		t.Fatalf("got %v, want a *BudgetError", err)
	}
	if be.Budget != 100 || be.Minimum <= 100 || len(be.Largest) == 0 || be.Largest[0].Path != "history" {
		t.Errorf("got %+v, want budget 100, a larger minimum, and history as the largest section", be)
	}
}

func TestBudgetOpenAgain(t *testing.T) {
	// A section the budget closed can be opened by the model: content-only
	// ones are written to context files; tool-bearing ones come back FULL
	// and are then kept FULL by the budget.
	p := budgetFixture()
	sess := session.New()
	fs := afero.NewMemMapFs()
	budget := prompt.WithBudget(200, bpe.O200kBase())
	r, err := p.Render(sess, fs, budget)
	if err != nil {
		t.Fatal(err)
	}
	open := r.Tool(prompt.OpenSectionsName)
	if open == nil {
		t.Fatal("open_sections not offered after budget demotion")
	}
	res, err := open.Call(context.Background(), tools.Context{FS: fs}, json.RawMessage(`{"section_keys":["history"],"reason":"r"}`))
	if err != nil || !res.Success {
		t.Fatalf("open history: %v %+v", err, res)
	}
	_, err = open.Call(context.Background(), tools.Context{}, json.RawMessage(`{"section_keys":["api"],"reason":"r"}`))
	if !errors.Is(err, prompt.ErrVisibilityExpansion) {
		t.Fatalf("open api: got %v, want an expansion", err)
	}
	if err := prompt.ApplyExpansion(sess, err); err != nil {
		t.Fatal(err)
	}
	r, err = p.Render(sess, fs, prompt.WithBudget(400, bpe.O200kBase()))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Text(), "## 4. Api (api)\n\napi api") {
		t.Errorf("api not rendered in full after opening:\n%s", r.Text())
	}
}

func TestBudgetErrors(t *testing.T) {
	p := budgetFixture()
	if _, err := p.Render(nil, nil, prompt.WithBudget(10, nil)); err == nil || !strings.Contains(err.Error(), "a budget needs a token count (0 for none) and a counter") {
		t.Errorf("nil counter: got %v", err)
	}
	if _, err := p.Render(nil, nil, prompt.WithBudget(-1, tokens.Estimate)); err == nil {
		t.Errorf("negative budget: got nil error")
	}
	_, err := p.Render(nil, nil, prompt.WithBudget(5, tokens.Estimate))
	var be *prompt.BudgetError
	if !errors.As(err, &be) || !strings.Contains(err.Error(), "budget of 5 tokens cannot be met") || !strings.Contains(err.Error(), "largest sections: history (") {
		t.Errorf("got %v", err)
	}
}

// TestBudgetCachesCounts checks that a second budgeted render of the same
// prompt counts only the whole text again, not every block.
func TestBudgetCachesCounts(t *testing.T) {
	p := budgetFixture()
	calls := 0
	counter := &countingCounter{calls: &calls}
	if _, err := p.Render(nil, nil, prompt.WithBudget(300, counter)); err != nil {
		t.Fatal(err)
	}
	first := calls
	calls = 0
	if _, err := p.Render(nil, nil, prompt.WithBudget(300, counter)); err != nil {
		t.Fatal(err)
	}
	if calls != 1 || first <= 1 {
		t.Errorf("counts: first render %d, second %d; want several, then 1 (the whole text)", first, calls)
	}
}

type countingCounter struct{ calls *int }

func (c *countingCounter) Count(s string) int {
	*c.calls++
	return tokens.Estimate.Count(s)
}

// TestBudgetSkipsSummariesThatCostMore: a short section whose summary and
// suffix are longer than its body is never demoted; the budget error comes
// instead of a larger prompt.
func TestBudgetSkipsSummariesThatCostMore(t *testing.T) {
	p := prompt.MustNew("test", "short",
		section.New(section.Spec[none]{Key: "short", Title: "Short", Body: "Tiny.", Summary: "A longer summary of a tiny section."}),
	).MustBind()
	full, err := p.Render(nil, nil, prompt.WithTokens(tokens.Estimate))
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Render(nil, nil, prompt.WithBudget(full.Tokens()-1, tokens.Estimate))
	var be *prompt.BudgetError
	if !errors.As(err, &be) || be.Minimum != full.Tokens() {
		t.Errorf("got %v, want a *BudgetError with minimum %d (the full prompt)", err, full.Tokens())
	}
}

// TestBudgetProtectsAncestorsOfOpened: a low-priority parent holding an
// opened child is not demoted, though it is the first candidate.
func TestBudgetProtectsAncestorsOfOpened(t *testing.T) {
	p := prompt.MustNew("test", "ancestors",
		section.New(section.Spec[none]{Key: "parent", Title: "Parent", Body: words(80, "parent"), Summary: "P.", Priority: 0,
			Children: []*section.Section{section.New(section.Spec[none]{Key: "kid", Title: "Kid", Body: words(10, "kid"), Summary: "K.", Priority: 9})}}),
		section.New(section.Spec[none]{Key: "other", Title: "Other", Body: words(80, "other"), Summary: "O.", Priority: 5}),
	).MustBind()
	sess := session.New()
	if err := visibility.Register(sess); err != nil {
		t.Fatal(err)
	}
	if err := sess.Dispatch(visibility.SetOverride{Path: "parent.kid", Mode: visibility.Full}); err != nil {
		t.Fatal(err)
	}
	full, err := p.Render(sess, nil, prompt.WithTokens(tokens.Estimate))
	if err != nil {
		t.Fatal(err)
	}
	r, err := p.Render(sess, nil, prompt.WithBudget(full.Tokens()-10, tokens.Estimate))
	if err != nil {
		t.Fatal(err)
	}
	modes := map[string]string{}
	for _, s := range r.Report() {
		modes[s.Path] = s.Mode.String() + "/" + s.Why.String()
	}
	if modes["parent"] != "FULL/declared" || modes["parent.kid"] != "FULL/override" || modes["other"] != "SUMMARY/budget" {
		t.Errorf("got %v, want parent and kid kept, other demoted", modes)
	}
}

// TestBudgetTieBreak: among equal priorities, deeper sections go first, then
// later ones.
func TestBudgetTieBreak(t *testing.T) {
	leaf := func(key string) *section.Section {
		return section.New(section.Spec[none]{Key: key, Title: key, Body: words(60, key), Summary: key + "."})
	}
	p := prompt.MustNew("test", "ties",
		leaf("first"),
		section.New(section.Spec[none]{Key: "mid", Title: "Mid", Body: words(60, "mid"), Summary: "Mid.", Children: []*section.Section{leaf("deep")}}),
		leaf("last"),
	).MustBind()
	full, err := p.Render(nil, nil, prompt.WithTokens(tokens.Estimate))
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for budget := full.Tokens() - 1; budget > 0; budget -= 5 {
		r, err := p.Render(nil, nil, prompt.WithBudget(budget, tokens.Estimate))
		if err != nil {
			break
		}
		for _, s := range r.Report() {
			if s.Why == visibility.Budget && s.Visible && !slices.Contains(order, s.Path) {
				order = append(order, s.Path)
			}
		}
	}
	if want := []string{"mid.deep", "last"}; len(order) < 2 || !slices.Equal(order[:2], want) {
		t.Errorf("demotion order %v, want it to start with %v (deeper, then later)", order, want)
	}
}

// TestBudgetUncomparableCounter: a counter whose dynamic type cannot be a
// map key is used without caching instead of panicking.
func TestBudgetUncomparableCounter(t *testing.T) {
	type wrapper struct{ tokens.Counter }
	c := wrapper{tokens.CounterFunc(tokens.Estimate.Count)}
	p := budgetFixture()
	for range 2 {
		if _, err := p.Render(nil, nil, prompt.WithBudget(400, c)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBudgetLiveContentOncePerRender: a Content section is computed once per
// render, however often the budget counts and emits.
func TestBudgetLiveContentOncePerRender(t *testing.T) {
	calls := 0
	p := prompt.MustNew("test", "live",
		section.New(section.Spec[none]{Key: "screen", Title: "Screen", Summary: "A screen.", Content: func(none) (string, error) {
			calls++
			return words(50, fmt.Sprint("v", calls)), nil
		}}),
		section.New(section.Spec[none]{Key: "docs", Title: "Docs", Body: words(200, "doc"), Summary: "Docs."}),
	).MustBind()
	r, err := p.Render(nil, nil, prompt.WithBudget(200, bpe.O200kBase()))
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Errorf("Content called %d times in one render, want 1", calls)
	}
	if !strings.Contains(r.Text(), "v1 v1") {
		t.Errorf("rendered text does not hold the first call's content:\n%s", r.Text())
	}
}

// countOnly hides a counter's lower bound, so a render counts every section
// it considers.
type countOnly struct{ tokens.Counter }

// boundedCounter counts with bpe and its lower bound, recording how many
// bytes it counted.
type boundedCounter struct {
	*bpe.Counter
	counted *int
}

func (c boundedCounter) Count(s string) int {
	*c.counted += len(s)
	return c.Counter.Count(s)
}

// TestBudgetLowerBoundSameResult: passing over sections by their lower bound
// gives the prompt that counting every one gives, across budgets from tiny
// to ample, on the small fixture and on a thousand sections.
func TestBudgetLowerBoundSameResult(t *testing.T) {
	trees := map[string]func() *prompt.Prompt{
		"fixture": budgetFixture,
		"thousand": func() *prompt.Prompt {
			return prompt.MustNew("bench", "budget", budgetSections()...).MustBind(benchBind)
		},
	}
	var bounded tokens.Counter = bpe.O200kBase()
	if _, ok := bounded.(tokens.LowerBounder); !ok {
		t.Fatal("bpe counters give no lower bound")
	}
	for name, tree := range trees {
		full, err := tree().Render(nil, nil, prompt.WithTokens(bpe.O200kBase()))
		if err != nil {
			t.Fatal(err)
		}
		for _, frac := range []int{1, 3, 10, 25, 50, 75, 99, 100} {
			budget := full.Tokens() * frac / 100
			t.Run(fmt.Sprintf("%s/%d", name, budget), func(t *testing.T) {
				want, errWant := tree().Render(nil, nil, prompt.WithBudget(budget, countOnly{bpe.O200kBase()}))
				got, errGot := tree().Render(nil, nil, prompt.WithBudget(budget, bounded))
				if errWant != nil || errGot != nil {
					if fmt.Sprint(errGot) != fmt.Sprint(errWant) {
						t.Fatalf("with the bound: %v; counting all: %v", errGot, errWant)
					}
					return
				}
				if g, w := reportTable(got)+got.Text(), reportTable(want)+want.Text(); g != w {
					t.Errorf("with the bound the prompt differs from counting every section:\n%s\nwant:\n%s", g, w)
				}
			})
		}
	}
}

// TestBudgetCountsWhatItShows: fitting a thousand sections into a small
// budget counts about the text it shows, not the text it leaves out.
func TestBudgetCountsWhatItShows(t *testing.T) {
	p := prompt.MustNew("bench", "budget", budgetSections()...).MustBind(benchBind)
	full, err := p.Render(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	counted := 0
	r, err := prompt.MustNew("bench", "budget", budgetSections()...).MustBind(benchBind).
		Render(nil, nil, prompt.WithBudget(8000, boundedCounter{bpe.O200kBase(), &counted}))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("counted %d bytes for a prompt of %d bytes (%d in full)", counted, len(r.Text()), len(full.Text()))
	if counted > 4*len(r.Text()) {
		t.Errorf("counted %d bytes to fit a %d-byte prompt out of %d bytes; want at most four times what it shows", counted, len(r.Text()), len(full.Text()))
	}
}

// textsCounter counts with bpe and its lower bound, recording the texts it
// counts in full.
type textsCounter struct {
	*bpe.Counter
	counted *[]string
}

func (c textsCounter) Count(s string) int {
	*c.counted = append(*c.counted, s)
	return c.Counter.Count(s)
}

// TestBudgetRevealedContentSparesSummary: when a budget shows a section in
// full, a summarized child whose content counts no more than a bound of its
// summary shows its content, and its summary is never counted; a child
// whose content outweighs its summary shows the summary, counted.
func TestBudgetRevealedContentSparesSummary(t *testing.T) {
	const (
		longSummary = "Every step of the deployment, from the build to the rollback plan, and who signs off on each of them."
		longBody    = "Run the release script, then watch the dashboards for an hour, then write the notes, then tell the team, then archive the logs."
	)
	step := func(key, body string) *section.Section {
		return section.New(section.Spec[none]{Key: key, Title: key, Body: body, Summary: longSummary, Priority: -1})
	}
	guide := section.New(section.Spec[none]{Key: "guide", Title: "Guide", Body: "How we ship.", Summary: "Shipping.",
		Children: []*section.Section{step("short", "Ship it."), step("long", words(8, longBody))}})
	p := prompt.MustNew("test", "reveal", text("intro", "Intro", "Hello."), guide).MustBind()
	full, err := p.Render(nil, nil, prompt.WithTokens(bpe.O200kBase()))
	if err != nil {
		t.Fatal(err)
	}
	// One token short of everything in full: guide.long, given back last,
	// stays summarized.
	var counted []string
	r, err := prompt.MustNew("test", "reveal", text("intro", "Intro", "Hello."), guide).MustBind().
		Render(nil, nil, prompt.WithBudget(full.Tokens()-1, textsCounter{bpe.O200kBase(), &counted}))
	if err != nil {
		t.Fatal(err)
	}
	modes := map[string]visibility.Mode{}
	for _, s := range r.Report() {
		modes[s.Path] = s.Mode
	}
	if modes["guide"] != visibility.Full || modes["guide.short"] != visibility.Full || modes["guide.long"] != visibility.Summary {
		t.Fatalf("got modes %v; want guide and guide.short in full, guide.long summarized", modes)
	}
	for _, text := range counted {
		if strings.Contains(text, "(guide.short)") && strings.Contains(text, longSummary) {
			t.Errorf("counted guide.short's summary, which its content costs less than a bound of:\n%s", text)
		}
	}
	if !slices.ContainsFunc(counted, func(s string) bool { return strings.Contains(s, "(guide.long)") && strings.Contains(s, longSummary) }) {
		t.Errorf("never counted guide.long's summary, which it shows")
	}
}
