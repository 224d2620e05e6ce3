package orchestrator

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/envs/bash"
)

// TestServeEndOfInputSaysWhy closes the input while a bash command runs
// and two more wait for it, one behind it in order and one with an id: the
// answers say the input ended and what to do (a command to an environment
// that would run it anyway is not sent), the running command's after
// its own note that it was interrupted. A command waiting inside its
// environment, answered as not run by it, is answered the same.
func TestServeEndOfInputSaysWhy(t *testing.T) {
	dir := t.TempDir()
	sh, err := bash.New(bash.WithDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	o := mustNew(t)
	if err := o.Register("bash", sh); err != nil {
		t.Fatal(err)
	}
	// An environment whose command waits for its turn inside it, as a
	// built-in's does behind another command, when the input ends.
	waiting := make(chan struct{})
	queued := &testEnv{execute: func(ctx context.Context, _ string) (envs.Response, error) {
		close(waiting)
		<-ctx.Done()
		return envs.NotRun(ctx.Err()), nil
	}}
	if err := o.Register("queued", queued); err != nil {
		t.Fatal(err)
	}
	// An environment that runs whatever comes, its context ended or not.
	echo, _ := catalogue("echo")
	if err := o.Register("echo", echo); err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() { served <- o.Serve(context.Background(), inR, outW); outW.Close() }()
	started := filepath.Join(dir, "started")
	send := func(m map[string]any) {
		t.Helper()
		data, _ := json.Marshal(m)
		if _, err := fmt.Fprintf(inW, "%s\n", data); err != nil {
			t.Fatal(err)
		}
	}
	send(map[string]any{"type": "command", "environment": "bash", "command": "touch started; sleep 60"})
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(started); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first command did not start")
		}
	}
	send(map[string]any{"type": "command", "environment": "bash", "command": "echo after"})
	send(map[string]any{"type": "command", "environment": "echo", "command": "after too"})
	send(map[string]any{"type": "command", "environment": "bash", "command": "echo beside", "id": "b"})
	send(map[string]any{"type": "command", "environment": "queued", "command": "x", "id": "q"})
	<-waiting
	inW.Close()

	var outputs []string
	byID := map[string]string{}
	sc := bufio.NewScanner(outR)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m responseMessage
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if m.ID != "" {
			byID[string(m.ID)] = m.Response.Output
			continue
		}
		outputs = append(outputs, m.Response.Output)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if len(outputs) != 3 {
		t.Fatalf("got answers %q, want three without an id", outputs)
	}
	if got := outputs[0]; !strings.HasPrefix(got, "[Cancelled.") || !strings.HasSuffix(got, "\n"+stoppedAtEnd) {
		t.Errorf("running command: got %q, want bash's note, then %q", got, stoppedAtEnd)
	}
	for i, got := range outputs[1:] {
		if got != notRunAtEnd {
			t.Errorf("command %d waiting in order: got %q, want %q", i+2, got, notRunAtEnd)
		}
	}
	if got := byID[`"b"`]; got != notRunAtEnd {
		t.Errorf("command with an id: got %q, want %q", got, notRunAtEnd)
	}
	if got := byID[`"q"`]; got != notRunAtEnd {
		t.Errorf("command waiting inside its environment: got %q, want %q", got, notRunAtEnd)
	}
	if !strings.Contains(notRunAtEnd, "--batch") || !strings.Contains(stoppedAtEnd, "--batch") {
		t.Errorf("the answers do not name --batch: %q, %q", notRunAtEnd, stoppedAtEnd)
	}
}
