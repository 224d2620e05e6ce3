package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
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

// TestAgentClosedOutput: unfold agent whose stdout has no reader (unfold
// agent ... | head) still shuts its environments down after the answer:
// a program the model started in a session of its own is gone with it.
func TestAgentClosedOutput(t *testing.T) {
	needBash(t)
	args, _ := json.Marshal(map[string]string{"command": escapee})
	url, _ := fakeEndpoint(t, "call bash "+string(args), "Started.")
	project := t.TempDir()
	cmd := exec.Command(binary, "agent", "start a sleep", "--project", project, "--builtins", "bash", "--base-url", url, "--model", "m")
	cmd.Stdout = closedOutput(t)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	pid := waitPid(t, project, exited, &stderr)
	waitExit(t, cmd, exited, time.Minute, 0, pid, &stderr)
}
