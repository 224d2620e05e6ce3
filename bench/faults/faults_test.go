package faults_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/envs/bash"
	"github.com/unfold-dev/unfold/envs/python"
	"github.com/unfold-dev/unfold/orchestrator"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tokens"
)

func need(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: %v", tool, err)
		}
	}
}

// waitFile waits up to 20s for file to exist, and reports whether it does.
func waitFile(file string) bool {
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(file); err == nil {
			return true
		}
	}
	return false
}

// waitPid waits for a process to write its pid to file, and returns it.
func waitPid(t *testing.T, file string) int {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		data, err := os.ReadFile(file)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && perr == nil && pid > 1 {
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no pid in %s after 20s", file)
	return 0
}

// newOrchestrator registers bash and python for dir, recording into a
// session, as `unfold serve` does.
func newOrchestrator(t *testing.T, dir string) (*orchestrator.Orchestrator, *session.Session) {
	t.Helper()
	need(t, "bash", "python3")
	sess := session.New()
	o, err := orchestrator.New(orchestrator.WithSession(sess))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = o.Close() })
	sh, err := bash.New(bash.WithDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	py, err := python.New(python.WithDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	for name, env := range map[string]envs.Env{"bash": sh, "python": py} {
		if err := o.Register(name, env); err != nil {
			t.Fatal(err)
		}
	}
	return o, sess
}

// TestKillMidCommand kills the bash and the python process with SIGKILL
// while a command runs. The command's response says the process ended; the
// next command runs in a new process (in bash, in the same directory) and
// says that state was lost; files written before the kill are intact; the
// session log records every command.
func TestKillMidCommand(t *testing.T) {
	tests := []struct {
		name      string
		env       string
		before    string // a command that sets state and writes a file
		victim    string // writes the process's pid to %s, then runs long
		after     string // must succeed in the new process
		wantAfter string // in the response to after
		lost      string // in the response to after: the state was lost
	}{
		{
			name:      "bash",
			env:       "bash",
			before:    "mkdir -p sub && cd sub && X=kept && printf 'intact\\n' > before.txt",
			victim:    "echo $$ > %s; sleep 30",
			after:     "pwd; echo \"x=${X:-unset}\"; cat before.txt",
			wantAfter: "/sub\nx=unset\nintact",
			lost:      "lost",
		},
		{
			name:      "python",
			env:       "python",
			before:    "x = 'kept'\nopen('before.txt', 'w').write('intact\\n')",
			victim:    "import os, time\nopen(%q, 'w').write(str(os.getpid()))\ntime.sleep(30)",
			after:     "print(globals().get('x', 'unset')); print(open('before.txt').read().strip())",
			wantAfter: "unset\nintact",
			lost:      "lost",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			o, sess := newOrchestrator(t, dir)
			ctx := context.Background()
			if r := o.Execute(ctx, tt.env, tt.before); !r.Response.Success {
				t.Fatalf("before: got %q, want success", r.Response.Output)
			}
			pidFile := filepath.Join(dir, "victim.pid")
			done := make(chan orchestrator.Result, 1)
			go func() { done <- o.Execute(ctx, tt.env, fmt.Sprintf(tt.victim, pidFile)) }()
			pid := waitPid(t, pidFile)
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatalf("kill -9 %d: %v", pid, err)
			}
			var killed orchestrator.Result
			select {
			case killed = <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("the killed command did not return within 20s")
			}
			if killed.Response.Success {
				t.Errorf("killed command: got success, want failure saying the process ended: %q", killed.Response.Output)
			}
			after := o.Execute(ctx, tt.env, tt.after)
			if !after.Response.Success || !strings.Contains(after.Response.Output, tt.wantAfter) {
				t.Errorf("after the kill: got %+v, want success with %q", after.Response, tt.wantAfter)
			}
			if !strings.Contains(after.Response.Output+killed.Response.Output, tt.lost) {
				t.Errorf("got %q then %q, want one to say the state was %s", killed.Response.Output, after.Response.Output, tt.lost)
			}
			data, err := os.ReadFile(filepath.Join(dir, map[string]string{"bash": "sub/before.txt", "python": "before.txt"}[tt.env]))
			if err != nil || string(data) != "intact\n" {
				t.Errorf("file written before the kill: got %q, %v, want %q", data, err, "intact\n")
			}
			if got := orchestrator.GetUsage(sess).Count(tt.env); got != 3 {
				t.Errorf("session usage of %s: got %d commands, want 3 (before, the killed one, after)", tt.env, got)
			}
		})
	}
}

