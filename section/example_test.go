package section_test

import (
	"fmt"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/visibility"
)

// A section's body is a template over its params type; a summary stands in
// for it when the section renders as SUMMARY.
func ExampleNew() {
	type Task struct{ Goal string }
	task := section.New(section.Spec[Task]{
		Key:   "task",
		Title: "Task",
		Body:  "Complete the following task: {{.Goal}}",
	})
	style := section.New(section.Spec[section.None]{
		Key:        "style",
		Title:      "Style",
		Body:       "Answer in one sentence.",
		Summary:    "A style guide is available.",
		Visibility: visibility.Const(visibility.Summary),
	})
	p := prompt.MustNew("example", "task", task, style).MustBind(Task{Goal: "add 2 and 3"})
	r, err := p.Render(nil, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Text())
	// Output:
	// ## 1. Task (task)
	//
	// Complete the following task: add 2 and 3
	//
	// ## 2. Style (style)
	//
	// A style guide is available.
	//
	// ---
	// [This section is summarized. To view full content, call `open_sections` with key "style". The content will be written to context/style.md for you to read.]
}

// A section can carry default params: Bind then needs no value of its type,
// and a value given to Bind wins.
func ExampleSpec_defaults() {
	type Style struct{ Tone string }
	style := section.New(section.Spec[Style]{
		Key:      "style",
		Title:    "Style",
		Body:     "Write in a {{.Tone}} tone.",
		Defaults: &Style{Tone: "plain"},
	})
	tmpl := prompt.MustNew("example", "style", style)
	for _, params := range [][]any{nil, {Style{Tone: "warm"}}} {
		r, err := tmpl.MustBind(params...).Render(nil, nil)
		if err != nil {
			panic(err)
		}
		fmt.Println(r.Text())
	}
	// Output:
	// ## 1. Style (style)
	//
	// Write in a plain tone.
	// ## 1. Style (style)
	//
	// Write in a warm tone.
}

// A summary is a template over the section's params, like its body.
func ExampleSpec_summary() {
	type Repo struct {
		Name   string
		Issues int
	}
	issues := section.New(section.Spec[Repo]{
		Key:        "issues",
		Title:      "Issues",
		Body:       "The open issues of {{.Name}}, one by one: ...",
		Summary:    "{{.Issues}} open issues in {{.Name}}.",
		Visibility: visibility.Const(visibility.Summary),
	})
	r, err := prompt.MustNew("example", "issues", issues).MustBind(Repo{Name: "unfold", Issues: 12}).Render(nil, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Text())
	// Output:
	// ## 1. Issues (issues)
	//
	// 12 open issues in unfold.
	//
	// ---
	// [This section is summarized. To view full content, call `open_sections` with key "issues". The content will be written to context/issues.md for you to read.]
}

// stepsDone counts the steps done, in a session.
var stepsDone = session.NewSlice("example.steps_done", 0)

// StepDone is the event of a step done.
type StepDone struct{}

// An EnabledIn predicate reads the session as well as the params: here a
// section shows once the step before it is done.
func ExampleSpec_enabledIn() {
	sess := session.New()
	if err := session.On(sess, stepsDone, func(n int, _ StepDone) int { return n + 1 }); err != nil {
		panic(err)
	}
	step := func(n int) *section.Section {
		return section.New(section.Spec[section.None]{
			Key:   fmt.Sprintf("step-%d", n),
			Title: fmt.Sprintf("Step %d", n),
			Body:  fmt.Sprintf("Do step %d.", n),
			EnabledIn: func(_ section.None, sess *session.Session) bool {
				return session.Get(sess, stepsDone) >= n-1
			},
		})
	}
	p := prompt.MustNew("example", "steps", step(1), step(2)).MustBind()
	for range 2 {
		r, err := p.Render(sess, nil)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s\n---\n", r.Text())
		if err := sess.Dispatch(StepDone{}); err != nil {
			panic(err)
		}
	}
	// Output:
	// ## 1. Step 1 (step-1)
	//
	// Do step 1.
	// ---
	// ## 1. Step 1 (step-1)
	//
	// Do step 1.
	//
	// ## 2. Step 2 (step-2)
	//
	// Do step 2.
	// ---
}
