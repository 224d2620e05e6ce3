package prompt_test

import (
	"context"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tokens"
	"github.com/unfold-dev/unfold/tools"
	"github.com/unfold-dev/unfold/visibility"
)

type none = section.None

type Task struct {
	Goal    string
	Verbose bool
	Items   []string
}

func text(key, title, body string, children ...*section.Section) *section.Section {
	return section.New(section.Spec[none]{Key: key, Title: title, Body: body, Children: children})
}

func summarized(key, title, body, summary string, tl []*tools.Tool, children ...*section.Section) *section.Section {
	return section.New(section.Spec[none]{
		Key: key, Title: title, Body: body, Summary: summary,
		Visibility: visibility.Const(visibility.Summary),
		Tools:      tl, Children: children,
	})
}

type echoIn struct {
	Text string `json:"text" description:"What to echo."`
}

func echoTool(name string) *tools.Tool {
	return tools.MustNew(name, "Echo the text back.", func(_ context.Context, _ tools.Context, in echoIn) (string, error) {
		return in.Text, nil
	})
}

func render(t *testing.T, sess *session.Session, params []any, sections ...*section.Section) *prompt.Rendered {
	t.Helper()
	tmpl, err := prompt.New("test", "render", sections...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	p, err := tmpl.Bind(params...)
	if err != nil {
		t.Fatalf("Bind: %v", err)
	}
	r, err := p.Render(sess, nil)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return r
}

func toolNames(r *prompt.Rendered) string {
	var names []string
	for _, tl := range r.Tools() {
		names = append(names, tl.Name())
	}
	return strings.Join(names, ",")
}

// TestRenderGolden pins the rendering rules, one golden file per case.
func TestRenderGolden(t *testing.T) {
	disabled := func(key, title string, children ...*section.Section) *section.Section {
		return section.New(section.Spec[none]{Key: key, Title: title, Body: "Never shown.", Children: children,
			Enabled: func(none) bool { return false }})
	}
	cases := []struct {
		name     string
		params   []any
		sections []*section.Section
		tools    string
	}{
		{name: "headings", sections: []*section.Section{
			text("intro", "Intro", "Hello."),
			text("rules", "Rules", "Be brief."),
		}},
		{name: "nesting", sections: []*section.Section{
			text("parent", "Parent", "Top.",
				text("child-a", "Child A", "A.", text("leaf", "Leaf", "Deep.")),
				text("child-b", "Child B", "B.")),
			text("after", "After", "End."),
		}},
		{name: "disabled-keeps-numbers", sections: []*section.Section{
			disabled("first", "First", text("kid", "Kid", "Hidden too.")),
			text("second", "Second", "Still number 2.", disabled("gone", "Gone"), text("kept", "Kept", "Number 2.2.")),
		}},
		{name: "dedent", sections: []*section.Section{
			text("code", "Code", `
				Indented body.

				    four more spaces stay
				Last line.
			`),
		}},
		{name: "empty-bodies", sections: []*section.Section{
			text("empty", "Empty", ""),
			text("blank", "Blank", "  \n\t\n  ", text("inner", "Inner", "")),
		}},
		{name: "template", params: []any{Task{Goal: "ship it", Items: []string{"a", "b"}}}, sections: []*section.Section{
			section.New(section.Spec[Task]{Key: "task", Title: "Task", Body: "Goal: {{.Goal}}\n{{range .Items}}- {{.}}\n{{end}}"}),
		}},
		{name: "body-headings", sections: []*section.Section{
			text("doc", "Doc", "# Title\n\nText.\n\n## Sub\n\n```sh\n# not a heading\n```\n\nSetext\n======\n\n###### Six", text("deep", "Deep", "#### Four\n\n##### Five")),
		}},
		{name: "suffix-tools", sections: []*section.Section{
			summarized("ref", "Reference", "Full.", "Docs on request.", []*tools.Tool{echoTool("echo")}),
		}, tools: "open_sections"},
		{name: "suffix-tools-children", sections: []*section.Section{
			summarized("ref", "Reference", "Full.", "Docs on request.", nil,
				text("api", "API", "A."), section.New(section.Spec[none]{Key: "cli", Title: "CLI", Body: "C.", Tools: []*tools.Tool{echoTool("echo")}})),
		}, tools: "open_sections"},
		{name: "suffix-content", sections: []*section.Section{
			summarized("ref", "Reference", "Full.", "Docs on request.", nil),
		}, tools: "open_sections"},
		{name: "suffix-content-children", sections: []*section.Section{
			summarized("ref", "Reference", "Full.", "Docs on request.", nil, text("api", "API", "A."), disabled("old", "Old"), text("cli", "CLI", "C.")),
		}, tools: "open_sections"},
		{name: "summarized-parent-hides-children-and-tools", sections: []*section.Section{
			section.New(section.Spec[none]{Key: "intro", Title: "Intro", Body: "Hi.", Tools: []*tools.Tool{echoTool("visible")}}),
			summarized("parent", "Parent", "Full parent.", "Parent summary.", []*tools.Tool{echoTool("own")},
				section.New(section.Spec[none]{Key: "child", Title: "Child", Body: "Child body.", Tools: []*tools.Tool{echoTool("nested")}})),
		}, tools: "visible,open_sections"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := render(t, nil, tc.params, tc.sections...)
			golden(t, "render/"+tc.name+".md", r.Text())
			if got := toolNames(r); got != tc.tools {
				t.Errorf("tools: got %q, want %q", got, tc.tools)
			}
		})
	}
}

