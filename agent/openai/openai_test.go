package openai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/agent/internal/scripted"
)

func newClient(t *testing.T, url string) *Client {
	t.Helper()
	c, err := New(url, "scripted", WithAPIKey("k"), WithBackoff(time.Millisecond, time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestStreamedToolCalls(t *testing.T) {
	srv := scripted.New(t, scripted.Reply{
		Content: "Let me check both.",
		ToolCalls: []scripted.Call{
			{ID: "a", Name: "read", Args: `{"path":"docs/a very long file name.md","lines":[1,2,3]}`},
			{ID: "b", Name: "bash", Args: `{"command":"ls -la"}`},
		},
	})
	c := newClient(t, srv.URL)
	var text strings.Builder
	args := map[int]string{}
	resp, err := c.Complete(context.Background(), agent.Request{
		Messages: []agent.Message{
			{Role: agent.RoleSystem, Content: "sys"},
			{Role: agent.RoleUser, Content: "go"},
			{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "x", Name: "t", Arguments: "{}"}}},
			{Role: agent.RoleTool, ToolCallID: "x", Content: "done"},
		},
		Tools: []agent.ToolDef{{Name: "read", Description: "Read.", Parameters: []byte(`{"type":"object"}`)}},
		OnDelta: func(d agent.Delta) {
			text.WriteString(d.Content)
			args[d.ToolIndex] += d.ToolArgs
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []agent.ToolCall{
		{ID: "a", Name: "read", Arguments: `{"path":"docs/a very long file name.md","lines":[1,2,3]}`},
		{ID: "b", Name: "bash", Arguments: `{"command":"ls -la"}`},
	}
	if len(resp.Message.ToolCalls) != 2 || resp.Message.ToolCalls[0] != want[0] || resp.Message.ToolCalls[1] != want[1] {
		t.Errorf("tool calls: got %+v, want %+v", resp.Message.ToolCalls, want)
	}
	if resp.Message.Content != "Let me check both." || text.String() != "Let me check both." {
		t.Errorf("content, streamed: got %q, %q", resp.Message.Content, text.String())
	}
	if args[0] != want[0].Arguments || args[1] != want[1].Arguments {
		t.Errorf("streamed arguments: got %v", args)
	}
	if resp.Usage != (agent.Usage{PromptTokens: 100, CompletionTokens: 10, CachedTokens: 40}) || resp.FinishReason != "tool_calls" {
		t.Errorf("usage, finish: got %+v, %q", resp.Usage, resp.FinishReason)
	}
	req := srv.Requests()[0]
	if req.Auth != "Bearer k" || req.Model != "scripted" || !req.Stream || len(req.Messages) != 4 || req.Messages[3]["tool_call_id"] != "x" {
		t.Errorf("request: got %+v", req)
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name     string
		reply    scripted.Reply
		status   int
		attempts int
		want     string
	}{
		{"bad request is not retried", scripted.Reply{Status: 400, Error: "model not found"}, 400, 1, "openai: chat completions: 400 Bad Request: model not found"},
		{"unauthorized", scripted.Reply{Status: 401, Error: "bad key"}, 401, 1, "401 Unauthorized: bad key"},
		{"503 retried", scripted.Reply{Status: 503, Error: "overloaded"}, 503, DefaultMaxRetries + 1, "503 Service Unavailable: overloaded (after 5 attempts)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := scripted.NewFunc(t, func(int, scripted.Request) scripted.Reply { return tt.reply })
			_, err := newClient(t, srv.URL).Complete(context.Background(), agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: "hi"}}})
			var se *StatusError
			if !errors.As(err, &se) || se.StatusCode != tt.status || se.Attempts != tt.attempts || len(srv.Requests()) != tt.attempts {
				t.Fatalf("got %v (%d requests), want status %d after %d attempts", err, len(srv.Requests()), tt.status, tt.attempts)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %q, want %q in it", err, tt.want)
			}
		})
	}
	t.Run("unreachable", func(t *testing.T) {
		_, err := newClient(t, "http://127.0.0.1:1/v1").Complete(context.Background(), agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: "hi"}}})
		if err == nil || !strings.Contains(err.Error(), "cannot reach http://127.0.0.1:1/v1") {
			t.Errorf("got %v, want it to say the endpoint cannot be reached", err)
		}
	})
}

func TestNewErrors(t *testing.T) {
	for _, o := range [][2]string{{"", "m"}, {"http://x", " "}} {
		if _, err := New(o[0], o[1]); err == nil || !strings.HasPrefix(err.Error(), "openai: new: no ") {
			t.Errorf("New(%q, %q): got %v, want a missing-argument error", o[0], o[1], err)
		}
	}
}

