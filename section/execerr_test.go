package section_test

import (
	"math"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/section"
)

// TestComparisons: numbers compare as numbers whatever their types (a
// params file gives 7.5 as a float64, a template writes 3); the rest as
// text/template compares.
func TestComparisons(t *testing.T) {
	params := map[string]any{"n": 7.5, "i": int64(7), "u": uint8(7), "neg": -1, "big": 1.8446744073709552e19, "nan": math.NaN(), "s": "b", "nil": nil, "list": []int{1}}
	tests := []struct{ expr, want string }{
		{"gt .n 3", "true"}, {"lt .n 3", "false"}, {"eq .n 7.5", "true"}, {"ge .i 7.0", "true"},
		{"le .i 6.5", "false"}, {"ne .i 7.0", "false"}, {"eq .u 7", "true"}, {"lt .neg .u", "true"},
		{"gt .u .neg", "true"}, {"eq .big 3", "false"}, {"gt .big 1000", "true"},
		{"eq .n 1 2 7.5", "true"}, {"eq .nan .nan", "false"}, {"lt .nan 1", "false"},
		{`lt .s "c"`, "true"}, {`eq .s "b"`, "true"}, {"eq .nil .nil", "true"}, {"eq .nil 1", "false"},
		{"eq true true", "true"}, {`eq .s "a" "b"`, "true"},
		// Past 2^53, where float64 rounds: 2^53+1 is not 2^53.
		{"eq 9007199254740993 9007199254740992.0", "false"}, {"gt 9007199254740993 9007199254740992.0", "true"},
		{"eq .i 7.0000000000000001", "true"},
	}
	for _, tt := range tests {
		s := section.New(section.Spec[map[string]any]{Key: "k", Title: "K", Body: "{{" + tt.expr + "}}"})
		if got, err := s.Body(params); err != nil || got != tt.want {
			t.Errorf("%s: got %q, %v; want %s", tt.expr, got, err, tt.want)
		}
	}
	for expr, says := range map[string]string{
		"lt .s 3":        `incompatible types for comparison: string and int; compare values of one type: a number with a number, a string with a string ("3" with 3 does not compare)`,
		"lt true true":   "invalid type for comparison",
		"lt .list 1":     "invalid type for comparison",
		"eq .list 1":     "incompatible types for comparison",
		"eq .list .list": "non-comparable type",
		"eq 1":           "missing argument for comparison",
	} {
		s := section.New(section.Spec[map[string]any]{Key: "k", Title: "K", Body: "{{" + expr + "}}"})
		if _, err := s.Body(params); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("%s: got %v, want %q", expr, err, says)
		}
	}
}

// TestTemplateErrorsSayWhatToDo: a key missing from a summary's or a
// brief's params fails with what to do, as a prompt file's body does.
func TestTemplateErrorsSayWhatToDo(t *testing.T) {
	params := map[string]any{}
	s := section.New(section.Spec[map[string]any]{Key: "k", Title: "K", Body: "b", Summary: `{{.name}}`, Brief: `x {{.name}}`})
	if _, err := s.SummaryFor(params); err == nil || err.Error() != `summary template: template: k:1:2: executing "k" at <.name>: map has no entry for key "name"; give it in the params` {
		t.Errorf("summary: got %v, want it to say to give the key in the params", err)
	}
	if _, err := s.BriefFor(params); err == nil || !strings.HasSuffix(err.Error(), "; give it in the params") {
		t.Errorf("brief: got %v, want it to say to give the key in the params", err)
	}
}
