package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/agent/internal/transport"
)

// TestStreamAccumulated streams testdata/blocks.sse (thinking with its
// signature in pieces, redacted thinking, text with a citation, a server
// tool search with its input in pieces and its result, a block with a
// field and a delta of types not known, a tool call with no input
// deltas, pings and a comment, a message_delta with a null count) and
// compares the reply with testdata/blocks.json, the reply as
// anthropic-sdk-go v2.15's accumulator put it together, kept as the
// reference: the same blocks, text, calls and usage.
func TestStreamAccumulated(t *testing.T) {
	sse, err := os.ReadFile("testdata/blocks.sse")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("testdata/blocks.json")
	if err != nil {
		t.Fatal(err)
	}
	var want struct {
		Blocks    any              `json:"blocks"`
		Content   string           `json:"content"`
		Finish    string           `json:"finish"`
		ToolCalls []agent.ToolCall `json:"tool_calls"`
		Usage     agent.Usage      `json:"usage"`
	}
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(sse)
	}))
	defer srv.Close()
	resp, err := newClient(t, srv.URL).Complete(context.Background(), agent.Request{Messages: hello})
	if err != nil {
		t.Fatal(err)
	}
	var blocks any
	if err := json.Unmarshal(resp.Message.Native.Data, &blocks); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(blocks, want.Blocks) {
		got, _ := json.MarshalIndent(blocks, "", "  ")
		t.Errorf("blocks: got\n%s\nwant those of testdata/blocks.json", got)
	}
	if resp.Message.Content != want.Content || resp.FinishReason != want.Finish || !reflect.DeepEqual(resp.Message.ToolCalls, want.ToolCalls) || resp.Usage != want.Usage {
		t.Errorf("got %q, %q, %+v, %+v; want %q, %q, %+v, %+v", resp.Message.Content, resp.FinishReason, resp.Message.ToolCalls, resp.Usage,
			want.Content, want.Finish, want.ToolCalls, want.Usage)
	}
}

// TestStreamMisfit: an event that does not fit the message so far (a
// block started out of order, a delta or stop for a block not started,
// a block before the message, a second message after a tool call) ends
// the request saying so, instead of a reply put together wrong
// (anthropic-sdk-go v2.15's accumulator, used before, dropped a block
// sent before the message, and started the reply again at a second
// message).
func TestStreamMisfit(t *testing.T) {
	start := event("message_start", messageStart)
	block := func(i string) string {
		return event("content_block_start", `{"type":"content_block_start","index":`+i+`,"content_block":{"type":"text","text":""}}`)
	}
	for _, tt := range []struct{ name, body string }{
		{"a block out of order", start + block("1")},
		{"a delta for no block", start + block("0") + event("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"x"}}`)},
		{"a stop for no block", start + event("content_block_stop", `{"type":"content_block_stop","index":0}`)},
		{"a block before the message", block("0") + start},
		{"a second message", start + event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"n","input":{}}}`) + start},
		{"a citation that is not one", start + block("0") + event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":"x"}}`)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, tt.body+event("message_stop", `{"type":"message_stop"}`))
			}))
			defer srv.Close()
			_, err := newClient(t, srv.URL, WithMaxRetries(0)).Complete(context.Background(), agent.Request{Messages: hello})
			if err == nil || !strings.Contains(err.Error(), "the stream sent an event that does not fit the reply so far") {
				t.Errorf("got %v, want the event refused", err)
			}
		})
	}
}

