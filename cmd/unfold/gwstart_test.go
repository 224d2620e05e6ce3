package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/unfold-dev/unfold/gateway"
)

// hangingServer is an MCP server that writes its process id to the file
// named by its argument and never answers initialize.
const hangingServer = "import os, sys\nopen(sys.argv[1], 'w').write(str(os.getpid()))\nfor line in sys.stdin: pass\n"

// hangingProject writes a project whose .mcp.json lists hangingServer
// (with a call timeout of an hour) and returns it with the file its
// process id goes to.
func hangingProject(t *testing.T) (project, pidFile string) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	project = t.TempDir()
	pidFile = filepath.Join(project, "slow.pid")
	cfg := map[string]any{"mcpServers": map[string]any{
		"slow": map[string]any{"command": "python3", "args": []string{"-c", hangingServer, pidFile}, "timeout": 3600},
	}}
	data, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(project, gateway.ProjectConfig), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return project, pidFile
}

// readPid waits for the hanging server's process id.
func readPid(t *testing.T, pidFile string, exited <-chan struct{}, stderr func() string) int {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		data, err := os.ReadFile(pidFile)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && perr == nil && pid > 0 {
			return pid
		}
		select {
		case <-exited:
			t.Fatalf("exited before the upstream server started; stderr:\n%s", stderr())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("the upstream server never started; stderr:\n%s", stderr())
	return 0
}

// TestMCPSlowUpstream: an upstream server that never answers initialize
// does not hold `unfold mcp`'s answers back, its section says it is
// starting, and SIGTERM while it starts stops unfold (143) and the server.
func TestMCPSlowUpstream(t *testing.T) {
	project, pidFile := hangingProject(t)
	promptFile := filepath.Join(project, "p.md")
	if err := os.WriteFile(promptFile, []byte("# Task\n\nWork.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "mcp", "--builtins", "none", "--project", project, "--prompt", promptFile)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	pid := readPid(t, pidFile, exited, stderr.String)

	// A guard against a hang only: the server answers at once.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(ctx, &sdk.IOTransport{Reader: stdout, Writer: stdin}, nil)
	if err != nil {
		t.Fatalf("connect while an upstream server starts: %v; stderr:\n%s", err, stderr.String())
	}
	defer cs.Close()
	res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "unfold://prompt"})
	if err != nil {
		t.Fatalf("read the prompt: %v", err)
	}
	if text := res.Contents[0].Text; !strings.Contains(text, "MCP server slow. It is starting") {
		t.Errorf("the prompt does not say slow is starting:\n%s", text)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitExit(t, cmd, exited, time.Minute, 128+int(syscall.SIGTERM), pid, stderr.bytes())
}

// TestAgentSlowUpstream: `unfold agent` waits for its MCP servers to
// start, says so, and SIGINT while it waits stops it (130) and the server.
func TestAgentSlowUpstream(t *testing.T) {
	project, pidFile := hangingProject(t)
	cmd := exec.Command(binary, "agent", "task", "--builtins", "none", "--project", project, "--base-url", "http://127.0.0.1:1/v1", "--model", "m")
	errPipe, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var stderr lockedBuffer
	waiting := make(chan struct{})
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		sc := bufio.NewScanner(errPipe)
		said := false
		for sc.Scan() {
			stderr.WriteString(sc.Text() + "\n")
			if !said && strings.Contains(sc.Text(), "waiting for MCP servers to start: slow (Ctrl-C stops)") {
				said = true
				close(waiting)
			}
		}
	}()
	exited := make(chan struct{})
	go func() { <-copied; _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	pid := readPid(t, pidFile, exited, stderr.String)
	select {
	case <-waiting:
	case <-exited:
		t.Fatalf("exited without waiting for the server; stderr:\n%s", stderr.String())
	case <-time.After(time.Minute):
		t.Fatalf("never said it waits for the server; stderr:\n%s", stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	waitExit(t, cmd, exited, time.Minute, 128+int(syscall.SIGINT), pid, stderr.bytes())
	if want := "stopped by SIGINT while MCP servers started"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
	}
}

// TestMCPNestingStops: a --mcp-config file that reaches unfold again
// through a wrapper script (which self-detection cannot see through)
// starts one nested unfold that starts servers, and one that refuses to.
func TestMCPNestingStops(t *testing.T) {
	needSh(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "servers.json")
	launches := filepath.Join(dir, "launches")
	logs := filepath.Join(dir, "nested.log")
	wrapper := filepath.Join(dir, "wrap.sh")
	// The guard at 6 launches keeps a broken build from forking without
	// end.
	script := "#!/bin/sh\necho \"$UNFOLD_MCP_UPSTREAM\" >> " + launches + "\n" +
		"[ $(wc -l < " + launches + ") -gt 6 ] && exit 1\n" +
		"exec " + binary + " mcp --builtins none --project " + dir + " --mcp-config " + cfg + " 2>> " + logs + "\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte(`{"mcpServers":{"unfold":{"command":"`+wrapper+`"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cs, stop := startStdio(t, "--builtins", "none", "--project", dir, "--mcp-config", cfg)
	// The nested unfold's start listed its tools; the one below it
	// refused to start servers.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: gateway.FindToolsName, Arguments: map[string]any{"query": "help"}})
	if err != nil {
		t.Fatal(err)
	}
	if text := toolText(res); !strings.Contains(text, "unfold__help") {
		t.Errorf("find_tools: got %q, want the nested unfold's help", text)
	}
	for {
		data, _ := os.ReadFile(logs)
		if strings.Contains(string(data), "unfold nests no deeper") {
			break
		}
		select {
		case <-ctx.Done():
			data, _ := os.ReadFile(launches)
			t.Fatalf("no nested unfold refused to start servers; launches:\n%s", data)
		case <-time.After(20 * time.Millisecond):
		}
	}
	if code, stderr := stop(); code != 0 {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
	data, _ := os.ReadFile(launches)
	if got, want := strings.Fields(string(data)), []string{"1", "2"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("got launches with %s=%v, want %v", upstreamEnv, got, want)
	}
}

func toolText(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// lockedBuffer is a buffer safe for a writer and a reader at once.
type lockedBuffer struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) WriteString(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.WriteString(s)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// bytes returns a copy of what was written so far.
func (b *lockedBuffer) bytes() *bytes.Buffer { return bytes.NewBufferString(b.String()) }

var _ io.Writer = (*lockedBuffer)(nil)
