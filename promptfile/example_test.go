package promptfile_test

import (
	"fmt"

	"github.com/unfold-dev/unfold/promptfile"
)

// A markdown file is a prompt: headings make sections, heading attributes
// set the rest, and bodies are templates over JSON params.
func ExampleParse() {
	src := []byte(`# Task

Complete the following task: {{.task}}

# Reference {#reference visibility=summary summary="API docs on request."}

The API has two endpoints.
`)
	f, err := promptfile.Parse("task.md", src)
	if err != nil {
		panic(err)
	}
	params, err := promptfile.DecodeParams([]byte(`{"task": "list the endpoints"}`))
	if err != nil {
		panic(err)
	}
	p, err := f.Bind(params)
	if err != nil {
		panic(err)
	}
	r, err := p.Render(nil, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Text())
	// Output:
	// ## 1. Task (task)
	//
	// Complete the following task: list the endpoints
	//
	// ## 2. Reference (reference)
	//
	// API docs on request.
	//
	// ---
	// [This section is summarized. To view full content, call `open_sections` with key "reference". The content will be written to context/reference.md for you to read.]
}
