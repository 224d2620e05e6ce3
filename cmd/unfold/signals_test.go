package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/unfold-dev/unfold/gateway"
)

// needBash skips a test where bash is missing (CI installs it).
func needBash(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
}

// sleeper starts a sleep in the bash environment and writes its process id
// to sleep.pid in the project.
const sleeper = "sleep 300 & echo $! > sleep.pid; wait $!"

// waitPid waits for the sleeper's process id.
func waitPid(t *testing.T, project string, exited <-chan struct{}, stderr *bytes.Buffer) int {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		data, err := os.ReadFile(filepath.Join(project, "sleep.pid"))
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && perr == nil && pid > 0 {
			return pid
		}
		select {
		case <-exited:
			t.Fatalf("exited before the command ran; stderr:\n%s", stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("the command never started; stderr:\n%s", stderr.String())
	return 0
}

// running reports whether the process is alive (a zombie is not).
func running(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name's closing parenthesis.
	i := bytes.LastIndexByte(data, ')')
	return i < 0 || i+2 >= len(data) || data[i+2] != 'Z'
}

// waitExit waits for cmd up to limit after the signal or end of input, and
// checks its exit status and that the sleeper is gone with it.
func waitExit(t *testing.T, cmd *exec.Cmd, exited <-chan struct{}, limit time.Duration, want, pid int, stderr *bytes.Buffer) {
	t.Helper()
	select {
	case <-exited:
	case <-time.After(limit):
		_ = cmd.Process.Kill()
		<-exited
		t.Fatalf("still running %s after it was told to stop; stderr:\n%s", limit, stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != want {
		t.Errorf("exit status %d, want %d; stderr:\n%s", code, want, stderr.String())
	}
	// The environments were closed before the exit: the sleep is gone
	// (a moment for its parent, now init, to reap it).
	for range 50 {
		if !running(pid) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	t.Errorf("the command's sleep (pid %d) outlived unfold", pid)
}

// startServe runs unfold serve with the bash environment and sends it the
// sleeper.
func startServe(t *testing.T) (cmd *exec.Cmd, stdin io.WriteCloser, project string, exited chan struct{}, stderr *bytes.Buffer) {
	t.Helper()
	project = t.TempDir()
	cmd = exec.Command(binary, "serve", "--builtins", "bash", "--project", project)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = io.Discard
	stderr = &bytes.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited = make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	fmt.Fprintf(stdin, `{"type":"command","environment":"bash","command":%q}`+"\n", sleeper)
	return cmd, stdin, project, exited, stderr
}

// TestServeSignals: SIGINT or SIGTERM to unfold serve while a command runs
// interrupts it, closes the environments and exits within 5 s with 128
// plus the signal's number.
func TestServeSignals(t *testing.T) {
	needBash(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd, stdin, project, exited, stderr := startServe(t)
			defer stdin.Close()
			pid := waitPid(t, project, exited, stderr)
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			waitExit(t, cmd, exited, 5*time.Second, 128+int(sig), pid, stderr)
		})
	}
}

// TestServeEndOfInput: the end of serve's input cancels the command that
// runs; the server shuts down and exits 0.
func TestServeEndOfInput(t *testing.T) {
	needBash(t)
	cmd, stdin, project, exited, stderr := startServe(t)
	pid := waitPid(t, project, exited, stderr)
	stdin.Close()
	waitExit(t, cmd, exited, 5*time.Second, 0, pid, stderr)
}

// TestMCPSignals: SIGINT or SIGTERM to unfold mcp on stdio while a tool
// call runs a command interrupts it, closes the environments and exits
// within 5 s with 128 plus the signal's number.
func TestMCPSignals(t *testing.T) {
	needBash(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			project := t.TempDir()
			cmd := exec.Command(binary, "mcp", "--builtins", "bash", "--project", project)
			stdin, _ := cmd.StdinPipe()
			stdout, _ := cmd.StdoutPipe()
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan struct{})
			go func() { _ = cmd.Wait(); close(exited) }()
			t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(ctx, &sdk.IOTransport{Reader: stdout, Writer: stdin}, nil)
			if err != nil {
				t.Fatalf("connect: %v; stderr:\n%s", err, stderr.String())
			}
			defer cs.Close()
			called := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "bash", Arguments: map[string]any{"command": sleeper}})
				called <- err
			}()
			pid := waitPid(t, project, exited, &stderr)
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			waitExit(t, cmd, exited, 5*time.Second, 128+int(sig), pid, &stderr)
			select {
			case err := <-called:
				if err == nil {
					t.Errorf("the call of the interrupted command succeeded")
				}
			case <-time.After(10 * time.Second):
				t.Errorf("the call got no answer after the server exited")
			}
		})
	}
}

// TestGatewayClosesWithinGrace: the gateway stops its servers within the
// time a front end gives itself to shut down.
func TestGatewayClosesWithinGrace(t *testing.T) {
	if gateway.CloseTimeout >= shutdownGrace {
		t.Errorf("gateway.CloseTimeout is %v, want under shutdownGrace, %v", gateway.CloseTimeout, shutdownGrace)
	}
}

// TestMCPSignalStopsUpstreams: SIGTERM to unfold mcp stops every upstream
// server, those that do not exit at the end of their input and one behind
// sh -c (its child too), before unfold exits with 143.
func TestMCPSignalStopsUpstreams(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed; the servers are a Python script")
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "gateway", "testdata", "pidserver.py"))
	if err != nil {
		t.Fatal(err)
	}
	project := t.TempDir()
	names := []string{"a", "b", "c", "d", "w"}
	servers := map[string]any{}
	for _, n := range names[:4] {
		servers[n] = map[string]any{"command": py, "args": []string{script, project, n, "stay"}}
	}
	// "; true" keeps sh from replacing itself with python.
	servers["w"] = map[string]any{"command": "sh", "args": []string{"-c", `echo $$ > "$0/w-sh.pid"; "$1" "$2" "$0" w stay; true`, project, py, script}}
	data, _ := json.Marshal(map[string]any{"mcpServers": servers})
	if err := os.WriteFile(filepath.Join(project, gateway.ProjectConfig), data, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "mcp", "--builtins", "none", "--project", project)
	stdin, _ := cmd.StdinPipe()
	defer stdin.Close()
	cmd.Stdout = io.Discard
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })

	// Every server listed its tools (its manifest is cached): all run.
	deadline := time.After(time.Minute)
	for _, n := range names {
		cached := filepath.Join(project, gateway.CacheDir, n+".json")
		for _, err := os.Stat(cached); err != nil; _, err = os.Stat(cached) {
			select {
			case <-deadline:
				t.Fatalf("server %s did not list its tools; stderr:\n%s", n, stderr.String())
			case <-exited:
				t.Fatalf("exited before server %s listed its tools; stderr:\n%s", n, stderr.String())
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	pids := map[string]int{}
	for _, n := range append(names, "w-sh") {
		pids[n] = readPid(t, filepath.Join(project, n+".pid"), exited, stderr.String)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitExit(t, cmd, exited, time.Minute, 128+int(syscall.SIGTERM), pids["a"], stderr.bytes())
	for n, pid := range pids {
		if running(pid) {
			t.Errorf("server %s (pid %d) outlived unfold; stderr:\n%s", n, pid, stderr.String())
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
