package python

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/internal/term"
)

// TestTerminalOutput checks that output meant for a terminal comes back as
// the text a terminal would show, as bash's does: escape sequences
// dropped, carriage returns and backspaces applied.
func TestTerminalOutput(t *testing.T) {
	r := newREPL(t)
	bar := "progress 100.0% |" + strings.Repeat("#", 49) + " |"
	for _, c := range []struct{ name, code, want string }{
		{"progress loop",
			"import sys\nfor i in range(2000):\n    sys.stderr.write(f'\\rprogress {i/20:5.1f}% |' + '#'*(i//40) + ' '*(50-i//40) + '|')\nsys.stderr.write('\\n'); 'done'",
			bar + "\n'done'"},
		{"escapes and screens",
			"import sys\nsys.stdout.buffer.write(b'A\\x1b[?1049hB\\x1b]0;title\\x07C\\x1b[2JD\\x1b[1;31mE\\x1b[0m\\x1b[?1049l\\n')\nNone",
			"ABCDE"},
		{"backspace", "print('abc\\b\\bX')", "aXc"},
		{"progress without a final newline", "import sys\n_ = sys.stdout.write('10%\\r50%\\r100%')", "100%"},
		{"NUL and controls", "print('a\\x00b\\x01c')", "abc"},
		{"title cut short",
			"import os\nos.write(1, b'\\x1b]0;unterminated')\nprint('\\x1b[32mgreen\\x1b[0m')\nprint('more')",
			"green\nmore"},
		{"string cut short on its line", "import os\nos.write(1, b'\\x1b]0;unterminated')\nprint('after')\nprint('more')", "\nmore"},
		{"string never ended",
			"import os\nos.write(1, b'\\x1b]0;' + b'x' * 5000)\nprint(' shown')",
			strings.Repeat("x", 5000-(term.MaxString-2)) + " shown"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp := execute(t, r, c.code)
			if resp.Output != c.want || !resp.Success {
				t.Errorf("got %q (success %v), want %q", resp.Output, resp.Success, c.want)
			}
			if resp.OutputFile != "" {
				t.Errorf("got the output saved in %s, want it short enough to need no file", resp.OutputFile)
			}
		})
	}
}

// TestTerminalOutputSaved checks that the whole output saved past the
// output limit is the text the response shows, not what the program wrote
// to the terminal.
func TestTerminalOutputSaved(t *testing.T) {
	r := newREPL(t, WithOutputLimit(16<<10))
	resp := execute(t, r, "for i in range(20000):\n    print(f'\\x1b[1;32mline {i}\\x1b[0m\\r\\x1b[2Kline {i} done')")
	if resp.OutputFile == "" {
		t.Fatalf("got no saved output in %q, want the whole output in a file", resp.Output)
	}
	data, err := os.ReadFile(resp.OutputFile)
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for i := range 20000 {
		want.WriteString("line " + strconv.Itoa(i) + " done\n")
	}
	if got := string(data); got != strings.TrimSuffix(want.String(), "\n") && got != want.String() {
		t.Errorf("the saved output: got %d bytes starting %q, want the %d bytes of the lines as shown", len(got), got[:min(len(got), 80)], want.Len())
	}
	if !strings.HasPrefix(resp.Output, "line 0 done\nline 1 done\n") || !strings.HasSuffix(resp.Output, "line 19999 done") || strings.Contains(resp.Output, "\x1b") || !utf8.ValidString(resp.Output) {
		t.Errorf("got output %q...%q, want the lines as a terminal shows them at both ends", resp.Output[:40], resp.Output[len(resp.Output)-40:])
	}
}

// TestBackgroundBounded checks that output written between commands is
// shown within its own bound, head and tail, before the next command's
// output, and saved whole: a thread that printed a lot cannot push the
// command's own output out of the response.
func TestBackgroundBounded(t *testing.T) {
	dir := t.TempDir()
	r := newREPL(t, WithDir(dir))
	execute(t, r, "import os, threading, time\n"+
		"def burst():\n"+
		"    while not os.path.exists('go'):\n"+
		"        time.sleep(0.01)\n"+
		"    for i in range(5000):\n"+
		"        os.write(1, f'background line {i} of the thread that prints a lot\\n'.encode())\n"+
		"    open('done', 'w').close()\n"+
		"threading.Thread(target=burst, daemon=True).start()")
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the thread's output", func() bool {
		_, err := os.Stat(filepath.Join(dir, "done"))
		return err == nil
	})
	resp := execute(t, r, "print('result')\n1 + 1")
	const header = "[Output since the last command (background threads or processes):]\nbackground line 0 of"
	if !strings.HasPrefix(resp.Output, header) || !strings.HasSuffix(resp.Output, "background line 4999 of the thread that prints a lot\nresult\n2") {
		t.Errorf("got output %q...%q, want the background block, then the command's output", resp.Output[:min(len(resp.Output), 100)], resp.Output[max(0, len(resp.Output)-100):])
	}
	// 8 KB of the background output (head and tail), the notes, and the
	// command's own.
	if len(resp.Output) > 9<<10 {
		t.Errorf("got %d bytes of output, want the background output cut to 8 KB (head and tail) and a note", len(resp.Output))
	}
	if resp.OutputFile == "" || !strings.Contains(resp.Output, "saved in "+resp.OutputFile) {
		t.Fatalf("got output file %q and output %q, want the whole output saved and named", resp.OutputFile, resp.Output)
	}
	data, err := os.ReadFile(resp.OutputFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"background line 2500 of", "background line 4999 of the thread that prints a lot\nresult\n2"} {
		if !strings.Contains(string(data), line) {
			t.Errorf("the saved output lacks %q", line)
		}
	}
}

// TestCommandKeepsOutputLimit checks that a command keeps the full output
// limit, not the bound on output between commands: run when nothing came
// between commands, and continued after it asked for input.
func TestCommandKeepsOutputLimit(t *testing.T) {
	r := newREPL(t)
	want := strings.Repeat("y", 20000)
	check := func(what string, resp envs.Response) {
		t.Helper()
		if resp.Output != want || resp.OutputFile != "" {
			t.Errorf("%s: got %d bytes of output, saved in %q; want the 20000 bytes whole, nothing saved", what, len(resp.Output), resp.OutputFile)
		}
	}
	execute(t, r, "x = 1")
	check("after a quiet command", execute(t, r, "print('y' * 20000)"))
	if resp := execute(t, r, "s = input()\nprint(s * 20000)"); !resp.Waiting {
		t.Fatalf("got %+v, want the cell waiting for input", resp)
	}
	check("continued", execute(t, r, "y"))
}

// TestSplitCharacter: a character whose bytes are written on both sides of
// a response (here a wait for input) comes whole in the second, not as
// two U+FFFD.
func TestSplitCharacter(t *testing.T) {
	r := newREPL(t)
	resp := execute(t, r, "import os\nos.write(1, b'caf\\xc3')\ninput()\nos.write(1, b'\\xa9 ok\\n')\nNone")
	if !resp.Waiting || !strings.HasPrefix(resp.Output, "caf") || strings.Contains(resp.Output, "\uFFFD") {
		t.Fatalf("got %+v, want it waiting, the output so far \"caf\"", resp)
	}
	step{code: "answer", want: exactly("é ok"), success: true}.check(t, execute(t, r, "x"))
}
