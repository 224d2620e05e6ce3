package bash

import (
	"os/exec"
	"strings"
	"testing"
)

// TestInitScriptSyntax checks init.sh, as embedded, with bash -n; the
// broken copies show that the check fails on a syntax error.
func TestInitScriptSyntax(t *testing.T) {
	bashPath, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	tests := []struct {
		name   string
		script string
		wantOK bool
	}{
		{"init.sh", initScript, true},
		{"an if left open", initScript + "\nif true; then\n", false},
		{"an unmatched brace", strings.Replace(initScript, "__unfold_fix() {", "__unfold_fix() {{", 1), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(bashPath, "-n")
			cmd.Stdin = strings.NewReader(tt.script)
			out, err := cmd.CombinedOutput()
			if ok := err == nil && len(out) == 0; ok != tt.wantOK {
				t.Errorf("bash -n: got error %v and output %q, want ok %v", err, out, tt.wantOK)
			}
		})
	}
}
