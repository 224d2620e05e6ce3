package section_test

import (
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
)

// TestTitleTrimmed: space around a title is not part of it, so the heading
// ends at the title and a summary's suffix follows it as usual.
func TestTitleTrimmed(t *testing.T) {
	cases := []struct{ name, title string }{
		{"leading and trailing spaces", "  Setup  "},
		{"trailing newline", "Setup\n"},
		{"tabs and a line of its own", "\n\tSetup\t\n"},
		{"already trimmed", "Setup"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := section.New(section.Spec[section.None]{Key: "setup", Title: c.title, Body: "Install it."})
			if got := s.Title(); got != "Setup" {
				t.Errorf("Title: got %q, want %q", got, "Setup")
			}
			r, err := prompt.MustNew("test", "title", s).MustBind().Render(nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if want := "## 1. Setup (setup)\n\nInstall it."; r.Text() != want {
				t.Errorf("text: got %q, want %q", r.Text(), want)
			}
			if strings.Contains(r.Report()[0].Title, " ") {
				t.Errorf("report title: got %q", r.Report()[0].Title)
			}
		})
	}
}
