package transport

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/agent"
)

// TestErrorOpeningStream: an event stream that opens with an overload, a
// server error or a rate limit reported in it (the Messages API's error
// event; the Responses API's error event, flat or nested, or
// response.failed), after the events a stream opens with, becomes a reply
// of the status it stands for with the error as its body, its retry told
// as one in the stream. Any other stream is passed on byte for byte: one
// whose content came first, one whose error is not retried, a chat
// completion, one cut off in its opening events, one whose opening
// events are longer than the read ahead.
func TestErrorOpeningStream(t *testing.T) {
	ev := func(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }
	start := ev("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[]}}`) +
		": keep-alive\n\n" + ev("ping", `{"type": "ping"}`)
	created := ev("response.created", `{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","status":"in_progress"}}`)
	overloaded := ev("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
	tests := []struct {
		name, body string
		status     int    // 200: passed on whole
		what, msg  string // the reply's InStream and its body's error message
	}{
		{"overloaded", start + overloaded, 529, "overloaded", "Overloaded"},
		{"api_error, lines ended by \\r\\n", strings.ReplaceAll(start+ev("error", `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`), "\n", "\r\n"),
			500, "server error", "Internal server error"},
		{"rate_limit_error first, after a byte order mark", "\ufeffdata: " + `{"type":"error","error":{"type":"rate_limit_error","message":"Slow down"}}` + "\n\n", 429, "rate limited", "Slow down"},
		{"rate_limit_error first", ev("error", `{"type":"error","error":{"type":"rate_limit_error","message":"Slow down"}}`), 429, "rate limited", "Slow down"},
		{"responses, flat", created + ev("error", `{"type":"error","code":"server_is_overloaded","message":"Our servers are currently overloaded.","param":null,"sequence_number":1}`),
			529, "overloaded", "Our servers are currently overloaded."},
		{"responses, nested", "data: " + `{"type":"error","error":{"type":"service_unavailable_error","code":"server_is_overloaded","message":"Try again later."}}` + "\n\n",
			529, "overloaded", "Try again later."},
		{"response.failed", created + ev("response.in_progress", `{"type":"response.in_progress","response":{}}`) +
			ev("response.failed", `{"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"The server had an error."}}}`),
			500, "server error", "The server had an error."},
		{"content first", start + ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`) + overloaded, 200, "", ""},
		{"an error not retried", start + ev("error", `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long"}}`), 200, "", ""},
		{"a chat completion", `data: {"id":"c","object":"chat.completion.chunk","choices":[]}` + "\n\ndata: [DONE]\n\n", 200, "", ""},
		{"cut off in the opening", start[:len(start)-7], 200, "", ""},
		{"opening past the read ahead", ev("response.created", `{"type":"response.created","response":{"instructions":"`+strings.Repeat("x", peekBytes)+`"}}`) + overloaded, 200, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var retries []agent.Retry
			c := &Call{Stream: true, Policy: Policy{MaxRetries: 1, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond},
				OnRetry: func(r agent.Retry) { retries = append(retries, r) }}
			res, err := Post(context.Background(), Endpoint{BaseURL: serve(t, "text/event-stream", 200, tt.body, len(tt.body))}, c, "", nil)
			if tt.status == 200 {
				if err != nil {
					t.Fatal(err)
				}
				defer res.Body.Close()
				body, err := io.ReadAll(res.Body)
				if err != nil {
					t.Fatal(err)
				}
				if string(body) != tt.body || len(retries) != 0 || c.Last().InStream != "" {
					t.Errorf("got %d bytes (retries %+v, %q), want the %d bytes sent, as they were", len(body), retries, c.Last().InStream, len(tt.body))
				}
				return
			}
			var se *StatusError
			if !errors.As(err, &se) || se.StatusCode != tt.status {
				t.Fatalf("got %v, want a reply of status %d", err, tt.status)
			}
			if got := se.API().Message; got != tt.msg {
				t.Errorf("body: got %s, want an error body with the message %q", se.Body, tt.msg)
			}
			if last := c.Last(); last.Status != tt.status || last.InStream != tt.what {
				t.Errorf("last reply: got %+v, want status %d, in the stream %q", last, tt.status, tt.what)
			}
			if want := tt.what + " (in the stream)"; len(retries) != 1 || retries[0].Reason != want {
				t.Errorf("retries: got %+v, want one for %q", retries, want)
			}
		})
	}
}
