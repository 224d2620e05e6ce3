//go:build linux

package bash_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/envs/bash"
	"github.com/unfold-dev/unfold/internal/procs"
	"github.com/unfold-dev/unfold/tokens"
)

// TestOutputAsPrinted: blank lines a command prints at its end stay in
// the output; only the newline that ends the last line goes.
func TestOutputAsPrinted(t *testing.T) {
	s := newShell(t)
	want(t, s, `printf 'a\n\n\n'`, "a\n\n", true)
	want(t, s, `printf 'a\n'`, "a", true)
	want(t, s, `printf 'a'`, "a", true)
	want(t, s, `printf '\n\nb\n\n'`, "\n\nb\n", true)
}

// TestBrokenShell: a command that leaves the shell unable to go on gets a
// response saying what happened and that the state was lost, and the next
// command runs in a fresh shell.
func TestBrokenShell(t *testing.T) {
	for _, c := range []struct {
		name, command, why string
		kept               bool // the shell goes on
	}{
		{"output sent away", "exec >/dev/null", "[The shell can no longer run commands: its standard output goes to /dev/null instead of the terminal", false},
		{"output closed", "exec 1>&-", "[The shell can no longer run commands: its standard output is closed", false},
		{"too few files", "ulimit -n 3", "[The shell can no longer run commands: it may open only 3 files (ulimit -n)", false},
		{"builtin exit", "enable exit; builtin exit 3", "[The shell ended during this command (exited with status 3).", false},
		{"exit", "exit 3", "[exit: the shell stays open", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newShell(t)
			run(t, s, "LOST=no")
			resp := run(t, s, c.command)
			if resp.Success || !strings.Contains(resp.Output, c.why) {
				t.Errorf("got %+v, want a failed response containing %q", resp, c.why)
			}
			if !c.kept && !strings.Contains(resp.Output, "aliases and background jobs are lost") {
				t.Errorf("got %q, want it to say the state was lost", resp.Output)
			}
			resp = run(t, s, `echo "LOST=$LOST"`)
			switch {
			case c.kept && resp.Output != "LOST=no":
				t.Errorf("next command: got %q, want the same shell", resp.Output)
			case !c.kept && !strings.HasSuffix(resp.Output, "LOST=") || !c.kept && !strings.Contains(resp.Output, "started a new one"):
				t.Errorf("next command: got %q, want a new shell, without the variable", resp.Output)
			}
			want(t, s, "echo ok", "ok", true)
		})
	}
}

// TestBudget: a response over the token budget keeps its head and tail,
// says how much was left out, and names the file holding all of it.
func TestBudget(t *testing.T) {
	s := newShell(t)
	resp := run(t, s, "seq 100000")
	if got := tokens.Estimate.Count(resp.Output); got > envs.DefaultBudget {
		t.Errorf("got %d tokens, want at most %d", got, envs.DefaultBudget)
	}
	if !strings.HasPrefix(resp.Output, "1\n2\n") || !strings.HasSuffix(resp.Output, "99999\n100000") || !strings.Contains(resp.Output, "left out here") {
		t.Errorf("got %q...%q, want the head, the tail and a note", resp.Output[:20], resp.Output[len(resp.Output)-20:])
	}
	data, err := os.ReadFile(resp.OutputFile)
	if err != nil {
		t.Fatalf("the saved output: %v", err)
	}
	t.Cleanup(func() { os.Remove(resp.OutputFile) })
	if lines := strings.Split(string(data), "\n"); len(lines) != 100000 || lines[99999] != "100000" {
		t.Errorf("the saved output: got %d lines, want 100000", len(lines))
	}
	dir := t.TempDir()
	s = newShell(t, bash.WithBudget(100), bash.WithSave(func(out io.Reader) (string, error) {
		data, err := io.ReadAll(out)
		if err != nil {
			return "", err
		}
		return "saved.txt", os.WriteFile(filepath.Join(dir, "saved.txt"), data, 0o600)
	}))
	resp = run(t, s, "seq 1000")
	if resp.OutputFile != "saved.txt" || !strings.Contains(resp.Output, "saved in saved.txt") {
		t.Errorf("with WithSave: got %+v, want the name it returned", resp)
	}
}

// TestCloseEndsEscapedProcesses: processes that left the shell's session
// (setsid, a daemon double fork) end with the shell.
func TestCloseEndsEscapedProcesses(t *testing.T) {
	s, err := bash.New(bash.WithDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	pidFile := filepath.Join(t.TempDir(), "pids")
	// A setsid sleep, and one that also left its parent (re-parented, so
	// found by its mark or its cgroup); the command waits until both wrote
	// their pids.
	run(t, s, fmt.Sprintf(`setsid sh -c 'echo $$ >> %[1]s; exec sleep 1001' & (setsid sh -c 'echo $$ >> %[1]s; exec sleep 1002' &); `+
		`for i in $(seq 3000); do [ "$(wc -l < %[1]s 2>/dev/null)" = 2 ] && break; sleep 0.01; done`, pidFile))
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	if len(strings.Fields(string(data))) != 2 {
		t.Fatalf("the pid file: got %q, want two pids", data)
	}
	for _, f := range strings.Fields(string(data)) {
		pid, _ := strconv.Atoi(f)
		pids = append(pids, pid)
		if !procs.Alive(pid) {
			t.Fatalf("process %d is not running before Close", pid)
		}
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	for _, pid := range pids {
		if procs.Alive(pid) {
			t.Errorf("process %d (a setsid sleep) is still running after Close", pid)
		}
	}
}

// TestResources: resource limits apply to the shell and its commands.
func TestResources(t *testing.T) {
	s := newShell(t, bash.WithResources(procs.Limits{FileSize: 1 << 20, CPUSeconds: 100, AddressSpace: 1 << 40, Processes: 1000}))
	resp := run(t, s, "head -c 2000000 /dev/zero > big; echo status $?; stat -c %s big")
	if !strings.Contains(resp.Output, "status 153") || !strings.HasSuffix(resp.Output, "\n1048576") {
		t.Errorf("a write past the file size limit: got %q, want it killed by SIGXFSZ (status 153) at 1 MiB", resp.Output)
	}
	// ulimit -f counts blocks of 1024 bytes.
	want(t, s, "ulimit -f; ulimit -t; ulimit -v; ulimit -u", "1024\n100\n1073741824\n1000", true)
}
