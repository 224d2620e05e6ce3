package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/unfold-dev/unfold/agent"
)

// TestAgentMaxTokens: --max-tokens reaches each provider's request as its
// output limit; without it Anthropic's is 8192 and chat completions send
// none.
func TestAgentMaxTokens(t *testing.T) {
	t.Run("chat completions", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			want any
		}{{[]string{"--max-tokens", "20000"}, 20000.0}, {nil, nil}} {
			url, reqs := fakeEndpoint(t, "Done.")
			var stdout, stderr bytes.Buffer
			args := append([]string{"agent", "go", "--project", t.TempDir(), "--base-url", url, "--model", "m", "--builtins", "none"}, tc.args...)
			if code := run(args, strings.NewReader(""), &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", code, stderr.String())
			}
			if got := (*reqs)[0]["max_completion_tokens"]; got != tc.want {
				t.Errorf("%v: max_completion_tokens %v, want %v", tc.args, got, tc.want)
			}
		}
	})
	t.Run("anthropic", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			want float64
		}{{[]string{"--max-tokens", "64000"}, 64000}, {nil, 8192}} {
			url, bodies := fakeMessages(t)
			t.Setenv("ANTHROPIC_API_KEY", "k")
			var stdout, stderr bytes.Buffer
			args := append([]string{"agent", "go", "--provider", "anthropic", "--project", t.TempDir(), "--base-url", url, "--model", "claude-sonnet-4-5", "--builtins", "none"}, tc.args...)
			if code := run(args, strings.NewReader(""), &stdout, &stderr); code != 0 || stdout.String() != "Done.\n" {
				t.Fatalf("exit %d, stdout %q; stderr:\n%s", code, stdout.String(), stderr.String())
			}
			var got []float64
			for _, b := range *bodies {
				var req struct {
					MaxTokens float64 `json:"max_tokens"`
				}
				_ = json.Unmarshal(b, &req)
				got = append(got, req.MaxTokens)
			}
			if len(got) != 1 || got[0] != tc.want {
				t.Errorf("%v: max_tokens %v, want [%v]", tc.args, got, tc.want)
			}
		}
	})
	t.Run("negative", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		code := run([]string{"agent", "go", "--base-url", "http://127.0.0.1:1/v1", "--model", "m", "--max-tokens", "-1"}, strings.NewReader(""), &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), "--max-tokens") {
			t.Errorf("exit %d, stderr %q; want 2 and --max-tokens named", code, stderr.String())
		}
	})
}

// fakeMessages answers the Messages API with "Done.", streamed, and
// records the request bodies; as the API does, it refuses a request that
// sends a tool_use ID twice.
func fakeMessages(t *testing.T) (string, *[][]byte) {
	t.Helper()
	var mu sync.Mutex
	var bodies [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, body)
		mu.Unlock()
		var req struct {
			Messages []struct {
				Content []struct{ Type, ID string }
			}
		}
		_ = json.Unmarshal(body, &req)
		seen := map[string]bool{}
		for i, m := range req.Messages {
			for j, b := range m.Content {
				if b.Type != "tool_use" {
					continue
				}
				if seen[b.ID] {
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusBadRequest)
					fmt.Fprintf(w, `{"type":"error","error":{"type":"invalid_request_error","message":"messages.%d.content.%d: tool_use ids must be unique"}}`, i, j)
					return
				}
				seen[b.ID] = true
			}
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range []string{
			`{"type":"message_start","message":{"id":"m1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}}`,
			`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Done."}}`,
			`{"type":"content_block_stop","index":0}`,
			`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}`,
			`{"type":"message_stop"}`,
		} {
			var typ struct{ Type string }
			_ = json.Unmarshal([]byte(ev), &typ)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ.Type, ev)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &bodies
}

// TestOutputLimitHint: the hint after a reply cut at the output limit
// promises --max-tokens only where the API reads it; with chat completions
// it says that some servers ignore max_completion_tokens.
func TestOutputLimitHint(t *testing.T) {
	cut := &agent.StopError{Finish: agent.FinishTruncated, Reason: "max_tokens"}
	if got := outputLimitHint(cut, false); got != " (--max-tokens N raises the limit)" {
		t.Errorf("messages/responses: got %q", got)
	}
	if got := outputLimitHint(cut, true); !strings.Contains(got, "max_completion_tokens") || !strings.Contains(got, "Ollama") {
		t.Errorf("chat completions: got %q, want it to say some servers ignore max_completion_tokens", got)
	}
	full := &agent.StopError{Finish: agent.FinishTruncated, Reason: "model_context_window_exceeded"}
	if got := outputLimitHint(full, true); got != "" {
		t.Errorf("context window: got %q, want no hint", got)
	}
}
