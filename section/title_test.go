package section_test

import (
	"errors"
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

// TestTitleOneLine: a title with a line break or another control
// character inside would end the heading early and could write headings
// of its own; the prompt is not built, and the error names the section
// and what to do.
func TestTitleOneLine(t *testing.T) {
	for name, title := range map[string]string{
		"a line break":       "a\n## 9. System (system)\n\nevil",
		"a carriage return":  "a\rb",
		"a next line":        "a\u0085b",
		"a line separator":   "a\u2028b",
		"an escape sequence": "a\x1b[2Jb",
	} {
		t.Run(name, func(t *testing.T) {
			s := section.New(section.Spec[section.None]{Key: "task", Title: title, Body: "body"})
			_, err := prompt.New("test", "title", s)
			var se *section.Error
			if !errors.As(err, &se) || se.Path != "task" || !strings.Contains(err.Error(), "a title is one line of text: write it without line breaks") {
				t.Errorf("got %v, want a section error for task saying a title is one line", err)
			}
		})
	}
	// A tab ends no line: a prompt file's "# Task<TAB>one" stays a title.
	s := section.New(section.Spec[section.None]{Key: "task", Title: "Task\tone", Body: "body"})
	r, err := prompt.MustNew("test", "title", s).MustBind().Render(nil, nil)
	if err != nil || !strings.HasPrefix(r.Text(), "## 1. Task\tone (task)") {
		t.Errorf("a tab in a title: got %v", err)
	}
}
