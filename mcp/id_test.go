package mcp_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/unfold-dev/unfold/mcp"
)

// rawAnswer is an answer with its id as the server wrote it.
type rawAnswer struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// numberIDs are request ids and whether the server may serve them: a
// number the SDK would answer under another id (it keeps number ids as
// int64s read through a float64) is refused, with the id as written.
var numberIDs = []struct {
	id    string
	serve bool
}{
	{`7.5`, false},
	{`2.5`, false},
	{`1.0`, false},
	{`1e2`, false},
	{`-0`, false},
	{`18446744073709551616`, false},
	{`123456789012345678901234567890`, false},
	{`9007199254740993`, false},
	{`9007199254740992`, true},
	{`-9007199254740992`, true},
	{`42`, true},
	{`"7.5"`, true},
}

// TestStdioNumberIDsKept sends pings whose ids are numbers the SDK would
// change, between a call and its answer: each is refused with its own id
// as written, and the call is answered once, under its id.
func TestStdioNumberIDsKept(t *testing.T) {
	inW, outR, done := stdioCounter(t, 0)
	// The answers are read as they come: the pipe holds none, and a
	// server that cannot write stops reading.
	lines := make(chan []byte, 64)
	go func() {
		defer close(lines)
		out := bufio.NewReader(outR)
		for {
			line, err := out.ReadBytes('\n')
			if err != nil {
				return
			}
			lines <- line
		}
	}()
	send := (&rawStdio{t: t, in: inW}).send
	// answers reads the next n answers (not notifications), by id as written.
	answers := func(n int) map[string]rawAnswer {
		t.Helper()
		got := map[string]rawAnswer{}
		for len(got) < n {
			var line []byte
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("the server's output ended after %d answers of %d: %v", len(got), n, keys(got))
				}
				line = l
			case <-time.After(time.Minute): // a guard against hanging, not a measure
				t.Fatalf("no more answers after %d of %d: got %v", len(got), n, keys(got))
			}
			var a rawAnswer
			if err := json.Unmarshal(line, &a); err != nil {
				t.Fatalf("the server wrote %q: %v", line, err)
			}
			if a.ID == nil {
				continue // a notification
			}
			if _, twice := got[string(a.ID)]; twice {
				t.Errorf("id %s answered twice: %s", a.ID, line)
			}
			got[string(a.ID)] = a
		}
		return got
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	answers(1)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"counter","arguments":{"command":"add 2"}}}`)
	for _, n := range numberIDs {
		send(`{"jsonrpc":"2.0","id":` + n.id + `,"method":"ping"}`)
	}
	got := answers(len(numberIDs) + 1)
	if a, ok := got["7"]; !ok || a.Result == nil {
		t.Errorf("the call, id 7: got %+v, want its result", a)
	}
	for _, n := range numberIDs {
		a, ok := got[n.id]
		switch {
		case !ok:
			t.Errorf("id %s: no answer under it; got answers for %v", n.id, keys(got))
		case n.serve && a.Result == nil:
			t.Errorf("id %s: got %+v, want the ping's result", n.id, a.Error)
		case !n.serve && (a.Error == nil || a.Error.Code != -32600 || !strings.Contains(a.Error.Message, "whole number")):
			t.Errorf("id %s: got %+v, %s, want an invalid-request error about the id", n.id, a.Error, a.Result)
		}
	}
	go func() {
		for range lines {
		}
	}()
	inW.Close()
	if err := <-done; err != nil && err != io.EOF {
		t.Errorf("run: %v", err)
	}
}

func keys(m map[string]rawAnswer) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// TestHTTPNumberIDsKept posts the same requests over HTTP: one whose id
// the SDK would change is refused with 400 and an error carrying its id
// as written; the session goes on.
func TestHTTPNumberIDsKept(t *testing.T) {
	s, err := mcp.New(counters(t), mcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	hs := httptest.NewServer(s.Handler(mcp.HTTPOptions{}))
	t.Cleanup(hs.Close)
	c := connect(t, &sdk.StreamableClientTransport{Endpoint: hs.URL})
	post := func(body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", c.ID())
		req.Header.Set("Mcp-Protocol-Version", c.InitializeResult().ProtocolVersion)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(data)
	}
	for _, n := range numberIDs {
		status, body := post(`{"jsonrpc":"2.0","id":` + n.id + `,"method":"ping"}`)
		if n.serve {
			if status != http.StatusOK || !strings.Contains(body, `"id":`+n.id+`,`) {
				t.Errorf("id %s: got %d %q, want 200 answering under it", n.id, status, body)
			}
			continue
		}
		var a rawAnswer
		if status != http.StatusBadRequest || json.Unmarshal([]byte(body), &a) != nil || string(a.ID) != n.id || a.Error == nil || a.Error.Code != -32600 {
			t.Errorf("id %s: got %d %q, want 400 with an invalid-request error under id %s", n.id, status, body, n.id)
		}
	}
	status, body := post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7.5}}`)
	if status != http.StatusBadRequest || !strings.Contains(body, "names request 7.5") {
		t.Errorf("a cancellation naming 7.5: got %d %q, want 400 saying no request has that id", status, body)
	}
	res := call(t, c, "counter", map[string]any{"command": "add 3"})
	if out := structured(t, res); out.Output != "Total: 3" {
		t.Errorf("after the refused requests: got %q, want Total: 3", out.Output)
	}
}
