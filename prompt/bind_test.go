package prompt_test

import (
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/tools"
)

type Other struct{ X int }

func TestBind(t *testing.T) {
	tmpl := prompt.MustNew("test", "bind",
		section.New(section.Spec[Task]{Key: "task", Title: "Task", Body: "{{.Goal}}"}),
		section.New(section.Spec[Task]{Key: "again", Title: "Again", Body: "{{.Goal}}!"}),
		section.New(section.Spec[none]{Key: "plain", Title: "Plain", Body: "No params."}),
	)
	for _, tc := range []struct {
		name   string
		params []any
		want   string // substring of the error; empty for success
	}{
		{"value", []any{Task{Goal: "g"}}, ""},
		{"pointer", []any{&Task{Goal: "g"}}, ""},
		{"missing", nil, "missing params of type prompt_test.Task (needed by section task, again)"},
		{"duplicate", []any{Task{}, Task{}}, "duplicate params of type prompt_test.Task"},
		{"unused", []any{Task{}, Other{}}, "unused params of type prompt_test.Other: no section takes it"},
		{"wrong type", []any{"a string"}, "unused params of type string"},
		{"nil", []any{Task{}, nil}, "params 2 is nil"},
		{"nil pointer", []any{(*Task)(nil)}, "params 1 is a nil *prompt_test.Task"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := tmpl.Bind(tc.params...)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("got %v, want nil", err)
				}
				r, err := p.Render(nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				if want := "## 1. Task (task)\n\ng\n\n## 2. Again (again)\n\ng!\n\n## 3. Plain (plain)\n\nNo params."; r.Text() != want {
					t.Errorf("got %q, want %q", r.Text(), want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	ok := section.New(section.Spec[none]{Key: "a", Title: "A"})
	for _, tc := range []struct {
		name, ns, key string
		sections      []*section.Section
		want          string
	}{
		{"empty namespace", "", "k", []*section.Section{ok}, `namespace "" must be non-empty`},
		{"bad key", "ns", "Bad Key", []*section.Section{ok}, `template key "Bad Key" must match`},
		{"no sections", "ns", "k", nil, "no sections"},
		{"invalid section", "ns", "k", []*section.Section{section.New(section.Spec[none]{Key: "a.b", Title: "A"})}, `prompt: new ns/k: section a.b: key "a.b"`},
		{"open_sections reserved", "ns", "k", []*section.Section{section.New(section.Spec[none]{Key: "a", Title: "A",
			Tools: []*tools.Tool{echoTool("open_sections")}})}, `tool name "open_sections" is reserved`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := prompt.New(tc.ns, tc.key, tc.sections...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
