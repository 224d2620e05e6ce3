package anthropic

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/agent/internal/scripted"
)

// TestHeaders: every request carries the API's version and the key given,
// alone, as Authorization: Bearer, with the headers
// ANTHROPIC_CUSTOM_HEADERS names; the environment's credentials and
// address are never read, a custom header does not replace the key, and
// no telemetry goes with it.
func TestHeaders(t *testing.T) {
	for _, tt := range []struct {
		name string
		env  map[string]string
		want map[string]string // headers of the request; "" for none
	}{
		{"no environment", nil, map[string]string{"Authorization": "Bearer k", "Anthropic-Version": apiVersion, "X-Team": "", "X-Api-Key": ""}},
		{"environment", map[string]string{
			"ANTHROPIC_API_KEY": "env-key", "ANTHROPIC_AUTH_TOKEN": "env-token", "ANTHROPIC_PROFILE": "missing",
			"ANTHROPIC_BASE_URL":       "http://127.0.0.1:9",
			"ANTHROPIC_CUSTOM_HEADERS": "X-Team: blue\nX-Cost-Center:42\nanthropic-beta: context-1m\nAuthorization: Bearer custom\nnot a header line",
		}, map[string]string{"Authorization": "Bearer k", "X-Api-Key": "", "X-Team": "blue", "X-Cost-Center": "42", "Anthropic-Beta": "context-1m", "Anthropic-Version": apiVersion}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			srv := scripted.Refuse(t, `{"type":"error","error":{"type":"invalid_request_error","message":"stop here"}}`)
			c := newClient(t, srv.URL, WithTimeout(time.Minute))
			_, err := c.Complete(context.Background(), agent.Request{Messages: hello})
			if want := "anthropic: messages: 400 Bad Request: stop here"; err == nil || err.Error() != want {
				t.Errorf("got %v, want %q", err, want)
			}
			sent := srv.Sent()
			if len(sent) != 1 {
				t.Fatalf("got %d requests, want 1", len(sent))
			}
			h := sent[0].Header
			for k, v := range tt.want {
				if got := h.Get(k); got != v {
					t.Errorf("header %s: got %q, want %q", k, got, v)
				}
			}
			for k, values := range h {
				if strings.Contains(strings.Join(values, " "), "env-") {
					t.Errorf("header %s: got a credential of the environment", k)
				}
				if strings.HasPrefix(strings.ToLower(k), "x-stainless") {
					t.Errorf("header %s: got telemetry", k)
				}
			}
			if len(h.Values("Authorization")) != 1 {
				t.Errorf("Authorization: got %q, want the key alone", h.Values("Authorization"))
			}
		})
	}
}

// TestBadCustomHeaders refuses a client whose environment names a header
// no request could carry, saying where it is, instead of failing every
// request as a network error.
func TestBadCustomHeaders(t *testing.T) {
	t.Setenv("ANTHROPIC_CUSTOM_HEADERS", "X-Team: blue\n:x")
	_, err := New("http://127.0.0.1:9", "claude-sonnet-4-5", WithAPIKey("k"))
	if want := `anthropic: new: ANTHROPIC_CUSTOM_HEADERS, line 2: ":x" is not a header`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("got %v, want %q", err, want)
	}
}