// TestIgnoresInterrupt runs a child that ignores SIGINT (and SIGTERM) past
// its deadline. The environment escalates until the child is gone, says
// so, and keeps its state.
func TestIgnoresInterrupt(t *testing.T) {
	need(t, "bash", "python3")
	dir := t.TempDir()
	sh, err := bash.New(bash.WithDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	ctx := context.Background()
	if r, err := sh.Execute(ctx, "KEEP=yes"); err != nil || !r.Success {
		t.Fatalf("KEEP=yes: got %+v, %v", r, err)
	}
	tests := []struct {
		name    string
		command string
		want    string
	}{
		{"ignores SIGINT", `python3 -c 'import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); open("ready", "w").write("1"); time.sleep(60)'`, "SIGTERM"},
		{"ignores SIGINT and SIGTERM", `python3 -c 'import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); signal.signal(signal.SIGTERM, signal.SIG_IGN); open("ready", "w").write("1"); time.sleep(60)'`, "SIGKILL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ready := filepath.Join(dir, "ready")
			_ = os.Remove(ready)
			// Cancel once the child has set its handlers, so the interrupt
			// meets a child that ignores it (not one still starting up).
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			go func() {
				waitFile(ready)
				cancel()
			}()
			r, err := sh.Execute(cctx, tt.command)
			if err != nil {
				t.Fatal(err)
			}
			if r.Success || !strings.Contains(r.Output, tt.want) {
				t.Errorf("got %+v, want a failure that mentions %s", r, tt.want)
			}
			r, err = sh.Execute(ctx, `echo "keep=$KEEP"`)
			if err != nil || !strings.Contains(r.Output, "keep=yes") {
				t.Errorf("after: got %+v, %v, want keep=yes (the shell's state kept)", r, err)
			}
		})
	}
}

// TestHugeOutput sends 100 MB of output through each environment, with no
// bound on a saved output (the default keeps 64 MiB of it). What is
// kept in memory is capped at the output limit, the rest goes to a spool
// file, the response fits the token budget and names the file holding the
// whole output, and the environment answers the next command.
func TestHugeOutput(t *testing.T) {
	need(t, "bash", "python3")
	const limit = 1 << 20
	dir := t.TempDir()
	sh, err := bash.New(bash.WithDir(dir), bash.WithOutputLimit(limit), bash.WithSaveLimit(-1))
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	py, err := python.New(python.WithDir(dir), python.WithOutputLimit(limit), python.WithSaveLimit(-1))
	if err != nil {
		t.Fatal(err)
	}
	defer py.Close()
	tests := []struct {
		name string
		env  envs.Env
		cmd  string
		next string
	}{
		{"bash", sh, "head -c 100000000 /dev/zero | tr '\\0' y", "echo next"},
		{"python", py, "import sys\nfor _ in range(100): sys.stdout.write('y' * 1000000)", "print('next')"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			r, err := tt.env.Execute(ctx, tt.cmd)
			if err != nil {
				t.Fatal(err)
			}
			if n := tokens.Estimate.Count(r.Output); n > envs.DefaultBudget {
				t.Errorf("response: got %d tokens, want at most the budget of %d", n, envs.DefaultBudget)
			}
			saved, err := os.ReadFile(r.OutputFile)
			if err != nil {
				t.Fatalf("the saved output: %v", err)
			}
			defer os.Remove(r.OutputFile)
			if n, ys := len(saved), bytes.Count(saved, []byte("y")); n != 100_000_000 || ys != n {
				t.Errorf("the saved output: got %d bytes, %d of them y, want the whole 100,000,000 bytes of y", n, ys)
			}
			if !strings.Contains(r.Output, "left out here") || !strings.Contains(r.Output, "the whole output is saved in "+r.OutputFile) {
				t.Errorf("response: got %q, want a note naming the file", r.Output)
			}
			r, err = tt.env.Execute(ctx, tt.next)
			if err != nil || !r.Success || !strings.Contains(r.Output, "next") {
				t.Errorf("next command: got %+v, %v, want success with \"next\"", r, err)
			}
		})
	}
}
