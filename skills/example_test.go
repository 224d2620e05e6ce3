package skills_test

import (
	"fmt"
	"log"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/skills"
	"github.com/unfold-dev/unfold/tokens"
)

// Example loads a skills folder into a prompt and renders it under a token
// budget: the budget lets the first skills show their description in full
// and shortens the last one's to its brief; each says how to open it.
func Example() {
	set, err := skills.Load("testdata/valid")
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range set.Problems() {
		log.Print(p) // a skill left out: file:line: message (rule)
	}
	tmpl, err := prompt.New("examples", "assistant",
		section.New(section.Spec[section.None]{Key: "task", Title: "Task", Body: "Help the user with their documents."}),
		set.Section(),
	)
	if err != nil {
		log.Fatal(err)
	}
	r, err := tmpl.MustBind().Render(session.New(), nil, prompt.WithBudget(330, tokens.Estimate))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.Text())
	for _, s := range r.Report()[2:] {
		if s.Depth == 1 {
			fmt.Printf("%s: %s, brief %v\n", s.Path, s.Mode, s.Brief)
		}
	}
	// Output:
	// ## 1. Task (task)
	//
	// Help the user with their documents.
	//
	// ## 2. Skills (skills)
	//
	// Skills are folders of instructions, scripts and resources for particular
	// tasks. When a task matches a skill's description, open the skill to read its
	// instructions before you start; open its files (under scripts/, references/,
	// assets/ or anywhere in its folder) as the instructions point to them. A
	// skill's instructions name its directory: paths in them are relative to it,
	// and its scripts run from there with the bash or python environment.
	//
	// ### 2.1. greet (skills.greet)
	//
	// Greets someone by name with the house greeting. Use when asked to greet.
	//
	// ---
	// [This section is summarized. To view full content, call `open_sections` with key "skills.greet". The content will be written to context/skills.greet.md for you to read.]
	//
	// ### 2.2. minimal (skills.minimal)
	//
	// Does nothing at all.
	//
	// ---
	// [This section is summarized. To view full content, call `open_sections` with key "skills.minimal". The content will be written to context/skills.minimal.md for you to read.]
	//
	// ### 2.3. pdf (skills.pdf)
	//
	// Extracts the text of PDF files and lists their pages. …
	//
	// ---
	// [This section is summarized. To view full content, call `open_sections` with key "skills.pdf". The content will be written to context/skills.pdf.md for you to read.]
	// skills.greet: SUMMARY, brief false
	// skills.minimal: SUMMARY, brief false
	// skills.pdf: SUMMARY, brief true
}
