package bash

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/internal/procs"
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

// TestAnswerSignalCaught: the shell catches the very signal number the
// environment sends before an answer (init.sh traps it by number, as
// bashes built on other C libraries name real-time signals differently).
func TestAnswerSignalCaught(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	p, err := startProc("bash", t.TempDir(), os.Environ(), procs.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.stop()
	if !catches(p.pid, sigAnswered) {
		t.Errorf("the shell does not catch signal %d, which is sent before an answer", int(sigAnswered))
	}
}

// TestDropNotices: bash's notices of an end of file ignored are dropped
// as whole lines, and so are the two lines of one broken by a newline
// (two shells printing at once); the same words within a line of a
// command's output stay.
func TestDropNotices(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a\n" + eofNotice + eofNotice + "b\n", "a\nb\n"},
		{eofNotice, ""},
		{`prefix: Use "exit" to leave the shell.` + "\ndone\n", `prefix: Use "exit" to leave the shell.` + "\ndone\n"},
		{"no notice", "no notice"},
		{"a\nUse \n\"exit\" to leave the shell.\nb\n", "a\nb\n"},
		{"Use \"exit\" to \nleave the shell.\n", ""},
		{"U\nse \"exit\" to le\n\nave the shell.\nb", "b"},
		{"Use \"ex\nit\" to leave the shell.", "Use \"ex\nit\" to leave the shell."},
		{"\n" + eofNotice + "b\n", "\nb\n"},
		{"Use \nUse \n\"exit\" to leave the shell.\n", "Use \n"},
		{"Use \nother\n" + eofNotice + "Use \n", "Use \nother\nUse \n"},
		{"a\n" + eofNotice + "Use \"exit\" to lea", "a\nUse \"exit\" to lea"},
		{"a\nUse \"ex", "a\nUse \"ex"},
		{"hi\nUse \"exit\" to", "hi\nUse \"exit\" to"},
		{"a\nUse \"exit\" to leave the shell.", "a\nUse \"exit\" to leave the shell."},
		{"a\nUse \"exit\" to leave the shells.\n", "a\nUse \"exit\" to leave the shells.\n"},
	} {
		if got := dropNotices(tc.in); got != tc.want {
			t.Errorf("dropNotices(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
