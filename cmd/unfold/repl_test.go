package main

import (
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

// TestReplTerminal drives `unfold repl` on a real pseudo-terminal, as a
// person would: line editing, recalling the last line, Ctrl-C at the
// prompt, and the history kept in a file.
func TestReplTerminal(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("pseudo-terminals are tested on Linux and macOS")
	}
	project := writeProject(t, map[string]string{"env/sh.sh": shEnv, "env/sh.json": fullProject["env/sh.json"]})
	history := filepath.Join(t.TempDir(), "history")
	if err := os.WriteFile(history, []byte("sh: from last time\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "repl", "--builtins", "none", "--project", project, "--history", history)
	cmd.Env = append(os.Environ(), "TERM=xterm")
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	var (
		mu  sync.Mutex // guards out
		out strings.Builder
	)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			mu.Lock()
			out.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	screen := func() string {
		mu.Lock()
		defer mu.Unlock()
		return strings.ReplaceAll(out.String(), "\r\n", "\n")
	}
	// expect waits until the output holds want after the output seen so
	// far, and returns how far it has read.
	seen := 0
	expect := func(want string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			s := screen()
			if i := strings.Index(s[seen:], want); i >= 0 {
				seen += i + len(want)
				return
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatalf("no %q in the terminal after 30s; it shows:\n%s", want, s[seen:])
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	send := func(keys string) {
		t.Helper()
		if _, err := ptmx.Write([]byte(keys)); err != nil {
			t.Fatal(err)
		}
	}

	expect("unfold> ")
	send("sh: first\r")
	expect("--- sh: ok ---\nran 1\n")
	expect("unfold> ")
	// Typed "h: x", then Ctrl-A to the start of the line and "s".
	send("h: x\x01s\r")
	expect("--- sh: ok ---\nran 2\n")
	expect("unfold> ")
	// The up arrow recalls the last line.
	send("\x1b[A\r")
	expect("--- sh: ok ---\nran 3\n")
	expect("unfold> ")
	// Two lines up is the first one, and Ctrl-C drops it unrun.
	send("\x1b[A\x1b[A\x03")
	expect("(type :quit to leave)")
	expect("unfold> ")
	send(":quit\r")

	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("got %v, want exit 0; the terminal shows:\n%s", err, screen())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("unfold repl did not exit after :quit; the terminal shows:\n%s", screen())
	}
	if strings.Contains(screen(), "ran 4") {
		t.Errorf("the line dropped with Ctrl-C ran; the terminal shows:\n%s", screen())
	}
	got, err := os.ReadFile(history)
	if err != nil {
		t.Fatal(err)
	}
	if want := "sh: from last time\nsh: first\nsh: x\n:quit\n"; string(got) != want {
		t.Errorf("history file: got %q, want %q", got, want)
	}
}