func TestRenderDeterministic(t *testing.T) {
	build := func() string {
		r := render(t, nil, []any{Task{Goal: "g"}},
			section.New(section.Spec[Task]{Key: "task", Title: "Task", Body: "{{.Goal}}"}),
			summarized("ref", "Reference", "Full.", "Summary.", nil, text("a", "A", "a")))
		return r.Text()
	}
	first := build()
	for range 5 {
		if got := build(); got != first {
			t.Fatalf("render is not deterministic:\n%s\nvs\n%s", got, first)
		}
	}
}

func TestRenderReport(t *testing.T) {
	sess := session.New()
	secs := []*section.Section{
		text("intro", "Intro", "Hi."),
		summarized("ref", "Reference", "Full.", "Summary.", nil, text("api", "API", "A.")),
		section.New(section.Spec[Task]{Key: "task", Title: "Task", Body: "{{.Goal}}", Summary: "A task.",
			Visibility: visibility.FromParams(func(p Task) visibility.Mode {
				if p.Verbose {
					return visibility.Full
				}
				return visibility.Summary
			})}),
		section.New(section.Spec[none]{Key: "off", Title: "Off", Enabled: func(none) bool { return false }}),
	}
	tmpl := prompt.MustNew("test", "report", secs...)
	p := tmpl.MustBind(Task{Goal: "g"})
	if err := visibility.Register(sess); err != nil {
		t.Fatal(err)
	}
	if err := sess.Dispatch(visibility.SetOverride{Path: "intro", Mode: visibility.Full}); err != nil {
		t.Fatal(err)
	}
	r, err := p.Render(sess, nil)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		path             string
		enabled, visible bool
		mode             visibility.Mode
		why              visibility.Why
	}
	want := []row{
		{"intro", true, true, visibility.Full, visibility.Overridden},
		{"ref", true, true, visibility.Summary, visibility.Declared},
		{"ref.api", true, false, visibility.Full, visibility.Declared},
		{"task", true, true, visibility.Summary, visibility.Selected},
		{"off", false, false, visibility.Full, visibility.Declared},
	}
	got := r.Report()
	if len(got) != len(want) {
		t.Fatalf("report has %d rows, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Path != w.path || g.Enabled != w.enabled || g.Visible != w.visible || g.Mode != w.mode || g.Why != w.why {
			t.Errorf("row %d: got %+v, want %+v", i, g, w)
		}
	}
}

