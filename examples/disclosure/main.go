// Command disclosure shows progressive disclosure end to end: a prompt with
// two summarized sections, one that only holds content and one that carries a
// tool, opened the way a model would open them.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/afero"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tools"
	"github.com/unfold-dev/unfold/visibility"
)

// Task is the params of the task section.
type Task struct {
	Goal string
}

// VerifyInput is the input of the verify_result tool.
type VerifyInput struct {
	Expression string  `json:"expression" description:"The arithmetic that was done, such as \"17 * 23\"."`
	Result     float64 `json:"result" description:"The result to check."`
}

func newTemplate() *prompt.Template {
	verify := tools.MustNew("verify_result", "Check the result of a multiplication.",
		func(_ context.Context, _ tools.Context, in VerifyInput) (string, error) {
			var a, b float64
			if _, err := fmt.Sscanf(in.Expression, "%g * %g", &a, &b); err != nil {
				return "", fmt.Errorf("expression %q is not of the form \"a * b\"", in.Expression)
			}
			if a*b != in.Result {
				return fmt.Sprintf("Wrong: %s = %g, not %g.", in.Expression, a*b, in.Result), nil
			}
			return "Correct.", nil
		})
	return prompt.MustNew("examples", "disclosure",
		section.New(section.Spec[Task]{
			Key:   "task",
			Title: "Task",
			Body:  "Complete the following task: {{.Goal}}",
		}),
		section.New(section.Spec[section.None]{
			Key:   "style",
			Title: "Style Guide",
			Body: `
				Answer in one sentence.

				# Numbers
				Write numbers as digits and keep units.`,
			Summary:    "A style guide for answers is available.",
			Visibility: visibility.Const(visibility.Summary),
		}),
		section.New(section.Spec[section.None]{
			Key:        "verification",
			Title:      "Verification",
			Body:       "Call `verify_result` with the expression and your result before you answer.",
			Summary:    "Tools to verify results are available.",
			Visibility: visibility.Const(visibility.Summary),
			Tools:      []*tools.Tool{verify},
		}),
	)
}

// openSections calls open_sections as a model would, with keys and a reason.
func openSections(r *prompt.Rendered, tc tools.Context, reason string, keys ...string) (tools.Result, error) {
	args, _ := json.Marshal(prompt.OpenSectionsInput{SectionKeys: keys, Reason: reason})
	return r.Tool(prompt.OpenSectionsName).Call(context.Background(), tc, args)
}

func toolNames(r *prompt.Rendered) string {
	var names []string
	for _, t := range r.Tools() {
		names = append(names, t.Name())
	}
	return strings.Join(names, ", ")
}

func run(w io.Writer) error {
	sess := session.New()
	fs := afero.NewMemMapFs()
	p, err := newTemplate().Bind(Task{Goal: "multiply 17 by 23"})
	if err != nil {
		return err
	}
	r, err := p.Render(sess, fs)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "=== First render (tools: %s)\n\n%s\n\n", toolNames(r), r.Text())

	// The model opens the content-only section: its content is written to a
	// context file and the turn goes on.
	tc := tools.Context{Session: sess, FS: fs}
	res, err := openSections(r, tc, "I need the answer format", "style")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "=== open_sections [style] -> success=%v\n%s\n\n", res.Success, res.Message)
	data, err := afero.ReadFile(fs, "context/style.md")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "=== context/style.md\n%s\n", data)

	// The model opens the section that carries a tool: the call returns the
	// expansion error, the overrides go into the session, and the prompt is
	// rendered again with the new tool.
	_, err = openSections(r, tc, "I want to check my multiplication", "verification")
	if !errors.Is(err, prompt.ErrVisibilityExpansion) {
		return fmt.Errorf("want a visibility expansion, got %v", err)
	}
	fmt.Fprintf(w, "=== open_sections [verification] -> %v\n\n", err)
	if err := prompt.ApplyExpansion(sess, err); err != nil {
		return err
	}
	r, err = p.Render(sess, fs)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "=== Second render (tools: %s)\n\n%s\n\n", toolNames(r), r.Text())

	res, err = r.Tool("verify_result").Call(context.Background(), tc, json.RawMessage(`{"expression":"17 * 23","result":391}`))
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "=== verify_result -> success=%v\n%s\n", res.Success, res.Message)
	return nil
}

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "disclosure:", err)
		os.Exit(1)
	}
}
