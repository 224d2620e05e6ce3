package openai

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/agent/internal/scripted"
)

// TestCredentials sends a request with each API while the environment
// holds another key and an organization: the key given to the client is
// the one sent, and the environment's other settings go with it, as the
// SDK's own client sends them.
func TestCredentials(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "env-key")
	t.Setenv("OPENAI_ORG_ID", "org-env")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-Team: blue")
	srv := scripted.Refuse(t, `{"error":{"message":"stop here","type":"invalid_request_error"}}`)
	chat, err := New(srv.URL, "m", WithAPIKey("k"), WithBackoff(time.Millisecond, time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := NewResponses(srv.URL, "m", WithAPIKey("k"), WithBackoff(time.Millisecond, time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	req := agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: "hi"}}}
	for _, m := range []agent.Model{chat, resp} {
		if _, err := m.Complete(context.Background(), req); err == nil {
			t.Fatal("want the endpoint's error")
		}
	}
	sent := srv.Sent()
	if len(sent) != 2 {
		t.Fatalf("got %d requests, want 2", len(sent))
	}
	for i, s := range sent {
		h := s.Header
		for name, want := range map[string]string{"Authorization": "Bearer k", "Openai-Organization": "org-env", "X-Team": "blue"} {
			if v := h.Get(name); v != want {
				t.Errorf("request %d, header %s: got %q, want %q", i+1, name, v, want)
			}
		}
		for name, values := range h {
			if strings.Contains(strings.Join(values, " "), "env-key") {
				t.Errorf("request %d, header %s: got the environment's key", i+1, name)
			}
		}
	}
}

// TestBadCustomHeaders refuses a client whose environment names a header
// no request could carry, saying where it is, instead of failing every
// request as a network error.
func TestBadCustomHeaders(t *testing.T) {
	t.Setenv("OPENAI_CUSTOM_HEADERS", "Bad Name: x")
	for _, err := range []error{
		func() error { _, err := New("http://127.0.0.1:9/v1", "m"); return err }(),
		func() error { _, err := NewResponses("http://127.0.0.1:9/v1", "m"); return err }(),
	} {
		if want := `openai: new: OPENAI_CUSTOM_HEADERS, line 1: "Bad Name: x" is not a header`; err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("got %v, want %q", err, want)
		}
	}
}
