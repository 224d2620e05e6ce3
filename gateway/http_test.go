package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/unfold-dev/unfold/gateway"
)

// httpConfig parses one http server entry named name, as a file gives it.
func httpConfig(t *testing.T, name, entry string, vars map[string]string) gateway.ServerConfig {
	t.Helper()
	cfgs, skipped, err := gateway.ParseConfig("a.json", []byte(`{"mcpServers": {"`+name+`": `+entry+`}}`), env(vars))
	if err != nil || len(skipped) > 0 || len(cfgs) != 1 {
		t.Fatalf("parse %s: got %v, skipped %v, %v", entry, cfgs, skipped, err)
	}
	return cfgs[0]
}

// TestHTTPBodyBounded: a server that answers with a body far past
// MaxResponseBytes fails to start with an error that names it and the
// bound, and the body is not read past the bound.
func TestHTTPBodyBounded(t *testing.T) {
	const chunk, chunks = 1 << 20, 64
	var sent atomic.Int64
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		blank := []byte(strings.Repeat(" ", chunk))
		for range chunks {
			n, err := w.Write(blank)
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	t.Cleanup(hs.Close)
	var logs logBuffer
	g := newGateway(t, gateway.Options{Logger: logs.logger()}, httpConfig(t, "big", `{"type": "http", "url": "`+hs.URL+`", "timeout": 30}`, nil))
	u, _ := g.Upstream("big")
	err := u.Err()
	want := "MCP server big answered with an HTTP body over 16 MiB, more than unfold reads from one answer"
	if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "MCP server big: start:") {
		t.Fatalf("got %v, want a start error with %q", err, want)
	}
	if !strings.Contains(logs.String(), want) {
		t.Errorf("the log lacks %q:\n%s", want, logs.String())
	}
	d := disclosure(t, g)
	if text := d.Rendered(0).Text(); !strings.Contains(text, "over 16 MiB") {
		t.Errorf("the section does not say why the server did not start:\n%s", text)
	}
	hs.Close() // waits for the handler, so that sent is final
	if got := sent.Load(); got >= chunks*chunk {
		t.Errorf("the server sent its whole body (%d bytes): the client read past the bound", got)
	}
}

