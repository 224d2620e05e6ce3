package mcp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/envs/bash"
	"github.com/unfold-dev/unfold/mcp"
	"github.com/unfold-dev/unfold/orchestrator"
	"github.com/unfold-dev/unfold/session"
)

// rawStdio runs a server over mcp.StdioTransport on pipes and exchanges raw
// lines with it.
type rawStdio struct {
	t   *testing.T
	in  io.WriteCloser
	out *bufio.Reader
}

func (r *rawStdio) send(line string) {
	r.t.Helper()
	if _, err := io.WriteString(r.in, line+"\n"); err != nil {
		r.t.Fatal(err)
	}
}

// recv reads the next message the server writes, skipping notifications.
func (r *rawStdio) recv() map[string]any {
	r.t.Helper()
	for {
		line, err := r.out.ReadBytes('\n')
		if err != nil {
			r.t.Fatalf("reading the server's answer: %v", err)
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			r.t.Fatalf("the server wrote %q: %v", line, err)
		}
		if _, isNote := m["method"]; isNote && m["id"] == nil {
			continue
		}
		return m
	}
}

// errorOf returns the code and id of an error response.
func errorOf(t *testing.T, m map[string]any) (code float64, id any) {
	t.Helper()
	e, ok := m["error"].(map[string]any)
	if !ok {
		t.Fatalf("got %v, want an error response", m)
	}
	return e["code"].(float64), m["id"]
}

// stdioCounter serves an orchestrator with a counter environment over
// stdio on pipes, with frames of at most maxFrame bytes (0: the default).
// It returns the server's input, its output, and the end of its Run; the
// server is closed when the test ends.
func stdioCounter(t *testing.T, maxFrame int) (*io.PipeWriter, *io.PipeReader, <-chan error) {
	t.Helper()
	sess := session.New()
	o, err := orchestrator.New(orchestrator.WithSession(sess))
	if err != nil {
		t.Fatal(err)
	}
	withCounter(t)(o, sess)
	s, err := mcp.New(only(o), mcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- s.Run(t.Context(), &mcp.StdioTransport{Reader: inR, Writer: outW, MaxFrameBytes: maxFrame})
		outW.Close()
	}()
	return inW, outR, done
}

