package prompt_test

import (
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/visibility"
)

type fuzzParams struct {
	Name  string
	Count int
	Items []string
}

// FuzzRender builds a prompt from an arbitrary body template and summary and
// renders it twice: building may fail with an error, rendering may fail with
// an error, but nothing panics and both renders give the same bytes.
func FuzzRender(f *testing.F) {
	for _, seed := range []struct {
		body, summary string
		summarize     bool
	}{
		{"Hello {{.Name}}", "", false},
		{"# Title\n\n{{range .Items}}- {{.}}\n{{end}}", "Summary.", true},
		{"```\n# code\n```\nSetext\n---", "s", false},
		{"{{.Missing}}", "", false},
		{"{{if .Count}}{{.Count}}{{else}}none{{end}}", "x", true},
		{"    indented\n\t\ttabs\n", "", false},
		{"{{template \"x\"}}{{define \"x\"}}{{.Name}}{{end}}", "", false},
		{"####### seven\n#no space\n  ## two", "", false},
		{"```\nunclosed", "", false},
		{"{{", "", false},
	} {
		f.Add(seed.body, seed.summary, seed.summarize)
	}
	f.Fuzz(func(t *testing.T, body, summary string, summarize bool) {
		spec := section.Spec[fuzzParams]{Key: "s", Title: "S", Body: body, Summary: summary}
		if summarize {
			spec.Visibility = visibility.Const(visibility.Summary)
		}
		child := section.New(section.Spec[fuzzParams]{Key: "c", Title: "C", Body: body})
		spec.Children = []*section.Section{child}
		tmpl, err := prompt.New("fuzz", "render", section.New(spec))
		if err != nil {
			return
		}
		params := fuzzParams{Name: "n", Count: 2, Items: []string{"a", "b"}}
		render := func() (string, error) {
			p, err := tmpl.Bind(params)
			if err != nil {
				t.Fatalf("Bind: %v", err)
			}
			r, err := p.Render(nil, nil)
			if err != nil {
				return "", err
			}
			return r.Text(), nil
		}
		a, errA := render()
		b, errB := render()
		if (errA == nil) != (errB == nil) || a != b {
			t.Fatalf("not deterministic: %q (%v) vs %q (%v)", a, errA, b, errB)
		}
		if errA == nil && !strings.HasPrefix(a, "## 1. S (s)") {
			t.Fatalf("output does not start with the heading: %q", a)
		}
	})
}