// TestHeadersStayWithTheirOrigin: the configured headers reach the
// configured server, and a server it redirects to on the same origin, but
// not a server on another origin that a redirect points to.
func TestHeadersStayWithTheirOrigin(t *testing.T) {
	u := newUpstream(t)
	mcp := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return u.srv }, nil)
	var mu sync.Mutex // guards seen
	seen := map[string][]string{}
	record := func(who string, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		seen[who] = append(seen[who], r.Header.Get("Authorization")+"|"+r.Header.Get("X-Api-Key"))
	}
	// other is another origin (another port), an MCP server that wants no
	// token.
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		record("other", r)
		mcp.ServeHTTP(w, r)
	}))
	t.Cleanup(other.Close)
	// home redirects /moved to its own /mcp, which wants the token, and
	// /away to the other origin.
	home := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		record("home "+r.URL.Path, r)
		switch r.URL.Path {
		case "/moved":
			http.Redirect(w, r, "/mcp", http.StatusTemporaryRedirect)
		case "/away":
			http.Redirect(w, r, other.URL+"/collect", http.StatusTemporaryRedirect)
		case "/mcp":
			if r.Header.Get("Authorization") != "Bearer TOPSECRET" {
				http.Error(w, "wrong token", http.StatusUnauthorized)
				return
			}
			mcp.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(home.Close)
	hdr := `"headers": {"Authorization": "Bearer ${TOKEN}", "X-Api-Key": "k-${TOKEN}"}`
	vars := map[string]string{"TOKEN": "TOPSECRET"}
	g := newGateway(t, gateway.Options{},
		httpConfig(t, "same", `{"type": "http", "url": "`+home.URL+`/moved", `+hdr+`}`, vars),
		httpConfig(t, "away", `{"type": "http", "url": "`+home.URL+`/away", `+hdr+`}`, vars))
	for _, name := range []string{"same", "away"} {
		up, _ := g.Upstream(name)
		if err := up.Err(); err != nil || len(up.Manifest().Tools) == 0 {
			t.Errorf("%s: got %v and %d tools, want it started", name, err, len(up.Manifest().Tools))
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen["other"]) == 0 {
		t.Fatal("the redirect to the other origin was not followed")
	}
	for _, h := range seen["other"] {
		if h != "|" {
			t.Errorf("the other origin got the headers %q, want none", h)
		}
	}
	for _, path := range []string{"home /moved", "home /away", "home /mcp"} {
		if len(seen[path]) == 0 {
			t.Errorf("%s: no request", path)
		}
		for _, h := range seen[path] {
			if h != "Bearer TOPSECRET|k-TOPSECRET" {
				t.Errorf("%s got the headers %q, want the configured ones", path, h)
			}
		}
	}
}

// closedPort returns an address on 127.0.0.1 where nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestURLSecretsMasked: servers whose URL holds a key from a variable, in
// its query or its path, fail to start; the key shows nowhere (the
// prompt, find_tools, call_tool, the log, the cache), and the messages
// show the URL as written, with ${VAR}.
func TestURLSecretsMasked(t *testing.T) {
	addr := closedPort(t)
	vars := map[string]string{"KEY": "SEKRIT-123", "ZKEY": "ZAP/SECRET 456"}
	cache := t.TempDir()
	var logs logBuffer
	g := newGateway(t, gateway.Options{CacheDir: cache, Logger: logs.logger()},
		httpConfig(t, "web", `{"type": "http", "url": "http://`+addr+`/mcp?api_key=${KEY}"}`, vars),
		httpConfig(t, "zap", `{"type": "http", "url": "http://`+addr+`/api/s/${ZKEY}/mcp", "headers": {"Authorization": "Bearer ${KEY}"}}`, vars))
	d := disclosure(t, g)
	texts := map[string]string{
		"the prompt":          d.Rendered(0).Text(),
		"the log":             logs.String(),
		"find_tools":          call(t, d, gateway.FindToolsName, gateway.FindToolsInput{Query: "echo"}).Message,
		"call_tool web":       call(t, d, gateway.CallToolName, map[string]any{"server": "web", "tool": "x"}).Message,
		"call_tool zap":       call(t, d, gateway.CallToolName, map[string]any{"server": "zap", "tool": "x"}).Message,
		"the prompt at last":  d.Rendered(0).Text(),
		"the log at last":     "", // read below, after the retries
		"the cache directory": "",
	}
	for _, name := range []string{"web", "zap"} {
		up, _ := g.Upstream(name)
		texts["Err of "+name] = up.Err().Error()
	}
	g.Close()
	texts["the log at last"] = logs.String()
	filepath.Walk(cache, func(path string, _ os.FileInfo, _ error) error {
		data, _ := os.ReadFile(path)
		texts["the cache directory"] += path + "\n" + string(data)
		return nil
	})
	for where, text := range texts {
		for _, secret := range []string{"SEKRIT", "ZAP/SECRET", "ZAP%2FSECRET", "SECRET%20456", "SECRET+456"} {
			if strings.Contains(text, secret) {
				t.Errorf("%s shows the secret %q:\n%s", where, secret, text)
			}
		}
	}
	for _, want := range []string{"/mcp?api_key=${KEY}", "/api/s/${ZKEY}/mcp"} {
		if !strings.Contains(texts["the prompt"], want) || !strings.Contains(texts["the log"], want) {
			t.Errorf("the prompt and the log should show the URL as written, %q:\n%s\n%s", want, texts["the prompt"], texts["the log"])
		}
	}
}

// TestTaskOnlyInJSONAnswers: a streamable HTTP server that answers with
// JSON bodies rather than event streams: its tool listed with
// execution.taskSupport "required" is not offered.
func TestTaskOnlyInJSONAnswers(t *testing.T) {
	s := sdk.NewServer(&sdk.Implementation{Name: "jobs", Version: "1"}, nil)
	for _, name := range []string{"quick", "slowjob"} {
		sdk.AddTool(s, &sdk.Tool{Name: name, Description: "A " + name + " tool."}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: name}}}, nil, nil
		})
	}
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, &sdk.StreamableHTTPOptions{JSONResponse: true})
	// The Go SDK's Tool has no execution field: the server's answers get
	// it written in.
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			h.ServeHTTP(w, r) // the stream of notifications stays open
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		body := bytes.ReplaceAll(rec.Body.Bytes(), []byte(`"name":"slowjob"`), []byte(`"execution":{"taskSupport":"required"},"name":"slowjob"`))
		maps.Copy(w.Header(), rec.Header())
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	}))
	t.Cleanup(hs.Close)
	cacheDir := t.TempDir()
	cfg := gateway.ServerConfig{Name: "jobs", URL: hs.URL, Timeout: 30 * time.Second}
	g := newGateway(t, gateway.Options{CacheDir: cacheDir}, cfg)
	u, _ := g.Upstream("jobs")
	m := u.Manifest()
	if len(m.Tools) != 1 || m.Tools[0].Name != "quick" || !slices.Equal(m.TaskOnly, []string{"slowjob"}) {
		t.Fatalf("got tools %v and TaskOnly %v, want quick offered and slowjob as a task only (%v)", m.Tools, m.TaskOnly, u.Err())
	}
	g.Close()

	// A manifest cached by a release before task_only (slowjob among the
	// tools, no format) is not read: the server is listed again.
	path := filepath.Join(cacheDir, "jobs.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var old map[string]any
	if err := json.Unmarshal(data, &old); err != nil {
		t.Fatal(err)
	}
	delete(old, "format")
	delete(old, "task_only")
	old["tools"] = append(old["tools"].([]any), map[string]any{"name": "slowjob", "inputSchema": map[string]any{"type": "object"}})
	if data, err = json.Marshal(old); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	g2 := newGateway(t, gateway.Options{CacheDir: cacheDir}, cfg)
	u2, _ := g2.Upstream("jobs")
	if m := u2.Manifest(); len(m.Tools) != 1 || !slices.Equal(m.TaskOnly, []string{"slowjob"}) {
		t.Errorf("from an older cache: got tools %v and TaskOnly %v, want slowjob as a task only", m.Tools, m.TaskOnly)
	}
}

