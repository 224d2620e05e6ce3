package openai

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	sdk "github.com/openai/openai-go/v3"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/agent/internal/scripted"
)

// TestSameAsWholeClient sends each API's request through the client New
// (or NewResponses) makes and through one made on the SDK's whole client
// (sdk.NewClient given the same options), with and without settings in
// the environment: every request is the same, header for header and byte
// for byte; the key given is sent, never the environment's, and the
// environment's other settings go along. sdk.NewClient links into the
// tests only.
func TestSameAsWholeClient(t *testing.T) {
	for _, tt := range []struct {
		name string
		env  map[string]string
		want map[string]string // headers of the requests
	}{
		{"no environment", nil, map[string]string{"Authorization": "Bearer k", "Openai-Organization": ""}},
		{"environment", map[string]string{
			"OPENAI_API_KEY": "env-key", "OPENAI_ORG_ID": "org-env", "OPENAI_PROJECT_ID": "proj-env",
			"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_CUSTOM_HEADERS": "X-Team: blue\nUser-Agent: custom",
		}, map[string]string{"Authorization": "Bearer k", "Openai-Organization": "org-env", "Openai-Project": "proj-env", "X-Team": "blue"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			srv := scripted.Refuse(t, `{"error":{"message":"stop here","type":"invalid_request_error"}}`)
			opts := []Option{WithAPIKey("k"), WithBackoff(time.Millisecond, time.Millisecond), WithTimeout(time.Minute)}
			chat, err := New(srv.URL, "m", opts...)
			if err != nil {
				t.Fatal(err)
			}
			wholeChat, _ := New(srv.URL, "m", opts...)
			wholeChat.chat = sdk.NewClient(wholeChat.opts.own()...).Chat
			responses, err := NewResponses(srv.URL, "m", opts...)
			if err != nil {
				t.Fatal(err)
			}
			wholeResponses, _ := NewResponses(srv.URL, "m", opts...)
			wholeResponses.api = sdk.NewClient(wholeResponses.opts.own()...).Responses
			req := agent.Request{
				Messages: []agent.Message{{Role: agent.RoleSystem, Content: "sys"}, {Role: agent.RoleUser, Content: "hi"}},
				Tools:    []agent.ToolDef{{Name: "read", Description: "Read.", Parameters: []byte(`{"type":"object"}`)}},
			}
			for _, pair := range []struct {
				name       string
				ours, them agent.Model
			}{{"chat", chat, wholeChat}, {"responses", responses, wholeResponses}} {
				_, errOurs := pair.ours.Complete(context.Background(), req)
				ours := srv.Sent()
				_, errThem := pair.them.Complete(context.Background(), req)
				them := srv.Sent()
				if len(ours) == 0 || !reflect.DeepEqual(ours, them) {
					t.Fatalf("%s: the requests differ:\nours  %+v\nwhole %+v", pair.name, ours, them)
				}
				checkHeaders(t, pair.name, ours[0].Header, tt.want)
				if errOurs == nil || errThem == nil || errOurs.Error() != errThem.Error() {
					t.Errorf("%s: got errors %v and %v, want the same refusal", pair.name, errOurs, errThem)
				}
			}
		})
	}
}

// checkHeaders checks the headers of want, and that no header carries the
// environment's key.
func checkHeaders(t *testing.T, name string, h http.Header, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got := h.Get(k); got != v {
			t.Errorf("%s: header %s: got %q, want %q", name, k, got, v)
		}
	}
	for k, values := range h {
		if strings.Contains(strings.Join(values, " "), "env-key") {
			t.Errorf("%s: header %s: got the environment's key", name, k)
		}
	}
}