// TestRetryAfterHonoured: a 429 with Retry-After is retried
// after that wait, and the retry is told before it.
func TestRetryAfterHonoured(t *testing.T) {
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		if calls == 1 {
			w.Header().Set("Retry-After", "0.05")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"error":{"message":"slow down","type":"rate_limit"}}`))
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte("data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"hi\"},\"finish_reason\":null}]}\n\n" +
			"data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n" +
			"data: [DONE]\n\n"))
	}))
	defer srv.Close()
	c, err := New(srv.URL, "m", WithAPIKey("k"))
	if err != nil {
		t.Fatal(err)
	}
	var retries []agent.Retry
	start := time.Now()
	resp, err := c.Complete(context.Background(), agent.Request{
		Messages: []agent.Message{{Role: agent.RoleUser, Content: "hi"}},
		OnRetry:  func(r agent.Retry) { retries = append(retries, r) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "hi" || calls != 2 {
		t.Errorf("got %q after %d calls, want \"hi\" after 2", resp.Message.Content, calls)
	}
	want := agent.Retry{Attempt: 1, Delay: 50 * time.Millisecond, Reason: "429 rate limited"}
	if len(retries) != 1 || retries[0] != want {
		t.Errorf("retries: got %+v, want [%+v]", retries, want)
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Errorf("answered after %v, before the 50ms Retry-After", d)
	}
}

// TestRetryWaitPastDeadline: a 429 whose Retry-After is longer than
// the request has left, under the client's timeout or the caller's
// deadline, is not waited on: the call fails at once with the 429 and
// the wait asked for, not later as a call that got no reply.
func TestRetryWaitPastDeadline(t *testing.T) {
	for _, tt := range []struct {
		name   string
		ctx    func() (context.Context, context.CancelFunc)
		opts   []Option
		status int
	}{
		{"the client's timeout", func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }, []Option{WithTimeout(5 * time.Second), WithBackoff(time.Millisecond, time.Minute)}, 429},
		{"the caller's deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 5*time.Second)
		}, []Option{WithBackoff(time.Millisecond, time.Minute)}, 429},
		{"a 503's backoff", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 5*time.Second)
		}, []Option{WithBackoff(time.Minute, time.Minute)}, 503},
	} {
		for _, ep := range endpoints(t) {
			t.Run(tt.name+"/"+ep.name, func(t *testing.T) {
				reply := scripted.Reply{Status: tt.status, Error: "Rate limit reached for requests", RetryAfter: "25"}
				want := "Rate limit reached for requests (not retried: the server asks to wait 25s, longer than the request has left, "
				if tt.status != 429 {
					reply.RetryAfter = ""
					want = "Rate limit reached for requests (not retried: the next try would be in "
				}
				m, n := ep.start(t, []scripted.Reply{reply, scripted.Text("not asked for")}, tt.opts...)
				ctx, cancel := tt.ctx()
				defer cancel()
				_, err := m.Complete(ctx, agent.Request{Messages: hello})
				var se *StatusError
				if !errors.As(err, &se) || se.StatusCode != tt.status || !strings.Contains(err.Error(), want) || n() != 1 {
					t.Errorf("got %v after %d requests, want a %d with %q after 1", err, n(), tt.status, want)
				}
			})
		}
	}
}

// TestStreamEndsEarly: a stream whose body ends cleanly before a chunk
// gave the choice's finish_reason (a proxy's idle cut, a worker that
// died behind a gateway) is not taken as the reply, [DONE] or not; one
// that finished without [DONE] is, even when the stream ends without the
// blank line that would end its last event (but not inside its line).
func TestStreamEndsEarly(t *testing.T) {
	chunk := func(delta, finish string) string {
		return `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + finish + `}]}` + "\n\n"
	}
	started := chunk(`{"role":"assistant","content":"Step 1: back up the datab"}`, "null")
	tests := []struct {
		name, body string
		err        string // "" for a reply
	}{
		{"no finish_reason, no [DONE]", started, "the stream ended before the reply finished"},
		{"no finish_reason, then [DONE]", started + "data: [DONE]\n\n", "the stream ended before the reply finished"},
		{"finished, no [DONE]", started + chunk(`{}`, `"stop"`), ""},
		// The stream's end ends its last event, as far as its lines are
		// whole: a line not ended may have been cut.
		{"finished, the last event not ended by a blank line", started + strings.TrimSuffix(chunk(`{}`, `"stop"`), "\n"), ""},
		{"finished, the last line not ended", started + strings.TrimSuffix(chunk(`{}`, `"stop"`), "\n\n"), "the stream ended before the reply finished"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			resp, err := newClient(t, srv.URL).Complete(context.Background(), agent.Request{Messages: hello})
			if tt.err == "" {
				if err != nil || resp.Message.Content != "Step 1: back up the datab" || resp.Finish != agent.FinishComplete {
					t.Errorf("got %+v, %v, want the reply", resp, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("got %+v, %v, want %q", resp, err, tt.err)
			}
		})
	}
}

