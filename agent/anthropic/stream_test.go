package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/agent/internal/transport"
)

// TestStreamAccumulated streams testdata/blocks.sse (thinking with its
// signature in pieces, redacted thinking, text with a citation, a server
// tool search with its input in pieces and its result, a block with a
// field and a delta of types not known, a tool call with no input
// deltas, pings and a comment, a message_delta with a null count) and
// compares the reply with testdata/blocks.json, the reply as the SDK's
// accumulator (sdk.Message.Accumulate) put it together: the same blocks,
// text, calls and usage.
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
// a block before the message) ends the request saying so, instead of a
// reply put together wrong (the SDK's accumulator refused all but the
// last, whose block it dropped).
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

// FuzzStream reads any event stream: no panic, and a reply it puts
// together has content blocks that are JSON, each tool_use input an
// object or the {} it started with, so the reply can go back to the API.
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
		}
	})
}
