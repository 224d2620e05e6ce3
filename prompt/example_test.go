package prompt_test

import (
	"fmt"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/visibility"
)

// Bind needs no params for sections disabled whatever the session: here
// the repository section is off when its params are the zero value, and
// its issues below it with it, so a prompt for a task without a
// repository binds nothing for them.
func ExampleTemplate_Bind_disabled() {
	type Repo struct{ Name string }
	type Issues struct{ Open int }
	repo := section.New(section.Spec[Repo]{
		Key:     "repo",
		Title:   "Repository",
		Body:    "Work in {{.Name}}.",
		Enabled: func(r Repo) bool { return r.Name != "" },
		Children: []*section.Section{section.New(section.Spec[Issues]{
			Key: "issues", Title: "Issues", Body: "{{.Open}} issues are open.",
		})},
	})
	task := section.New(section.Spec[section.None]{Key: "task", Title: "Task", Body: "Answer the question."})
	tmpl := prompt.MustNew("example", "task", task, repo)

	p, err := tmpl.Bind() // no Repo, no Issues
	if err != nil {
		panic(err)
	}
	r, err := p.Render(nil, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Text())

	// With a repository, its sections render and need their params.
	_, err = tmpl.Bind(Repo{Name: "unfold"})
	fmt.Println(err)
	// Output:
	// ## 1. Task (task)
	//
	// Answer the question.
	// prompt: bind example/task: missing params of type prompt_test.Issues (needed by section repo.issues)
}

// Rendered.Open returns the overrides that show sections in full, for a
// program that opens them itself rather than through a model's
// open_sections call: apply them to the session and render again.
func ExampleRendered_Open() {
	guide := section.New(section.Spec[section.None]{
		Key:        "guide",
		Title:      "Guide",
		Body:       "Step one, then step two.",
		Summary:    "A guide is available.",
		Visibility: visibility.Const(visibility.Summary),
	})
	p := prompt.MustNew("example", "guide", guide).MustBind()
	sess := session.New()
	r, err := p.Render(sess, nil)
	if err != nil {
		panic(err)
	}
	ov, err := r.Open("guide")
	if err != nil {
		panic(err)
	}
	fmt.Println(ov.Paths())
	if err := ov.Apply(sess); err != nil {
		panic(err)
	}
	if r, err = p.Render(sess, nil); err != nil {
		panic(err)
	}
	fmt.Println(r.Text())
	// Output:
	// [guide]
	// ## 1. Guide (guide)
	//
	// Step one, then step two.
}