// TestStreamErrorEventsAndKeepAlives: a chat completions stream that
// sends an event named error mid-stream fails with the server's message;
// chunks with nothing in them ({}, as keep-alives) are passed over.
func TestStreamErrorEventsAndKeepAlives(t *testing.T) {
	chunk := func(delta, finish string) string {
		return `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + finish + `}]}` + "\n\n"
	}
	started := chunk(`{"role":"assistant","content":"Step 1: back up the datab"}`, "null")
	for _, tt := range []struct {
		name, body string
		err        string // "" for a reply
	}{
		{"an error event with a message", started + "event: error\ndata: {\"message\":\"boom overloaded\",\"code\":529}\n\n",
			"the stream broke: received error while streaming: boom overloaded"},
		{"an error event with text", started + "event: error\ndata: upstream timed out\n\n",
			"the stream broke: received error while streaming: upstream timed out"},
		{"keep-alives", "data: {}\n\n" + started + "data: {}\n\n" + ": ping\n\n" + "data: {}\n\n" + chunk(`{}`, `"stop"`), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := scripted.New(t, scripted.Reply{RawType: "text/event-stream", Raw: tt.body})
			resp, err := newClient(t, srv.URL).Complete(context.Background(), agent.Request{Messages: hello})
			if tt.err == "" {
				if err != nil || resp.Message.Content != "Step 1: back up the datab" || resp.Finish != agent.FinishComplete {
					t.Errorf("got %+v, %v, want the reply", resp, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) || len(srv.Requests()) != 1 {
				t.Errorf("got %+v, %v after %d requests, want %q after 1", resp, err, len(srv.Requests()), tt.err)
			}
		})
	}
}

// TestArgumentsNotJSONSentAsEmpty: a call in the history whose arguments
// are not JSON (a reply cut in it) goes back with {} in both APIs, since
// strict servers refuse the whole request for it; its result says what
// was wrong.
func TestArgumentsNotJSONSentAsEmpty(t *testing.T) {
	msgs := []agent.Message{
		{Role: agent.RoleSystem, Content: "sys"},
		{Role: agent.RoleUser, Content: "deploy"},
		{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "c1", Name: "deploy", Arguments: `{"target": "sta`, Cut: true}}},
		{Role: agent.RoleTool, ToolCallID: "c1", Content: "Error: This call did not run."},
	}
	chat, err := newClient(t, "http://127.0.0.1:1/v1").params(agent.Request{Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	if got := chat.Messages[2].ToolCalls[0].Function.Arguments; got != "{}" {
		t.Errorf("chat completions: got %q, want {}", got)
	}
	resp, err := newResponses(t, "http://127.0.0.1:1/v1").params(agent.Request{Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Input[1].(functionCall).Arguments; got != "{}" {
		t.Errorf("responses: got %q, want {}", got)
	}
}

// TestStreamedUsageNotSummed: each chunk's usage is the reply's total so
// far, so the reply's usage is the last one a chunk carried, whether the
// endpoint sends it once at the end (OpenAI) or on every chunk (Gemini's,
// Together, Groq, DeepSeek).
func TestStreamedUsageNotSummed(t *testing.T) {
	chunk := func(delta, finish, usage string) string {
		return `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + finish + `}],"usage":` + usage + `}` + "\n\n"
	}
	running := func(out int) string {
		return fmt.Sprintf(`{"prompt_tokens":1000,"completion_tokens":%d,"total_tokens":%d,"prompt_tokens_details":{"cached_tokens":600}}`, out, 1000+out)
	}
	final := running(4)
	tests := []struct {
		name, body string
	}{
		{"on every chunk", chunk(`{"role":"assistant","content":"2"}`, "null", running(1)) + chunk(`{"content":"+2"}`, "null", running(2)) +
			chunk(`{"content":"=4"}`, "null", running(3)) + chunk(`{}`, `"stop"`, final) + "data: [DONE]\n\n"},
		{"on the last chunk", chunk(`{"role":"assistant","content":"2"}`, "null", "null") + chunk(`{"content":"+2"}`, "null", "null") +
			chunk(`{"content":"=4"}`, "null", "null") + chunk(`{}`, `"stop"`, "null") +
			`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":` + final + "}\n\n" + "data: [DONE]\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			resp, err := newClient(t, srv.URL).Complete(context.Background(), agent.Request{Messages: hello})
			if err != nil {
				t.Fatal(err)
			}
			want := agent.Usage{PromptTokens: 1000, CachedTokens: 600, CompletionTokens: 4}
			if resp.Message.Content != "2+2=4" || resp.Usage != want {
				t.Errorf("got %q, %+v, want %q, %+v", resp.Message.Content, resp.Usage, "2+2=4", want)
			}
		})
	}
}

