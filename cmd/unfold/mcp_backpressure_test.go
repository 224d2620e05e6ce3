package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMCPStdioClientStopsReading runs the binary with a client that sends
// requests and never reads the answers. The server must stop reading once
// the answers back up (its stdin fills and the client's writes stall), and
// its memory must stay flat; without back-pressure it reads every request
// and grows by hundreds of megabytes.
func TestMCPStdioClientStopsReading(t *testing.T) {
	cmd, stdin, stdout, _ := startPiped(t, "mcp", "--builtins", "none", "--project", t.TempDir())

	w := bufio.NewWriterSize(stdin, 64<<10)
	fmt.Fprint(w, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`+"\n")
	fmt.Fprint(w, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	// The answer to initialize is the last one read.
	if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
		t.Fatalf("reading the answer to initialize: %v", err)
	}
	before := rssBytes(t, cmd.Process.Pid)

	// The deadline only detects that the server stopped reading: a write
	// that makes no progress for that long. It asserts no speed; on a slow
	// machine the memory is merely checked earlier.
	const requests = 150_000
	const stall = 5 * time.Second
	sent := 0
	for ; sent < requests; sent++ {
		if err := stdin.SetWriteDeadline(time.Now().Add(stall)); err != nil {
			t.Fatal(err)
		}
		_, err := fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"help","arguments":{}}}`+"\n", sent+1)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			break
		}
		if err != nil {
			t.Fatalf("writing request %d: %v", sent+1, err)
		}
	}
	after := rssBytes(t, cmd.Process.Pid)
	t.Logf("wrote %d of %d requests; the server's RSS went from %d MB to %d MB", sent, requests, before>>20, after>>20)
	const bound = 100 << 20
	if after-before > bound {
		t.Errorf("the server's RSS grew by %d MB while the client did not read, want at most %d MB", (after-before)>>20, bound>>20)
	}
	if sent == requests {
		t.Errorf("the server read all %d requests while no answer was read, want it to stop reading", requests)
	}
}

// rssBytes returns the resident set size of process pid.
func rssBytes(t *testing.T, pid int) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("reading the process's memory needs /proc: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("parsing %q: %v", line, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}
