package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/agent/internal/scripted"
)

func newResponses(t *testing.T, url string, opts ...Option) *Responses {
	t.Helper()
	c, err := NewResponses(url, "gpt-5", append([]Option{WithAPIKey("k"), WithBackoff(time.Millisecond, time.Millisecond)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var deployGroup = agent.ToolGroup{Section: "ops.deploy", Title: "Deployment", Summary: "Deploying the service.", Tools: []agent.ToolDef{
	{Name: "deploy", Description: "Deploy.", Parameters: json.RawMessage(`{"type":"object","properties":{"target":{"type":"string"}}}`)},
}}

// TestParseResponseFixture reads a response as the API documents it:
// reasoning, a server-side tool search, text and a namespaced call.
func TestParseResponseFixture(t *testing.T) {
	raw, err := os.ReadFile("testdata/response.json")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := parseResponse(raw)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "Checking what runs where before deploying." {
		t.Errorf("content: got %q", resp.Message.Content)
	}
	want := agent.ToolCall{ID: "call_Xb7TqL2mVn9sRk4YpW1cZd8e", Name: "status", Arguments: "{}"}
	if len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0] != want {
		t.Errorf("calls: got %+v, want [%+v]", resp.Message.ToolCalls, want)
	}
	if u := resp.Usage; u.PromptTokens != 6913 || u.CachedTokens != 6784 || u.CompletionTokens != 118 || resp.FinishReason != "completed" {
		t.Errorf("usage, finish: got %+v, %q", u, resp.FinishReason)
	}
	var items []map[string]any
	if resp.Message.Native == nil || resp.Message.Native.API != NativeResponses || json.Unmarshal(resp.Message.Native.Data, &items) != nil || len(items) != 5 {
		t.Fatalf("native: got %+v, want the five output items", resp.Message.Native)
	}
	if items[0]["encrypted_content"] == nil || items[4]["namespace"] != "deploy" {
		t.Errorf("native items lost fields: %v", items)
	}
	if _, err := parseResponse([]byte(`<!DOCTYPE html><p>hi`)); err == nil {
		t.Error("an HTML page parsed as a response")
	}
}

// TestResponsesStreamFixture streams a recorded event sequence.
func TestResponsesStreamFixture(t *testing.T) {
	sse, err := os.ReadFile("testdata/stream.sse")
	if err != nil {
		t.Fatal(err)
	}
	for _, end := range []string{"as it came", "without the blank line after the last event"} {
		t.Run(end, func(t *testing.T) {
			if end != "as it came" {
				sse = bytes.TrimSuffix(sse, []byte("\n"))
			}
			checkStreamFixture(t, sse)
		})
	}
}

// checkStreamFixture reads the reply streamed as sse.
func checkStreamFixture(t *testing.T, sse []byte) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(sse)
	}))
	defer srv.Close()
	var text, args strings.Builder
	resp, err := newResponses(t, srv.URL).Complete(context.Background(), agent.Request{
		Messages: []agent.Message{{Role: agent.RoleSystem, Content: "sys"}, {Role: agent.RoleUser, Content: "deploy"}},
		OnDelta: func(d agent.Delta) {
			text.WriteString(d.Content)
			args.WriteString(d.ToolArgs)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "Deploying to staging." || text.String() != "Deploying to staging." || args.String() != `{"target":"staging"}` {
		t.Errorf("content, streamed text, streamed args: got %q, %q, %q", resp.Message.Content, text.String(), args.String())
	}
	if len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].Name != "deploy" || resp.Message.ToolCalls[0].ID != "call_3QmR8Jc1V7zYp2aWnL5xTe0u" {
		t.Errorf("calls: got %+v", resp.Message.ToolCalls)
	}
	if resp.Usage.CachedTokens != 6912 || resp.Usage.PromptTokens != 7012 {
		t.Errorf("usage: got %+v", resp.Usage)
	}
}

// TestResponsesRequests: the system message is the instructions; deferred
// groups are namespaces of defer_loading functions with tool_search, the
// same in every request; the reply's items, reasoning included, go back
// with the next request before the function's output.
func TestResponsesRequests(t *testing.T) {
	srv := scripted.NewResponses(t,
		scripted.Reply{Reasoning: true, Search: []string{"ops__deploy"}, ToolCalls: []scripted.Call{{ID: "c1", Name: "deploy", Args: `{"target":"staging"}`}}},
		scripted.Reply{Reasoning: true, Content: "Done."},
	)
	c := newResponses(t, srv.URL)
	req := agent.Request{
		Messages: []agent.Message{{Role: agent.RoleSystem, Content: "You deploy."}, {Role: agent.RoleUser, Content: "deploy to staging"}},
		Tools:    []agent.ToolDef{{Name: "open_sections", Description: "Open.", Parameters: json.RawMessage(`{"type":"object"}`)}},
		Deferred: []agent.ToolGroup{deployGroup},
	}
	first, err := c.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	req.Messages = append(req.Messages, first.Message, agent.Message{Role: agent.RoleTool, ToolCallID: "c1", Content: "deployed"})
	// The section opened: its tool joins Tools, and stays in its group.
	req.Tools = append(req.Tools, deployGroup.Tools[0])
	second, err := c.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if second.Message.Content != "Done." {
		t.Errorf("second reply: got %q", second.Message.Content)
	}
	if v := srv.Violations(); len(v) > 0 {
		t.Fatalf("requests broke the documented shape: %v", v)
	}
	bodies := srv.Bodies()
	var b0, b1 struct {
		Instructions string            `json:"instructions"`
		Tools        json.RawMessage   `json:"tools"`
		Input        []json.RawMessage `json:"input"`
		Stream       bool              `json:"stream"`
	}
	_ = json.Unmarshal(bodies[0], &b0)
	_ = json.Unmarshal(bodies[1], &b1)
	if b0.Instructions != "You deploy." || !b0.Stream {
		t.Errorf("instructions, stream: got %q, %v", b0.Instructions, b0.Stream)
	}
	wantTools := `[{"parameters":{"type":"object"},"strict":false,"name":"open_sections","description":"Open.","type":"function"},{"type":"tool_search"},{"description":"Tools of the section \"ops.deploy\" (Deployment): Deploying the service. Open the section with open_sections to read it; calling one of these tools opens it too.","name":"ops__deploy","tools":[{"name":"deploy","description":"Deploy.","defer_loading":true,"parameters":{"properties":{"target":{"type":"string"}},"type":"object"},"type":"function"}],"type":"namespace"}]`
	if got := compact(b0.Tools); got != compact(json.RawMessage(wantTools)) {
		t.Errorf("tools:\ngot  %s\nwant %s", got, compact(json.RawMessage(wantTools)))
	}
	if string(b1.Tools) != string(b0.Tools) {
		t.Errorf("the tools changed after the opening:\n%s\n%s", b0.Tools, b1.Tools)
	}
	types := []string{}
	for _, it := range b1.Input {
		var x struct{ Type string }
		_ = json.Unmarshal(it, &x)
		types = append(types, x.Type)
	}
	if got := strings.Join(types, ","); got != "message,reasoning,tool_search_call,tool_search_output,function_call,function_call_output" {
		t.Errorf("second request's items: got %s", got)
	}
}

func compact(raw json.RawMessage) string {
	var v any
	_ = json.Unmarshal(raw, &v)
	b, _ := json.Marshal(v)
	return string(b)
}

// sentFields are the fields of a request as it is sent, the zero number
// for a field left out.
func sentFields(t *testing.T, params any, err error) map[string]any {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]any{"max_completion_tokens": 0.0, "max_output_tokens": 0.0}
	if err := json.Unmarshal(b, &fields); err != nil {
		t.Fatal(err)
	}
	return fields
}

