package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// terminal is a command run on a real pseudo-terminal.
type terminal struct {
	t    *testing.T
	cmd  *exec.Cmd
	ptmx *os.File
	mu   sync.Mutex // guards out
	out  strings.Builder
	seen int // how far expect has read
}

// startTerminal starts the unfold binary with args on a pseudo-terminal.
func startTerminal(t *testing.T, args ...string) *terminal {
	t.Helper()
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("pseudo-terminals are tested on Linux and macOS")
	}
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "TERM=xterm")
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ptmx.Close() })
	term := &terminal{t: t, cmd: cmd, ptmx: ptmx}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			term.mu.Lock()
			term.out.Write(buf[:n])
			term.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return term
}

// screen is all the terminal has shown.
func (term *terminal) screen() string {
	term.mu.Lock()
	defer term.mu.Unlock()
	return strings.ReplaceAll(term.out.String(), "\r\n", "\n")
}

// expect waits until the output holds want after the output seen so far.
func (term *terminal) expect(want string) {
	term.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s := term.screen()
		if i := strings.Index(s[term.seen:], want); i >= 0 {
			term.seen += i + len(want)
			return
		}
		if time.Now().After(deadline) {
			term.cmd.Process.Kill()
			term.t.Fatalf("no %q in the terminal after 30s; it shows:\n%s", want, s[term.seen:])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// send types keys.
func (term *terminal) send(keys string) {
	term.t.Helper()
	if _, err := term.ptmx.Write([]byte(keys)); err != nil {
		term.t.Fatal(err)
	}
}

// wait waits for the command to exit 0.
func (term *terminal) wait() {
	term.t.Helper()
	done := make(chan error, 1)
	go func() { done <- term.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			term.t.Fatalf("got %v, want exit 0; the terminal shows:\n%s", err, term.screen())
		}
	case <-time.After(30 * time.Second):
		term.cmd.Process.Kill()
		term.t.Fatalf("unfold did not exit; the terminal shows:\n%s", term.screen())
	}
}

// TestReplTerminal drives `unfold repl` on a real pseudo-terminal, as a
// person would: line editing, recalling the last line, Ctrl-C at the
// prompt, and the history kept in a file.
func TestReplTerminal(t *testing.T) {
	project := writeProject(t, map[string]string{"env/sh.sh": shEnv, "env/sh.json": fullProject["env/sh.json"]})
	history := filepath.Join(t.TempDir(), "history")
	if err := os.WriteFile(history, []byte("sh: from last time\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	term := startTerminal(t, "repl", "--builtins", "none", "--project", project, "--history", history)

	term.expect("unfold> ")
	term.send("sh: first\r")
	term.expect("--- sh: ok ---\nran 1\n")
	term.expect("unfold> ")
	// Typed "h: x", then Ctrl-A to the start of the line and "s".
	term.send("h: x\x01s\r")
	term.expect("--- sh: ok ---\nran 2\n")
	term.expect("unfold> ")
	// The up arrow recalls the last line.
	term.send("\x1b[A\r")
	term.expect("--- sh: ok ---\nran 3\n")
	term.expect("unfold> ")
	// Two lines up is the first one, and Ctrl-C drops it unrun.
	term.send("\x1b[A\x1b[A\x03")
	term.expect("(type :quit to leave)")
	term.expect("unfold> ")
	term.send(":quit\r")
	term.wait()
	if strings.Contains(term.screen(), "ran 4") {
		t.Errorf("the line dropped with Ctrl-C ran; the terminal shows:\n%s", term.screen())
	}
	got, err := os.ReadFile(history)
	if err != nil {
		t.Fatal(err)
	}
	if want := "sh: from last time\nsh: first\nsh: x\n:quit\n"; string(got) != want {
		t.Errorf("history file: got %q, want %q", got, want)
	}
}

// TestReplHistoryKept runs `unfold repl` on a terminal with history files
// it cannot recall whole: a line that is not UTF-8, a line too long, more
// lines than it recalls, a file reached through a symbolic link. Every
// line of the file is kept, the lines typed are added after them, and a
// link stays a link to its target, whose mode is kept.
func TestReplHistoryKept(t *testing.T) {
	var many strings.Builder
	for i := range 1500 {
		fmt.Fprintf(&many, "echo %d\n", i)
	}
	cases := []struct {
		name, content string
		link          bool
		warning       string // on the terminal at the start
		recall        string // what the up arrow shows
	}{
		{"not UTF-8", "echo one\necho two\n\xff\xfe latin junk\necho four\necho five\n", false,
			"1 line cannot be recalled (line 3 is not UTF-8 text); the file keeps it", "echo five"},
		{"a long line", "echo one\n" + strings.Repeat("x", 5000) + "\necho three", false,
			"line 2 is over 4000 bytes", "echo three"},
		{"more than recalled", many.String(), false, "", "echo 1499"},
		{"through a link", "echo one\n\xff junk\necho three\n", true, "line 2 is not UTF-8 text", "echo three"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			project := writeProject(t, map[string]string{"env/sh.sh": shEnv, "env/sh.json": fullProject["env/sh.json"]})
			dir := t.TempDir()
			file := filepath.Join(dir, "hist.txt")
			if err := os.WriteFile(file, []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
			history := file
			if c.link {
				history = filepath.Join(dir, "histlink")
				if err := os.Symlink("hist.txt", history); err != nil {
					t.Fatal(err)
				}
			}
			term := startTerminal(t, "repl", "--builtins", "none", "--project", project, "--history", history)
			if c.warning != "" {
				term.expect(c.warning)
			}
			term.expect("unfold> ")
			// The up arrow recalls the file's last line that can be.
			term.send("\x1b[A")
			term.expect(c.recall)
			term.send("\x03")
			term.expect("unfold> ")
			term.send("sh: new\r")
			term.expect("ran 1\n")
			term.expect("unfold> ")
			term.send("\x04") // Ctrl-D
			term.wait()

			want := c.content
			if !strings.HasSuffix(want, "\n") {
				want += "\n"
			}
			want += "sh: new\n"
			got, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != want {
				t.Errorf("history file: got %d bytes ending %q, want %d ending %q", len(got), got[max(0, len(got)-40):], len(want), want[max(0, len(want)-40):])
			}
			fi, err := os.Lstat(file)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != 0o644 {
				t.Errorf("history file: got mode %v, want 0644 kept", fi.Mode())
			}
			if c.link {
				if fi, err := os.Lstat(history); err != nil || fi.Mode()&os.ModeSymlink == 0 {
					t.Errorf("the link given as --history: got %v, %v; want it still a link", fi.Mode(), err)
				}
			}
		})
	}
}
