package anthropic

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/agent/internal/scripted"
)

// TestErrorOpeningStream: a 200 stream that opens with an overloaded_error
// or api_error event, before any content, is retried as 529 or 500 would
// be, each retry told as one in the stream; when the retries run out the
// error names the overload in the stream, not "200 OK". An error event
// after the reply began is not retried, and says so.
func TestErrorOpeningStream(t *testing.T) {
	start := sseEvent("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}`) +
		sseEvent("ping", `{"type":"ping"}`)
	stream := func(body string) scripted.Reply { return scripted.Reply{RawType: "text/event-stream", Raw: body} }
	overloaded := stream(start + sseEvent("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`))
	t.Run("retried, each retry told", func(t *testing.T) {
		srv := scripted.NewMessages(t, overloaded,
			stream(sseEvent("error", `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`)),
			scripted.Reply{Content: "ok"})
		var retries []string
		resp, err := newClient(t, srv.URL).Complete(context.Background(), agent.Request{Messages: hello, OnRetry: func(r agent.Retry) { retries = append(retries, r.Reason) }})
		if err != nil || resp.Message.Content != "ok" {
			t.Fatalf("got %+v, %v, want the third reply", resp, err)
		}
		if want := []string{"overloaded (in the stream)", "server error (in the stream)"}; strings.Join(retries, "; ") != strings.Join(want, "; ") || len(srv.Bodies()) != 3 {
			t.Errorf("retries: got %q after %d requests, want %q", retries, len(srv.Bodies()), want)
		}
	})
	t.Run("out of retries", func(t *testing.T) {
		srv := scripted.NewMessages(t, overloaded, overloaded)
		_, err := newClient(t, srv.URL, WithMaxRetries(1)).Complete(context.Background(), agent.Request{Messages: hello})
		var se *StatusError
		want := "anthropic: messages: overloaded (in the stream): Overloaded (after 2 attempts)"
		if !errors.As(err, &se) || se.StatusCode != 529 || se.Type != "overloaded_error" || err.Error() != want {
			t.Errorf("got %v (%+v), want %q", err, se, want)
		}
	})
	t.Run("after the reply began", func(t *testing.T) {
		srv := scripted.NewMessages(t,
			stream(start+sseEvent("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)+
				sseEvent("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Deploying"}}`)+
				sseEvent("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)),
			scripted.Reply{Content: "not asked for"})
		_, err := newClient(t, srv.URL).Complete(context.Background(), agent.Request{Messages: hello})
		want := "anthropic: messages: the stream reported an error (overloaded_error): Overloaded"
		if err == nil || err.Error() != want || len(srv.Bodies()) != 1 {
			t.Errorf("got %v after %d requests, want %q after one", err, len(srv.Bodies()), want)
		}
	})
}
