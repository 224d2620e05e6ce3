package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMCPStdioBigReadsBounded sends many reads of one large context file
// at once, reading every answer: the reads wait for room in the session's
// byte bound instead of all being built at once, so the server's memory
// stays within a few reads' worth. Without the bound, each read in flight
// holds several copies of the file and the RSS grows by hundreds of
// megabytes.
func TestMCPStdioBigReadsBounded(t *testing.T) {
	project := t.TempDir()
	if err := os.MkdirAll(filepath.Join(project, "context"), 0o755); err != nil {
		t.Fatal(err)
	}
	const fileBytes = 4 << 20
	if err := os.WriteFile(filepath.Join(project, "context", "big.md"), []byte(strings.Repeat(strings.Repeat("x", 99)+"\n", fileBytes/100)), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd, stdin, stdout, _ := startPiped(t, "mcp", "--builtins", "none", "--project", project)
	out := bufio.NewReaderSize(stdout, 1<<20)
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	if _, err := out.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	before := rssBytes(t, cmd.Process.Pid)
	const reads = 32
	for i := 1; i <= reads; i++ {
		fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":"unfold://context/big.md"}}`+"\n", i)
	}
	var peak int64
	for got := 0; got < reads; {
		line, err := out.ReadString('\n')
		if err != nil {
			t.Fatalf("reading answer %d: %v", got+1, err)
		}
		if !strings.Contains(line, `"id":`) {
			continue
		}
		if !strings.Contains(line, `"contents"`) {
			t.Fatalf("got %.300s, want the file's contents", line)
		}
		got++
		peak = max(peak, rssBytes(t, cmd.Process.Pid))
	}
	t.Logf("%d reads of a %d MB file: RSS from %d MB to a peak of %d MB", reads, fileBytes>>20, before>>20, peak>>20)
	if bound := int64(250 << 20); peak-before > bound {
		t.Errorf("the server's RSS grew by %d MB, want at most %d MB", (peak-before)>>20, bound>>20)
	}
}

// startPiped starts the binary with pipes of its own on stdin and stdout,
// so that the test can close its end of stdout.
func startPiped(t *testing.T, args ...string) (cmd *exec.Cmd, stdin, stdout *os.File, stderr *strings.Builder) {
	t.Helper()
	cmd = exec.Command(binary, args...)
	stdinR, stdin, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, stdoutW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr = &strings.Builder{}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdinR.Close()
	stdoutW.Close()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		stdin.Close()
		stdout.Close()
	})
	return cmd, stdin, stdout, stderr
}
