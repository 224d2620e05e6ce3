package orchestrator

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// extraLineScript is a process environment in sh that answers each
// request, and after the command "extra" writes a screen line nobody
// asked for (in the same write as its reply), after "late" one once the
// file "go" is there (then it creates the file "written").
const extraLineScript = `n=0
while IFS= read -r line; do
  case "$line" in
  *'"type":"execute"'*)
    n=$((n+1))
    case "$line" in
    *'"command":"extra"'*) printf '{"type":"response","output":"done %s","success":true}\n{"type":"screen","content":"STALE SCREEN"}\n' $n ;;
    *'"command":"late"'*) printf '{"type":"response","output":"done %s","success":true}\n' $n
      while [ ! -e go ]; do sleep 0.01; done
      printf '{"type":"response","output":"STALE ANSWER","success":true}\n'; : > written ;;
    *'"command":"wait"'*) printf '{"type":"output","output":"step\\n"}\n{"type":"input","prompt":"go on?"}\n'
      IFS= read -r answer; a=other; case "$answer" in *'"text":"yes"'*) a=yes ;; esac
      printf '{"type":"response","output":"answered %s","success":true}\n' $a ;;
    *) printf '{"type":"response","output":"done %s","success":true}\n' $n ;;
    esac ;;
  *'"type":"screen"'*) printf '{"type":"screen","content":"screen after %s"}\n' $n ;;
  *'"type":"shutdown"'*) exit 0 ;;
  *) printf '{"type":"error","message":"unknown request"}\n' ;;
  esac
done
`

func newExtraLineProcess(t *testing.T) (*Process, string) {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skipf("sh is not installed (%v)", err)
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "env.sh")
	if err := os.WriteFile(script, []byte(extraLineScript), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := NewProcess(ProcessSpec{Name: "counter", Executable: sh, Args: []string{script}, Dir: dir, Description: "Counter"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p, dir
}

// TestProcessExtraLine checks that a line a process writes when no request
// waits for one is never taken as the reply to a later request: the next
// request is not sent, the error names the line and the command it
// followed, and the process starts anew.
func TestProcessExtraLine(t *testing.T) {
	ctx := context.Background()
	const restarted = "[counter had stopped (it broke the protocol); it was restarted and its earlier state was lost.]\n"
	wantErr := func(t *testing.T, err error, after, line string) {
		t.Helper()
		want := "the process wrote a line after its reply to " + after + ", when no request was waiting for one: " + line
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got error %v, want one containing %q", err, want)
		}
	}
	t.Run("screen after the command", func(t *testing.T) {
		p, _ := newExtraLineProcess(t)
		if resp, errText := execute(t, p, ctx, "extra"); errText != "" || resp.Output != "done 1" {
			t.Fatalf("got %+v (error %q), want done 1", resp, errText)
		}
		s, err := p.Screen()
		if strings.Contains(s.Content, "STALE") {
			t.Errorf("got screen %q, want no screen from the extra line", s.Content)
		}
		wantErr(t, err, `the command "extra"`, `"{\"type\":\"screen\",\"content\":\"STALE SCREEN\"}"`)
		if resp, errText := execute(t, p, ctx, "next"); errText != "" || resp.Output != restarted+"done 1" {
			t.Errorf("next command: got %+v (error %q), want a new process's done 1", resp, errText)
		}
		if s, err := p.Screen(); err != nil || s.Content != "screen after 1" {
			t.Errorf("got screen %q, %v; want screen after 1", s.Content, err)
		}
	})
	t.Run("command after the command", func(t *testing.T) {
		p, _ := newExtraLineProcess(t)
		execute(t, p, ctx, "extra")
		resp, err := p.Execute(ctx, "next")
		wantErr(t, err, `the command "extra"`, `"{\"type\":\"screen\",\"content\":\"STALE SCREEN\"}"`)
		if err == nil || !strings.Contains(err.Error(), "This command was not sent to it: send it again") || resp.Output != "" {
			t.Errorf("got %+v, %v; want the command not sent, and said so", resp, err)
		}
		if resp, errText := execute(t, p, ctx, "next"); errText != "" || resp.Output != restarted+"done 1" {
			t.Errorf("sent again: got %+v (error %q), want a new process's done 1", resp, errText)
		}
	})
	t.Run("a moment after the reply", func(t *testing.T) {
		p, dir := newExtraLineProcess(t)
		execute(t, p, ctx, "late")
		if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
			if _, err := os.Stat(filepath.Join(dir, "written")); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the process did not write its extra line")
			}
		}
		resp, err := p.Execute(ctx, "next")
		if strings.Contains(resp.Output, "STALE") {
			t.Errorf("got %q, want no output from the extra line", resp.Output)
		}
		wantErr(t, err, `the command "late"`, `"{\"type\":\"response\",\"output\":\"STALE ANSWER\",\"success\":true}"`)
	})
	t.Run("before the first request", func(t *testing.T) {
		sh, err := exec.LookPath("sh")
		if err != nil {
			t.Skipf("sh is not installed (%v)", err)
		}
		dir := t.TempDir()
		script := "echo hello banner; : > written\n" + extraLineScript
		if err := os.WriteFile(filepath.Join(dir, "env.sh"), []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := NewProcess(ProcessSpec{Name: "counter", Executable: sh, Args: []string{filepath.Join(dir, "env.sh")}, Dir: dir, Description: "Counter"})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		if _, _, err := p.ensure(); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
			if _, err := os.Stat(filepath.Join(dir, "written")); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the process did not write its banner")
			}
		}
		_, err = p.Execute(ctx, "next")
		want := `the process wrote a line before its first request, when no request was waiting for one: "hello banner"`
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got error %v, want one containing %q", err, want)
		}
	})
	t.Run("output and input lines while a command runs", func(t *testing.T) {
		p, _ := newExtraLineProcess(t)
		resp, errText := execute(t, p, ctx, "wait")
		if errText != "" || !resp.Waiting || !strings.HasPrefix(resp.Output, "step\n") {
			t.Fatalf("got %+v (error %q), want the output so far, waiting for input", resp, errText)
		}
		if resp, errText := execute(t, p, ctx, "yes"); errText != "" || resp.Output != "answered yes" {
			t.Errorf("answer: got %+v (error %q), want answered yes", resp, errText)
		}
		if s, err := p.Screen(); err != nil || s.Content != "screen after 1" {
			t.Errorf("got screen %q, %v; want screen after 1", s.Content, err)
		}
	})
}

// TestProcessUnreadBytes checks that bytes the process wrote are seen
// before a line is made of them, so that a line written before a request
// is sent cannot pass for its reply however late it is read.
func TestProcessUnreadBytes(t *testing.T) {
	p, dir := newExtraLineProcess(t)
	execute(t, p, context.Background(), "late")
	p.mu.Lock()
	c := p.child
	p.mu.Unlock()
	c.mu.Lock() // the reader takes nothing from the pipe meanwhile
	if c.unread() {
		t.Errorf("unread before the extra line: got true, want false")
	}
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		c.mu.Unlock()
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "written")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			c.mu.Unlock()
			t.Fatal("the process did not write its extra line")
		}
	}
	unread := c.unread()
	c.mu.Unlock()
	if !unread {
		t.Errorf("unread with the extra line in the pipe: got false, want true")
	}
	if err := c.ask(request{Type: "screen"}); err == nil || !strings.Contains(err.Error(), "STALE ANSWER") {
		t.Errorf("ask: got %v, want the extra line reported", err)
	}
}
