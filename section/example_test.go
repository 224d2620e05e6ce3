package section_test

import (
	"fmt"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
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