// streamServer is a streamable HTTP MCP server, written by hand so that
// it can send its tools/list answer as an event stream in the shape mode
// names: whole, with CRLF line ends, in pieces of 7 bytes, with the last
// event (or its last line) ended by the stream's end instead of a blank
// line (a line end), or on a stream the client resumes with a GET (a
// priming event, then the POST's stream closes). Its tool slowjob runs only as a task.
func streamServer(t *testing.T, mode string) *httptest.Server {
	answer := func(id json.RawMessage) string {
		return `{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"tools":[` +
			`{"name":"quick","inputSchema":{"type":"object"}},` +
			`{"name":"slowjob","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}}]}}`
	}
	var mu sync.Mutex
	var resumeID json.RawMessage // the list answered on the resumed stream
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodDelete:
			return
		case http.MethodGet:
			mu.Lock()
			id := resumeID
			mu.Unlock()
			if r.Header.Get("Last-Event-ID") == "" || id == nil {
				w.WriteHeader(http.StatusMethodNotAllowed)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "id: 2\nevent: message\ndata: %s\n\n", answer(id))
			return
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&msg); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Mcp-Session-Id", "s1")
		switch {
		case msg.ID == nil:
			w.WriteHeader(http.StatusAccepted)
		case msg.Method == "initialize":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":%q,"capabilities":{"tools":{}},"serverInfo":{"name":"jobs","version":"1"}}}`,
				msg.ID, msg.Params.ProtocolVersion)
		case msg.Method == "tools/list":
			w.Header().Set("Content-Type", "text/event-stream")
			switch mode {
			case "whole":
				fmt.Fprintf(w, "event: message\ndata: %s\n\n", answer(msg.ID))
			case "crlf":
				fmt.Fprintf(w, "event: message\r\ndata:%s\r\n\r\n", answer(msg.ID))
			case "pieces":
				text := fmt.Sprintf(": hello\nevent: message\ndata: %s\n\n", answer(msg.ID))
				for i := 0; i < len(text); i += 7 {
					_, _ = io.WriteString(w, text[i:min(i+7, len(text))])
					w.(http.Flusher).Flush()
				}
			case "unended": // as "unended-line", but the line ends with the stream too
				fmt.Fprintf(w, "event: message\ndata: %s", answer(msg.ID))
			case "unended-line":
				fmt.Fprintf(w, "event: message\ndata: %s\n", answer(msg.ID))
			case "resumed":
				mu.Lock()
				resumeID = msg.ID
				mu.Unlock()
				fmt.Fprint(w, "id: 1\nretry: 10\ndata: \n\n")
			}
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, msg.ID)
		}
	}))
	t.Cleanup(hs.Close)
	return hs
}