// TestStdioSurvivesBadFrames sends a line that is not JSON, one that is
// JSON but not a message, and one past the size limit, between two calls:
// each gets a JSON-RPC error, and the session and its state go on.
func TestStdioSurvivesBadFrames(t *testing.T) {
	inW, outR, done := stdioCounter(t, 32<<10)
	r := &rawStdio{t: t, in: inW, out: bufio.NewReader(outR)}

	r.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if m := r.recv(); m["result"] == nil {
		t.Fatalf("initialize: got %v", m)
	}
	r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	addCall := func(id int, n int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"counter","arguments":{"command":"add %d"}}}`, id, n)
	}
	r.send(addCall(2, 2))
	if m := r.recv(); m["result"] == nil {
		t.Fatalf("first call: got %v", m)
	}

	bad := []struct {
		name, line string
		code       float64
		id         any
	}{
		{"not JSON", `{"jsonrpc":"2.0","id":3,"method":`, -32700, nil},
		{"not a message", `{"jsonrpc":"1.0","id":4,"method":"ping"}`, -32600, float64(4)},
		{"a batch", `[{"jsonrpc":"2.0","id":5,"method":"ping"}]`, -32600, nil},
		{"nested too deep", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"counter","arguments":{"x":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}}}`, -32600, float64(8)},
		{"nested too deep, id last", `{"jsonrpc":"2.0","method":"ping","params":{"x":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `},"id":"s"}`, -32600, "s"},
		{"past the limit", `{"jsonrpc":"2.0","id":6,"method":"ping","params":{"pad":"` + strings.Repeat("x", 40000) + `"}}`, -32600, nil},
	}
	for _, b := range bad {
		r.send(b.line)
		code, id := errorOf(t, r.recv())
		if code != b.code || id != b.id {
			t.Errorf("%s: got error %v with id %v, want %v with id %v", b.name, code, id, b.code, b.id)
		}
	}

	r.send(addCall(7, 3))
	m := r.recv()
	if m["id"] != float64(7) || m["result"] == nil {
		t.Fatalf("call after the bad lines: got %v", m)
	}
	data, _ := json.Marshal(m["result"])
	if !bytes.Contains(data, []byte("Total: 5")) {
		t.Errorf("got %s, want the total of both calls (Total: 5): the state was kept", data)
	}
	// A client reads until the server is done: a notification the server
	// sends late (tools/list_changed, sent after a short delay) must not
	// wait on a pipe nobody reads.
	go io.Copy(io.Discard, r.out)
	inW.Close()
	if err := <-done; err != nil && err != io.EOF {
		t.Errorf("run: %v", err)
	}
}

// bashFactory builds an orchestrator with a real bash per session, started
// in dir.
func bashFactory(t *testing.T, dir string) mcp.Factory {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed; the test runs a real shell per session")
	}
	return func(context.Context) (*orchestrator.Orchestrator, error) {
		o, err := orchestrator.New(orchestrator.WithSession(session.New()))
		if err != nil {
			return nil, err
		}
		sh, err := bash.New(bash.WithDir(dir))
		if err == nil {
			err = o.Register("bash", sh)
		}
		if err != nil {
			o.Close()
			return nil, err
		}
		return o, nil
	}
}

// TestHTTPSessionsHaveTheirOwnShells connects two clients over HTTP: what
// one does in its shell (cd, a variable) does not show in the other's.
func TestHTTPSessionsHaveTheirOwnShells(t *testing.T) {
	dir := t.TempDir()
	s, err := mcp.New(bashFactory(t, dir), mcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	hs := httptest.NewServer(s.Handler(mcp.HTTPOptions{}))
	t.Cleanup(hs.Close)
	a := connect(t, &sdk.StreamableClientTransport{Endpoint: hs.URL})
	b := connect(t, &sdk.StreamableClientTransport{Endpoint: hs.URL})
	if out := structured(t, call(t, a, "bash", map[string]any{"command": "cd / && export MARK=from-a && echo ok"})); !out.Success {
		t.Fatalf("a: %+v", out)
	}
	out := structured(t, call(t, b, "bash", map[string]any{"command": `echo "$PWD ${MARK:-unset}"`}))
	if got, want := strings.TrimSpace(out.Output), dir+" unset"; got != want {
		t.Errorf("b's shell says %q, want %q: the sessions share a shell", got, want)
	}
	out = structured(t, call(t, a, "bash", map[string]any{"command": `echo "$PWD ${MARK:-unset}"`}))
	if got, want := strings.TrimSpace(out.Output), "/ from-a"; got != want {
		t.Errorf("a's shell says %q, want %q", got, want)
	}
}

// closeProbe is an environment that reports its first command and its
// Close.
type closeProbe struct {
	ranOnce, closeOnce sync.Once
	ran, closed        chan struct{}
}

func (p *closeProbe) Execute(context.Context, string) (envs.Response, error) {
	p.ranOnce.Do(func() { close(p.ran) })
	return envs.Response{Output: "ok", Success: true}, nil
}
func (p *closeProbe) Screen() (envs.Screen, error) { return envs.Screen{Content: "probe"}, nil }
func (p *closeProbe) Close() error {
	p.closeOnce.Do(func() { close(p.closed) })
	return nil
}

// TestHTTPIdleSessionExpires checks that a session idle past the timeout
// ends and its environments are closed.
func TestHTTPIdleSessionExpires(t *testing.T) {
	var mu sync.Mutex // guards probes
	var probes []*closeProbe
	s, err := mcp.New(func(context.Context) (*orchestrator.Orchestrator, error) {
		o, err := orchestrator.New(orchestrator.WithSession(session.New()))
		if err != nil {
			return nil, err
		}
		p := &closeProbe{ran: make(chan struct{}), closed: make(chan struct{})}
		mu.Lock()
		probes = append(probes, p)
		mu.Unlock()
		return o, o.Register("probe", p)
	}, mcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hs := httptest.NewServer(s.Handler(mcp.HTTPOptions{SessionTimeout: 200 * time.Millisecond}))
	t.Cleanup(hs.Close)
	c := connect(t, &sdk.StreamableClientTransport{Endpoint: hs.URL})
	call(t, c, "probe", map[string]any{"command": "x"})
	var used *closeProbe
	mu.Lock()
	for _, p := range probes {
		select {
		case <-p.ran:
			used = p
		default:
		}
	}
	mu.Unlock()
	select {
	case <-used.closed:
	case <-time.After(30 * time.Second):
		t.Fatal("the idle session's environments were never closed")
	}
	if _, err := c.CallTool(t.Context(), &sdk.CallToolParams{Name: "probe", Arguments: map[string]any{"command": "x"}}); err == nil {
		t.Error("got a call through an expired session, want an error")
	}
}

// TestHTTPCallCancelledWhenClientGoes starts a call that waits until it is
// interrupted, then drops the HTTP request: the call must stop, which the
// next command of the same environment shows (commands of one environment
// run one at a time).
func TestHTTPCallCancelledWhenClientGoes(t *testing.T) {
	s, err := mcp.New(counters(t), mcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	hs := httptest.NewServer(s.Handler(mcp.HTTPOptions{}))
	t.Cleanup(hs.Close)
	c := connect(t, &sdk.StreamableClientTransport{Endpoint: hs.URL})

	body := `{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"counter","arguments":{"command":"wait"}}}`
	ctx, cancel := context.WithCancel(t.Context())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, hs.URL, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", c.ID())
	req.Header.Set("Mcp-Protocol-Version", c.InitializeResult().ProtocolVersion)
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	time.Sleep(200 * time.Millisecond) // let the call start; the outcome does not depend on it
	cancel()
	<-gone

	callCtx, stop := context.WithTimeout(t.Context(), 20*time.Second)
	defer stop()
	res, err := c.CallTool(callCtx, &sdk.CallToolParams{Name: "counter", Arguments: map[string]any{"command": "show"}})
	if err != nil {
		t.Fatalf("the next command never ran (%v): the abandoned call was not cancelled", err)
	}
	if out := structured(t, res); !out.Success {
		t.Errorf("got %+v, want show to succeed", out)
	}
}

// TestHTTPToken checks that with a token every request needs it.
func TestHTTPToken(t *testing.T) {
	s, err := mcp.New(counters(t), mcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	hs := httptest.NewServer(s.Handler(mcp.HTTPOptions{Token: "s3cret"}))
	t.Cleanup(hs.Close)

	for _, tt := range []struct{ name, header string }{{"none", ""}, {"wrong", "Bearer nope"}} {
		req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if tt.header != "" {
			req.Header.Set("Authorization", tt.header)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s token: got status %d, want 401", tt.name, resp.StatusCode)
		}
	}
	c := connect(t, &sdk.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: &http.Client{Transport: bearer{"s3cret"}}})
	if out := structured(t, call(t, c, "counter", map[string]any{"command": "add 1"})); !out.Success {
		t.Errorf("with the token: got %+v, want success", out)
	}
}

// bearer adds a bearer token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestHTTPBodyLimits sends a body past the size limit and one that stops
// arriving: each is refused with its status, and the session goes on with
// its state.
func TestHTTPBodyLimits(t *testing.T) {
	s, err := mcp.New(counters(t), mcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	hs := httptest.NewServer(s.Handler(mcp.HTTPOptions{MaxBodyBytes: 2048, BodyTimeout: 300 * time.Millisecond}))
	t.Cleanup(hs.Close)
	c := connect(t, &sdk.StreamableClientTransport{Endpoint: hs.URL})
	call(t, c, "counter", map[string]any{"command": "add 2"})
	headers := func(h http.Header) {
		h.Set("Content-Type", "application/json")
		h.Set("Accept", "application/json, text/event-stream")
		h.Set("Mcp-Session-Id", c.ID())
		h.Set("Mcp-Protocol-Version", c.InitializeResult().ProtocolVersion)
	}

	big := `{"jsonrpc":"2.0","id":50,"method":"ping","params":{"pad":"` + strings.Repeat("x", 4096) + `"}}`
	req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(big))
	headers(req.Header)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(msg), "exceeds 2048 bytes") {
		t.Errorf("a body past the limit: got %d %q, want 413 naming the limit", resp.StatusCode, msg)
	}

	// A body that announces 1000 bytes and sends 10.
	conn, err := net.Dial("tcp", hs.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	h := http.Header{}
	headers(h)
	var head strings.Builder
	fmt.Fprintf(&head, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Length: 1000\r\n", hs.Listener.Addr())
	h.Write(&head)
	head.WriteString("\r\n" + `{"jsonrpc"`)
	if _, err := io.WriteString(conn, head.String()); err != nil {
		t.Fatal(err)
	}
	// A guard against hanging: without a body timeout nothing answers.
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err = http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("a body that stops arriving: no answer (%v), want 408", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Errorf("a body that stops arriving: got status %d, want 408", resp.StatusCode)
	}

	res := call(t, c, "counter", map[string]any{"command": "add 3"})
	if out := structured(t, res); out.Output != "Total: 5" {
		t.Errorf("after the refused bodies: got %q, want Total: 5 (the session's state kept)", out.Output)
	}
}
