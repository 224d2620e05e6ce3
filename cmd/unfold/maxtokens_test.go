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
			var mu sync.Mutex
			var got []float64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var req struct {
					MaxTokens float64 `json:"max_tokens"`
				}
				body, _ := io.ReadAll(r.Body)
				_ = json.Unmarshal(body, &req)
				mu.Lock()
				got = append(got, req.MaxTokens)
				mu.Unlock()
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
			t.Setenv("ANTHROPIC_API_KEY", "k")
			var stdout, stderr bytes.Buffer
			args := append([]string{"agent", "go", "--provider", "anthropic", "--project", t.TempDir(), "--base-url", srv.URL, "--model", "claude-sonnet-4-5", "--builtins", "none"}, tc.args...)
			if code := run(args, strings.NewReader(""), &stdout, &stderr); code != 0 || stdout.String() != "Done.\n" {
				t.Fatalf("exit %d, stdout %q; stderr:\n%s", code, stdout.String(), stderr.String())
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
