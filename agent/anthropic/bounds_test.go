package anthropic

import (
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/agent/internal/scripted"
)

func event(typ, data string) string { return "event: " + typ + "\ndata: " + data + "\n\n" }

const messageStart = `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}}`

// serveBlocks starts a server that streams a message: a block started as
// block, then n deltas of it (each delta's JSON), then a text block and
// the end of the message. It counts the deltas it sent.
func serveBlocks(t *testing.T, block, delta string, n int) (url string, sent func() int) {
	var count atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, event("message_start", messageStart)+
			event("content_block_start", `{"type":"content_block_start","index":0,"content_block":`+block+`}`))
		for range n {
			if _, err := io.WriteString(w, event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":`+delta+`}`)); err != nil {
				return
			}
			count.Add(1)
		}
		_, _ = io.WriteString(w, event("content_block_stop", `{"type":"content_block_stop","index":0}`)+
			event("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`)+
			event("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"ok"}}`)+
			event("content_block_stop", `{"type":"content_block_stop","index":1}`)+
			event("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}`)+
			event("message_stop", `{"type":"message_stop"}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() int { return int(count.Load()) }
}

// TestDeltasBounded: a reply whose deltas, of any type, add up to more
// than 8 MiB is refused, not kept to be sent back with every request and
// written to the transcript as a line too long to read.
func TestDeltasBounded(t *testing.T) {
	mib := strings.Repeat("A", 1<<20)
	for _, tt := range []struct{ name, block, delta string }{
		{"signatures", `{"type":"thinking","thinking":"","signature":""}`, `{"type":"signature_delta","signature":"` + mib + `"}`},
		{"citations", `{"type":"text","text":""}`, `{"type":"citations_delta","citation":{"type":"char_location","cited_text":"` + mib + `","document_index":0,"document_title":null,"start_char_index":0,"end_char_index":1}}`},
		{"a delta of a newer type", `{"type":"text","text":""}`, `{"type":"summary_delta","summary":"` + mib + `"}`},
		{"text", `{"type":"text","text":""}`, `{"type":"text_delta","text":"` + mib + `"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			url, sent := serveBlocks(t, tt.block, tt.delta, 70)
			resp, err := newClient(t, url, WithMaxRetries(0)).Complete(context.Background(), agent.Request{Messages: hello})
			if err == nil || !strings.Contains(err.Error(), "the reply is over 8388608 bytes; stopped reading it") {
				t.Errorf("got %d bytes of blocks, %v; want the reply refused", len(nativeData(resp)), err)
			}
			if sent() == 70 {
				t.Errorf("the whole reply was read (70 MiB of deltas), want it cut off past 8 MiB")
			}
		})
	}
	t.Run("within the bound", func(t *testing.T) {
		url, _ := serveBlocks(t, `{"type":"thinking","thinking":"","signature":""}`, `{"type":"signature_delta","signature":"`+mib+`"}`, 7)
		resp, err := newClient(t, url).Complete(context.Background(), agent.Request{Messages: hello})
		if err != nil || resp.Message.Content != "ok" || len(nativeData(resp)) < 7<<20 {
			t.Errorf("got %q with %d bytes of blocks, %v; want the reply with its 7 MiB signature", resp.Message.Content, len(nativeData(resp)), err)
		}
	})
}

func nativeData(resp agent.Response) []byte {
	if resp.Message.Native == nil {
		return nil
	}
	return resp.Message.Native.Data
}

// TestEventNeverEnds: one event that never ends (data lines with no
// blank line) is cut off at 16 MiB and not asked for again, and reading
// it allocates a bounded amount of memory.
func TestEventNeverEnds(t *testing.T) {
	flood := scripted.NewFlood(t, "event: message_start\n", "data: "+strings.Repeat("x", 1<<20)+"\n", 256<<20)
	c := newClient(t, flood.URL)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := c.Complete(context.Background(), agent.Request{Messages: hello})
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "the streamed reply has an event over 16777216 bytes; stopped reading it") || flood.Requests() != 1 {
		t.Errorf("got %v after %d requests, want the bound named after one attempt", err, flood.Requests())
	}
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("allocated %d MiB, %d MiB sent", allocated>>20, flood.Sent()>>20)
	// What was allocated bounds how much the heap grew.
	if allocated > 128<<20 {
		t.Errorf("allocated %d MiB reading a reply cut off at 16 MiB (%d MiB sent), want at most 128", allocated>>20, flood.Sent()>>20)
	}
}

// TestUsageClamped: token counts the endpoint reports are read within
// [0, 2^40], so the cost of a reply is never negative nor absurd.
func TestUsageClamped(t *testing.T) {
	for _, tt := range []struct {
		name, start, delta string
		want               agent.Usage
	}{
		{"negative", `{"input_tokens":-100,"output_tokens":1,"cache_read_input_tokens":-5,"cache_creation_input_tokens":-7}`, `{"output_tokens":-1000000}`,
			agent.Usage{}},
		{"past int64", `{"input_tokens":9223372036854775807,"output_tokens":1,"cache_read_input_tokens":9223372036854775807,"cache_creation_input_tokens":1e30}`, `{"output_tokens":9223372036854775807}`,
			agent.Usage{PromptTokens: 3 << 40, CompletionTokens: 1 << 40, CachedTokens: 1 << 40, CacheWriteTokens: 1 << 40}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body := event("message_start", strings.Replace(messageStart, `{"input_tokens":10,"output_tokens":1}`, tt.start, 1)) +
				event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`) +
				event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`) +
				event("content_block_stop", `{"type":"content_block_stop","index":0}`) +
				event("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":`+tt.delta+`}`) +
				event("message_stop", `{"type":"message_stop"}`)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, body)
			}))
			defer srv.Close()
			resp, err := newClient(t, srv.URL).Complete(context.Background(), agent.Request{Messages: hello})
			if err != nil || resp.Message.Content != "hi" {
				t.Fatalf("got %+v, %v", resp.Message, err)
			}
			if resp.Usage != tt.want {
				t.Errorf("got %+v, want %+v", resp.Usage, tt.want)
			}
			cost := agent.DefaultPrices()["claude-sonnet-4-5"].Cost(resp.Usage)
			if cost < 0 || math.IsInf(cost, 0) || cost > 1e9 {
				t.Errorf("cost: got %v, want a finite figure, not negative", cost)
			}
		})
	}
}

// TestMessageDeltasBounded: message_delta events whose fields add up to
// more than 8 MiB count against the bound of the reply as deltas of
// blocks do, instead of being kept (and copied) up to the stream's
// 128 MiB.
func TestMessageDeltasBounded(t *testing.T) {
	mib := strings.Repeat("A", 1<<20)
	for _, tt := range []struct{ name, delta string }{
		{"fields", `{"type":"message_delta","delta":{"x%d":"` + mib + `"},"usage":{"output_tokens":5}}`},
		{"usage", `{"type":"message_delta","delta":{"stop_reason":null},"usage":{"x%d":"` + mib + `"}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var sent atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, event("message_start", messageStart)+
					event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)+
					event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`)+
					event("content_block_stop", `{"type":"content_block_stop","index":0}`))
				for i := range 70 {
					if _, err := io.WriteString(w, event("message_delta", strings.Replace(tt.delta, "%d", strconv.Itoa(i), 1))); err != nil {
						return
					}
					sent.Add(1)
				}
				_, _ = io.WriteString(w, event("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}`)+
					event("message_stop", `{"type":"message_stop"}`))
			}))
			defer srv.Close()
			resp, err := newClient(t, srv.URL, WithMaxRetries(0)).Complete(context.Background(), agent.Request{Messages: hello})
			if err == nil || !strings.Contains(err.Error(), "the reply is over 8388608 bytes; stopped reading it") {
				t.Errorf("got %q, %v; want the reply refused", resp.Message.Content, err)
			}
			if sent.Load() == 70 {
				t.Errorf("the whole reply was read (70 MiB of message_delta), want it cut off past 8 MiB")
			}
		})
	}
}
