package prompt

import (
	"fmt"
	"testing"

	"github.com/unfold-dev/unfold/internal/markdown"
	"github.com/unfold-dev/unfold/section"
)

func TestShiftHeadings(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		shift    int
		want     string
	}{
		{"no headings", "text\n- list\n", 2, "text\n- list\n"},
		{"atx", "# A\n\n## B", 2, "### A\n\n#### B"},
		{"cap at six", "#### A\n###### B", 3, "###### A\n###### B"},
		{"closing hashes kept", "# A #", 1, "## A #"},
		{"indented atx", "  # A", 1, "  ## A"},
		{"fenced code untouched", "```\n# not\n```\n# yes", 1, "```\n# not\n```\n## yes"},
		{"indented code untouched", "para\n\n    # not", 1, "para\n\n    # not"},
		{"setext level 1", "Title\n=====\n\nText", 2, "### Title\n\nText"},
		{"setext level 2", "Sub\n---", 2, "#### Sub"},
		{"setext two lines", "Long\ntitle\n===", 1, "## Long title"},
		{"thematic break is not a heading", "a\n\n---\n\nb", 2, "a\n\n---\n\nb"},
		{"hash without space", "#tag\n#", 1, "#tag\n##"},
		{"seven hashes is text", "####### x", 1, "####### x"},
		{"quote", "> # Q", 1, "> ## Q"},
		{"list item", "- # L\n- x", 1, "- ## L\n- x"},
		{"ordered list item", "1. # L", 1, "1. ## L"},
		{"setext starting with a hash", "#hashtag\n---", 2, "#### #hashtag"},
		{"zero shift", "# A", 0, "# A"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := shiftHeadings(tc.in, tc.shift); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestHeadingsSize checks that the headings buffer is sized exactly, so
// building a template allocates it once, across one-, two- and three-digit
// numbers and nesting.
func TestHeadingsSize(t *testing.T) {
	leaf := func(key string) *section.Section {
		return section.New(section.Spec[section.None]{Key: key, Title: "T " + key})
	}
	var wide []*section.Section
	for i := range 120 {
		wide = append(wide, leaf(fmt.Sprintf("k%d", i)))
	}
	deep := section.New(section.Spec[section.None]{Key: "a", Title: "A", Children: []*section.Section{
		section.New(section.Spec[section.None]{Key: "b", Title: "B", Children: []*section.Section{
			section.New(section.Spec[section.None]{Key: "c", Title: "C", Children: []*section.Section{
				section.New(section.Spec[section.None]{Key: "d", Title: "D", Children: []*section.Section{
					section.New(section.Spec[section.None]{Key: "e", Title: "E", Children: wide}),
				}}),
			}}),
		}}),
	}})
	for name, list := range map[string][]*section.Section{"wide": wide, "deep": {deep, leaf("z")}} {
		t.Run(name, func(t *testing.T) {
			tmpl, err := New("ns", "k", list...)
			if err != nil {
				t.Fatal(err)
			}
			got := 0
			for _, n := range tmpl.nodes {
				got += len(n.heading)
			}
			if want := headingsSize(list, 2, 0, 0); got != want {
				t.Errorf("headings take %d bytes, headingsSize says %d", got, want)
			}
		})
	}
}

// FuzzPlainBody checks that a body plainBody passes through comes out of it
// as the full processing (dedent, fence check, heading shift) would leave it.
func FuzzPlainBody(f *testing.F) {
	for _, s := range []string{"plain text\n", "\n\n  indented\n  body", "# heading", "- item\n- # heading in a list",
		"text\n===", "```go\nx\n```", "a\n\n   b\n", " \t\r\nx\r\n", "1. one\n2) two", "> quote\n>\n> # h", "~~~\nx"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		body, ok := plainBody([]byte(s))
		if !ok {
			return
		}
		dedented := markdown.Dedent(s)
		if line := markdown.OpenFence(dedented); line > 0 {
			t.Fatalf("plainBody(%q) passed a body with an open fence on line %d", s, line)
		}
		for _, shift := range []int{2, 4} {
			if want := shiftHeadings(dedented, shift); string(body) != want {
				t.Fatalf("plainBody(%q) = %q, processing gives %q", s, body, want)
			}
		}
	})
}