// TestStreamedToolCallShapes: the tool calls of streams that differ from
// OpenAI's come out as the calls the model made: a name sent whole again
// in every chunk (MiniMax through NVIDIA NIM, Fireworks, Kimi) is not
// joined, parallel calls sent one to a chunk without an index (Gemini's
// OpenAI-compatible endpoint) stay apart, indices counted from 1 or
// Bedrock's -1 make no empty call, and a new ID at an index already used
// starts a call of its own when it carries a name; without one (Poolside,
// mlx-openai-server) it continues the call there.
func TestStreamedToolCallShapes(t *testing.T) {
	chunk := func(delta string) string {
		return `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}]}` + "\n\n"
	}
	end := `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\ndata: [DONE]\n\n"
	one := []agent.ToolCall{{ID: "a1", Name: "bash", Arguments: `{"command":"ls"}`}}
	two := []agent.ToolCall{{ID: "a1", Name: "bash", Arguments: `{"command":"echo one"}`}, {ID: "a2", Name: "bash", Arguments: `{"command":"echo two"}`}}
	tests := []struct {
		name string
		body string
		want []agent.ToolCall
	}{
		{"OpenAI's shape", chunk(`{"role":"assistant","tool_calls":[{"index":0,"id":"a1","type":"function","function":{"name":"bash","arguments":""}}]}`) +
			chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"command\":"}}]}`) +
			chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\"ls\"}"}}]}`), one},
		{"name in every chunk", chunk(`{"role":"assistant","tool_calls":[{"index":0,"id":"a1","type":"function","function":{"name":"bash","arguments":"{\"command\":"}}]}`) +
			chunk(`{"tool_calls":[{"index":0,"id":"a1","type":"function","function":{"name":"bash","arguments":"\"ls\"}"}}]}`), one},
		{"no index, one call a chunk", chunk(`{"role":"assistant","tool_calls":[{"id":"a1","type":"function","function":{"name":"bash","arguments":"{\"command\":\"echo one\"}"}}]}`) +
			chunk(`{"tool_calls":[{"id":"a2","type":"function","function":{"name":"bash","arguments":"{\"command\":\"echo two\"}"}}]}`), two},
		{"no index, arguments in pieces", chunk(`{"role":"assistant","tool_calls":[{"id":"a1","type":"function","function":{"name":"bash","arguments":"{\"command\":"}}]}`) +
			chunk(`{"tool_calls":[{"function":{"arguments":"\"ls\"}"}}]}`), one},
		{"index from 1", chunk(`{"role":"assistant","tool_calls":[{"index":1,"id":"a1","type":"function","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}}]}`), one},
		{"index -1", chunk(`{"role":"assistant","tool_calls":[{"index":-1,"id":"a1","type":"function","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}}]}`), one},
		{"every call at index 0", chunk(`{"role":"assistant","tool_calls":[{"index":0,"id":"a1","type":"function","function":{"name":"bash","arguments":"{\"command\":\"echo one\"}"}}]}`) +
			chunk(`{"tool_calls":[{"index":0,"id":"a2","type":"function","function":{"name":"bash","arguments":"{\"command\":"}}]}`) +
			chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\"echo two\"}"}}]}`), two},
		{"another ID after the first chunk", chunk(`{"role":"assistant","tool_calls":[{"index":0,"id":"a1","type":"function","function":{"name":"bash","arguments":""}}]}`) +
			chunk(`{"tool_calls":[{"index":0,"id":"b1","type":"function","function":{"arguments":"{\"command\":"}}]}`) +
			chunk(`{"tool_calls":[{"index":0,"id":"b1","type":"function","function":{"arguments":"\"ls\"}"}}]}`), one},
		{"a new ID in every chunk", chunk(`{"role":"assistant","tool_calls":[{"index":0,"id":"a1","type":"function","function":{"name":"bash","arguments":"{\"command\":"}}]}`) +
			chunk(`{"tool_calls":[{"index":0,"id":"a2","type":"function","function":{"arguments":"\"ls\"}"}}]}`), one},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := scripted.New(t, scripted.Reply{RawType: "text/event-stream", Raw: tt.body + end})
			streamed := map[int]string{}
			resp, err := newClient(t, srv.URL).Complete(context.Background(), agent.Request{Messages: hello,
				OnDelta: func(d agent.Delta) { streamed[d.ToolIndex] += d.ToolArgs }})
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(resp.Message.ToolCalls) != fmt.Sprint(tt.want) {
				t.Errorf("got %+v, want %+v", resp.Message.ToolCalls, tt.want)
			}
			for i, c := range tt.want {
				if streamed[i] != c.Arguments {
					t.Errorf("streamed arguments of call %d: got %q, want %q", i, streamed[i], c.Arguments)
				}
			}
		})
	}
}
