package section_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/tools"
	"github.com/unfold-dev/unfold/visibility"
)

type none = section.None

type Params struct {
	Name  string
	Items []Item
	Tags  map[string]string
}

type Item struct{ Label string }

func (p Params) Upper() string { return strings.ToUpper(p.Name) }

func leaf(key string) *section.Section {
	return section.New(section.Spec[none]{Key: key, Title: "T"})
}

type in struct {
	X string `json:"x"`
}

func tool(name string) *tools.Tool {
	return tools.MustNew(name, "A tool.", func(context.Context, tools.Context, in) (string, error) { return "", nil })
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name     string
		sections []*section.Section
		reserved []string
		want     []string // substrings of the error, each required
	}{
		{"key with dots", []*section.Section{leaf("a.b")}, nil, []string{`section a.b: key "a.b" must match`}},
		{"key with spaces", []*section.Section{leaf("a b")}, nil, []string{`key "a b" must match`}},
		{"uppercase key", []*section.Section{leaf("Intro")}, nil, []string{`key "Intro" must match`}},
		{"65 characters", []*section.Section{leaf(strings.Repeat("k", 65))}, nil, []string{"at most 64 characters"}},
		{"path traversal", []*section.Section{leaf("../x")}, nil, []string{`key "../x" must match`}},
		{"empty key", []*section.Section{leaf("")}, nil, []string{`key "" must match`}},
		{"duplicate siblings", []*section.Section{leaf("a"), leaf("a")}, nil, []string{`section a: duplicate key "a" among siblings`}},
		{"nested path in error", []*section.Section{section.New(section.Spec[none]{Key: "p", Title: "P", Children: []*section.Section{leaf("Bad")}})}, nil, []string{"section p.Bad: key"}},
		{"brief without summary", []*section.Section{section.New(section.Spec[none]{Key: "a", Title: "A", Brief: "short"})}, nil, []string{"section a: a brief needs a summary"}},
		{"separate without summary", []*section.Section{section.New(section.Spec[none]{Key: "a", Title: "A", Separate: true})}, nil, []string{"section a: a separate section needs a summary"}},
		{"empty title", []*section.Section{section.New(section.Spec[none]{Key: "a"})}, nil, []string{"section a: title is empty"}},
		{"title of only space", []*section.Section{section.New(section.Spec[none]{Key: "a", Title: " \t\n "})}, nil, []string{"section a: title is empty"}},
		{"unknown template field", []*section.Section{section.New(section.Spec[Params]{Key: "a", Title: "A", Body: "{{.Nmae}}"})}, nil,
			[]string{"section a: body template references .Nmae, but section_test.Params has no field or method Nmae"}},
		{"missing method", []*section.Section{section.New(section.Spec[Params]{Key: "a", Title: "A", Body: "{{.Lower}}"})}, nil, []string{"no field or method Lower"}},
		{"field inside range", []*section.Section{section.New(section.Spec[Params]{Key: "a", Title: "A", Body: "{{range .Items}}{{.Lable}}{{end}}"})}, nil, []string{"section_test.Item has no field or method Lable"}},
		{"field inside with", []*section.Section{section.New(section.Spec[Params]{Key: "a", Title: "A", Body: "{{with .Items}}{{.Foo}}{{end}}"})}, nil, []string{"no field or method Foo"}},
		{"root variable", []*section.Section{section.New(section.Spec[Params]{Key: "a", Title: "A", Body: "{{range .Items}}{{$.Nope}}{{end}}"})}, nil, []string{"no field or method Nope"}},
		{"field on none", []*section.Section{section.New(section.Spec[none]{Key: "a", Title: "A", Body: "{{.X}}"})}, nil, []string{"struct {} has no field or method X"}},
		{"template syntax", []*section.Section{section.New(section.Spec[Params]{Key: "a", Title: "A", Body: "{{.Name"})}, nil, []string{"section a: body template:"}},
		{"unclosed fence", []*section.Section{section.New(section.Spec[none]{Key: "a", Title: "A", Body: "text\n```go\ncode"})}, nil, []string{"section a: body opens a code fence on line 2"}},
		{"indented unclosed fence", []*section.Section{section.New(section.Spec[none]{Key: "a", Title: "A", Body: "\t```go\n\tx := 1\n"})}, nil, []string{"section a: body opens a code fence on line 1"}},
		{"summary without summary", []*section.Section{section.New(section.Spec[none]{Key: "a", Title: "A", Visibility: visibility.Const(visibility.Summary)})}, nil,
			[]string{"SUMMARY visibility requested for section 'a' but no summary template is defined."}},
		{"duplicate tool", []*section.Section{
			section.New(section.Spec[none]{Key: "a", Title: "A", Tools: []*tools.Tool{tool("t")}}),
			section.New(section.Spec[none]{Key: "b", Title: "B", Children: []*section.Section{section.New(section.Spec[none]{Key: "c", Title: "C", Tools: []*tools.Tool{tool("t")}})}}),
		}, nil, []string{`section b.c: duplicate tool name "t" (also declared by section a)`}},
		{"reserved tool", []*section.Section{section.New(section.Spec[none]{Key: "a", Title: "A", Tools: []*tools.Tool{tool("open_sections")}})}, []string{"open_sections"},
			[]string{`section a: tool name "open_sections" is reserved`}},
		{"zero tool", []*section.Section{section.New(section.Spec[none]{Key: "a", Title: "A", Tools: []*tools.Tool{tool("t"), {}}})}, nil,
			[]string{"section a: tool 2 has no name or handler: make tools with tools.New or tools.NewRaw"}},
		{"nil child", []*section.Section{section.New(section.Spec[none]{Key: "a", Title: "A", Children: []*section.Section{nil}})}, nil, []string{"section a: child 1 is nil"}},
		{"non-struct params", []*section.Section{section.New(section.Spec[string]{Key: "a", Title: "A"})}, nil, []string{"params type string is a string; use a struct type (or a map with string keys)"}},
		{"body and content", []*section.Section{section.New(section.Spec[none]{Key: "a", Title: "A", Body: "x", Content: func(none) (string, error) { return "", nil }})}, nil, []string{"both Body and Content are set"}},
		{"several problems at once", []*section.Section{leaf("A"), leaf("b.c")}, nil, []string{`key "A"`, `key "b.c"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := section.Validate(tc.sections, tc.reserved...)
			if err == nil {
				t.Fatalf("got nil, want an error containing %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("got %q, want it to contain %q", err, w)
				}
			}
			var se *section.Error
			if !errors.As(err, &se) {
				t.Errorf("got %T, want a *section.Error inside", err)
			}
		})
	}
}

func TestValidateAccepts(t *testing.T) {
	ok := []*section.Section{
		section.New(section.Spec[Params]{Key: "a", Title: "A", Body: "{{.Name}} {{.Upper}} {{.Tags.anything}} {{range $i, $it := .Items}}{{$it.Label}}{{.Label}}{{end}} {{with .Name}}{{.}}{{end}}"}),
		section.New(section.Spec[none]{Key: "b_2", Title: "B", Body: "```\n# closed\n```\n~~~~\n```\n~~~~", Summary: "s", Visibility: visibility.Const(visibility.Summary)}),
		section.New(section.Spec[none]{Key: strings.Repeat("k", 64), Title: "Long"}),
	}
	if err := section.Validate(ok); err != nil {
		t.Errorf("got %v, want nil", err)
	}
}

func TestValidateSharedSection(t *testing.T) {
	s := section.New(section.Spec[none]{Key: "a", Title: "A"})
	parent := section.New(section.Spec[none]{Key: "p", Title: "P", Children: []*section.Section{s}})
	if err := section.Validate([]*section.Section{parent, s}); err != nil {
		t.Errorf("the same section in two places: got %v, want nil", err)
	}
}

func TestBodyAndEnabled(t *testing.T) {
	s := section.New(section.Spec[Params]{Key: "a", Title: "A", Body: "Hi {{.Name}}", Enabled: func(p Params) bool { return p.Name != "" }})
	if got, err := s.Body(Params{Name: "Ann"}); err != nil || got != "Hi Ann" {
		t.Errorf("Body: got %q, %v; want %q", got, err, "Hi Ann")
	}
	if ok, err := s.Enabled(Params{}, nil); ok || err != nil {
		t.Errorf("Enabled(empty): got %v, %v; want false, nil", ok, err)
	}
	if !s.Dynamic() || s.Live() {
		t.Errorf("Dynamic/Live: got %v/%v, want true/false", s.Dynamic(), s.Live())
	}
}
