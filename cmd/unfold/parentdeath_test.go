//go:build linux

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// pidEnv is a process environment that answers a command with its own
// process ID; "busy" answers, and after the screen that follows it sleeps
// in the same process, no longer reading its input.
var pidEnv = map[string]string{
	"env/pe.json": `{"kind":"process","executable":"sh","args":["env/pe.sh"],"description":"Says its pid"}`,
	"env/pe.sh": `busy=
while IFS= read -r line; do
  case "$line" in
    *'"type":"screen"'*) printf '{"type":"screen","content":"pe","max_lines":3}\n'; [ -z "$busy" ] || exec sleep 1000 ;;
    *'"command":"busy"'*) busy=1; printf '{"type":"response","output":"busy","success":true}\n' ;;
    *'"command":'*) printf '{"type":"response","output":"%d","success":true}\n' "$$" ;;
    *'"type":"shutdown"'*) exit 0 ;;
    *) printf '{"type":"error","message":"unknown request"}\n' ;;
  esac
done
`,
}

// gone reports whether pid ended: it does not exist, or is a zombie
// nobody reaped yet.
func gone(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(stat), ')')
	return i > 0 && strings.HasPrefix(string(stat[i+1:]), " Z")
}

// waitGone waits for each of pids to end, failing the test for those
// still running after a while; they are killed then.
func waitGone(t *testing.T, what string, pids map[string]int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for name, pid := range pids {
		for !gone(pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if !gone(pid) {
			t.Errorf("the %s environment's process %d still runs after %s, want it ended", name, pid, what)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// servePIDs asks the python and pe environments of an `unfold serve` for
// their process IDs.
func servePIDs(t *testing.T, in io.Writer, out *bufio.Reader) map[string]int {
	t.Helper()
	pids := map[string]int{}
	for env, command := range map[string]string{"python": "import os; print(os.getpid())", "pe": "pid"} {
		line, _ := json.Marshal(map[string]string{"type": "command", "environment": env, "command": command})
		if _, err := fmt.Fprintf(in, "%s\n", line); err != nil {
			t.Fatal(err)
		}
		answer, err := out.ReadBytes('\n')
		if err != nil {
			t.Fatalf("reading the answer of %s: %v", env, err)
		}
		var m serveMessage
		if err := json.Unmarshal(answer, &m); err != nil {
			t.Fatalf("answer %q: %v", answer, err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(m.Response.Output))
		if err != nil {
			t.Fatalf("got %q from %s, want its process ID", m.Response.Output, env)
		}
		pids[env] = pid
	}
	return pids
}

// TestKilledServerLeavesNoEnvironments: when unfold dies without shutting
// down (SIGKILL, as an out-of-memory kill), the python interpreter, which
// runs without a terminal and gets no SIGHUP, and a process environment
// die with it instead of running on re-parented to init, also while they
// are busy and read none of their pipes.
func TestKilledServerLeavesNoEnvironments(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	cmd, stdin, stdout, _ := startBinary(t, "serve", "--builtins", "python", "--project", writeProject(t, pidEnv))
	out := bufio.NewReader(stdout)
	pids := servePIDs(t, stdin, out)
	for _, line := range []string{
		`{"type":"command","environment":"python","command":"import time\nwhile True: time.sleep(1)","timeout":1}`,
		`{"type":"command","environment":"pe","command":"busy"}`,
	} {
		fmt.Fprintln(stdin, line)
		if answer, err := out.ReadString('\n'); err != nil || !strings.Contains(answer, `"running":true`) && !strings.Contains(answer, `"output":"busy"`) {
			t.Fatalf("got %q, %v, want the command running", answer, err)
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	waitGone(t, "unfold was killed", pids)
}

// TestClosedStdoutShutsDown: a client that closes the end of stdout it
// reads does not kill unfold with SIGPIPE; the failed write ends the
// session as the end of input does: the environments are shut down and
// unfold exits by itself. Over MCP and over the serve protocol.
func TestClosedStdoutShutsDown(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	t.Run("serve", func(t *testing.T) {
		cmd, stdin, stdout, _ := startPiped(t, "serve", "--builtins", "python", "--project", writeProject(t, pidEnv))
		pids := servePIDs(t, stdin, bufio.NewReader(stdout))
		stdout.Close()
		for range 3 { // the first write may land in the pipe before it closes
			if _, err := fmt.Fprintln(stdin, `{"type":"command","environment":"pe","command":"pid"}`); err != nil {
				break
			}
		}
		waitShutdown(t, cmd)
		waitGone(t, "unfold's stdout was closed", pids)
	})
	t.Run("mcp", func(t *testing.T) {
		cmd, stdin, stdout, _ := startPiped(t, "mcp", "--builtins", "python", "--project", writeProject(t, pidEnv))
		out := bufio.NewReader(stdout)
		fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
		fmt.Fprintln(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"python","arguments":{"command":"import os; print(os.getpid())"}}}`)
		pids := map[string]int{}
		for len(pids) == 0 {
			line, err := out.ReadBytes('\n')
			if err != nil {
				t.Fatalf("reading the answers: %v", err)
			}
			var m struct {
				ID     *int `json:"id"`
				Result struct {
					StructuredContent struct {
						Output string `json:"output"`
					} `json:"structuredContent"`
				} `json:"result"`
			}
			if json.Unmarshal(line, &m) == nil && m.ID != nil && *m.ID == 1 {
				pid, err := strconv.Atoi(strings.TrimSpace(m.Result.StructuredContent.Output))
				if err != nil {
					t.Fatalf("got %s, want the interpreter's process ID", line)
				}
				pids["python"] = pid
			}
		}
		stdout.Close()
		for i := range 3 {
			if _, err := fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`+"\n", 10+i); err != nil {
				break
			}
		}
		waitShutdown(t, cmd)
		waitGone(t, "unfold's stdout was closed", pids)
	})
}

// waitShutdown waits for unfold to exit by itself and checks that no signal
// ended it.
func waitShutdown(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("unfold still runs 20 s after its stdout was closed, want it shut down")
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Errorf("unfold was killed by %v, want it to shut down and exit", ws.Signal())
	}
}
