package interactive

import (
	"regexp"
	"testing"
)

func TestCleanOutput(t *testing.T) {
	lead := regexp.MustCompile(`^(?:(?:>>> )|(?:` + DefaultContinuation + `))`)
	for _, c := range []struct{ name, out, command, want string }{
		{"no echo", "2", "1+1", "2"},
		{"echo", "1+1\n2", "1+1", "2"},
		{"prompts between lines", ">>> 10", "x=5\nprint(x*2)", "10"},
		{"continuation prompts", "... ... >>> 3", "def f():\n  return 3\n\nf()", "3"},
		{"echo with prompts", "x=5\n>>> print(x)\n5", "x=5\nprint(x)", "5"},
		{"output like input without echo", "    1/0\nZeroDivisionError", "1/0", "    1/0\nZeroDivisionError"},
		{"prompts bounded by lines sent", ">>> >>> text", "a\nb", ">>> text"},
		{"no prompt before the first line", ">>> text", "print(s)", ">>> text"},
		{"output like prompts after the echo", "print(s)\n>>> a\n... b\n-> c", "print(s)", ">>> a\n... b\n-> c"},
		{"output like prompts between echoes", "x=1\n>>> print(s)\n>>> a\n>>> y=2", "x=1\nprint(s)\ny=2", ">>> a"},
		{"blank echo after a prompt", "for i in r:\n...     print(i)\n... \n0\n\n1", "for i in r:\n    print(i)\n\n", "0\n\n1"},
		{"blank output kept", "print()\n\n>>> \n>>> 1\n1", "print()\n\n1", "\n1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := cleanOutput(c.out, c.command, lead); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// TestLeadCount: the prompts at a line's start are counted one by one, as
// a line editor given several lines prints them.
func TestLeadCount(t *testing.T) {
	lead := regexp.MustCompile(`^(?:(?:>>> )|(?:` + DefaultContinuation + `))`)
	for _, c := range []struct {
		line string
		want int
	}{
		{"", 0},
		{"42", 0},
		{">>> ", 1},
		{">>> 42", 1},
		{">>> ... ... >>> ", 4},
		{"42 >>> ", 0},
	} {
		if got := leadCount(lead, []byte(c.line)); got != c.want {
			t.Errorf("leadCount(%q): got %d, want %d", c.line, got, c.want)
		}
	}
}

// TestTypistCountsTheCommand: the bytes typed of a command with a tab,
// typed as a paste, count the command's bytes, not the brackets.
func TestTypistCountsTheCommand(t *testing.T) {
	command := "x = 'a\tb'\nprint(x)\n"
	text := pasteTabs(command)
	for _, c := range []struct{ written, want int }{
		{0, 0},
		{3, 0},         // inside the opening bracket
		{6, 0},         // the opening bracket
		{7, 1},         // "x"
		{6 + 9, 9},     // "x = 'a\tb'"
		{6 + 9 + 3, 9}, // inside the closing bracket
		{len(text), len(command)},
	} {
		ty := &typist{text: text, total: len(command)}
		ty.typed.Store(int64(c.written))
		if got := ty.command(); got != c.want {
			t.Errorf("%d bytes of %q written: got %d of the command's bytes, want %d", c.written, text, got, c.want)
		}
	}
	// Typed to a program in canonical mode, an ESC is the command's own.
	colour := "print('\x1b[31mred')\n"
	ty := &typist{text: colour, total: len(colour)}
	ty.typed.Store(9)
	if got := ty.command(); got != 9 {
		t.Errorf("9 bytes of %q written, not as a paste: got %d of the command's bytes, want 9", colour, got)
	}
}
