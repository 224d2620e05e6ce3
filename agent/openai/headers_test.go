package openai

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/agent/internal/scripted"
	"github.com/unfold-dev/unfold/agent/internal/transport"
)

// TestHeadersAndEnvironment sends each API's request with and without
// settings in the environment: the key given is sent, never the
// environment's, and without one no Authorization; the endpoint given is
// used, never OPENAI_BASE_URL; OPENAI_ORG_ID, OPENAI_PROJECT_ID and
// OPENAI_CUSTOM_HEADERS go along, the custom headers over the others but
// the key; no SDK telemetry is sent.
func TestHeadersAndEnvironment(t *testing.T) {
	for _, tt := range []struct {
		name string
		key  string
		env  map[string]string
		want map[string]string // headers of the requests; "" for none
	}{
		{"no environment", "k", nil, map[string]string{
			"Authorization": "Bearer k", "OpenAI-Organization": "", "OpenAI-Project": "",
			"Content-Type": "application/json", "Accept": "application/json", "User-Agent": transport.UserAgent(),
		}},
		{"environment", "k", map[string]string{
			"OPENAI_API_KEY": "env-key", "OPENAI_ORG_ID": "org-env", "OPENAI_PROJECT_ID": "proj-env",
			"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_CUSTOM_HEADERS": "X-Team: blue\nUser-Agent: custom\nAuthorization: Basic eA==\nOpenAI-Project: proj-custom",
		}, map[string]string{"Authorization": "Bearer k", "OpenAI-Organization": "org-env", "OpenAI-Project": "proj-custom", "X-Team": "blue", "User-Agent": "custom"}},
		{"no key", "", map[string]string{"OPENAI_API_KEY": "env-key"}, map[string]string{"Authorization": ""}},
		{"no key, custom authorization", "", map[string]string{"OPENAI_API_KEY": "env-key", "OPENAI_CUSTOM_HEADERS": "Authorization: Basic eA=="},
			map[string]string{"Authorization": "Basic eA=="}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range openAIEnv {
				t.Setenv(k, "")
			}
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			for _, k := range openAIEnv {
				if _, ok := tt.env[k]; !ok {
					unsetenv(t, k)
				}
			}
			srv := scripted.Refuse(t, `{"error":{"message":"stop here","type":"invalid_request_error"}}`)
			opts := []Option{WithAPIKey(tt.key), WithBackoff(time.Millisecond, time.Millisecond), WithTimeout(time.Minute)}
			chat, err := New(srv.URL+"/v1", "m", opts...)
			if err != nil {
				t.Fatal(err)
			}
			responses, err := NewResponses(srv.URL+"/v1", "m", opts...)
			if err != nil {
				t.Fatal(err)
			}
			req := agent.Request{Messages: []agent.Message{{Role: agent.RoleSystem, Content: "sys"}, {Role: agent.RoleUser, Content: "hi"}}}
			for _, api := range []struct {
				name, path string
				m          agent.Model
			}{{"chat", "/v1/chat/completions", chat}, {"responses", "/v1/responses", responses}} {
				if _, err := api.m.Complete(context.Background(), req); err == nil || !strings.Contains(err.Error(), "stop here") {
					t.Errorf("%s: got %v, want the refusal", api.name, err)
				}
				sent := srv.Sent()
				if len(sent) != 1 || sent[0].Method != http.MethodPost || sent[0].Path != api.path {
					t.Fatalf("%s: got %+v, want one POST to %s", api.name, sent, api.path)
				}
				checkHeaders(t, api.name, sent[0].Header, tt.want)
			}
		})
	}
}

// unsetenv unsets k for the rest of t; t.Setenv restores it.
func unsetenv(t *testing.T, k string) {
	t.Helper()
	t.Setenv(k, "")
	if err := os.Unsetenv(k); err != nil {
		t.Fatal(err)
	}
}

// checkHeaders checks the headers of want ("" for a header not sent), that
// no header carries the environment's key and that no SDK telemetry
// (X-Stainless-*) is sent.
func checkHeaders(t *testing.T, name string, h http.Header, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got := strings.Join(h.Values(k), ", "); got != v {
			t.Errorf("%s: header %s: got %q, want %q", name, k, got, v)
		}
	}
	for k, values := range h {
		if strings.Contains(strings.Join(values, " "), "env-key") {
			t.Errorf("%s: header %s: got the environment's key", name, k)
		}
		if strings.HasPrefix(strings.ToLower(k), "x-stainless") {
			t.Errorf("%s: header %s: got the SDK's telemetry", name, k)
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
