package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// escapee starts a sleep in a session of its own, out of reach of a
// hangup, and writes its process id to sleep.pid in the project: what
// closing the environment must still end.
const escapee = `setsid bash -c 'echo $$ > sleep.pid; exec sleep 300' >/dev/null 2>&1 &`

// closedOutput returns the write end of a pipe whose reader is gone.
func closedOutput(t *testing.T) *os.File {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	t.Cleanup(func() { w.Close() })
	return w
}

// TestReplClosedOutput: unfold repl whose reader went away (unfold repl |
// head -1) ends at its next write, shutting the environments down: a
// program a command started in a session of its own is gone with it.
func TestReplClosedOutput(t *testing.T) {
	needBash(t)
	project := t.TempDir()
	cmd := exec.Command(binary, "repl", "--builtins", "bash", "--project", project)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = outW
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	outW.Close()
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	out := bufio.NewReader(outR)
	if line, err := out.ReadString('\n'); err != nil || !strings.HasPrefix(line, "unfold repl: environments bash.") {
		t.Fatalf("first line %q, %v; stderr:\n%s", line, err, stderr.String())
	}
	fmt.Fprintf(stdin, "bash: %s\n", escapee)
	pid := waitPid(t, project, exited, &stderr)
	// The reader goes away; the response to the next command has nowhere
	// to go.
	outR.Close()
	fmt.Fprintf(stdin, "bash: echo x\n")
	waitExit(t, cmd, exited, time.Minute, 1, pid, &stderr)
	if !strings.Contains(stderr.String(), "broken pipe") {
		t.Errorf("stderr: got\n%s\nwant the closed output named", stderr.String())
	}
}

// countingEndpoint is a model endpoint on 127.0.0.1 that answers request
// n (from 1) with a call of bash running command(n), and counts the
// requests. A request for which hold(n) is true is answered only after
// 30 s, or never, when the client gives up on it first.
func countingEndpoint(t *testing.T, command func(n int32) string, hold func(n int32) bool) (string, *atomic.Int32) {
	t.Helper()
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		n := requests.Add(1)
		if hold(n) {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(30 * time.Second):
			}
		}
		args, _ := json.Marshal(map[string]string{"command": command(n)})
		call := map[string]any{"index": 0, "id": fmt.Sprintf("call%d", n), "type": "function", "function": map[string]any{"name": "bash", "arguments": string(args)}}
		writeChat(w, map[string]any{"role": "assistant", "tool_calls": []any{call}}, "tool_calls", nil)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1", &requests
}

// TestAgentClosedOutput: unfold agent whose stdout loses its reader while
// it runs (unfold agent ... | head -1) stops the run at once, before the
// answer it would write: the model request in flight is given up, no
// other is made, the environments shut down (a program the model started
// in a session of its own is gone with them), and the exit status is 1,
// with a line on stderr saying why.
func TestAgentClosedOutput(t *testing.T) {
	needBash(t)
	url, requests := countingEndpoint(t, func(n int32) string {
		if n == 1 {
			return escapee
		}
		return "echo more"
	}, func(n int32) bool { return n > 1 })
	project := t.TempDir()
	cmd := exec.Command(binary, "agent", "start a sleep", "--project", project, "--builtins", "bash", "--base-url", url, "--model", "m", "--max-steps", "8")
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer outR.Close()
	cmd.Stdout = outW
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	outW.Close()
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	pid := waitPid(t, project, exited, &stderr)
	before := requests.Load()
	outR.Close()
	waitExit(t, cmd, exited, time.Minute, 1, pid, &stderr)
	if n := requests.Load(); n > before+1 {
		t.Errorf("model requests: %d when stdout closed, %d at the end; want at most the one in flight after it", before, n)
	}
	if !strings.Contains(stderr.String(), "unfold agent: stopped: stdout was closed (") || !strings.Contains(stderr.String(), "broken pipe") {
		t.Errorf("stderr: got\n%s\nwant the closed stdout named", stderr.String())
	}
}

// TestAgentClosedStderr: unfold agent whose stderr has no reader (a pipe
// or a socket, both watched; a write that fails is seen too)
// stops the run with the first model request at most, and says so in one
// line on stdout, exit status 1.
func TestAgentClosedStderr(t *testing.T) {
	needBash(t)
	for _, c := range []struct {
		name   string
		stderr func(t *testing.T) *os.File
	}{
		{"pipe", closedOutput},
		{"socket", func(t *testing.T) *os.File {
			fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
			if err != nil {
				t.Fatal(err)
			}
			syscall.Close(fds[1])
			f := os.NewFile(uintptr(fds[0]), "socket")
			t.Cleanup(func() { f.Close() })
			return f
		}},
		{"socket its peer stopped reading", func(t *testing.T) *os.File {
			// The peer is open, so poll sees nothing: the first write
			// that fails tells.
			fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := syscall.Shutdown(fds[1], syscall.SHUT_RD); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { syscall.Close(fds[1]) })
			f := os.NewFile(uintptr(fds[0]), "socket")
			t.Cleanup(func() { f.Close() })
			return f
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			url, requests := countingEndpoint(t, func(int32) string { return "echo more" }, func(int32) bool { return false })
			cmd := exec.Command(binary, "agent", "say more", "--project", t.TempDir(), "--builtins", "bash", "--base-url", url, "--model", "m", "--max-steps", "8")
			var stdout bytes.Buffer
			cmd.Stdout = &stdout
			cmd.Stderr = c.stderr(t)
			err := cmd.Run()
			if code := cmd.ProcessState.ExitCode(); code != 1 {
				t.Errorf("exit status %d (%v), want 1", code, err)
			}
			if n := requests.Load(); n > 1 {
				t.Errorf("model requests: got %d, want at most 1", n)
			}
			if got := stdout.String(); !strings.HasPrefix(got, "unfold agent: stopped: stderr was closed (") || !strings.Contains(got, "broken pipe") || strings.Count(got, "\n") != 1 {
				t.Errorf("stdout: got %q, want one line naming the closed stderr", got)
			}
		})
	}
}
