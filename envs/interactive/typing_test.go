//go:build linux

package interactive_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/envs/interactive"
)

// lineReader is a program that reads its terminal in canonical mode, as
// Python's input() does without the readline module: the line discipline
// edits each line.
const lineReader = `
import sys
while True:
    line = input("fk> ")
    if line.startswith("ask"):
        name = input("Q" * int(line[4:] or 0) + "Your name? ")
        print("hi", len(name))
    elif line.startswith("split "):
        sys.stdout.buffer.write(b"caf\xc3")
        sys.stdout.flush()
        open(line[6:]).read()
        sys.stdout.buffer.write(b"\xa9 ok\n")
        sys.stdout.flush()
    else:
        print("got", len(line))
`

func newLineReader(t *testing.T) *interactive.Env {
	t.Helper()
	need(t, "python3")
	script := filepath.Join(t.TempDir(), "fk.py")
	if err := os.WriteFile(script, []byte(lineReader), 0o600); err != nil {
		t.Fatal(err)
	}
	discard := func(r io.Reader) (string, error) {
		_, err := io.Copy(io.Discard, r)
		return "(discarded)", err
	}
	return newEnv(t, interactive.Spec{Name: "fk", Command: "python3 '" + script + "'", Prompt: `fk> `, Description: "line reader", Save: discard})
}

// TestLongLines: a line longer than the terminal's line discipline keeps
// is refused, with what to do, for a program that reads its terminal in
// canonical mode, in a command and in an answer; nothing is typed, and
// an answer refused leaves the question waiting.
func TestLongLines(t *testing.T) {
	e := newLineReader(t)
	long := func(line int, what string, n int) string {
		return "Line too long: line " + itoa(line) + " of " + what + " has " + itoa(n) + " bytes, and fk reads its terminal a line at a time (canonical mode), which keeps at most 4095 bytes of a line and drops the rest. Nothing was typed. " +
			"Put the text in a file and have the program read it from there (such as open() in Python), or split it into shorter lines."
	}
	want(t, e, strings.Repeat("A", 4095), "got 4095", true)
	want(t, e, strings.Repeat("A", 10000), long(1, "the command", 10000), false)
	want(t, e, "x\n"+strings.Repeat("A", 4096), long(2, "the command", 4096), false)
	if resp := run(t, e, "ask", 30*time.Second); !resp.Waiting || resp.Prompt != "Your name?" {
		t.Fatalf("ask: got %+v, want it waiting", resp)
	}
	for _, c := range []struct{ answer, output string }{
		{strings.Repeat("B", 5000), long(1, "the answer", 5000)},
		{strings.Repeat("B", interactive.MaxCommand+1), "Answer too long: 65537 bytes; at most 65536 can be typed to fk. Put the text in a file and have the program read it from there."},
	} {
		resp := run(t, e, c.answer, 30*time.Second)
		if !resp.Waiting || resp.Prompt != "Your name?" || !strings.HasPrefix(resp.Output, c.output+"\n[Waiting for input: \"Your name?\"") {
			t.Errorf("answer of %d bytes: got %+v, want %q and the question still waiting", len(c.answer), resp, c.output)
		}
	}
	want(t, e, strings.Repeat("B", 4095), "hi 4095", true)
}

// TestLongLinesLineEditor: a program that reads its terminal with a line
// editor, in raw mode, gets a long line whole.
func TestLongLinesLineEditor(t *testing.T) {
	e := newEnv(t, sqliteSpec)
	want(t, e, "select length('"+strings.Repeat("B", 10000)+"');", "10000", true)
}

