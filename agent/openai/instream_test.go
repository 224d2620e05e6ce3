package openai

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/agent/internal/scripted"
)

// TestResponsesErrorOpeningStream: a Responses stream that opens with an
// error event (server_is_overloaded, flat or nested; rate_limit_exceeded)
// or response.failed (server_error), before any output, is retried as
// 529, 429 or 500 would be, each retry told as one in the stream; when
// the retries run out the error names the overload in the stream. An
// error event after the output began is not retried.
func TestResponsesErrorOpeningStream(t *testing.T) {
	ev := func(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }
	stream := func(body string) scripted.Reply { return scripted.Reply{RawType: "text/event-stream", Raw: body} }
	created := ev("response.created", `{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","status":"in_progress","output":[]}}`)
	overloaded := stream(created + ev("error", `{"type":"error","code":"server_is_overloaded","message":"Our servers are currently overloaded. Please try again later.","param":null,"sequence_number":1}`))
	t.Run("retried, each retry told", func(t *testing.T) {
		srv := scripted.NewResponses(t, overloaded,
			stream(ev("error", `{"type":"error","error":{"type":"service_unavailable_error","code":"server_is_overloaded","message":"Try again later."}}`)),
			stream(created+ev("error", `{"type":"error","code":"rate_limit_exceeded","message":"Rate limit reached.","param":null,"sequence_number":1}`)),
			stream(created+ev("response.failed", `{"type":"response.failed","sequence_number":1,"response":{"id":"resp_1","object":"response","status":"failed","error":{"code":"server_error","message":"The server had an error."},"output":[]}}`)),
			scripted.Text("ok"))
		var retries []string
		resp, err := newResponses(t, srv.URL).Complete(context.Background(), agent.Request{Messages: hello, OnRetry: func(r agent.Retry) { retries = append(retries, r.Reason) }})
		if err != nil || resp.Message.Content != "ok" {
			t.Fatalf("got %+v, %v, want the last reply", resp, err)
		}
		want := []string{"overloaded (in the stream)", "overloaded (in the stream)", "rate limited (in the stream)", "server error (in the stream)"}
		if strings.Join(retries, "; ") != strings.Join(want, "; ") || len(srv.Bodies()) != 5 {
			t.Errorf("retries: got %q after %d requests, want %q", retries, len(srv.Bodies()), want)
		}
	})
	t.Run("out of retries", func(t *testing.T) {
		srv := scripted.NewResponses(t, overloaded, overloaded)
		_, err := newResponses(t, srv.URL, WithMaxRetries(1)).Complete(context.Background(), agent.Request{Messages: hello})
		var se *StatusError
		want := "openai: responses: overloaded (in the stream): Our servers are currently overloaded. Please try again later. (after 2 attempts)"
		if !errors.As(err, &se) || se.StatusCode != 529 || err.Error() != want {
			t.Errorf("got %v, want %q", err, want)
		}
	})
	t.Run("after the output began", func(t *testing.T) {
		srv := scripted.NewResponses(t,
			stream(created+ev("response.output_text.delta", `{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"Deploying","sequence_number":1}`)+
				ev("error", `{"type":"error","code":"server_is_overloaded","message":"Overloaded.","param":null,"sequence_number":2}`)),
			scripted.Text("not asked for"))
		_, err := newResponses(t, srv.URL).Complete(context.Background(), agent.Request{Messages: hello})
		if err == nil || !strings.Contains(err.Error(), "the stream reported an error: server_is_overloaded Overloaded.") || len(srv.Bodies()) != 1 {
			t.Errorf("got %v after %d requests, want the error named after one", err, len(srv.Bodies()))
		}
	})
}