// TestMaxTokens: WithMaxTokens is each API's output limit; without it
// none is sent, and a negative one is refused.
func TestMaxTokens(t *testing.T) {
	req := agent.Request{Messages: []agent.Message{{Role: agent.RoleSystem, Content: "s"}, {Role: agent.RoleUser, Content: "u"}}}
	for _, tc := range []struct {
		opts []Option
		want int64
	}{{[]Option{WithMaxTokens(20000)}, 20000}, {nil, 0}} {
		c, err := New("http://127.0.0.1:1/v1", "m", tc.opts...)
		if err != nil {
			t.Fatal(err)
		}
		p, err := c.params(req)
		if got := sentFields(t, p, err); got["max_completion_tokens"] != float64(tc.want) || got["max_tokens"] != nil {
			t.Errorf("chat: max_completion_tokens %v, max_tokens %v, want %d", got["max_completion_tokens"], got["max_tokens"], tc.want)
		}
		r, err := NewResponses("http://127.0.0.1:1/v1", "m", tc.opts...)
		if err != nil {
			t.Fatal(err)
		}
		rp, err := r.params(req)
		if got := sentFields(t, rp, err); got["max_output_tokens"] != float64(tc.want) {
			t.Errorf("responses: max_output_tokens %v, want %d", got["max_output_tokens"], tc.want)
		}
	}
	if _, err := New("http://127.0.0.1:1/v1", "m", WithMaxTokens(-1)); err == nil || !strings.Contains(err.Error(), "max tokens -1") {
		t.Errorf("negative: got %v", err)
	}
}

// TestResponsesOpenAfterCompleted: a server that keeps the stream open
// after response.completed (a proxy that does not close its upstream)
// gives its reply at once, and the connection is closed, not held until
// the request's timeout, which then threw the finished reply away.
func TestResponsesOpenAfterCompleted(t *testing.T) {
	sse, err := os.ReadFile("testdata/stream.sse")
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{})
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(sse)
		_, _ = io.WriteString(w, ": keep-alive\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			close(closed)
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	// A guard, not a measure: the reply comes in milliseconds.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := newResponses(t, srv.URL).Complete(ctx, agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: "deploy"}}})
	if err != nil || len(resp.Message.ToolCalls) != 1 {
		t.Fatalf("got %+v, %v; want the reply", resp.Message, err)
	}
	select {
	case <-closed:
	case <-ctx.Done():
		t.Error("the connection is still open after the reply")
	}
}

