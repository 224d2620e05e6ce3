package tools_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/tools"
)

func TestValidName(t *testing.T) {
	const rule = "names must match ^[a-zA-Z0-9_-]{1,64}$ (ASCII letters, digits, '_' and '-')"
	tests := []struct {
		name string
		in   string
		want string // "" for valid
	}{
		{"simple", "open_sections", ""},
		{"mixed", "Read-File_2", ""},
		{"one char", "x", ""},
		{"64 chars", strings.Repeat("a", 64), ""},
		{"65 chars", strings.Repeat("a", 65),
			`tools: invalid tool name "` + strings.Repeat("a", 65) + `": 65 bytes, at most 64 allowed; ` + rule},
		{"empty", "", "tools: invalid tool name: the name is empty; " + rule},
		{"space", "read file", `tools: invalid tool name "read file": character ' ' at byte 4 is not allowed; ` + rule},
		{"dot", "fs.read", `tools: invalid tool name "fs.read": character '.' at byte 2 is not allowed; ` + rule},
		{"unicode", "résumé", `tools: invalid tool name "résumé": character 'é' at byte 1 is not allowed; ` + rule},
		{"newline", "a\n", `tools: invalid tool name "a\n": character '\n' at byte 1 is not allowed; ` + rule},
		{"invalid UTF-8", "a\xff", `tools: invalid tool name "a\xff": character '�' at byte 1 is not allowed; ` + rule},
		{"very long", strings.Repeat("b", 1000),
			`tools: invalid tool name "` + strings.Repeat("b", 80) + `"...: 1000 bytes, at most 64 allowed; ` + rule},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tools.ValidName(tt.in)
			if tt.want == "" {
				if err != nil {
					t.Errorf("got %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("got nil, want %q", tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("got  %q\nwant %q", err, tt.want)
			}
			if !errors.Is(err, tools.ErrInvalidName) {
				t.Errorf("got %v, want errors.Is(err, ErrInvalidName)", err)
			}
		})
	}
}
