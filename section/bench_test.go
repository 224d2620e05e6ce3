package section_test

import (
	"fmt"
	"testing"

	"github.com/unfold-dev/unfold/section"
)

// BenchmarkTemplateBody executes a body that loops, compares and formats:
// what the bounds on template work cost an execution.
func BenchmarkTemplateBody(b *testing.B) {
	type item struct {
		Name string
		N    int
	}
	type P struct{ Items []item }
	var p P
	for i := range 100 {
		p.Items = append(p.Items, item{fmt.Sprintf("item-%d", i), i % 7})
	}
	s := section.New(section.Spec[P]{Key: "k", Title: "K",
		Body: `{{range .Items}}{{if gt .N 3}}{{printf "%s: %d" .Name .N}}{{else}}{{print .Name}}{{end}}{{"\n"}}{{end}}`})
	want, err := s.Body(p)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if got, _ := s.Body(p); got != want {
			b.Fatalf("got %q", got)
		}
	}
}

// BenchmarkTemplateSmall executes a short body that compares: the fixed
// cost of an execution that charges a Work.
func BenchmarkTemplateSmall(b *testing.B) {
	type P struct{ N int }
	s := section.New(section.Spec[P]{Key: "k", Title: "K", Body: `{{if eq .N 3}}three{{else}}{{.N}}{{end}}`})
	for b.Loop() {
		if got, _ := s.Body(P{3}); got != "three" {
			b.Fatalf("got %q", got)
		}
	}
}
