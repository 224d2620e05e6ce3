package prompt_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/afero"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tokens"
	"github.com/unfold-dev/unfold/tools"
	"github.com/unfold-dev/unfold/visibility"
)

// Repo is the params of the sections about a repository; its zero value
// means no repository.
type Repo struct {
	Name   string
	Issues int
}

// Style is params with defaults.
type Style struct{ Tone string }

func TestDefaults(t *testing.T) {
	defaults := Style{Tone: "plain"}
	style := section.New(section.Spec[Style]{Key: "style", Title: "Style", Body: "Write in a {{.Tone}} tone.", Defaults: &defaults})
	defaults.Tone = "changed after New" // the section keeps its copy
	bare := section.New(section.Spec[Style]{Key: "bare", Title: "Bare", Body: "{{.Tone}}"})
	cases := []struct {
		name     string
		sections []*section.Section
		params   []any
		want     string // the text, or the error's text after "prompt: bind test/defaults: "
		fails    bool
	}{
		{"defaults without params", []*section.Section{style}, nil, "## 1. Style (style)\n\nWrite in a plain tone.", false},
		{"a value wins", []*section.Section{style}, []any{Style{Tone: "warm"}}, "## 1. Style (style)\n\nWrite in a warm tone.", false},
		{"a section of the type without defaults still needs them", []*section.Section{style, bare}, nil,
			"missing params of type prompt_test.Style (needed by section bare)", true},
		{"the value reaches both", []*section.Section{style, bare}, []any{Style{Tone: "dry"}},
			"## 1. Style (style)\n\nWrite in a dry tone.\n\n## 2. Bare (bare)\n\ndry", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := prompt.MustNew("test", "defaults", c.sections...).Bind(c.params...)
			if c.fails {
				if err == nil || err.Error() != "prompt: bind test/defaults: "+c.want {
					t.Fatalf("got %v, want %q", err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			r, err := p.Render(nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if r.Text() != c.want {
				t.Errorf("got %q, want %q", r.Text(), c.want)
			}
		})
	}
	t.Run("predicates read the defaults", func(t *testing.T) {
		quiet := section.New(section.Spec[Style]{Key: "loud", Title: "Loud", Body: "LOUD", Defaults: &Style{Tone: "quiet"},
			Enabled: func(s Style) bool { return s.Tone == "loud" }})
		r, err := prompt.MustNew("test", "defaults", quiet, text("end", "End", "The end.")).MustBind().Render(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := "## 2. End (end)\n\nThe end."; r.Text() != want {
			t.Errorf("got %q, want %q", r.Text(), want)
		}
	})
}

// TestBindDisabled: a section disabled whatever the session needs no
// params; one that may render does.
func TestBindDisabled(t *testing.T) {
	withRepo := func(sp section.Spec[Repo]) *section.Section {
		sp.Title = strings.ToUpper(sp.Key[:1]) + sp.Key[1:]
		return section.New(sp)
	}
	hasRepo := func(r Repo) bool { return r.Name != "" }
	issues := func() *section.Section {
		return withRepo(section.Spec[Repo]{Key: "issues", Body: "{{.Issues}} open."})
	}
	type opts struct{ Git bool }
	git := func(kids ...*section.Section) *section.Section {
		return section.New(section.Spec[opts]{Key: "git", Title: "Git", Body: "Use git.", Enabled: func(o opts) bool { return o.Git }, Children: kids})
	}
	intro := text("intro", "Intro", "Hello.")
	cases := []struct {
		name     string
		sections []*section.Section
		params   []any
		want     string // text, or the bind error after the prefix
		fails    bool
	}{
		{"disabled by its own predicate on the zero value", []*section.Section{intro, withRepo(section.Spec[Repo]{Key: "repo", Body: "{{.Name}}", Enabled: hasRepo})}, nil,
			"## 1. Intro (intro)\n\nHello.", false},
		{"the same with a value renders", []*section.Section{intro, withRepo(section.Spec[Repo]{Key: "repo", Body: "{{.Name}}", Enabled: hasRepo})}, []any{Repo{Name: "unfold"}},
			"## 1. Intro (intro)\n\nHello.\n\n## 2. Repo (repo)\n\nunfold", false},
		{"under a disabled section", []*section.Section{intro, git(issues())}, []any{opts{Git: false}},
			"## 1. Intro (intro)\n\nHello.", false},
		{"under an enabled section it needs them", []*section.Section{intro, git(issues())}, []any{opts{Git: true}},
			"missing params of type prompt_test.Repo (needed by section git.issues)", true},
		{"a predicate the zero value passes", []*section.Section{intro, withRepo(section.Spec[Repo]{Key: "repo", Body: "x", Enabled: func(Repo) bool { return true }})}, nil,
			"missing params of type prompt_test.Repo (needed by section repo)", true},
		{"no predicate", []*section.Section{intro, issues()}, nil,
			"missing params of type prompt_test.Repo (needed by section issues)", true},
		{"a predicate that reads the session is asked only at render", []*section.Section{intro, withRepo(section.Spec[Repo]{Key: "repo", Body: "x",
			EnabledIn: func(Repo, *session.Session) bool { return false }})}, nil,
			"missing params of type prompt_test.Repo (needed by section repo)", true},
		{"a predicate that panics on the zero value", []*section.Section{intro, withRepo(section.Spec[Repo]{Key: "repo", Body: "x",
			Enabled: func(r Repo) bool { return r.Name[0] == 'u' }})}, nil,
			"section repo: enabled predicate panicked: runtime error: index out of range [0] with length 0", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := prompt.MustNew("test", "disabled", c.sections...).Bind(c.params...)
			if c.fails {
				if err == nil || err.Error() != "prompt: bind test/disabled: "+c.want {
					t.Fatalf("got %v, want %q", err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			r, err := p.Render(session.New(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if r.Text() != c.want {
				t.Errorf("got %q, want %q", r.Text(), c.want)
			}
		})
	}
	t.Run("an unbound section cannot be opened", func(t *testing.T) {
		repo := withRepo(section.Spec[Repo]{Key: "repo", Body: "{{.Name}}", Enabled: hasRepo})
		p := prompt.MustNew("test", "disabled", summarized("guide", "Guide", "All of it.", "A guide.", nil), repo).MustBind()
		r, err := p.Render(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Open("repo"); err == nil {
			t.Errorf("Open(repo): got nil error, want no such section")
		}
		res, err := r.Tool(prompt.OpenSectionsName).Call(context.Background(), tools.Context{FS: afero.NewMemMapFs()}, json.RawMessage(`{"section_keys":["repo"],"reason":"r"}`))
		if err != nil || res.Success || res.Message != "Section 'repo' does not exist in this prompt." {
			t.Errorf("open_sections: got %+v, %v", res, err)
		}
		if rep := r.Report()[1]; rep.Enabled || rep.Number != "2." {
			t.Errorf("report: got %+v, want disabled, number 2.", rep)
		}
	})
}

func TestSummaryTemplates(t *testing.T) {
	repo := Repo{Name: "unfold", Issues: 12}
	issues := section.New(section.Spec[Repo]{
		Key: "issues", Title: "Issues", Body: "The {{.Issues}} open issues of {{.Name}}: ...",
		Summary:    "{{.Issues}} open issues in {{.Name}}.",
		Visibility: visibility.Const(visibility.Summary),
	})
	t.Run("rendered with the params", func(t *testing.T) {
		r, err := prompt.MustNew("test", "summaries", issues).MustBind(repo).Render(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := "## 1. Issues (issues)\n\n12 open issues in unfold.\n\n---\n" +
			"[This section is summarized. To view full content, call `open_sections` with key \"issues\". The content will be written to context/issues.md for you to read.]"
		if r.Text() != want {
			t.Errorf("got %q, want %q", r.Text(), want)
		}
	})
	t.Run("text/template, with Funcs", func(t *testing.T) {
		s := section.New(section.Spec[Repo]{Key: "issues", Title: "Issues", Body: "b",
			Summary: `{{if .Issues}}{{.Issues}} open issues{{else}}No open issues{{end}} in {{upper .Name}}.`,
			Funcs:   map[string]any{"upper": strings.ToUpper}, Visibility: visibility.Const(visibility.Summary)})
		r, err := prompt.MustNew("test", "summaries", s).MustBind(Repo{Name: "x"}).Render(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(r.Text(), "\n\nNo open issues in X.\n\n---\n") {
			t.Errorf("got %q", r.Text())
		}
	})
	t.Run("a field the params lack fails at New", func(t *testing.T) {
		for _, sp := range []section.Spec[Repo]{
			{Key: "a", Title: "A", Summary: "{{.Count}} issues"},
			{Key: "a", Title: "A", Summary: "s", Brief: "{{.Count}}"},
		} {
			_, err := prompt.New("test", "summaries", section.New(sp))
			if err == nil || !strings.Contains(err.Error(), "template references .Count, but prompt_test.Repo has no field or method Count") {
				t.Errorf("got %v", err)
			}
		}
		_, err := prompt.New("test", "summaries", section.New(section.Spec[Repo]{Key: "a", Title: "A", Summary: "{{.Name"}))
		if err == nil || !strings.Contains(err.Error(), "section a: summary template: ") {
			t.Errorf("unclosed action: got %v", err)
		}
	})
	t.Run("a failure at render names the section", func(t *testing.T) {
		s := section.New(section.Spec[map[string]any]{Key: "m", Title: "M", Body: "b", Summary: "{{.missing}}", Visibility: visibility.Const(visibility.Summary)})
		_, err := prompt.MustNew("test", "summaries", s).MustBind(map[string]any{}).Render(nil, nil)
		if err == nil || !strings.Contains(err.Error(), "section m: summary template: ") || !strings.Contains(err.Error(), `map has no entry for key "missing"`) {
			t.Errorf("got %v", err)
		}
	})
	t.Run("briefs under a budget, counted as shown", func(t *testing.T) {
		long := section.New(section.Spec[Repo]{Key: "long", Title: "Long", Body: strings.Repeat("Every detail of {{.Name}}. ", 40),
			Summary: "All the details of {{.Name}}, {{.Issues}} issues, and how they were found, in many words.", Brief: "{{.Name}} details.", Priority: -1})
		p := prompt.MustNew("test", "summaries", text("intro", "Intro", "Hi."), long).MustBind(repo)
		_, err := p.Render(nil, nil, prompt.WithBudget(1, tokens.Estimate))
		var be *prompt.BudgetError
		if !errors.As(err, &be) {
			t.Fatalf("got %v, want a budget error", err)
		}
		r, err := p.Render(nil, nil, prompt.WithBudget(be.Minimum, tokens.Estimate))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(r.Text(), "\n\nunfold details.\n\n---\n") {
			t.Errorf("got %q, want the brief rendered", r.Text())
		}
		if got := tokens.Estimate.Count(r.Text()); got != r.Tokens() {
			t.Errorf("Tokens() %d, the text counts %d", r.Tokens(), got)
		}
	})
	t.Run("help and separate sections show the rendered summary", func(t *testing.T) {
		sep := section.New(section.Spec[Repo]{Key: "issues", Title: "Issues", Body: "all", Summary: "{{.Issues}} issues.", Separate: true})
		guide := section.New(section.Spec[none]{Key: "guide", Title: "Guide", Body: "The guide.", Summary: "A guide.",
			Visibility: visibility.Const(visibility.Summary), Children: []*section.Section{sep}})
		p := prompt.MustNew("test", "summaries", guide).MustBind(repo)
		doc, err := p.Standalone("guide")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(doc, "## Issues (guide.issues)\n\n12 issues.\n\n---\n") {
			t.Errorf("standalone: got %q", doc)
		}
		d, err := prompt.NewDisclosure(nil, nil, []prompt.Part{{Prompt: p}})
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Render(); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Open(context.Background(), []string{"guide"}, "look"); err == nil {
			t.Fatal("opening a content-only section without a filesystem: want an error")
		}
		ps := prompt.MustNew("test", "summaries", section.New(section.Spec[Repo]{Key: "issues", Title: "Issues", Body: "b", Summary: "{{.Issues}} issues.",
			Visibility: visibility.Const(visibility.Summary)})).MustBind(repo)
		d, err = prompt.NewDisclosure(nil, nil, []prompt.Part{{Prompt: ps}})
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Render(); err != nil {
			t.Fatal(err)
		}
		if hs := d.HelpSections(); len(hs) != 1 || hs[0].Summary != "12 issues." {
			t.Errorf("help sections: got %+v", hs)
		}
	})
}

// Progress is a session slice: the steps done.
var progress = session.NewSlice("test.progress", 0)

type stepDone struct{}

func progressSession(t *testing.T, done int) *session.Session {
	t.Helper()
	sess := session.New()
	if err := session.On(sess, progress, func(n int, _ stepDone) int { return n + 1 }); err != nil {
		t.Fatal(err)
	}
	for range done {
		if err := sess.Dispatch(stepDone{}); err != nil {
			t.Fatal(err)
		}
	}
	return sess
}

// stepsTemplate has a section whose steps show once the session has done
// the ones before; step 3 has a tool.
func stepsTemplate() *prompt.Template {
	step := func(n int, tl ...*tools.Tool) *section.Section {
		return section.New(section.Spec[none]{
			Key: fmt.Sprintf("step-%d", n), Title: fmt.Sprintf("Step %d", n), Body: fmt.Sprintf("Do step %d.", n), Tools: tl,
			EnabledIn: func(_ none, sess *session.Session) bool { return session.Get(sess, progress) >= n-1 },
		})
	}
	return prompt.MustNew("test", "steps",
		section.New(section.Spec[none]{Key: "plan", Title: "Plan", Body: "The plan.", Summary: "A plan of steps.",
			Children: []*section.Section{step(1), step(2), step(3, echoTool("finish"))}}),
		text("notes", "Notes", strings.Repeat("Some notes. ", 30)),
	)
}

func TestEnabledIn(t *testing.T) {
	p := stepsTemplate().MustBind()
	renderWith := func(t *testing.T, p *prompt.Prompt, done int, opts ...prompt.RenderOption) *prompt.Rendered {
		t.Helper()
		var sess *session.Session
		if done >= 0 {
			sess = progressSession(t, done)
		}
		r, err := p.Render(sess, nil, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	t.Run("the session decides", func(t *testing.T) {
		for _, c := range []struct {
			done  int
			steps string
			tools string
		}{
			{-1, "step-1", ""}, // no session: nothing done
			{0, "step-1", ""},
			{1, "step-1 step-2", ""},
			{2, "step-1 step-2 step-3", "finish"},
		} {
			r := renderWith(t, p, c.done)
			var steps []string
			for _, s := range r.Report() {
				if s.Enabled && strings.HasPrefix(s.Path, "plan.") {
					steps = append(steps, strings.TrimPrefix(s.Path, "plan."))
				}
			}
			if got := strings.Join(steps, " "); got != c.steps {
				t.Errorf("%d done: steps %q, want %q", c.done, got, c.steps)
			}
			if got := names(r.Tools()); got != c.tools {
				t.Errorf("%d done: tools %q, want %q", c.done, got, c.tools)
			}
		}
	})
	t.Run("summaries follow the session", func(t *testing.T) {
		// The plan's suffix lists its enabled steps, and says opening it
		// offers tools once step 3 shows: one Prompt, rendered with
		// sessions in turn, must match a fresh Prompt rendered with each,
		// under a budget too (its counts must not be kept from another
		// session).
		shared := stepsTemplate().MustBind()
		for _, budget := range []int{0, 10000} {
			for _, done := range []int{2, 0, 1, 2, 0} {
				var opts []prompt.RenderOption
				if budget > 0 {
					opts = append(opts, prompt.WithBudget(budget, tokens.Estimate))
				}
				sessOpen := func() *session.Session {
					sess := progressSession(t, done)
					if err := (prompt.Overrides{"plan": visibility.Summary}).Apply(sess); err != nil {
						t.Fatal(err)
					}
					return sess
				}
				got, err := shared.Render(sessOpen(), nil, opts...)
				if err != nil {
					t.Fatal(err)
				}
				want, err := stepsTemplate().MustBind().Render(sessOpen(), nil, opts...)
				if err != nil {
					t.Fatal(err)
				}
				if got.Text() != want.Text() || got.Tokens() != want.Tokens() {
					t.Errorf("budget %d, %d done: the shared Prompt renders\n%s\n(%d tokens), a fresh one\n%s\n(%d tokens)", budget, done, got.Text(), got.Tokens(), want.Text(), want.Tokens())
				}
				if !strings.Contains(got.Text(), "A plan of steps.") {
					t.Errorf("budget %d, %d done: the plan is not summarized:\n%s", budget, done, got.Text())
				}
			}
		}
	})
	t.Run("concurrent renders with different sessions", func(t *testing.T) {
		shared := stepsTemplate().MustBind()
		want := make([]string, 3)
		for done := range 3 {
			want[done] = renderWith(t, stepsTemplate().MustBind(), done).Text()
		}
		var wg sync.WaitGroup
		for g := range 6 {
			wg.Go(func() {
				for i := range 20 {
					done := (g + i) % 3
					r, err := shared.Render(progressSession(t, done), nil)
					if err != nil {
						t.Error(err)
						return
					}
					if r.Text() != want[done] {
						t.Errorf("%d done: got %q, want %q", done, r.Text(), want[done])
						return
					}
				}
			})
		}
		wg.Wait()
	})
	t.Run("both predicates", func(t *testing.T) {
		s := section.New(section.Spec[none]{Key: "a", Title: "A", Enabled: func(none) bool { return true },
			EnabledIn: func(none, *session.Session) bool { return true }})
		if _, err := prompt.New("test", "steps", s); err == nil || !strings.Contains(err.Error(), "both Enabled and EnabledIn are set") {
			t.Errorf("got %v", err)
		}
	})
}
