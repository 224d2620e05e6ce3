package mcp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/mcp"
	"github.com/unfold-dev/unfold/orchestrator"
	"github.com/unfold-dev/unfold/session"
)

// post sends body to url with the session header when session is not "",
// returning the status, the session header of the answer and its body.
func post(ctx context.Context, t *testing.T, url, session, body string) (int, string, string) {
	t.Helper()
	return postVersion(ctx, t, url, session, "2025-06-18", body)
}

// postVersion is post with the protocol version of session.
func postVersion(ctx context.Context, t *testing.T, url, session, version, body string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", version)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err.Error()
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), string(data)
}

// TestHTTPByteBound: over HTTP too, a session's requests in flight are
// bounded by estimated bytes: while a call runs, a request past the bound
// gets 429 with a message saying why, and once the call ended the same
// request is served.
func TestHTTPByteBound(t *testing.T) {
	hs := serveBashHTTP(t, mcp.HTTPOptions{MaxInFlightBytes: 1})
	status, session, body := post(t.Context(), t, hs.URL, "", initializeBody)
	if status != http.StatusOK || session == "" {
		t.Fatalf("initialize: got %d %q", status, body)
	}
	post(t.Context(), t, hs.URL, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Refused only while a ping of the loop below is in flight.
		for ctx.Err() == nil {
			status, _, _ := post(ctx, t, hs.URL, session, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bash","arguments":{"command":"sleep 30","timeout":60}}}`)
			if status != http.StatusTooManyRequests {
				return
			}
		}
	}()
	const ping = `{"jsonrpc":"2.0","id":3,"method":"ping"}`
	// The call is in flight once the ping is refused.
	body = postUntil(t, hs.URL, session, ping, http.StatusTooManyRequests, "while a call runs")
	if !strings.Contains(body, "server busy: 1 requests are in flight") {
		t.Errorf("got %q, want it to say the session is busy", body)
	}
	cancel()
	<-done
	postUntil(t, hs.URL, session, ping, http.StatusOK, "after the call ended")
}

// postUntil posts body until the answer has status want, returning its
// body. The deadline only guards against hanging.
func postUntil(t *testing.T, url, session, body string, want int, what string) string {
	t.Helper()
	return postVersionUntil(t, url, session, "2025-06-18", body, want, what)
}

// postVersionUntil is postUntil with the protocol version of session.
func postVersionUntil(t *testing.T, url, session, version, body string, want int, what string) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		status, _, got := postVersion(t.Context(), t, url, session, version, body)
		if status == want {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: got %d %q, want %d", what, status, got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestHTTPSessionlessRequestsCapped: requests without a session are each
// served with environments of their own, and these count among
// MaxSessions while they live, so many at once cannot build past the
// bound; an initialize with a second "METHOD" key (which a case-blind
// decoder would read instead) is counted as the SDK reads it, as an
// initialize.
func TestHTTPSessionlessRequestsCapped(t *testing.T) {
	var mu sync.Mutex
	live, most := 0, 0
	factory := func(context.Context) (*orchestrator.Orchestrator, error) {
		mu.Lock()
		live++
		most = max(most, live)
		mu.Unlock()
		time.Sleep(20 * time.Millisecond) // building environments takes a while
		o, err := orchestrator.New(orchestrator.WithSession(session.New()))
		if err != nil {
			return nil, err
		}
		p := &closeProbe{ran: make(chan struct{}), closed: make(chan struct{})}
		go func() {
			<-p.closed
			mu.Lock()
			live--
			mu.Unlock()
		}()
		if err := o.Register("probe", envs.Env(p)); err != nil {
			return nil, err
		}
		return o, nil
	}
	s, err := mcp.New(factory, mcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	hs := httptest.NewServer(s.Handler(mcp.HTTPOptions{MaxSessions: 2}))
	t.Cleanup(hs.Close)
	if status, _, body := post(t.Context(), t, hs.URL, "", initializeBody); status != http.StatusOK {
		t.Fatalf("initialize: got %d %q", status, body)
	}

	var wg sync.WaitGroup
	for range 30 {
		wg.Go(func() { post(t.Context(), t, hs.URL, "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`) })
	}
	wg.Wait()
	mu.Lock()
	got := most
	mu.Unlock()
	if got > 2 {
		t.Errorf("got %d environments alive at once, want at most 2 (--max-sessions)", got)
	}

	// One session is open; a second takes the last place, and one whose
	// body also has a "METHOD" key is refused like any third.
	postUntil(t, hs.URL, "", initializeBody, http.StatusOK, "a second session")
	dup := strings.TrimSuffix(initializeBody, "}") + `,"METHOD":"x"}`
	if status, _, body := post(t.Context(), t, hs.URL, "", dup); status != http.StatusServiceUnavailable {
		t.Errorf("a third session, its body with a METHOD key: got %d %q, want 503", status, body)
	}
}

// TestHTTPParallelScreenReads: a Go SDK client reading a screen from six
// goroutines at once, with the default bounds, is served every time: a
// screen's read is estimated as small, not as a context file.
func TestHTTPParallelScreenReads(t *testing.T) {
	hs := serveBashHTTP(t, mcp.HTTPOptions{})
	c := connect(t, &sdk.StreamableClientTransport{Endpoint: hs.URL})
	uri := mcp.ScreenURIPrefix + "bash"
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		failed []error
	)
	for range 6 {
		wg.Go(func() {
			for range 30 {
				if _, err := c.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: uri}); err != nil {
					mu.Lock()
					failed = append(failed, err)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if len(failed) > 0 {
		t.Errorf("%d of 180 reads of %s failed; the first: %v", len(failed), uri, failed[0])
	}
}

// TestHTTPBatchOverBound: a batch (protocol 2025-03-26) whose requests
// together pass the bound on bytes in flight is served when nothing else
// is in flight, as one request alone is; while a call runs it gets 429
// saying what is in flight, and is served again once the call ended.
func TestHTTPBatchOverBound(t *testing.T) {
	hs := serveBashHTTP(t, mcp.HTTPOptions{})
	const version = "2025-03-26"
	status, session, body := post(t.Context(), t, hs.URL, "", strings.Replace(initializeBody, "2025-06-18", version, 1))
	if status != http.StatusOK || session == "" {
		t.Fatalf("initialize: got %d %q", status, body)
	}
	postVersion(t.Context(), t, hs.URL, session, version, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	// Three reads that may each be a context file: more than the 256 MB
	// the session allows.
	var reads []string
	for id := range 3 {
		reads = append(reads, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":"unfold://context/nothing.md"}}`, id+1))
	}
	batch := "[" + strings.Join(reads, ",") + "]"
	status, _, body = postVersion(t.Context(), t, hs.URL, session, version, batch)
	if status != http.StatusOK || strings.Count(body, `"id":`) != 3 {
		t.Fatalf("the batch alone: got %d %q, want its three answers", status, body)
	}

	// The batch is sent once the call runs: sent before, it may take
	// all the room and leave the call refused.
	started := filepath.Join(t.TempDir(), "started")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		call := fmt.Sprintf(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"bash","arguments":{"command":"touch %s; sleep 30","timeout":60}}}`, started)
		postVersion(ctx, t, hs.URL, session, version, call)
	}()
	for wait := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(started); err == nil {
			break
		}
		if time.Now().After(wait) {
			t.Fatal("the call did not start within 20 s")
		}
	}
	body = postVersionUntil(t, hs.URL, session, version, batch, http.StatusTooManyRequests, "while a call runs")
	if !strings.Contains(body, "server busy: 1 requests are in flight") {
		t.Errorf("got %q, want it to say the call is in flight", body)
	}
	cancel()
	<-done
	postVersionUntil(t, hs.URL, session, version, batch, http.StatusOK, "after the call ended")
}

// serveBashHTTP serves sessions with a real bash each over HTTP on
// 127.0.0.1, with opts.
func serveBashHTTP(t *testing.T, opts mcp.HTTPOptions) *httptest.Server {
	t.Helper()
	s, err := mcp.New(bashFactory(t, t.TempDir()), mcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	hs := httptest.NewServer(s.Handler(opts))
	t.Cleanup(hs.Close)
	return hs
}
