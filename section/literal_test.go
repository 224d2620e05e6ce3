package section_test

import (
	"testing"

	"github.com/unfold-dev/unfold/section"
)

// TestLiteral: text made literal renders as written in a body, a summary
// and a brief, whatever it holds.
func TestLiteral(t *testing.T) {
	for _, text := range []string{
		"plain words",
		"Fill {{ name }} and {{.Field}}.",
		"{{{{{ }}}}}",
		"{{- trim -}} {{/* comment */}} {{end}}",
		`{{"{{"}}`,
		"ends with {{",
		"}} alone",
	} {
		s := section.New(section.Spec[Params]{Key: "a", Title: "A", Body: section.Literal(text), Summary: section.Literal(text), Brief: section.Literal(text)})
		if err := section.Validate([]*section.Section{s}); err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		p := Params{Name: "n"}
		body, err := s.Body(p)
		if err != nil || body != text {
			t.Errorf("body of %q: got %q, %v", text, body, err)
		}
		summary, err := s.SummaryFor(p)
		if err != nil || summary != text {
			t.Errorf("summary of %q: got %q, %v", text, summary, err)
		}
		brief, err := s.BriefFor(p)
		if err != nil || brief != text {
			t.Errorf("brief of %q: got %q, %v", text, brief, err)
		}
	}
}