// TestStreamErrorNotJSON: an error event whose data is not JSON ends the
// request saying the stream reported an error, quoting the data as a
// server's message is quoted: whole when short, cut to 2 KiB when it is
// a megabyte (an event may hold 16 MiB).
func TestStreamErrorNotJSON(t *testing.T) {
	start := event("message_start", messageStart)
	for _, tt := range []struct {
		name, data, want string
		max              int
	}{
		{"short", "upstream went away", "the stream reported an error, with data that is not the API's JSON error object: upstream went away", 1 << 10},
		{"a megabyte", strings.Repeat("x", 1<<20), "the stream reported an error, with data that is not the API's JSON error object: " + strings.Repeat("x", 2<<10) + "...", 3 << 10},
	} {
		t.Run(tt.name, func(t *testing.T) {
			url := serveReply(t, "text/event-stream", start+event("error", tt.data))
			_, err := newClient(t, url, WithMaxRetries(0)).Complete(context.Background(), agent.Request{Messages: hello})
			if err == nil || !strings.Contains(err.Error(), tt.want) || len(err.Error()) > tt.max {
				t.Errorf("got an error of %d bytes: %.600v; want one of at most %d bytes holding %.150q", len(fmt.Sprint(err)), err, tt.max, tt.want)
			}
		})
	}
}

// FuzzStream reads any event stream: no panic, and a reply it puts
// together has content blocks that are JSON, each block of a tool's use
// with an input that is JSON, so the reply can go back to the API.
func FuzzStream(f *testing.F) {
	for _, name := range []string{"testdata/blocks.sse", "testdata/stream.sse"} {
		sse, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(sse)
	}
	f.Add([]byte(event("message_start", messageStart) + event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"n","input":{}}}`) +
		event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"a\": [1,"}}`) +
		event("message_delta", `{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":5}}`) + event("message_stop", `{"type":"message_stop"}`)))
	f.Add([]byte(event("message_stop", `{"type":"message_stop"}`)))
	f.Add([]byte(event("message_start", `{"type":"message_start","message":null}`) + event("message_stop", `{"type":"message_stop"}`)))
	f.Fuzz(func(t *testing.T, sse []byte) {
		a := accumulator{call: &transport.Call{}, tool: map[int64]int{}}
		events := transport.NewEvents(bytes.NewReader(sse))
		for {
			name, data, err := events.Next()
			if err != nil {
				break
			}
			if a.event(name, data) != nil {
				return
			}
		}
		if !a.stopped {
			return
		}
		resp, err := a.response()
		if err != nil {
			return
		}
		var blocks []struct {
			Type  string          `json:"type"`
			Input json.RawMessage `json:"input"`
		}
		if err := json.Unmarshal(resp.Message.Native.Data, &blocks); err != nil {
			t.Fatalf("native data is not JSON blocks: %v\n%s", err, resp.Message.Native.Data)
		}
		for _, b := range blocks {
			if b.Input != nil && !json.Valid(b.Input) {
				t.Errorf("a %s block's input %s is not JSON", b.Type, b.Input)
			}
			if strings.HasSuffix(b.Type, "tool_use") && b.Input == nil {
				t.Errorf("a %s block without its input", b.Type)
			}
		}
	})
}