// TestResponsesErrorEventShapes: an error event in a Responses stream
// after it began keeps its code, whether the event has it at its top (as
// the API reference shows) or in an error object (as OpenAI sends it), so
// that a context overflow is agent.ErrContextWindow either way.
func TestResponsesErrorEventShapes(t *testing.T) {
	created := "event: response.created\ndata: " + `{"type":"response.created","sequence_number":0,"response":{"object":"response","status":"in_progress","output":[]}}` + "\n\n"
	for name, ev := range map[string]string{
		"nested": `{"type":"error","sequence_number":1,"error":{"type":"invalid_request_error","code":"context_length_exceeded","message":"Your input exceeds the context window of this model.","param":"input"}}`,
		"flat":   `{"type":"error","sequence_number":1,"code":"context_length_exceeded","message":"Your input exceeds the context window of this model.","param":"input"}`,
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, created+"event: error\ndata: "+ev+"\n\n")
			}))
			defer srv.Close()
			_, err := newResponses(t, srv.URL, WithMaxRetries(0)).Complete(context.Background(), agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: "hi"}}})
			if !errors.Is(err, agent.ErrContextWindow) || !strings.Contains(fmt.Sprint(err), "Your input exceeds the context window") {
				t.Errorf("got %v, want a context window error with the server's message", err)
			}
		})
	}
}

// TestResponsesCompletedBounded: a response.completed event whose reply
// is over MaxReplyBytes, with no deltas before it, is refused as a reply
// that came in deltas would be.
func TestResponsesCompletedBounded(t *testing.T) {
	big := strings.Repeat("x", MaxReplyBytes+1)
	ev := `{"type":"response.completed","response":{"object":"response","status":"completed","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"` + big + `"}]}]}}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "event: response.completed\ndata: "+ev+"\n\n")
	}))
	defer srv.Close()
	_, err := newResponses(t, srv.URL, WithMaxRetries(0)).Complete(context.Background(), agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: "hi"}}})
	if err == nil || !strings.Contains(err.Error(), "the reply is over 8388608 bytes") {
		t.Errorf("got %v, want the reply refused for its size", err)
	}
}

// TestStreamErrorMessages: a stream that fails after it began says what
// its server said, whatever the shape of the error it sent: a code that
// is a number, an error that is a string, or nothing at all (then it says
// so, not an empty reason); an "error": null beside a chunk's choices is
// no error.
func TestStreamErrorMessages(t *testing.T) {
	created := `data: {"type":"response.created","response":{"object":"response","status":"in_progress","output":[]}}` + "\n\n"
	chunk := `data: {"id":"c1","choices":[{"index":0,"delta":{"content":"Done."},"finish_reason":null}]}` + "\n\n"
	for _, tt := range []struct {
		name, api, body string
		want            string // "": the reply "Done."
	}{
		{"responses: a failed response whose code is a number", "responses",
			created + `data: {"type":"response.failed","response":{"error":{"code":500,"message":"boom"}}}` + "\n\n",
			"the response failed: 500: boom"},
		{"responses: a failed response with nothing in it", "responses",
			created + `data: {"type":"response.failed","response":{}}` + "\n\n", "the response failed with no message"},
		{"responses: an error that is a string", "responses",
			created + `data: {"type":"error","error":"boom overloaded"}` + "\n\n", "the stream reported an error: boom overloaded"},
		{"responses: an error event with nothing in it", "responses",
			created + `data: {"type":"error"}` + "\n\n", "the stream reported an error with no message"},
		{"chat: an error event with nothing in it", "chat",
			chunk + "event: error\ndata: {}\n\n", "the stream reported an error with no message"},
		{"chat: an empty error", "chat",
			chunk + `data: {"error":""}` + "\n\n", "the stream reported an error with no message"},
		{"chat: a null error beside the choices", "chat",
			`data: {"id":"c1","choices":[{"index":0,"delta":{"content":"Done."},"finish_reason":"stop"}],"error":null}` + "\n\ndata: [DONE]\n\n", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			var m agent.Model = newChat(t, srv.URL, WithMaxRetries(0))
			if tt.api == "responses" {
				m = newResponses(t, srv.URL, WithMaxRetries(0))
			}
			resp, err := m.Complete(context.Background(), agent.Request{Messages: hello})
			if tt.want == "" {
				if err != nil || resp.Message.Content != "Done." {
					t.Errorf("got %q, %v, want the reply", resp.Message.Content, err)
				}
				return
			}
			if err == nil || !strings.HasSuffix(err.Error(), ": "+tt.want) {
				t.Errorf("got %v, want it to end %q", err, tt.want)
			}
		})
	}
}
