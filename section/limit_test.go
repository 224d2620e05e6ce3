package section_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/section"
)

// doubling returns a template body that writes a KiB 2^levels times: each
// level calls the next one twice.
func doubling(levels int) string {
	var b strings.Builder
	for i := range levels {
		b.WriteString(`{{define "t` + strconv.Itoa(i) + `"}}{{template "t` + strconv.Itoa(i+1) + `"}}{{template "t` + strconv.Itoa(i+1) + `"}}{{end}}`)
	}
	b.WriteString(`{{define "t` + strconv.Itoa(levels) + `"}}` + strings.Repeat("x", 1024) + `{{end}}{{template "t0"}}`)
	return b.String()
}

func TestBodyOutputLimit(t *testing.T) {
	tests := []struct {
		name, body string
	}{
		{"range over a huge number", "{{range 400000}}" + strings.Repeat("0123456789", 10) + "{{end}}"},
		{"templates that double", doubling(15)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := section.New(section.Spec[section.None]{Key: "k", Title: "K", Body: tt.body})
			text, err := s.Body(nil)
			if !errors.Is(err, section.ErrBodyTooLarge) {
				t.Errorf("got %d bytes and error %v, want %v", len(text), err, section.ErrBodyTooLarge)
			}
		})
	}
	s := section.New(section.Spec[section.None]{Key: "k", Title: "K", Body: doubling(10)})
	if text, err := s.Body(nil); err != nil || len(text) != 1<<20 {
		t.Errorf("a body under the limit: got %d bytes, %v; want %d bytes", len(text), err, 1<<20)
	}
}

// TestTemplateWorkLimit runs templates that would run for hours or fill
// memory without writing past MaxBodyBytes: each fails with an error that
// says why, within the bounds, and a template inside them still runs.
func TestTemplateWorkLimit(t *testing.T) {
	// The bound is lowered, so that a test under the race detector does
	// not run a million steps; TestTemplateStepsBound checks the real one.
	defer section.SetMaxSteps(10_000)()
	recurse := `{{define "r"}}{{template "r" .}}{{template "r" .}}{{end}}`
	tests := []struct {
		name, body string
		want       error  // errors.Is
		says       string // or the message holds this
	}{
		{"a loop that writes nothing", "{{range 100000000000}}{{end}}done", section.ErrTooManySteps, ""},
		{"nested loops", "{{range 1000}}{{range 1000}}{{end}}{{end}}", section.ErrTooManySteps, ""},
		{"templates that call each other twice", recurse + `{{define "s"}}{{if .}}{{template "s" false}}{{end}}{{end}}{{template "s" true}}` +
			`{{define "t"}}{{template "t" .}}{{end}}{{range 1}}{{template "u"}}{{end}}{{define "u"}}{{range 20000}}{{end}}{{end}}`, section.ErrTooManySteps, ""},
		{"a body that calls itself by the section's key", `{{if eq (printf "%T" .) "string"}}{{if .}}{{template "k" (slice . 1)}}{{template "k" (slice . 1)}}{{end}}` +
			`{{else}}{{template "k" "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}}{{end}}`, section.ErrTooManySteps, ""},
		{"a string that doubles", `{{$x := "xxxxxxxxxxxxxxxx"}}{{range 40}}{{$x = print $x $x}}{{end}}{{len $x}}`, nil, "print: its result would be more than the 16777216 bytes a body may hold"},
		{"printf doubling", `{{$x := "xxxxxxxxxxxxxxxx"}}{{range 40}}{{$x = printf "%s%s" $x $x}}{{end}}`, nil, "printf: its result would be more than"},
		{"a printf width", `{{printf "%01000000000d" 1}}`, nil, "printf: the width or precision 1000000000 is more than the 65536"},
		{"a printf width from an argument", `{{printf "%*d" 1000000000 1}}`, nil, "printf: the argument 1000000000 is a width or precision"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := section.New(section.Spec[section.None]{Key: "k", Title: "K", Body: tt.body})
			if err := section.Validate([]*section.Section{s}); err != nil {
				t.Fatal(err)
			}
			text, err := s.Body(nil)
			if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) || (tt.says != "" && !strings.Contains(err.Error(), tt.says)) {
				t.Errorf("got %d bytes and error %v, want %v %q", len(text), err, tt.want, tt.says)
			}
		})
	}
	// A width of another integer type, as params files give (int64).
	type W struct{ W int64 }
	wide := section.New(section.Spec[W]{Key: "k", Title: "K", Body: `{{printf "%*d" .W 1}}`})
	if text, err := wide.Body(W{900_000}); err == nil || !strings.Contains(err.Error(), "printf: the argument 900000 is a width or precision") {
		t.Errorf("an int64 width: got %d bytes, %v; want it refused", len(text), err)
	}
	// Inside the bounds: loops of 10,000 iterations in all, a width at
	// the bound, strings up to MaxBodyBytes.
	for body, want := range map[string]int{
		"{{range 100}}{{range 99}}{{end}}{{end}}.":                                  1,
		`{{printf "%65536d" 1}}`:                                                    65536,
		`{{$x := "xxxxxxxxxxxxxxxx"}}{{range 20}}{{$x = print $x $x}}{{end}}{{$x}}`: 16 << 20,
	} {
		s := section.New(section.Spec[section.None]{Key: "k", Title: "K", Body: body})
		if text, err := s.Body(nil); err != nil || len(text) != want {
			t.Errorf("%s: got %d bytes, %v; want %d bytes", body, len(text), err, want)
		}
	}
}

// TestTemplateStepsBound runs a loop past the real bound once: it stops
// there, with the count in the message, which says where in the user's
// words (not the name of the function that counts).
func TestTemplateStepsBound(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a million template steps")
	}
	s := section.New(section.Spec[section.None]{Key: "k", Title: "K", Body: "{{range 100000000000}}{{end}}"})
	_, err := s.Body(nil)
	if want := `k:1:8: executing "k" at {{range}}: too many loop iterations and template calls: more than 1000000 in one render, all templates together; loop over fewer items`; !errors.Is(err, section.ErrTooManySteps) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "unfold_") {
		t.Errorf("got %v, want %q", err, want)
	}
}
