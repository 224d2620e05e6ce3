package mcp_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/mcp"
)

// lineClient is a raw JSON-RPC client of a server run over
// mcp.StdioTransport on pipes, whose answers are read as they come.
type lineClient struct {
	t       *testing.T
	in      io.WriteCloser
	answers chan map[string]any // responses, in the order written
	done    chan error          // the server's Run
}

// startLines serves one session with a real bash over a StdioTransport
// with the given bounds, and initializes it.
func startLines(t *testing.T, tr mcp.StdioTransport) *lineClient {
	t.Helper()
	s, err := mcp.New(bashFactory(t, t.TempDir()), mcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &lineClient{t: t, in: inW, answers: make(chan map[string]any, 100), done: make(chan error, 1)}
	tr.Reader, tr.Writer = inR, outW
	go func() {
		c.done <- s.Run(t.Context(), &tr)
		outW.Close()
	}()
	go func() {
		defer close(c.answers)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil && m["id"] != nil {
				c.answers <- m
			}
		}
		io.Copy(io.Discard, outR)
	}()
	t.Cleanup(func() { inW.Close() })
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	c.next("initialize")
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

func (c *lineClient) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

// bash sends a call of the bash tool.
func (c *lineClient) bash(id int, command string) {
	c.t.Helper()
	args, _ := json.Marshal(map[string]any{"command": command, "timeout": 60})
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"bash","arguments":%s}}`, id, args))
}

func (c *lineClient) ping(id int) {
	c.t.Helper()
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id))
}

func (c *lineClient) cancel(id int) {
	c.t.Helper()
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d,"reason":"stop"}}`, id))
}

// next returns the next answer. The deadline only detects a server that
// stopped answering (the commands sleep 30 s); it asserts no speed.
func (c *lineClient) next(what string) map[string]any {
	c.t.Helper()
	select {
	case m, ok := <-c.answers:
		if !ok {
			c.t.Fatalf("%s: the server closed its output", what)
		}
		return m
	case <-time.After(20 * time.Second):
		c.t.Fatalf("%s: no answer in 20 s", what)
	}
	return nil
}

// expect reads the next answer and checks its id and, for want starting
// with "error ", that it is an error whose message contains the rest; for
// any other want, that it is a result whose text contains want.
func (c *lineClient) expect(id int, want string) {
	c.t.Helper()
	m := c.next(fmt.Sprintf("answer to %d", id))
	data, _ := json.Marshal(m)
	if m["id"] != float64(id) {
		c.t.Fatalf("got %s, want the answer to %d", data, id)
	}
	if msg, ok := strings.CutPrefix(want, "error "); ok {
		e, _ := m["error"].(map[string]any)
		if text, _ := e["message"].(string); !strings.Contains(text, msg) {
			c.t.Errorf("got %s, want an error saying %q", data, msg)
		}
		return
	}
	if m["result"] == nil || !strings.Contains(string(data), want) {
		c.t.Errorf("got %s, want a result with %q", data, want)
	}
}

// TestStdioFullStillReadsCancels fills the bound on requests in flight
// with two commands that sleep, one queued behind the other (whichever
// gets the shell first): requests then wait, as many as the bound, one
// more is refused at once as busy, a reused id is refused, and the
// cancellations of the sleeps are still read, after which every waiting
// request is answered.
func TestStdioFullStillReadsCancels(t *testing.T) {
	c := startLines(t, mcp.StdioTransport{MaxInFlight: 2})
	c.bash(1, "sleep 30")
	c.bash(2, "sleep 30")
	c.ping(3) // waits for room
	c.ping(4) // waits too
	c.ping(3)
	c.expect(3, "error id 3 is already used by a request in flight")
	c.ping(5)
	c.expect(5, "error server busy: 2 requests are in flight, holding an estimated 2 MB of the 256 MB this session allows (at most 2 requests), and 2 more wait for room")
	c.cancel(1)
	c.cancel(2)
	got := map[float64]bool{}
	for range 4 {
		m := c.next("the answers after the cancels")
		got[m["id"].(float64)] = true
	}
	if !got[1] || !got[2] || !got[3] || !got[4] {
		t.Errorf("got answers to %v, want 1, 2, 3 and 4", got)
	}
}

// TestStdioReusedIDs: requests that reuse the id of a request in flight
// are answered with an error, and take no room: the session still serves
// as many requests at once as its bound says.
func TestStdioReusedIDs(t *testing.T) {
	c := startLines(t, mcp.StdioTransport{MaxInFlight: 2})
	c.bash(1, "sleep 30")
	for range 5 {
		c.ping(1)
		c.expect(1, "error id 1 is already used by a request in flight")
	}
	c.cancel(1)
	c.expect(1, "error context canceled")
	c.bash(2, "sleep 30")
	c.ping(3) // there is room for it beside the sleep
	c.expect(3, `"result":{}`)
	c.cancel(2)
	c.expect(2, "error context canceled")
}

// TestStdioFullStillReadsEOF: the end of input is read while the bound is
// full and a request waits: the session ends and the environments close,
// ending the command that sleeps.
func TestStdioFullStillReadsEOF(t *testing.T) {
	c := startLines(t, mcp.StdioTransport{MaxInFlight: 2})
	c.bash(1, "sleep 30")
	c.bash(2, "echo two")
	c.ping(3)
	c.in.Close()
	select {
	case <-c.done:
	case <-time.After(20 * time.Second):
		t.Fatal("the session still runs 20 s after the end of its input, want it ended")
	}
}

// TestStdioByteBound: past the bytes a session may hold in flight,
// requests wait even under the count bound; once the first is answered
// the waiting ones run, one at a time.
func TestStdioByteBound(t *testing.T) {
	c := startLines(t, mcp.StdioTransport{MaxInFlight: 100, MaxInFlightBytes: 1})
	c.bash(1, "sleep 30") // alone in flight: admitted whatever it costs
	c.ping(2)             // waits
	c.ping(3)             // waits too
	c.cancel(1)
	c.expect(1, "error context canceled")
	c.expect(2, `"result":{}`)
	c.expect(3, `"result":{}`)
}

// TestStdioCancelWaiting: a request the client cancels while it waits for
// room in flight is answered as cancelled at once and never runs, even
// once there is room.
func TestStdioCancelWaiting(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	c := startLines(t, mcp.StdioTransport{MaxInFlight: 1})
	c.bash(1, "sleep 2")
	c.bash(2, "touch "+marker+"; echo ran") // waits for room
	c.cancel(2)
	c.expect(2, "error context canceled: the client cancelled the request while it waited for room in flight; it did not run")
	c.expect(1, `"success":true`)
	// With one request in flight at most, 2 would run before this ping.
	c.ping(3)
	c.expect(3, `"result":{}`)
	if _, err := os.Stat(marker); err == nil {
		t.Error("request 2 ran after it was cancelled (its marker file exists)")
	}
}