func TestRenderSessionSelector(t *testing.T) {
	sess := session.New()
	flag := session.NewSlice("test.verbose", false)
	if err := session.On(sess, flag, func(_ bool, e bool) bool { return e }); err != nil {
		t.Fatal(err)
	}
	sec := section.New(section.Spec[none]{Key: "s", Title: "S", Body: "Full body.", Summary: "Short.",
		Visibility: visibility.FromSession(func(s *session.Session) visibility.Mode {
			if session.Get(s, flag) {
				return visibility.Full
			}
			return visibility.Summary
		})})
	p := prompt.MustNew("test", "sel", sec).MustBind()
	r, err := p.Render(sess, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Text(), "Short.") {
		t.Errorf("before: got %q, want the summary", r.Text())
	}
	if err := sess.Dispatch(true); err != nil {
		t.Fatal(err)
	}
	r, err = p.Render(sess, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "## 1. S (s)\n\nFull body."; r.Text() != want {
		t.Errorf("after: got %q, want %q", r.Text(), want)
	}
}

func TestRenderLiveContent(t *testing.T) {
	n := 0
	sec := section.New(section.Spec[none]{Key: "screen", Title: "Screen", Content: func(none) (string, error) {
		n++
		return strings.Repeat("x", n), nil
	}})
	p := prompt.MustNew("test", "live", sec).MustBind()
	for i, want := range []string{"x", "xx"} {
		r, err := p.Render(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimPrefix(r.Text(), "## 1. Screen (screen)\n\n"); got != want {
			t.Errorf("render %d: got body %q, want %q", i, got, want)
		}
	}
}

func TestRenderErrors(t *testing.T) {
	cases := []struct {
		name    string
		sec     *section.Section
		params  []any
		wantErr string
	}{
		{"summary selected without summary", section.New(section.Spec[Task]{Key: "t", Title: "T",
			Visibility: visibility.FromParams(func(Task) visibility.Mode { return visibility.Summary })}),
			[]any{Task{}}, "SUMMARY visibility requested for section 't' but no summary template is defined."},
		{"template calling a method that fails", section.New(section.Spec[Task]{Key: "t", Title: "T", Body: "{{index .Items 3}}"}),
			[]any{Task{}}, "section t: body template:"},
		{"content opening a fence", section.New(section.Spec[none]{Key: "t", Title: "T", Content: func(none) (string, error) { return "```\nx", nil }}),
			nil, "rendered body opens a code fence on line 1"},
		{"panicking selector", section.New(section.Spec[none]{Key: "t", Title: "T", Summary: "s",
			Visibility: visibility.FromSession(func(*session.Session) visibility.Mode { panic("boom") })}),
			nil, "panicked: boom"},
		{"panicking enabled", section.New(section.Spec[none]{Key: "t", Title: "T", Enabled: func(none) bool { panic("nope") }}),
			nil, "enabled predicate panicked: nope"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := prompt.MustNew("test", "err", tc.sec).Bind(tc.params...)
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.Render(nil, nil)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("got %v, want an error containing %q", err, tc.wantErr)
			}
		})
	}
}