// TestLongQuestion: a question of megabytes is clipped to its end in the
// prompt field, the note and the screen.
func TestLongQuestion(t *testing.T) {
	e := newLineReader(t)
	resp := run(t, e, "ask 2000000", 60*time.Second)
	q := "…" + strings.Repeat("Q", envs.MaxQuestion-10) + "Your name?"
	if !resp.Waiting || resp.Prompt != q || !strings.HasSuffix(resp.Output, envs.WaitingNote(q, false)) {
		t.Fatalf("got %d bytes of prompt %.20q, waiting %v; want the question's last %d characters", len(resp.Prompt), resp.Prompt, resp.Waiting, envs.MaxQuestion)
	}
	if s, _ := e.Screen(); len(s.Content) > 1000 || !strings.Contains(s.Content, q) {
		t.Errorf("screen: got %d bytes, want the clipped question only", len(s.Content))
	}
	want(t, e, "Ada", "hi 3", true)
}

// TestSplitCharacter: a character whose bytes come on both sides of a
// soft limit is shown whole, in the second response.
func TestSplitCharacter(t *testing.T) {
	e := newLineReader(t)
	fifo := filepath.Join(t.TempDir(), "go")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	first, err := e.ExecuteLimited(context.Background(), "split "+fifo, envs.Limits{Quiet: 300 * time.Millisecond})
	if err != nil || !first.Running || !strings.HasPrefix(first.Output, "caf\n[Still running") {
		t.Fatalf("first: got %+v, %v; want caf and the command running on", first, err)
	}
	if err := os.WriteFile(fifo, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	want(t, e, "", "é ok", true)
}

// TestInterruptStops: C-c to a program that ignores Ctrl-C says that it
// was interrupted and stopped, not that it timed out.
func TestInterruptStops(t *testing.T) {
	e := newEnv(t, pythonSpec)
	resp, err := e.ExecuteLimited(context.Background(), "import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); time.sleep(1000)", envs.Limits{Quiet: 300 * time.Millisecond})
	if err != nil || !resp.Running {
		t.Fatalf("got %+v, %v; want it running on", resp, err)
	}
	want(t, e, "C-c", "[Interrupted (C-c): sent Ctrl-C, but python3 did not show its prompt again, so it was stopped. It starts again with the next command; its state is lost.]", false)
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestInterruptAtUnrecognisedPrompt: a program whose prompt no longer
// matches the spec's (sqlite3 after .prompt) ends each command waiting,
// with a hint that its prompt may have changed; Ctrl-C, which finds it
// reading its terminal again, keeps it and its state instead of stopping
// it.
func TestInterruptAtUnrecognisedPrompt(t *testing.T) {
	e := newEnv(t, sqliteSpec)
	want(t, e, "create table t(v); insert into t values(1);", "", true)
	hint := `[If this is sqlite3's prompt, it no longer matches the spec's prompt "sqlite> "`
	resp := run(t, e, ".prompt 'db> '", 30*time.Second)
	if !resp.Waiting || resp.Prompt != "db>" || !strings.Contains(resp.Output, hint) {
		t.Fatalf("after .prompt: got %+v, want it waiting at %q with the hint %q", resp, "db>", hint)
	}
	resp = run(t, e, "C-c", 30*time.Second)
	if strings.Contains(resp.Output, "stopped") || !strings.Contains(resp.Output, "so it was kept, with its state") || !strings.Contains(resp.Output, hint) {
		t.Fatalf("C-c: got %+v, want sqlite3 kept, with the hint", resp)
	}
	resp = run(t, e, "select count(*) from t;", 30*time.Second)
	if !strings.HasPrefix(resp.Output, "1\n") || strings.Contains(resp.Output, "Started sqlite3 again") {
		t.Errorf("after C-c: got %+v, want the table's row counted", resp)
	}
	if resp = run(t, e, ".prompt 'sqlite> '", 30*time.Second); resp.Running {
		t.Fatalf("back to the usual prompt: got %+v, want it at its prompt", resp)
	}
	want(t, e, "select count(*) from t;", "1", true)
}

// TestInterruptTwiceStops: a program that ignores Ctrl-C and reads its
// terminal again is kept by the first C-c, which says how to stop it, and
// stopped by a second C-c with nothing typed between.
func TestInterruptTwiceStops(t *testing.T) {
	e := newEnv(t, pythonSpec)
	want(t, e, "import signal; x = signal.signal(signal.SIGINT, signal.SIG_IGN)", "", true)
	resp := run(t, e, "exec(\"while True:\\n try: input('Q? ')\\n except EOFError: pass\")", 30*time.Second)
	if !resp.Waiting {
		t.Fatalf("got %+v, want it waiting", resp)
	}
	resp = run(t, e, "C-c", 30*time.Second)
	if !resp.Waiting || !strings.Contains(resp.Output, "so it was kept") || !strings.Contains(resp.Output, "Send C-c again to stop it") {
		t.Fatalf("first C-c: got %+v, want it kept, saying how to stop it", resp)
	}
	if resp = run(t, e, "C-d", 30*time.Second); !resp.Waiting {
		t.Fatalf("C-d: got %+v, want it waiting", resp)
	}
	resp = run(t, e, "C-c", 30*time.Second)
	if resp.Running || !strings.Contains(resp.Output, "so it was stopped") || !strings.Contains(resp.Output, "its state is lost") {
		t.Fatalf("second C-c: got %+v, want python3 stopped", resp)
	}
	resp = run(t, e, "print(1)", 30*time.Second)
	if !strings.Contains(resp.Output, "Started python3 again") || !strings.HasSuffix(resp.Output, "\n1") {
		t.Errorf("after: got %+v, want python3 started again", resp)
	}
}

// TestQuestionIsNoPrompt: a question that does not look like a prompt
// gets no hint that the prompt changed.
func TestQuestionIsNoPrompt(t *testing.T) {
	e := newEnv(t, pythonSpec)
	resp := run(t, e, "name = input('Your name? ')", 30*time.Second)
	if !resp.Waiting || strings.Contains(resp.Output, "no longer matches") {
		t.Errorf("got %+v, want it waiting, without the hint", resp)
	}
}

// TestControlCharactersRefused: a command or an answer holding a control
// character (other than newline and tab) is not typed, as the terminal
// would take it as a key; the message names it and the keys to send
// instead, and the program keeps its state.
func TestControlCharactersRefused(t *testing.T) {
	e := newEnv(t, pythonSpec)
	want(t, e, "x = 1", "", true)
	for _, c := range []struct{ command, want string }{
		{"print('a')\x03", `Not typed: the command holds a control character, '\x03' (Ctrl-C) at byte 11`},
		{"\x04", `'\x04' (Ctrl-D) at byte 1`},
		{"print('\x1b[201~')", `'\x1b' (ESC) at byte 8`},
		{"x = 2\x7f", `'\x7f' (DEL) at byte 6`},
	} {
		resp := run(t, e, c.command, 30*time.Second)
		if !strings.HasPrefix(resp.Output, "Not typed: ") || !strings.Contains(resp.Output, c.want) || !strings.Contains(resp.Output, "send C-c as a command of its own") || resp.Success {
			t.Errorf("Execute(%q): got %+v, want it refused with %q", c.command, resp, c.want)
		}
	}
	want(t, e, "print(x)", "1", true)
	resp := run(t, e, "s = input('Q? ')", 30*time.Second)
	if !resp.Waiting {
		t.Fatalf("got %+v, want it waiting", resp)
	}
	resp = run(t, e, "ab\x15c", 30*time.Second)
	if !strings.Contains(resp.Output, `Not typed: the answer holds a control character, '\x15' (Ctrl-U) at byte 3`) || !resp.Waiting || resp.Prompt != "Q?" {
		t.Errorf("answer: got %+v, want it refused, still waiting", resp)
	}
	run(t, e, "abc", 30*time.Second)
	want(t, e, "print(s, x)", "abc 1", true)

	// sqlite3 reads its terminal with readline, key by key: ESC is a key
	// there, and the advice names no language's escape.
	const advice = "To put the character in data, make it the program's own way (an escape or a function that makes a character from its code)"
	db := newEnv(t, sqliteSpec)
	resp = run(t, db, "select '\x1b[31m';", 30*time.Second)
	if !strings.HasPrefix(resp.Output, `Not typed: the command holds a control character, '\x1b' (ESC) at byte 9, which a terminal takes as a key`) || !strings.Contains(resp.Output, advice) {
		t.Errorf("sqlite3: got %q, want ESC refused without a Python escape as advice", resp.Output)
	}
	want(t, db, "select 1;", "1", true)
}

// TestControlCharactersCanonical: to a program that reads its terminal in
// canonical mode (ed), only the keys of the terminal's line discipline
// are refused: an ANSI colour sequence (ESC) and Ctrl-A are typed as
// text and stored, while Ctrl-U (erase line) is refused, named as that
// key, with advice that fits any program.
func TestControlCharactersCanonical(t *testing.T) {
	need(t, "ed")
	file := filepath.Join(t.TempDir(), "colours.txt")
	e := newEnv(t, interactive.Spec{Name: "ed", Command: "ed -p 'ed> ' '" + file + "'", Prompt: `ed> `, Description: "line editor"})
	run(t, e, "", 30*time.Second)
	resp := run(t, e, "a\n\x1b[31mred\x1b[0m \x01\n.", 30*time.Second)
	if strings.Contains(resp.Output, "Not typed") || resp.Running {
		t.Fatalf("append: got %+v, want it typed", resp)
	}
	resp = run(t, e, "a\nab\x15c\n.", 30*time.Second)
	wantMsg := `Not typed: the command holds a control character, '\x15' (Ctrl-U) at byte 5, which ed's terminal takes as its erase line key`
	advice := "To put the character in data, make it the program's own way (an escape or a function that makes a character from its code)"
	if !strings.HasPrefix(resp.Output, wantMsg) || !strings.Contains(resp.Output, advice) || resp.Success {
		t.Errorf("Ctrl-U: got %q, want it refused with %q", resp.Output, wantMsg)
	}
	want(t, e, "w", "15", true)
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "\x1b[31mred\x1b[0m \x01\n" {
		t.Errorf("file: got %q, want the colour sequence and Ctrl-A stored", got)
	}
}

// termiosReader reads lines in canonical mode after changing the
// terminal's keys: signals off, Ctrl-X as the erase-line key.
const termiosReader = `
import termios
a = termios.tcgetattr(0)
a[3] &= ~termios.ISIG
a[6][termios.VKILL] = b"\x18"
termios.tcsetattr(0, termios.TCSANOW, a)
while True:
    print(repr(input("tk> ")))
`

// TestControlCharactersTerminalKeys: the keys refused in canonical mode
// are those the terminal has now: with signals off, Ctrl-C is text, and
// so is Ctrl-U once Ctrl-X is the erase-line key, which is refused.
func TestControlCharactersTerminalKeys(t *testing.T) {
	need(t, "python3")
	script := filepath.Join(t.TempDir(), "tk.py")
	if err := os.WriteFile(script, []byte(termiosReader), 0o600); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, interactive.Spec{Name: "tk", Command: "python3 '" + script + "'", Prompt: `tk> `, Description: "line reader"})
	want(t, e, "a\x15b\x03c", `'a\x15b\x03c'`, true)
	resp := run(t, e, "a\x18b", 30*time.Second)
	if wantMsg := `Not typed: the command holds a control character, '\x18' (Ctrl-X) at byte 2, which tk's terminal takes as its erase line key`; !strings.HasPrefix(resp.Output, wantMsg) {
		t.Errorf("Ctrl-X: got %q, want %q", resp.Output, wantMsg)
	}
	want(t, e, "ok", `'ok'`, true)
}
