package anthropic

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/agent"
)

// TestContextWindowShapes: the API's refusal of a conversation too long
// for the model's context window, or of an output limit that does not
// fit with it, is ErrContextWindow or ErrOutputLimit in the shapes
// compatible endpoints and proxies give it too (another error type or
// none, a numeric code, the API's error quoted in a proxy's message, a
// bare string), so the run ends saying what to do instead of a resume
// that sends the same conversation again. Other refusals are neither.
func TestContextWindowShapes(t *testing.T) {
	const quoted = `{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"%s\"}}`
	litellm := func(msg string) string {
		return `{"error":{"message":"litellm.BadRequestError: AnthropicException - ` + strings.Replace(quoted, "%s", msg, 1) + `","type":null,"param":null,"code":"400"}}`
	}
	const (
		tooLong = "prompt is too long: 210000 tokens > 200000 maximum"
		output  = "input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000, decrease input length or `max_tokens` and try again"
	)
	for _, tt := range []struct {
		name   string
		status int
		body   string
		want   error // ErrContextWindow, ErrOutputLimit or nil
	}{
		{"the API's", 400, `{"type":"error","error":{"type":"invalid_request_error","message":"` + tooLong + `"}}`, agent.ErrContextWindow},
		{"a numeric code and no type (OpenRouter)", 400, `{"error":{"code":400,"message":"` + tooLong + `"}}`, agent.ErrContextWindow},
		{"quoted in a proxy's message (LiteLLM)", 400, litellm(tooLong), agent.ErrContextWindow},
		{"another type", 400, `{"error":{"type":"BadRequestError","message":"Prompt is too long"}}`, agent.ErrContextWindow},
		{"a bare string", 400, `{"error":"prompt is too long"}`, agent.ErrContextWindow},
		{"a 413 of no type", 413, `{"error":{"message":"` + tooLong + `"}}`, agent.ErrContextWindow},
		{"the output limit, the API's", 400, `{"type":"error","error":{"type":"invalid_request_error","message":"` + output + `"}}`, agent.ErrOutputLimit},
		{"the output limit quoted in a proxy's message (LiteLLM)", 400, litellm(output), agent.ErrOutputLimit},
		{"the output limit, no type", 400, `{"error":{"code":"400","message":"` + output + `"}}`, agent.ErrOutputLimit},
		{"another 400 of no type", 400, `{"error":{"code":400,"message":"messages.1.content: Input should be a valid list"}}`, nil},
		{"another 400 quoted in a proxy's message", 400, litellm("messages.1.content: Input should be a valid list"), nil},
		{"another 400 of the API's", 400, `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: must be at most 64000"}}`, nil},
		{"the words in a 500", 500, `{"error":{"type":"api_error","message":"` + tooLong + `"}}`, nil},
		{"the words in a 422", 422, `{"error":{"message":"` + tooLong + `"}}`, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			_, err := newClient(t, srv.URL, WithMaxRetries(0)).Complete(context.Background(), agent.Request{Messages: hello})
			var se *StatusError
			if !errors.As(err, &se) || se.StatusCode != tt.status {
				t.Fatalf("got %v, want a *StatusError of status %d", err, tt.status)
			}
			for _, sentinel := range []error{agent.ErrContextWindow, agent.ErrOutputLimit} {
				if got := errors.Is(err, sentinel); got != (sentinel == tt.want) {
					t.Errorf("errors.Is(%v, %v): got %v, want %v", err, sentinel, got, !got)
				}
			}
		})
	}
}