// TestTaskOnlyInEventStreams: the answer to tools/list is read however
// its event stream comes, a stream resumed with a GET included.
func TestTaskOnlyInEventStreams(t *testing.T) {
	for _, mode := range []string{"whole", "crlf", "pieces", "unended-line", "unended", "resumed"} {
		t.Run(mode, func(t *testing.T) {
			hs := streamServer(t, mode)
			g := newGateway(t, gateway.Options{}, gateway.ServerConfig{Name: "jobs", URL: hs.URL, Timeout: 30 * time.Second})
			u, _ := g.Upstream("jobs")
			m := u.Manifest()
			var names []string
			for _, tool := range m.Tools {
				names = append(names, tool.Name)
			}
			if !slices.Equal(names, []string{"quick"}) || !slices.Equal(m.TaskOnly, []string{"slowjob"}) {
				t.Errorf("got tools %v and TaskOnly %v (%v), want quick offered and slowjob as a task only", names, m.TaskOnly, u.Err())
			}
		})
	}
}

// TestHTTPEventBounded: a call answered by one event of an event stream
// far past MaxResponseBytes fails with an error that names the server and
// the bound, and the event is not held whole: the memory the client
// takes stays far below the event's size.
func TestHTTPEventBounded(t *testing.T) {
	const chunk, chunks = 1 << 20, 256
	u := newUpstream(t)
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return u.srv }, nil)
	var sent atomic.Int64
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(body, &msg) != nil || msg.Method != "tools/call" {
			r.Body = io.NopCloser(bytes.NewReader(body))
			h.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, `event: message`+"\n"+`data: {"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, msg.ID)
		x := bytes.Repeat([]byte("x"), chunk)
		for range chunks {
			n, err := w.Write(x)
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
		fmt.Fprint(w, `"}]}}`+"\n\n")
	}))
	t.Cleanup(hs.Close)
	g := newGateway(t, gateway.Options{}, gateway.ServerConfig{Name: "web", URL: hs.URL, Timeout: 60 * time.Second})
	up, _ := g.Upstream("web")
	if err := up.Err(); err != nil {
		t.Fatalf("start: %v", err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res, err := up.CallTool(t.Context(), "echo", json.RawMessage(`{"message":"hi"}`))
	runtime.ReadMemStats(&after)
	want := "an event of its answer is over the 16 MiB unfold reads in one event"
	if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "MCP server web: call echo:") {
		t.Errorf("got %v, %v; want an error naming the server and %q", res, err, want)
	}
	// Held whole, the event takes at least its 256 MiB; cut at the 16 MiB
	// bound, about 100 MiB are allocated over the call (the line grows by
	// a quarter at a time up to the bound).
	if grew := (after.TotalAlloc - before.TotalAlloc) >> 20; grew >= chunks*chunk>>20*3/4 {
		t.Errorf("the call allocated %d MiB for an event of %d MiB: the event was not cut at the bound", grew, chunks*chunk>>20)
	}
	g.Close()  // ends the session's streams, which hs.Close waits for
	hs.Close() // waits for the handler, so that sent is final
	if got := sent.Load(); got >= chunks*chunk {
		t.Errorf("the server sent its whole event (%d bytes): the client read past the bound", got)
	}
}

// bigSchemaServer is a streamable HTTP MCP server listing n tools, ten to
// a page, each with an input schema of about kib KiB of JSON.
func bigSchemaServer(t *testing.T, n, kib int) *httptest.Server {
	props := map[string]any{}
	for i := range kib * 1024 / 100 {
		props[fmt.Sprintf("p%05d_%s", i, strings.Repeat("x", 40))] = map[string]any{"type": "string", "description": strings.Repeat("d", 20)}
	}
	schema := map[string]any{"type": "object", "properties": props}
	s := sdk.NewServer(&sdk.Implementation{Name: "big", Version: "1"}, &sdk.ServerOptions{PageSize: 10})
	for i := range n {
		s.AddTool(&sdk.Tool{Name: fmt.Sprintf("tool%04d", i), Description: "A tool.", InputSchema: schema},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{}, nil
			})
	}
	s.AddTool(&sdk.Tool{Name: "small", Description: "A small tool.", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{}, nil
		})
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(hs.Close)
	return hs
}

