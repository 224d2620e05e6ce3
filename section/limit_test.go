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