// serveReply starts a server that answers every request with body, of
// the content type ct.
func serveReply(t *testing.T, ct, body string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", ct)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// toolStream is a stream of one block started as start, then the
// input_json_delta pieces, ending with stopReason.
func toolStream(start, stopReason string, pieces ...string) string {
	s := event("message_start", messageStart) +
		event("content_block_start", `{"type":"content_block_start","index":0,"content_block":`+start+`}`)
	for _, p := range pieces {
		d, _ := json.Marshal(p)
		s += event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":`+string(d)+`}}`)
	}
	return s + event("content_block_stop", `{"type":"content_block_stop","index":0}`) +
		event("message_delta", `{"type":"message_delta","delta":{"stop_reason":"`+stopReason+`"},"usage":{"output_tokens":5}}`) +
		event("message_stop", `{"type":"message_stop"}`)
}

// TestToolInput: a tool call's block that starts with its input null,
// absent, or an empty object written with a space, as proxies that build
// the events from another API send it, gets the input its deltas bring,
// and goes back to the API with an input ({} for none), which the API
// requires; so does a server tool's. Input that is not JSON in a reply
// that finished is refused rather than run as {}; in a reply cut at the
// output limit the call is marked cut and keeps what the model wrote.
func TestToolInput(t *testing.T) {
	const read = `{"type":"tool_use","id":"toolu_1","name":"read"`
	message := func(block string) string {
		return `{"type":"message","id":"msg_1","role":"assistant","content":[` + block + `],"stop_reason":"tool_use","usage":{"input_tokens":3,"output_tokens":2}}`
	}
	for _, tt := range []struct {
		name, ct, body string
		args           string // the call's arguments; "" for no call
		cut            bool
		input          string // the block's input sent back
	}{
		{"null, then deltas", "text/event-stream", toolStream(read+`,"input":null}`, "tool_use", `{"path":`, `"a"}`), `{"path":"a"}`, false, `{"path":"a"}`},
		{"an empty object with a space, then deltas", "text/event-stream", toolStream(read+`,"input":{ }}`, "tool_use", `{"path":"a"}`), `{"path":"a"}`, false, `{"path":"a"}`},
		{"absent, then deltas", "text/event-stream", toolStream(read+`}`, "tool_use", `{"path":`, `"a"}`), `{"path":"a"}`, false, `{"path":"a"}`},
		{"{}, an empty piece, then deltas", "text/event-stream", toolStream(read+`,"input":{}}`, "tool_use", ``, `{"pa`, `th":"a"}`), `{"path":"a"}`, false, `{"path":"a"}`},
		{"whole at the start", "text/event-stream", toolStream(read+`,"input":{"path":"a"}}`, "tool_use"), `{"path":"a"}`, false, `{"path":"a"}`},
		{"absent, no deltas", "text/event-stream", toolStream(read+`}`, "tool_use"), `{}`, false, `{}`},
		{"null, no deltas", "text/event-stream", toolStream(read+`,"input":null}`, "tool_use"), `{}`, false, `{}`},
		{"a server tool's, null, then deltas", "text/event-stream", toolStream(`{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":null}`, "end_turn", `{"query":"x"}`), "", false, `{"query":"x"}`},
		{"a server tool's, absent, no deltas", "text/event-stream", toolStream(`{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search"}`, "end_turn"), "", false, `{}`},
		{"cut at the output limit", "text/event-stream", toolStream(read+`,"input":null}`, "max_tokens", `{"path":`), `{"path":`, true, `{}`},
		{"not streamed, null", "application/json", message(read + `,"input":null}`), `{}`, false, `{}`},
		{"not streamed, absent", "application/json", message(read + `}`), `{}`, false, `{}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := newClient(t, serveReply(t, tt.ct, tt.body), WithMaxRetries(0)).Complete(context.Background(), agent.Request{Messages: hello})
			if err != nil {
				t.Fatal(err)
			}
			var want []agent.ToolCall
			if tt.args != "" {
				want = []agent.ToolCall{{ID: "toolu_1", Name: "read", Arguments: tt.args, Cut: tt.cut}}
			}
			if !reflect.DeepEqual(resp.Message.ToolCalls, want) {
				t.Errorf("calls: got %+v, want %+v", resp.Message.ToolCalls, want)
			}
			var blocks []struct {
				Input json.RawMessage `json:"input"`
			}
			if err := json.Unmarshal(nativeData(resp), &blocks); err != nil || len(blocks) != 1 {
				t.Fatalf("native data %s: %v", nativeData(resp), err)
			}
			if compact(blocks[0].Input) != tt.input {
				t.Errorf("the block goes back with input %s, want %s (native data %s)", blocks[0].Input, tt.input, nativeData(resp))
			}
		})
	}
	t.Run("not JSON in a finished reply", func(t *testing.T) {
		url := serveReply(t, "text/event-stream", toolStream(read+`,"input":{"path":"a"}}`, "tool_use", `{"path":"b"}`))
		resp, err := newClient(t, url, WithMaxRetries(0)).Complete(context.Background(), agent.Request{Messages: hello})
		if err == nil || !strings.Contains(err.Error(), `content block 0: the tool_use block's input is not JSON, and the reply did not end while the model wrote it: {"path":"a"}{"path":"b"}`) {
			t.Errorf("got %+v, %v; want the reply refused", resp.Message.ToolCalls, err)
		}
	})
}

