package main

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestAgentErrorOpeningStream: an overload an endpoint reports inside a
// 200 stream before any content (Messages: an error event; Responses: an
// error event) is retried like a 529, the retry shown; when the retries
// run out, the run ends naming the overload in the stream, not "200 OK".
func TestAgentErrorOpeningStream(t *testing.T) {
	ev := func(w http.ResponseWriter, name, data string) { fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data) }
	messages := func(n int, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Retry-After", "0.01")
		ev(w, "message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}`)
		if n == 0 {
			ev(w, "error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
			return
		}
		ev(w, "content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		ev(w, "content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"All done."}}`)
		ev(w, "content_block_stop", `{"type":"content_block_stop","index":0}`)
		ev(w, "message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":3}}`)
		ev(w, "message_stop", `{"type":"message_stop"}`)
	}
	responses := func(n int, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Retry-After", "0.01")
		ev(w, "response.created", `{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","status":"in_progress","output":[]}}`)
		if n == 0 {
			ev(w, "error", `{"type":"error","code":"server_is_overloaded","message":"Our servers are currently overloaded.","param":null,"sequence_number":1}`)
			return
		}
		ev(w, "response.completed", `{"type":"response.completed","sequence_number":1,"response":{"id":"resp_1","object":"response","status":"completed","output":[{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"All done.","annotations":[]}]}],"usage":{"input_tokens":10,"output_tokens":3}}}`)
	}
	for _, tt := range []struct {
		name  string
		flags []string
		reply func(n int, w http.ResponseWriter, r *http.Request)
		out   string // the error when no retry is allowed
	}{
		{"messages", []string{"--provider", "anthropic"}, messages, "unfold agent: agent: model: anthropic: messages: overloaded (in the stream): Overloaded"},
		{"responses", []string{"--api", "responses"}, responses, "unfold agent: agent: model: openai: responses: overloaded (in the stream): Our servers are currently overloaded."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("ANTHROPIC_API_KEY", "k")
			t.Setenv("OPENAI_API_KEY", "k")
			url, count := scriptedEndpoint(t, tt.reply)
			args := append([]string{"agent", "go", "--project", t.TempDir(), "--base-url", url, "--model", "m", "--builtins", "none"}, tt.flags...)
			var stdout, stderr bytes.Buffer
			if code := run(args, strings.NewReader(""), &stdout, &stderr); code != 0 || stdout.String() != "All done.\n" {
				t.Fatalf("exit %d, stdout %q; stderr:\n%s", code, stdout.String(), stderr.String())
			}
			if want := "step 1  retrying in 10ms: overloaded (in the stream)"; !strings.Contains(stderr.String(), want) || count() != 2 {
				t.Errorf("stderr: want %q in it after 2 requests (got %d):\n%s", want, count(), stderr.String())
			}
			url, _ = scriptedEndpoint(t, tt.reply)
			args = append([]string{"agent", "go", "--project", t.TempDir(), "--base-url", url, "--model", "m", "--builtins", "none", "--max-retries", "0"}, tt.flags...)
			stdout.Reset()
			stderr.Reset()
			code := run(args, strings.NewReader(""), &stdout, &stderr)
			if code != 1 || !strings.Contains(stderr.String(), tt.out) || strings.Contains(stderr.String(), "200") {
				t.Errorf("no retries: got exit %d, stderr:\n%s\nwant exit 1 and %q, without 200", code, stderr.String(), tt.out)
			}
		})
	}
}
