package anthropic

import (
	"context"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/agent/internal/scripted"
)

// TestCredentials sends a request while the environment holds other
// credentials: the key given to the client is the one sent, alone, as the
// SDK's own client sends it, and the headers ANTHROPIC_CUSTOM_HEADERS
// names go with it.
func TestCredentials(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "env-key")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "env-token")
	t.Setenv("ANTHROPIC_CUSTOM_HEADERS", "X-Team: blue\nX-Cost-Center:42")
	srv := scripted.Refuse(t, `{"type":"error","error":{"type":"invalid_request_error","message":"stop here"}}`)
	c := newClient(t, srv.URL, WithAPIKey("k"))
	if _, err := c.Complete(context.Background(), agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: "hi"}}}); err == nil {
		t.Fatal("want the endpoint's error")
	}
	sent := srv.Sent()
	if len(sent) != 1 {
		t.Fatalf("got %d requests, want 1", len(sent))
	}
	got := sent[0].Header
	if got.Get("X-Api-Key") != "k" && got.Get("Authorization") != "Bearer k" {
		t.Errorf("the key given: got x-api-key %q and authorization %q, want k in one", got.Get("X-Api-Key"), got.Get("Authorization"))
	}
	for name, values := range got {
		for _, v := range values {
			if strings.Contains(v, "env-") {
				t.Errorf("header %s: got %q, a credential of the environment", name, v)
			}
		}
	}
	for name, want := range map[string]string{"X-Team": "blue", "X-Cost-Center": "42"} {
		if v := got.Get(name); v != want {
			t.Errorf("header %s: got %q, want %q", name, v, want)
		}
	}
	if got.Get("Anthropic-Version") == "" {
		t.Errorf("no anthropic-version header: got %v", got)
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
