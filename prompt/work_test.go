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
	"github.com/unfold-dev/unfold/visibility"
)

// TestTemplateWorkPerRender: the templates of one render share one
// section.Work, so many sections that each move about 48 MiB of text (an
// 8 MiB string doubled into being and quoted) fail together, in the
// body or the summary, counted or not, naming the section that went
// past; one of them alone renders.
func TestTemplateWorkPerRender(t *testing.T) {
	const heavy = `{{$x := printf "%65536s" ""}}{{range 7}}{{$x = print $x $x}}{{end}}{{$y := printf "%q" $x}}{{len $y}}`
	build := func(n int, summarized bool) *prompt.Prompt {
		var secs []*section.Section
		for i := range n {
			spec := section.Spec[section.None]{Key: fmt.Sprintf("s%d", i), Title: "S", Body: heavy}
			if summarized {
				spec.Body, spec.Summary, spec.Visibility = "b", heavy, visibility.Const(visibility.Summary)
			}
			secs = append(secs, section.New(spec))
		}
		return prompt.MustNew("t", "work", secs...).MustBind()
	}
	for _, summarized := range []bool{false, true} {
		for _, opts := range [][]prompt.RenderOption{nil, {prompt.WithTokens(tokens.Estimate)}} {
			name := fmt.Sprintf("summarized %v, counted %v", summarized, opts != nil)
			if _, err := build(1, summarized).Render(nil, nil, opts...); err != nil {
				t.Fatalf("%s: one section: %v", name, err)
			}
			_, err := build(8, summarized).Render(nil, nil, opts...)
			var se *section.Error
			if !errors.Is(err, section.ErrTooMuchText) || !errors.As(err, &se) || !strings.HasPrefix(se.Path, "s") {
				t.Errorf("%s: eight sections: got %v, want %v naming a section", name, err, section.ErrTooMuchText)
			}
		}
	}
}

// TestWorkFailureNotKept: running out of a render's work depends on what
// the other sections spent; a body that failed so is not kept failed, and
// renders once the heavy section is closed.
func TestWorkFailureNotKept(t *testing.T) {
	const heavy = `{{$x := printf "%65536s" ""}}{{range 7}}{{$x = print $x $x}}{{end}}{{$y := printf "%q" $x}}{{len $y}}`
	open := true
	a := section.New(section.Spec[section.None]{Key: "a", Title: "A", Body: strings.Repeat(heavy, 4), Summary: "big",
		Visibility: visibility.FromSession(func(*session.Session) visibility.Mode {
			if open {
				return visibility.Full
			}
			return visibility.Summary
		})})
	b := section.New(section.Spec[section.None]{Key: "b", Title: "B", Body: strings.Repeat(heavy, 2)})
	p := prompt.MustNew("t", "x", a, b).MustBind()
	sess := session.New()
	if _, err := p.Render(sess, nil, prompt.WithTokens(tokens.Estimate)); !errors.Is(err, section.ErrTooMuchText) {
		t.Fatalf("both open: got %v, want %v", err, section.ErrTooMuchText)
	}
	open = false
	for _, opts := range [][]prompt.RenderOption{{prompt.WithTokens(tokens.Estimate)}, nil} {
		if _, err := p.Render(sess, nil, opts...); err != nil {
			t.Errorf("a closed: got %v, want b to render", err)
		}
	}
}

// TestHelpSummariesOwnWork: summaries drawn after a render (help, the
// deferred tools' list) each get work of their own, so calling help again
// and again does not run the render's work out and show a template's
// source.
func TestHelpSummariesOwnWork(t *testing.T) {
	type repo struct{ Issues int }
	s := section.New(section.Spec[repo]{Key: "issues", Title: "Issues", Body: "b",
		Summary: "{{range 1000}}{{end}}{{.Issues}} issues.", Visibility: visibility.Const(visibility.Summary)})
	p := prompt.MustNew("test", "h", s).MustBind(repo{12})
	d, err := prompt.NewDisclosure(nil, nil, []prompt.Part{{Prompt: p}})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Render(); err != nil {
		t.Fatal(err)
	}
	for i := range 1100 {
		if hs := d.HelpSections(); hs[0].Summary != "12 issues." {
			t.Fatalf("help call %d: summary %q, want 12 issues.", i+1, hs[0].Summary)
		}
	}
}

// TestFitRunsSummaryOnce: a budget's fit weighs a summary it does not keep
// several times; its template runs once per render, so a summary that
// takes a quarter of the steps renders under a budget as without one.
func TestFitRunsSummaryOnce(t *testing.T) {
	type items struct{ Items []int }
	child := section.New(section.Spec[section.None]{Key: "c", Title: "C", Body: "c",
		EnabledIn: func(section.None, *session.Session) bool { return true }})
	big := section.New(section.Spec[items]{Key: "big", Title: "Big", Body: "all of it",
		Summary:  "{{$n := 0}}{{range .Items}}{{$n = 1}}{{end}}A list.",
		Defaults: &items{Items: make([]int, section.MaxTemplateSteps/4)}, Children: []*section.Section{child}})
	p := prompt.MustNew("t", "fit", big).MustBind()
	for _, opts := range [][]prompt.RenderOption{nil, {prompt.WithBudget(100000, tokens.Estimate)}, {prompt.WithBudget(5, tokens.Estimate)}} {
		if _, err := p.Render(session.New(), nil, opts...); errors.Is(err, section.ErrTooManySteps) {
			t.Errorf("%d options: got %v", len(opts), err)
		}
	}
}