// TestConcurrentRenderAndDispatch runs renders while another goroutine opens
// and closes a section; under -race it checks the shared state is safe.
func TestConcurrentRenderAndDispatch(t *testing.T) {
	sess := session.New()
	p := prompt.MustNew("test", "race",
		summarized("ref", "Reference", "Full.", "Summary.", nil, text("a", "A", "a")),
		text("b", "B", "b"),
	).MustBind()
	if _, err := p.Render(sess, nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ctx.Err() == nil; i++ {
			mode := visibility.Mode(i % 2)
			if err := sess.Dispatch(visibility.SetOverride{Path: "ref", Mode: mode}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	full := "## 1. Reference (ref)\n\nFull.\n\n### 1.1. A (ref.a)\n\na\n\n## 2. B (b)\n\nb"
	for range 200 {
		r, err := p.Render(sess, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Text(); got != full && !strings.HasPrefix(got, "## 1. Reference (ref)\n\nSummary.") {
			t.Fatalf("torn render: %q", got)
		}
	}
	cancel()
	<-done
}

// An override dispatched before the first render, which installs the
// overrides slice, is applied by that render and stays in a log that can be
// written.
func TestOverrideBeforeFirstRender(t *testing.T) {
	sess := session.New()
	if err := sess.Dispatch(visibility.SetOverride{Path: "ref", Mode: visibility.Full}); err != nil {
		t.Fatal(err)
	}
	p := prompt.MustNew("test", "early", summarized("ref", "Ref", "Full reference.", "Short.", nil)).MustBind()
	r, err := p.Render(sess, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "## 1. Ref (ref)\n\nFull reference."; r.Text() != want {
		t.Errorf("got %q, want %q", r.Text(), want)
	}
	var log strings.Builder
	if err := sess.WriteLog(&log); err != nil {
		t.Errorf("WriteLog: %v", err)
	}
	if !strings.Contains(log.String(), `"type":"visibility.set"`) {
		t.Errorf("got log %q, want the override under its name", log.String())
	}
}

// TestSummaryMarkdownContained renders summaries whose params open a code
// fence or hold a top-level heading: the fence is closed before the line
// that says how to open the section, and the heading goes below the
// section's, so neither reaches the sections after it.
func TestSummaryMarkdownContained(t *testing.T) {
	type P struct{ X string }
	for _, tt := range []struct{ x, want string }{
		{"this\n```go\ncode", "See this\n```go\ncode\n```\n\n---\n[This section is summarized."},
		{"this\n# Injected\n\ntext", "See this\n### Injected\n\ntext\n\n---\n"},
	} {
		p := prompt.MustNew("t", "s",
			section.New(section.Spec[P]{Key: "ref", Title: "Ref", Body: "body", Summary: "See {{.X}}", Visibility: visibility.Const(visibility.Summary)}),
			text("after", "After", "after body"),
		).MustBind(P{tt.x})
		r, err := p.Render(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(r.Text(), tt.want) || !strings.HasSuffix(r.Text(), "\n\n## 2. After (after)\n\nafter body") {
			t.Errorf("X=%q: got\n%s\nwant it to hold %q and end with the next section", tt.x, r.Text(), tt.want)
		}
	}
}

// TestSummaryOverrideWithoutSummary: a session override asking SUMMARY for
// a section that has no summary (any more: prompts change between the
// runs of a session) is not applied, as one of a path no section has: the
// section shows FULL, the report saying why, and every render, Refit
// included, goes on.
func TestSummaryOverrideWithoutSummary(t *testing.T) {
	nosum := section.New(section.Spec[section.None]{Key: "nosum", Title: "No summary", Body: "The body."})
	doc := section.New(section.Spec[section.None]{Key: "doc", Title: "Doc", Body: "Doc body.", Summary: "Doc summary."})
	p := prompt.MustNew("test", "nosum", nosum, doc).MustBind()
	sess := session.New()
	if err := (prompt.Overrides{"nosum": visibility.Summary, "doc": visibility.Summary}).Apply(sess); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opts []prompt.RenderOption
	}{
		{"no budget", nil},
		{"budget", []prompt.RenderOption{prompt.WithBudget(1000, tokens.Estimate)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := p.Render(sess, nil, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(r.Text(), "The body.") || strings.Contains(r.Text(), "Doc body.") {
				t.Errorf("got\n%s\nwant nosum in full, doc summarized", r.Text())
			}
			if rep := r.Report()[0]; rep.Mode != visibility.Full || rep.Why != visibility.NoSummary {
				t.Errorf("nosum: got %s, why %s; want FULL, why no summary", rep.Mode, rep.Why)
			}
		})
	}
	d, err := prompt.NewDisclosure(sess, nil, []prompt.Part{{Prompt: p, Options: []prompt.RenderOption{prompt.WithBudget(1000, tokens.Estimate)}}})
	if err != nil {
		t.Fatal(err)
	}
	if closed, err := d.Refit(); err != nil || len(closed) != 0 {
		t.Errorf("Refit: got %v, %v; want nothing closed, no error", closed, err)
	}
}
