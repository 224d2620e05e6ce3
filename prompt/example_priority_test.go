package prompt_test

import (
	"fmt"
	"strings"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/tokens"
)

// Under a budget, priority decides which section is offered the room
// first: the fit starts with every section that has a summary summarized
// and gives them back in full, highest priority first, each one that fits
// in what is left. At 180 tokens the reference (priority 10, 211 tokens in
// full) is offered the room first and does not fit, so it stays
// summarized; the trivia (priority -10), offered next, fits and is shown
// in full. At 280 the reference fits, and then the trivia does not. At
// 330 both fit.
func ExampleWithBudget_priority() {
	p := prompt.MustNew("example", "priority",
		section.New(section.Spec[section.None]{Key: "task", Title: "Task", Body: "Do the task."}),
		section.New(section.Spec[section.None]{Key: "reference", Title: "Reference", Priority: 10,
			Body: strings.Repeat("important reference text ", 40), Summary: "The API reference."}),
		section.New(section.Spec[section.None]{Key: "trivia", Title: "Trivia", Priority: -10,
			Body: strings.Repeat("fun fact ", 45), Summary: "Some trivia."}),
	).MustBind()
	for _, budget := range []int{180, 280, 330} {
		r, err := p.Render(nil, nil, prompt.WithBudget(budget, tokens.Estimate))
		if err != nil {
			panic(err)
		}
		fmt.Printf("%d:", budget)
		for _, s := range r.Report() {
			fmt.Printf(" %s=%v(%d)", s.Path, s.Mode, s.Tokens)
		}
		fmt.Println()
	}
	// Output:
	// 180: task=FULL(13) reference=SUMMARY(58) trivia=FULL(98)
	// 280: task=FULL(13) reference=FULL(211) trivia=SUMMARY(51)
	// 330: task=FULL(13) reference=FULL(211) trivia=FULL(98)
}