// TestOversizedSchemasNotKept: a server that lists 100 tools whose
// schemas are each over MaxSchema, ten to a page, starts with its one
// small tool; the others are named as left out, with why, in its section
// and by call_tool, and their schemas are not kept (the memory held after
// the start is below the 10 MB they take as JSON).
func TestOversizedSchemasNotKept(t *testing.T) {
	hs := bigSchemaServer(t, 100, 100)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var logs logBuffer
	g := newGateway(t, gateway.Options{CacheDir: t.TempDir(), Logger: logs.logger()}, gateway.ServerConfig{Name: "big", URL: hs.URL, Timeout: 60 * time.Second})
	up, _ := g.Upstream("big")
	runtime.GC()
	runtime.ReadMemStats(&after)
	if err := up.Err(); err != nil {
		t.Fatalf("start: %v", err)
	}
	m := up.Manifest()
	if len(m.Tools) != 1 || m.Tools[0].Name != "small" || len(m.LeftOut) != 100 {
		t.Errorf("got %d tools and %d left out, want small alone and 100 left out", len(m.Tools), len(m.LeftOut))
	}
	want := "input schema: 107552 bytes of JSON"
	if why := m.LeftOut["tool0007"]; !strings.HasPrefix(why, want) || !strings.HasSuffix(why, "more than the 65536 unfold takes from one tool") {
		t.Errorf("tool0007 left out for %q, want the size of its input schema", why)
	}
	if held := int64(after.HeapAlloc) - int64(before.HeapAlloc); held > 8<<20 {
		t.Errorf("the gateway holds %d MiB after the start: the oversized schemas were kept", held>>20)
	}
	d := disclosure(t, g)
	open(t, d, "mcp.big")
	if text := d.Rendered(0).Text(); !strings.Contains(text, "Not offered, as their schemas are larger than unfold takes:\n- tool0000: input schema:") {
		t.Errorf("the section does not say which tools were left out:\n%.2000s", text)
	}
	if !strings.Contains(logs.String(), "tool=tool0099") {
		t.Errorf("the log does not name a tool left out:\n%.2000s", logs.String())
	}
	res := call(t, d, gateway.CallToolName, gateway.CallToolInput{Server: "big", Tool: "tool0003"})
	if !strings.Contains(res.Message, `The tool "tool0003" of big is not offered: its input schema:`) {
		t.Errorf("call_tool of a tool left out: got %q", res.Message)
	}
}

// TestListOverManifestBound: a server whose tools fit MaxSchema one by
// one but together take more than MaxManifestBytes does not start, with
// an error that says why, and the listing stops there.
func TestListOverManifestBound(t *testing.T) {
	hs := bigSchemaServer(t, 300, 58)
	g := newGateway(t, gateway.Options{}, gateway.ServerConfig{Name: "big", URL: hs.URL, Timeout: 60 * time.Second})
	up, _ := g.Upstream("big")
	want := "tools/list: what the server lists takes more than 16 MiB as JSON, more than unfold takes from one server"
	if err := up.Err(); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want %q", err, want)
	}
	if n := len(up.Manifest().Tools); n != 0 {
		t.Errorf("got %d tools, want none", n)
	}
}

// TestListPageOverEventBound: a server whose one page of tools/list is
// over the 16 MiB unfold reads in one event does not start, with an error
// that says so and what to do, not the transport's words alone.
func TestListPageOverEventBound(t *testing.T) {
	hs := bigSchemaServer(t, 10, 1800) // ten tools of about 1.8 MB on one page
	g := newGateway(t, gateway.Options{}, gateway.ServerConfig{Name: "big", URL: hs.URL, Timeout: 60 * time.Second})
	up, _ := g.Upstream("big")
	want := "one page of the list is over the 16 MiB unfold reads in one message; the server should list fewer at a time"
	if err := up.Err(); err == nil || !strings.Contains(err.Error(), "tools/list: ") || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want tools/list: …%q", err, want)
	}
}

