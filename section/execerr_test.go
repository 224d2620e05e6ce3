package section_test

import (
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/section"
)

// TestTemplateErrorsSayWhatToDo: a number with a fraction compared with
// an integer, and a key missing from a summary's params, fail with what
// to do.
func TestTemplateErrorsSayWhatToDo(t *testing.T) {
	params := map[string]any{"n": 7.5, "s": "x", "big": 1.8446744073709552e19}
	tests := []struct {
		name, body, summary, says string
	}{
		{"float greater than an integer", `{{if gt .n 3}}big{{end}}`, "", "incompatible types for comparison: float64 and int; a number with a fraction compares with numbers written with one: write the integer with one (3 as 3.0), or give the param as an integer"},
		{"a too large integer", `{{if eq .big 3}}x{{end}}`, "", "write the integer with one (3 as 3.0)"},
		{"a string and an integer", `{{if lt .s 3}}x{{end}}`, "", "incompatible types for comparison: string and int; compare values of one type"},
		{"in a summary", "b", `{{if ge .n 1}}x{{end}}`, "summary template: template: k:1:5: executing \"k\" at <ge .n 1>: error calling ge: incompatible types for comparison: float64 and int; a number with a fraction"},
		{"a missing key in a summary", "b", `{{.name}}`, `summary template: template: k:1:2: executing "k" at <.name>: map has no entry for key "name"; give it in the params`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := section.New(section.Spec[map[string]any]{Key: "k", Title: "K", Body: tt.body, Summary: tt.summary})
			var err error
			if tt.summary != "" {
				_, err = s.SummaryFor(params)
			} else {
				_, err = s.Body(params)
			}
			if err == nil || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("got %v, want %q", err, tt.says)
			}
		})
	}
	s := section.New(section.Spec[map[string]any]{Key: "k", Title: "K", Body: "b", Brief: `{{.name}}`, Summary: "s"})
	if _, err := s.BriefFor(params); err == nil || !strings.HasSuffix(err.Error(), "; give it in the params") {
		t.Errorf("brief: got %v, want it to say to give the key in the params", err)
	}
}