// TestStreamOpenAfterStop: a server that keeps the stream open after
// message_stop (a proxy that does not close its upstream, pings) gives
// its reply at once, and the connection is closed, not held until the
// request's timeout, which then threw the finished reply away.
func TestStreamOpenAfterStop(t *testing.T) {
	closed := make(chan struct{})
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, toolStream(`{"type":"tool_use","id":"toolu_1","name":"read","input":{}}`, "tool_use", `{"path":"a"}`)+event("ping", `{"type":"ping"}`))
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
	resp, err := newClient(t, srv.URL, WithMaxRetries(0)).Complete(ctx, agent.Request{Messages: hello})
	if err != nil || len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].Arguments != `{"path":"a"}` {
		t.Fatalf("got %+v, %v; want the reply", resp.Message.ToolCalls, err)
	}
	select {
	case <-closed:
	case <-ctx.Done():
		t.Error("the connection is still open after the reply")
	}
}

// TestUsageTolerant: token counts sent as numeric strings (as some
// proxies send them) are read; counts, usage or block fields of another
// shape, which unfold does not need, never lose a finished reply.
func TestUsageTolerant(t *testing.T) {
	stream := func(startUsage, deltaUsage string, blocks ...string) string {
		s := event("message_start", strings.Replace(messageStart, `{"input_tokens":10,"output_tokens":1}`, startUsage, 1))
		for i, b := range append(blocks, `{"type":"text","text":"hi"}`) {
			s += event("content_block_start", `{"type":"content_block_start","index":`+strconv.Itoa(i)+`,"content_block":`+b+`}`) +
				event("content_block_stop", `{"type":"content_block_stop","index":`+strconv.Itoa(i)+`}`)
		}
		return s + event("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":`+deltaUsage+`}`) +
			event("message_stop", `{"type":"message_stop"}`)
	}
	message := func(usage string) string {
		return `{"type":"message","id":"msg_1","role":"assistant","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":` + usage + `}`
	}
	for _, tt := range []struct {
		name, ct, body string
		want           agent.Usage
	}{
		{"output tokens as a string", "text/event-stream", stream(`{"input_tokens":10,"output_tokens":1}`, `{"output_tokens":"5"}`),
			agent.Usage{PromptTokens: 10, CompletionTokens: 5}},
		{"every count as a string", "text/event-stream", stream(`{"input_tokens":" 10 ","output_tokens":"1","cache_read_input_tokens":"3","cache_creation_input_tokens":"2.0"}`, `{"output_tokens":"5"}`),
			agent.Usage{PromptTokens: 15, CompletionTokens: 5, CachedTokens: 3, CacheWriteTokens: 2}},
		{"counts that are not numbers", "text/event-stream", stream(`{"input_tokens":"n/a","output_tokens":true}`, `{"output_tokens":{"total":5},"cache_read_input_tokens":"NaN"}`),
			agent.Usage{}},
		{"usage that is not an object", "text/event-stream", stream(`"none"`, `[5]`),
			agent.Usage{}},
		{"fields unfold does not read", "text/event-stream", stream(`{"input_tokens":10,"output_tokens":1,"service_tier":5,"server_tool_use":{"web_search_requests":"1"}}`, `{"output_tokens":5,"cache_creation":"x"}`, `{"type":"widget","text":7,"id":[1],"name":{}}`),
			agent.Usage{PromptTokens: 10, CompletionTokens: 5}},
		{"not streamed, counts as strings", "application/json", message(`{"input_tokens":"10","output_tokens":"5"}`),
			agent.Usage{PromptTokens: 10, CompletionTokens: 5}},
		{"not streamed, usage that is not an object", "application/json", message(`"10"`),
			agent.Usage{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := newClient(t, serveReply(t, tt.ct, tt.body), WithMaxRetries(0)).Complete(context.Background(), agent.Request{Messages: hello})
			if err != nil || resp.Message.Content != "hi" || resp.Finish != agent.FinishComplete {
				t.Fatalf("got %q, %v, %v; want the reply", resp.Message.Content, resp.Finish, err)
			}
			if resp.Usage != tt.want {
				t.Errorf("usage: got %+v, want %+v", resp.Usage, tt.want)
			}
		})
	}
}