// swapServer is a streamable HTTP MCP server whose handler a test can
// replace by a new one, as a server restarted on the same address: the
// new one knows none of the old one's sessions. Each handler serves
// newUpstream's server, with a tool "once" that counts its runs, reports
// progress when asked to, and holds until its context ends or release
// closes.
type swapServer struct {
	*httptest.Server
	h       atomic.Pointer[http.Handler]
	runs    atomic.Int64
	running chan struct{} // gets a value when "once" starts
	release chan struct{}
}

func newSwapServer(t *testing.T) *swapServer {
	s := &swapServer{running: make(chan struct{}, 10), release: make(chan struct{})}
	s.swap(t)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		(*s.h.Load()).ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	t.Cleanup(func() { close(s.release) })
	return s
}

// swap puts a new handler in place, with a new server.
func (s *swapServer) swap(t *testing.T) {
	u := newUpstream(t)
	sdk.AddTool(u.srv, &sdk.Tool{Name: "once", Description: "Counts its runs."},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			s.runs.Add(1)
			if tok := req.Params.GetProgressToken(); tok != nil {
				// The answer's event stream begins.
				_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Total: 2})
			}
			s.running <- struct{}{}
			select {
			case <-s.release:
			case <-ctx.Done():
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ran"}}}, nil, nil
		})
	// Its events have IDs, so that a stream cut off is resumed (with a GET).
	var h http.Handler = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return u.srv },
		&sdk.StreamableHTTPOptions{EventStore: sdk.NewMemoryEventStore(nil)})
	s.h.Store(&h)
}

// TestSessionEndedRetried: after an HTTP server restarted (its sessions
// gone), a tool call, a resource read and a prompt each succeed: the
// server refused them with 404, so they are made again in a new session.
func TestSessionEndedRetried(t *testing.T) {
	for _, what := range []string{"call", "read", "prompt"} {
		t.Run(what, func(t *testing.T) {
			s := newSwapServer(t)
			g := newGateway(t, gateway.Options{}, gateway.ServerConfig{Name: "web", URL: s.URL, Timeout: 60 * time.Second})
			up, _ := g.Upstream("web")
			do := func() (string, error) {
				switch what {
				case "call":
					res, err := up.CallTool(t.Context(), "echo", json.RawMessage(`{"message":"hi"}`))
					if err != nil {
						return "", err
					}
					return gateway.ResultText(res), nil
				case "read":
					res, err := up.ReadResource(t.Context(), "mem://doc")
					if err != nil {
						return "", err
					}
					return res.Contents[0].Text, nil
				default:
					res, err := up.GetPrompt(t.Context(), "greet", nil)
					if err != nil {
						return "", err
					}
					return res.Messages[0].Content.(*sdk.TextContent).Text, nil
				}
			}
			first, err := do()
			if err != nil {
				t.Fatalf("before the restart: %v", err)
			}
			s.swap(t)
			if got, err := do(); err != nil || got != first {
				t.Errorf("after the restart: got %q, %v; want %q", got, err, first)
			}
		})
	}
}

// TestRunCallNotRepeated: a call the server runs while its session ends
// (the call's answer stream, cut off and resumed, finds the session gone:
// the call fails with the SDK's ErrSessionMissing too) fails, and is not
// made again: it ran once.
func TestRunCallNotRepeated(t *testing.T) {
	s := newSwapServer(t)
	g := newGateway(t, gateway.Options{}, gateway.ServerConfig{Name: "web", URL: s.URL, Timeout: 60 * time.Second})
	up, _ := g.Upstream("web")
	done := make(chan error, 1)
	progressed := make(chan struct{}, 1)
	ctx := gateway.WithProgress(context.Background(), func(float64, float64, string) {
		select {
		case progressed <- struct{}{}:
		default:
		}
	})
	go func() {
		_, err := up.CallTool(ctx, "once", nil)
		done <- err
	}()
	<-s.running
	<-progressed // the answer's stream is open: the request reached the server
	s.swap(t)
	s.CloseClientConnections() // the answer's stream resumes on the new server, which does not know the session
	err := <-done
	if !errors.Is(err, sdk.ErrSessionMissing) || !strings.Contains(err.Error(), "so the call may have run; the next call starts a new session") {
		t.Errorf("got %v, want the session's end", err)
	}
	if n := s.runs.Load(); n != 1 {
		t.Errorf("the tool ran %d times, want once", n)
	}
}
