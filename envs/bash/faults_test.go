//go:build linux

package bash_test

import (
	"strings"
	"testing"
)

// errexitOff is the start of the note that set -e left on after a command
// was turned off.
const errexitOff = "[set -e: errexit is off again: this persistent shell does not keep it from one command to the next"

// TestSetEBetweenCommands: set -e (as in set -euo pipefail) given a
// command of its own is turned off at the prompt, saying so, since under
// it bash would exit on an expansion error (an unset variable under set
// -u, ${VAR:?}) before any trap could stop it: the shell and its state
// survive the failing command that follows. The other options stay on.
func TestSetEBetweenCommands(t *testing.T) {
	for _, fail := range []string{"echo $undefined_var", `: "${NEED:?must be set}"`, "echo ${arr[0]}", "false; echo after"} {
		t.Run(fail, func(t *testing.T) {
			s := newShell(t)
			run(t, s, "k=1; mkdir d; cd d")
			resp := run(t, s, "set -euo pipefail")
			if !resp.Success || !strings.Contains(resp.Output, errexitOff) {
				t.Errorf("set -euo pipefail: got %+v, want success and the note %q", resp, errexitOff)
			}
			want(t, s, "[[ $- == *e* ]] && echo e; [[ $- == *u* ]] && echo u; shopt -qo pipefail && echo pipefail", "u\npipefail", true)
			resp = run(t, s, fail)
			if strings.Contains(resp.Output, "shell ended") || strings.Contains(resp.Output, "had ended") {
				t.Fatalf("%s: got %q, want the shell kept", fail, resp.Output)
			}
			want(t, s, `echo "k=$k ${PWD##*/}"`, "k=1 d", true)
		})
	}
}

// TestSetEExpansionErrorEnds: an expansion error under set -e turned on in
// the same command ends bash itself before any trap runs; the response
// names that likely cause, and the next command has a new shell.
func TestSetEExpansionErrorEnds(t *testing.T) {
	for _, command := range []string{"k=2; set -eu; echo $undefined_var", "set -o errexit; : ${NEED:?must be set}"} {
		t.Run(command, func(t *testing.T) {
			s := newShell(t)
			resp := run(t, s, command)
			if !strings.Contains(resp.Output, "[The shell ended during this command") || !strings.Contains(resp.Output, "[Likely cause: the command turned on set -e") {
				t.Errorf("got %q, want the shell ended, with the likely cause", resp.Output)
			}
			if resp := run(t, s, "echo alive"); !strings.HasPrefix(resp.Output, "[The shell had ended (exited with status 1)") || !strings.HasSuffix(resp.Output, "\nalive") {
				t.Errorf("next command: got %q, want a new shell saying so", resp.Output)
			}
		})
	}
}

// TestSyntaxErrorShownAsCommand: bash's messages about the command file
// name the command itself, as bash -c's do ("bash: line N: ..."), with a
// line number within the command, never the private file's path.
func TestSyntaxErrorShownAsCommand(t *testing.T) {
	s := newShell(t)
	for _, c := range []struct{ command, want string }{
		{"(a", "bash: line 1: syntax error: unexpected end of file"},
		{"select * from t;", "bash: line 1: syntax error near unexpected token `from'\nbash: line 1: `select * from t;'"},
		{"echo a\nif true; then\necho b", "a\nbash: line 3: syntax error: unexpected end of file"},
		{"echo a\ncd /nonexistent-dir", "a\nbash: cd: /nonexistent-dir: No such file or directory"},
	} {
		t.Run(c.command, func(t *testing.T) {
			if resp := run(t, s, c.command); resp.Output != c.want || resp.Success {
				t.Errorf("got {%q, %v}, want {%q, false}", resp.Output, resp.Success, c.want)
			}
		})
	}
}
