package prompttest_test

import (
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/prompttest"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/tokens"
	"github.com/unfold-dev/unfold/visibility"
)

// update is the flag a user's test would define to rewrite golden files.
// Defining it is itself a check: were prompttest to register a flag of that
// name, this test binary would panic before any test ran.
var update = flag.Bool("update", false, "rewrite the golden files in testdata")

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
		prompttest.Golden(t, "combinations/"+c.Name+".md", c.Text(), prompttest.Update(*update))
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

// TestCombinationsOverridesOwned: the cases of one combination under
// different budgets each hold their own Overrides, so changing one case's
// map leaves the others' as they were rendered.
func TestCombinationsOverridesOwned(t *testing.T) {
	cases := prompttest.Combinations(t, fixture(), prompttest.Options{Budgets: []int{0, 150}, Counter: tokens.Estimate})
	byName := map[string]prompttest.Case{}
	for _, c := range cases {
		byName[c.Name] = c
	}
	a, b := byName["guide=full,ref=summary"], byName["guide=full,ref=summary@150"]
	want := map[string]visibility.Mode{"guide": visibility.Full, "ref": visibility.Summary}
	if !maps.Equal(a.Overrides, want) || !maps.Equal(b.Overrides, want) {
		t.Fatalf("got overrides %v and %v, want %v for both", a.Overrides, b.Overrides, want)
	}
	a.Overrides["ref"] = visibility.Full
	delete(a.Overrides, "guide")
	if !maps.Equal(b.Overrides, want) {
		t.Errorf("after changing the unbudgeted case's overrides, the budgeted case's are %v, want %v", b.Overrides, want)
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

// TestCombinationsLongNames: with many sections the names stay short
// enough to be golden file names, and apart; short ones are as they were.
func TestCombinationsLongNames(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("UNFOLD_UPDATE_GOLDEN", "")
	var secs []*section.Section
	for i := range 12 {
		secs = append(secs, section.New(section.Spec[section.None]{Key: fmt.Sprintf("reference-material-%d", i), Title: "R", Body: "b", Summary: "s"}))
	}
	p := prompt.MustNew("test", "long", secs...).MustBind()
	cases := prompttest.Combinations(t, p, prompttest.Options{Budgets: []int{0, 4000}, Counter: tokens.Estimate})
	names := map[string]bool{}
	for _, c := range cases {
		if len(c.Name) > prompttest.MaxCaseName {
			t.Errorf("%s: %d bytes, want at most %d", c.Name, len(c.Name), prompttest.MaxCaseName)
		}
		if names[c.Name] {
			t.Errorf("%s: the name of two cases", c.Name)
		}
		names[c.Name] = true
		if c.Budget == 4000 && !strings.HasSuffix(c.Name, "@4000") {
			t.Errorf("%s: want the budget at the end", c.Name)
		}
		prompttest.Golden(t, "prompt/"+c.Name+".md", c.Text(), prompttest.Update(true))
	}
	if len(names) != 2*64 {
		t.Errorf("got %d names, want %d", len(names), 2*64)
	}
	if name := prompttest.Combinations(t, fixture(), prompttest.Options{})[0].Name; name != "guide=summary,ref=summary" {
		t.Errorf("a short name: got %q", name)
	}
}

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	failed []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.failed = append(r.failed, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = append(r.failed, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatal(args ...any) { r.failed = append(r.failed, fmt.Sprint(args...)) }

func TestGoldenShowsDiff(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("UNFOLD_UPDATE_GOLDEN", "")
	if err := os.MkdirAll("testdata", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("testdata/p.md", []byte("## 1. Task (task)\n\nDo the thing.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{TB: t}
	prompttest.Golden(rec, "p.md", "## 1. Task (task)\n\nDo another thing.\n")
	want := filepath.Join("testdata", "p.md") + " differs from the output (set UNFOLD_UPDATE_GOLDEN=1 to accept the output):\n" +
		"--- testdata/p.md (golden)\n" +
		"+++ testdata/p.md (output)\n" +
		"@@ -1,3 +1,3 @@\n" +
		" ## 1. Task (task)\n \n-Do the thing.\n+Do another thing.\n"
	if len(rec.failed) != 1 || rec.failed[0] != want {
		t.Errorf("got failures %q, want one:\n%s", rec.failed, want)
	}
}

func TestGoldenUpdate(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("UNFOLD_UPDATE_GOLDEN", "")
	rec := &recorder{TB: t}
	read := func() string {
		b, err := os.ReadFile("testdata/new/p.md")
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	prompttest.Golden(rec, "new/p.md", "one\n", prompttest.Update(true))
	if got := read(); got != "one\n" || len(rec.failed) != 0 {
		t.Fatalf("Update(true): got file %q and failures %q, want the file written", got, rec.failed)
	}
	prompttest.Golden(rec, "new/p.md", "one\n", prompttest.Update(false))
	if len(rec.failed) != 0 {
		t.Fatalf("Update(false) on equal output: got failures %q", rec.failed)
	}

	t.Setenv("UNFOLD_UPDATE_GOLDEN", "1")
	if !prompttest.Updating() {
		t.Error("Updating() = false with UNFOLD_UPDATE_GOLDEN=1")
	}
	prompttest.Golden(rec, "new/p.md", "two\n")
	if got := read(); got != "two\n" || len(rec.failed) != 0 {
		t.Fatalf("UNFOLD_UPDATE_GOLDEN=1: got file %q and failures %q, want the file rewritten", got, rec.failed)
	}

	t.Setenv("UNFOLD_UPDATE_GOLDEN", "yes please")
	for _, opts := range [][]prompttest.GoldenOption{nil, {prompttest.Update(true)}} {
		rec := &recorder{TB: t}
		prompttest.Golden(rec, "new/p.md", "three\n", opts...)
		if len(rec.failed) != 1 || !strings.Contains(rec.failed[0], `UNFOLD_UPDATE_GOLDEN="yes please"`) || read() != "two\n" {
			t.Errorf("a bad UNFOLD_UPDATE_GOLDEN, %d options: got failures %q and file %q, want the value named and the file kept", len(opts), rec.failed, read())
		}
	}
}

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

// TestGoldenRefusesNameLeavingTestdata: a name climbing out of testdata
// fails the test, and an update writes nothing there.
func TestGoldenRefusesNameLeavingTestdata(t *testing.T) {
	dir := t.TempDir()
	pkg := filepath.Join(dir, "a", "pkg")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(pkg)
	t.Setenv("UNFOLD_UPDATE_GOLDEN", "")
	for _, update := range []bool{false, true} {
		rec := &recorder{TB: t}
		prompttest.Golden(rec, "../../escaped.md", "outside\n", prompttest.Update(update))
		if len(rec.failed) != 1 || !strings.Contains(rec.failed[0], `name "../../escaped.md" leaves testdata`) {
			t.Errorf("update %v: got failures %q, want one saying the name leaves testdata", update, rec.failed)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "a", "escaped.md")); err == nil {
		t.Error("escaped.md was written outside testdata")
	}
}

// TestTokenAssertionsOnFailedCase: a case whose render failed has no
// Rendered; the assertions fail the test instead of panicking, and
// Require names the case and its error.
func TestTokenAssertionsOnFailedCase(t *testing.T) {
	cases := prompttest.Combinations(t, fixture(), prompttest.Options{Budgets: []int{10}, Counter: tokens.Estimate})
	c := cases[0]
	if c.Rendered != nil || c.Err == nil {
		t.Fatalf("%s: want a failed render, got err %v", c.Name, c.Err)
	}
	rec := &recorder{TB: t}
	prompttest.TokensAtMost(rec, c.Rendered, tokens.Estimate, 10)
	prompttest.TokensBetween(rec, c.Rendered, tokens.Estimate, 0, 10)
	prompttest.SectionTokensAtMost(rec, c.Rendered, "task", 10)
	if len(rec.failed) != 3 {
		t.Fatalf("got failures %q, want one from each assertion", rec.failed)
	}
	for _, f := range rec.failed {
		if !strings.Contains(f, "no rendered prompt (nil)") || !strings.Contains(f, "c.Require(t)") {
			t.Errorf("got %q, want it to say there is no render and what to use", f)
		}
	}
	rec = &recorder{TB: t}
	if r := c.Require(rec); r != nil {
		t.Errorf("Require on a failed case returned %v", r)
	}
	want := "prompttest: case " + c.Name + " did not render: " + c.Err.Error()
	if len(rec.failed) != 1 || rec.failed[0] != want {
		t.Errorf("Require: got failures %q, want %q", rec.failed, want)
	}
	ok := prompttest.Combinations(t, fixture(), prompttest.Options{})[0]
	rec = &recorder{TB: t}
	if ok.Require(rec) != ok.Rendered || len(rec.failed) != 0 {
		t.Errorf("Require on a rendered case: got failures %q", rec.failed)
	}
}

// nested is a prompt whose reference section has little text of its own
// and two long subsections.
func nested() *prompt.Prompt {
	long := strings.Repeat("word ", 400)
	return prompt.MustNew("test", "nested",
		section.New(section.Spec[section.None]{Key: "task", Title: "Task", Body: "Do it."}),
		section.New(section.Spec[section.None]{Key: "ref", Title: "Reference", Body: "Intro.", Summary: "Docs.",
			Children: []*section.Section{
				section.New(section.Spec[section.None]{Key: "api", Title: "API", Body: long, Summary: "API docs."}),
				section.New(section.Spec[section.None]{Key: "faq", Title: "FAQ", Body: long}),
			}}),
	).MustBind()
}

// TestSectionTokensIncludeSubsections: a bound on a section is a bound on
// everything under its heading, its visible subsections included.
func TestSectionTokensIncludeSubsections(t *testing.T) {
	r, err := nested().Render(nil, nil, prompt.WithTokens(tokens.Estimate))
	if err != nil {
		t.Fatal(err)
	}
	whole := 0
	for _, s := range r.Report() {
		if s.Path == "ref" || strings.HasPrefix(s.Path, "ref.") {
			whole += s.Tokens
		}
	}
	if whole < 400 {
		t.Fatalf("the reference section has %d tokens, want its subsections' hundreds", whole)
	}
	rec := &recorder{TB: t}
	prompttest.SectionTokensAtMost(rec, r, "ref", whole)
	if len(rec.failed) != 0 {
		t.Errorf("a bound of %d on a section of %d tokens: got failures %q", whole, whole, rec.failed)
	}
	prompttest.SectionTokensAtMost(rec, r, "ref", 50)
	want := fmt.Sprintf("prompttest: section ref has %d tokens with its subsections, want at most 50", whole)
	if len(rec.failed) != 1 || rec.failed[0] != want {
		t.Errorf("a bound of 50: got failures %q, want %q", rec.failed, want)
	}
	// Summarized, the section is its summary block alone: its
	// subsections are not rendered, and count nothing.
	summarized, err := nested().Render(nil, nil, prompt.WithBudget(60, tokens.Estimate))
	if err != nil {
		t.Fatal(err)
	}
	own := 0
	for _, s := range summarized.Report() {
		if s.Path == "ref" {
			own = s.Tokens
		}
	}
	rec = &recorder{TB: t}
	prompttest.SectionTokensAtMost(rec, summarized, "ref", own)
	if own == 0 || own >= 100 || len(rec.failed) != 0 {
		t.Errorf("ref summarized under a budget, %d tokens: got failures %q", own, rec.failed)
	}
}

// TestCombinationsNested: the sections under a summarized one are not
// varied, so no two cases render the same text and no name claims a mode
// for a section that did not render.
func TestCombinationsNested(t *testing.T) {
	var names []string
	for _, c := range prompttest.Combinations(t, nested(), prompttest.Options{}) {
		names = append(names, c.Name)
	}
	want := []string{"ref=summary", "ref=full,ref.api=summary", "ref=full,ref.api=full"}
	if !slices.Equal(names, want) {
		t.Errorf("got cases %q, want %q", names, want)
	}

	// Six summarized subsections: 65 combinations, one with the parent
	// summarized; a sample of 64 renders 64 different texts.
	var kids []*section.Section
	for i := range 6 {
		kids = append(kids, section.New(section.Spec[section.None]{Key: fmt.Sprintf("k%d", i), Title: "K", Body: fmt.Sprintf("body %d", i), Summary: fmt.Sprintf("sum %d", i)}))
	}
	p := prompt.MustNew("test", "kids", section.New(section.Spec[section.None]{Key: "ref", Title: "Ref", Body: "Intro.", Summary: "Docs.", Children: kids})).MustBind()
	cases := prompttest.Combinations(t, p, prompttest.Options{})
	texts := map[string]string{}
	for _, c := range cases {
		if other, ok := texts[c.Text()]; ok {
			t.Errorf("%s renders the same text as %s", c.Name, other)
		}
		texts[c.Text()] = c.Name
		if strings.HasPrefix(c.Name, "ref=summary") && c.Name != "ref=summary" {
			t.Errorf("%s: names sections under a summarized one", c.Name)
		}
	}
	if len(cases) != 64 {
		t.Errorf("got %d cases, want a sample of 64", len(cases))
	}
}

// TestMaxCombinationsOne: a bound of 1 renders one case, all open.
func TestMaxCombinationsOne(t *testing.T) {
	cases := prompttest.Combinations(t, fixture(), prompttest.Options{MaxCombinations: 1})
	if len(cases) != 1 || cases[0].Name != "guide=full,ref=full" {
		var names []string
		for _, c := range cases {
			names = append(names, c.Name)
		}
		t.Errorf("got cases %q, want one: guide=full,ref=full", names)
	}
}
