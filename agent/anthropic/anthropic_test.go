package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/agent/internal/scripted"
	"github.com/unfold-dev/unfold/agent/internal/transport"
)

func newClient(t *testing.T, url string, opts ...Option) *Client {
	t.Helper()
	c, err := New(url, "claude-sonnet-4-5", append([]Option{WithAPIKey("k"), WithBackoff(time.Millisecond, time.Second)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var hello = []agent.Message{{Role: agent.RoleSystem, Content: "You deploy."}, {Role: agent.RoleUser, Content: "deploy"}}

// TestParseMessageFixture reads a message as the API documents it:
// thinking, text, a server-side tool search and its result, a tool call.
func TestParseMessageFixture(t *testing.T) {
	raw, err := os.ReadFile("testdata/message.json")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := parseMessage(raw)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "Checking what runs where before deploying." || resp.FinishReason != "tool_use" {
		t.Errorf("content, finish: got %q, %q", resp.Message.Content, resp.FinishReason)
	}
	want := agent.ToolCall{ID: "toolu_01A09q90qw90lq917835lq9", Name: "status", Arguments: "{}"}
	if len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0] != want {
		t.Errorf("calls: got %+v, want [%+v]", resp.Message.ToolCalls, want)
	}
	wantUsage := agent.Usage{PromptTokens: 112 + 1243 + 6720, CompletionTokens: 96, CachedTokens: 6720, CacheWriteTokens: 1243}
	if resp.Usage != wantUsage {
		t.Errorf("usage: got %+v, want %+v", resp.Usage, wantUsage)
	}
	var blocks []map[string]any
	if resp.Message.Native == nil || resp.Message.Native.API != NativeMessages || json.Unmarshal(resp.Message.Native.Data, &blocks) != nil || len(blocks) != 5 {
		t.Fatalf("native: got %+v, want the five blocks", resp.Message.Native)
	}
	if blocks[0]["signature"] == nil || blocks[3]["content"] == nil {
		t.Errorf("native blocks lost fields: %v", blocks)
	}
	if _, ok := blocks[1]["citations"]; ok {
		t.Errorf("a null field was kept: %v", blocks[1])
	}
}

// TestStreamFixture streams a recorded event sequence, pings included.
func TestStreamFixture(t *testing.T) {
	sse, err := os.ReadFile("testdata/stream.sse")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(sse)
	}))
	defer srv.Close()
	var text, args strings.Builder
	resp, err := newClient(t, srv.URL).Complete(context.Background(), agent.Request{Messages: hello, OnDelta: func(d agent.Delta) {
		text.WriteString(d.Content)
		args.WriteString(d.ToolArgs)
	}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "Okay, let's deploy to staging first." || text.String() != resp.Message.Content || args.String() != `{"target": "staging"}` {
		t.Errorf("content, streamed, args: got %q, %q, %q", resp.Message.Content, text.String(), args.String())
	}
	if len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].Arguments != `{"target": "staging"}` {
		t.Errorf("calls: got %+v", resp.Message.ToolCalls)
	}
	if resp.Usage.CachedTokens != 6720 || resp.Usage.CompletionTokens != 89 || resp.Usage.PromptTokens != 472+6720 {
		t.Errorf("usage: got %+v", resp.Usage)
	}
}

var deployGroup = agent.ToolGroup{Section: "deploy", Title: "Deployment", Summary: "Deploying the service.", Tools: []agent.ToolDef{
	{Name: "deploy", Description: "Deploy.", Parameters: json.RawMessage(`{"type":"object","properties":{"target":{"type":"string"}},"required":["target"],"additionalProperties":false}`)},
}}

// TestRequests: breakpoints at the end of the tools, on the system
// message, on the newest block and on the last block of the request
// before; deferred tools with the tool search
// tool, the same in every request; a result that opened a section loads
// its tools by tool_reference; the reply's blocks, thinking included, go
// back as they came.
func TestRequests(t *testing.T) {
	srv := scripted.NewMessages(t,
		scripted.Reply{Reasoning: true, ToolCalls: []scripted.Call{{ID: "t1", Name: "open_sections", Args: `{"section_keys":["deploy"],"reason":"deploy"}`}}},
		scripted.Reply{Reasoning: true, ToolCalls: []scripted.Call{{ID: "t2", Name: "deploy", Args: `{"target":"staging"}`}}},
		scripted.Reply{Content: "Done."},
	)
	c := newClient(t, srv.URL)
	open := agent.ToolDef{Name: "open_sections", Description: "Open.", Parameters: json.RawMessage(`{"type":"object","properties":{"section_keys":{"type":"array","items":{"type":"string"}}}}`)}
	req := agent.Request{Messages: hello, Tools: []agent.ToolDef{open}, Deferred: []agent.ToolGroup{deployGroup}}
	r1, err := c.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	req.Messages = append(req.Messages, r1.Message, agent.Message{Role: agent.RoleTool, ToolCallID: "t1", Content: "Opened sections: deploy. New tools: deploy.", Loads: []string{"deploy"}},
		agent.Message{Role: agent.RoleUser, Content: "Environment screens that changed: none"})
	req.Tools = append(req.Tools, deployGroup.Tools[0])
	r2, err := c.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	req.Messages = append(req.Messages, r2.Message, agent.Message{Role: agent.RoleTool, ToolCallID: "t2", Content: "Error: the target is down"})
	r3, err := c.Complete(context.Background(), req)
	if err != nil || r3.Message.Content != "Done." {
		t.Fatalf("got %+v, %v", r3, err)
	}
	if v := srv.Violations(); len(v) > 0 {
		t.Fatalf("requests broke the documented shape: %v", v)
	}
	bodies := srv.Bodies()
	var b [3]struct {
		System   json.RawMessage `json:"system"`
		Tools    json.RawMessage `json:"tools"`
		Messages []struct {
			Role    string            `json:"role"`
			Content []json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	for i := range b {
		if err := json.Unmarshal(bodies[i], &b[i]); err != nil {
			t.Fatal(err)
		}
	}
	if compact(b[0].System) != `[{"cache_control":{"type":"ephemeral"},"text":"You deploy.","type":"text"}]` {
		t.Errorf("system: got %s", b[0].System)
	}
	wantTools := `[{"cache_control":{"type":"ephemeral"},"description":"Open.","input_schema":{"properties":{"section_keys":{"items":{"type":"string"},"type":"array"}},"type":"object"},"name":"open_sections"},` +
		`{"name":"tool_search_tool_regex","type":"tool_search_tool_regex_20251119"},` +
		`{"defer_loading":true,"description":"Deploy. (Section \"deploy\": Deploying the service.)","input_schema":{"additionalProperties":false,"properties":{"target":{"type":"string"}},"required":["target"],"type":"object"},"name":"deploy"}]`
	if compact(b[0].Tools) != wantTools {
		t.Errorf("tools:\ngot  %s\nwant %s", compact(b[0].Tools), wantTools)
	}
	for i := 1; i < 3; i++ {
		if string(b[i].Tools) != string(b[0].Tools) || string(b[i].System) != string(b[0].System) {
			t.Errorf("request %d: the tools or the system message changed", i+1)
		}
	}
	// Request 2: [user, assistant (thinking, tool_use), user (tool_result with the reference, text)].
	m := b[1].Messages
	if len(m) != 3 || m[2].Role != "user" || len(m[2].Content) != 2 {
		t.Fatalf("request 2 turns: got %+v", m)
	}
	if got := compact(m[2].Content[0]); got != `{"content":[{"text":"Opened sections: deploy. New tools: deploy.","type":"text"},{"tool_name":"deploy","type":"tool_reference"}],"tool_use_id":"t1","type":"tool_result"}` {
		t.Errorf("the opening's result: got %s", got)
	}
	if got := compact(m[2].Content[1]); got != `{"cache_control":{"type":"ephemeral"},"text":"Environment screens that changed: none","type":"text"}` {
		t.Errorf("the newest block: got %s", got)
	}
	if got := compact(m[0].Content[0]); got != `{"cache_control":{"type":"ephemeral"},"text":"deploy","type":"text"}` {
		t.Errorf("the end of request 1, in request 2: got %s, want its breakpoint kept", got)
	}
	if strings.Count(string(bodies[1]), "cache_control") != 4 {
		t.Errorf("request 2: want four breakpoints:\n%s", bodies[1])
	}
	last := b[2].Messages[len(b[2].Messages)-1].Content
	if got := compact(last[len(last)-1]); got != `{"cache_control":{"type":"ephemeral"},"content":[{"text":"Error: the target is down","type":"text"}],"is_error":true,"tool_use_id":"t2","type":"tool_result"}` {
		t.Errorf("a failed result: got %s", got)
	}
}

func compact(raw json.RawMessage) string {
	var v any
	_ = json.Unmarshal(raw, &v)
	b, _ := json.Marshal(v)
	return string(b)
}

// TestFailures: overloaded and rate-limited replies are retried, each
// retry told; an HTML page, a stall and one JSON document are handled.
func TestFailures(t *testing.T) {
	t.Run("overloaded, each retry told", func(t *testing.T) {
		srv := scripted.NewMessages(t,
			scripted.Reply{Status: 529, Error: "Overloaded", RetryAfter: "0.01"},
			scripted.Reply{Status: 429, Error: "rate limited", RetryAfter: "0.02"},
			scripted.Reply{Content: "ok"},
		)
		var retries []agent.Retry
		resp, err := newClient(t, srv.URL).Complete(context.Background(), agent.Request{Messages: hello, OnRetry: func(r agent.Retry) { retries = append(retries, r) }})
		if err != nil || resp.Message.Content != "ok" {
			t.Fatalf("got %+v, %v", resp, err)
		}
		want := []agent.Retry{{Attempt: 1, Delay: 10 * time.Millisecond, Reason: "529 overloaded"}, {Attempt: 2, Delay: 20 * time.Millisecond, Reason: "429 rate limited"}}
		if len(retries) != 2 || retries[0] != want[0] || retries[1] != want[1] {
			t.Errorf("retries: got %+v, want %+v", retries, want)
		}
	})
	t.Run("out of retries", func(t *testing.T) {
		srv := scripted.NewMessages(t, scripted.Reply{Status: 529, Error: "Overloaded"}, scripted.Reply{Status: 529, Error: "Overloaded"})
		_, err := newClient(t, srv.URL, WithMaxRetries(1)).Complete(context.Background(), agent.Request{Messages: hello})
		var se *StatusError
		if !errors.As(err, &se) || se.Type != "overloaded_error" || !strings.Contains(err.Error(), "529 Overloaded: Overloaded (after 2 attempts)") {
			t.Errorf("got %v", err)
		}
	})
	t.Run("HTML", func(t *testing.T) {
		srv := scripted.NewMessages(t, scripted.Reply{RawType: "text/html", Raw: "<html><body>Sign in to continue</body></html>"})
		_, err := newClient(t, srv.URL).Complete(context.Background(), agent.Request{Messages: hello})
		if err == nil || !strings.Contains(err.Error(), `answered 200 text/html: "<html><body>Sign in to continue</body></html>"`) {
			t.Errorf("got %v, want the reply named", err)
		}
	})
	t.Run("stalls", func(t *testing.T) {
		srv := scripted.NewMessages(t, scripted.Reply{Stall: true})
		_, err := newClient(t, srv.URL, WithTimeout(100*time.Millisecond), WithMaxRetries(0)).Complete(context.Background(), agent.Request{Messages: hello})
		if err == nil || !strings.Contains(err.Error(), "within 100ms (the request timeout)") {
			t.Errorf("got %v, want the timeout named", err)
		}
	})
	t.Run("stalls, not tried again", func(t *testing.T) {
		srv := scripted.NewMessages(t, scripted.Reply{Stall: true}, scripted.Reply{Content: "too late"})
		var retries []agent.Retry
		_, err := newClient(t, srv.URL, WithTimeout(100*time.Millisecond)).Complete(context.Background(), agent.Request{Messages: hello, OnRetry: func(r agent.Retry) { retries = append(retries, r) }})
		if err == nil || !strings.Contains(err.Error(), "within 100ms (the request timeout)") || strings.Contains(err.Error(), "attempts") || len(srv.Bodies()) != 1 || len(retries) != 0 {
			t.Errorf("got %v after %d requests and retries %+v, want the timeout named after one attempt", err, len(srv.Bodies()), retries)
		}
	})
	t.Run("a document over 8 MiB, not asked for again", func(t *testing.T) {
		big := `{"pad":"` + strings.Repeat("x", transport.MaxBodyBytes) + `"}`
		srv := scripted.NewMessages(t, scripted.Reply{RawType: "application/json", Raw: big}, scripted.Reply{Content: "again"})
		_, err := newClient(t, srv.URL).Complete(context.Background(), agent.Request{Messages: hello})
		if err == nil || !strings.Contains(err.Error(), "the reply is over 8388608 bytes") || len(srv.Bodies()) != 1 {
			t.Errorf("got %v after %d requests, want the size named after one attempt", err, len(srv.Bodies()))
		}
	})
	t.Run("one document for a stream", func(t *testing.T) {
		doc, err := os.ReadFile("testdata/message.json")
		if err != nil {
			t.Fatal(err)
		}
		srv := scripted.NewMessages(t, scripted.Reply{RawType: "application/json", Raw: string(doc)})
		resp, err := newClient(t, srv.URL).Complete(context.Background(), agent.Request{Messages: hello})
		if err != nil || resp.Message.Content != "Checking what runs where before deploying." {
			t.Errorf("got %+v, %v", resp.Message, err)
		}
	})
}

func sseEvent(typ, data string) string { return "event: " + typ + "\ndata: " + data + "\n\n" }

// stopStream is a streamed message, as the API documents its events,
// whose content blocks are blocks (each start event's block and its
// deltas) and which stops for reason.
func stopStream(reason string, blocks ...[]string) string {
	s := sseEvent("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}`)
	for i, b := range blocks {
		s += sseEvent("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":%s}`, i, b[0]))
		for _, d := range b[1:] {
			s += sseEvent("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":%s}`, i, d))
		}
		s += sseEvent("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i))
	}
	return s + sseEvent("message_delta", `{"type":"message_delta","delta":{"stop_reason":"`+reason+`","stop_sequence":null},"usage":{"output_tokens":8192}}`) +
		sseEvent("message_stop", `{"type":"message_stop"}`)
}

// TestStopReasons: each stop reason maps onto the loop's; the tool call
// a reply ended in while it was cut short is marked cut and keeps the
// input the model wrote (its block, sent back, keeps the {} it started
// with, which the API takes); calls before it are whole.
func TestStopReasons(t *testing.T) {
	text := func(s string) []string {
		return []string{`{"type":"text","text":""}`, `{"type":"text_delta","text":"` + s + `"}`}
	}
	tool := func(id string, pieces ...string) []string {
		b := []string{`{"type":"tool_use","id":"` + id + `","name":"deploy","input":{}}`}
		for _, p := range pieces {
			q, _ := json.Marshal(p)
			b = append(b, `{"type":"input_json_delta","partial_json":`+string(q)+`}`)
		}
		return b
	}
	tests := []struct {
		name   string
		body   string // an event stream, or one JSON document
		finish agent.Finish
		calls  []agent.ToolCall
	}{
		{"cut in the second call", stopStream("max_tokens", text("Deploying both."), tool("toolu_1", `{"target":`, ` "web"}`), tool("toolu_2", `{"target": "sta`)),
			agent.FinishTruncated, []agent.ToolCall{
				{ID: "toolu_1", Name: "deploy", Arguments: `{"target": "web"}`},
				{ID: "toolu_2", Name: "deploy", Arguments: `{"target": "sta`, Cut: true},
			}},
		{"cut in the text after a call", stopStream("max_tokens", tool("toolu_1", `{"target": "web"}`), text("Now the da")),
			agent.FinishTruncated, []agent.ToolCall{{ID: "toolu_1", Name: "deploy", Arguments: `{"target": "web"}`}}},
		{"context window", stopStream("model_context_window_exceeded", tool("toolu_1", `{"tar`)),
			agent.FinishTruncated, []agent.ToolCall{{ID: "toolu_1", Name: "deploy", Arguments: `{"tar`, Cut: true}}},
		{"refusal in a call", stopStream("refusal", tool("toolu_1", `{"tar`)),
			agent.FinishRefused, []agent.ToolCall{{ID: "toolu_1", Name: "deploy", Arguments: `{"tar`, Cut: true}}},
		{"one document cut in a call", `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_1","name":"deploy","input":{}}],"stop_reason":"max_tokens","stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":8192}}`,
			agent.FinishTruncated, []agent.ToolCall{{ID: "toolu_1", Name: "deploy", Arguments: `{}`, Cut: true}}},
		{"pause_turn", stopStream("pause_turn", text("Let me look for the deploy tools.")), agent.FinishPaused, nil},
		{"tool_use", stopStream("tool_use", tool("toolu_1", `{"target": "web"}`)),
			agent.FinishComplete, []agent.ToolCall{{ID: "toolu_1", Name: "deploy", Arguments: `{"target": "web"}`}}},
		{"end_turn", stopStream("end_turn", text("Done.")), agent.FinishComplete, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				if strings.HasPrefix(tt.body, "{") {
					w.Header().Set("Content-Type", "application/json")
				} else {
					w.Header().Set("Content-Type", "text/event-stream")
				}
				_, _ = io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			resp, err := newClient(t, srv.URL).Complete(context.Background(), agent.Request{Messages: hello})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Finish != tt.finish || !slices.Equal(resp.Message.ToolCalls, tt.calls) {
				t.Errorf("finish, calls: got %s, %+v, want %s, %+v", resp.Finish, resp.Message.ToolCalls, tt.finish, tt.calls)
			}
			var blocks []struct {
				Type  string
				Input json.RawMessage
			}
			if err := json.Unmarshal(resp.Message.Native.Data, &blocks); err != nil {
				t.Fatal(err)
			}
			for _, b := range blocks {
				if b.Type == "tool_use" && !json.Valid(b.Input) {
					t.Errorf("native tool_use input %s is not JSON: the API would refuse it sent back", b.Input)
				}
			}
		})
	}
}
