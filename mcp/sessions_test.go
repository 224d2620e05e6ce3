package mcp_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/unfold-dev/unfold/mcp"
)

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// postInitialize sends an initialize request that starts a session, and
// returns the status and body of the answer.
func postInitialize(t *testing.T, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(initializeBody))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// TestHTTPSessionsCapped serves sessions with a real bash each, at most
// two at once: a third is refused with 503 and a message that says why,
// until a client ends its session.
func TestHTTPSessionsCapped(t *testing.T) {
	s, err := mcp.New(bashFactory(t, t.TempDir()), mcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	hs := httptest.NewServer(s.Handler(mcp.HTTPOptions{MaxSessions: 2}))
	t.Cleanup(hs.Close)
	a := connect(t, &sdk.StreamableClientTransport{Endpoint: hs.URL})
	b := connect(t, &sdk.StreamableClientTransport{Endpoint: hs.URL})
	for _, c := range []*client{a, b} {
		if out := structured(t, call(t, c, "bash", map[string]any{"command": "echo ok"})); !out.Success {
			t.Fatalf("got %+v, want the session's bash to run", out)
		}
	}

	status, body := postInitialize(t, hs.URL)
	if status != http.StatusServiceUnavailable || !strings.Contains(body, "2 sessions are open, the most this server allows") {
		t.Errorf("a third session: got %d %q, want 503 saying 2 sessions are open", status, body)
	}
	cl := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil)
	if cs, err := cl.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: hs.URL}, nil); err == nil {
		cs.Close()
		t.Error("a third client connected, want it refused")
	}

	// Once a client ends its session, its place is free again. The session
	// ends after the DELETE is answered, so the next start is retried; the
	// deadline only guards against hanging.
	if err := a.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		cs, err := cl.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: hs.URL}, nil)
		if err == nil {
			cs.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no session could start after one ended: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
