package anthropic

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/agent/internal/scripted"
)

// TestSameAsWholeClient sends a request through the client New makes and
// through one made on the SDK's whole client (sdk.NewClient given the same
// options), with and without settings and credentials in the
// environment: every request is the same, header for header and byte for
// byte; the key given is sent, alone, and the headers
// ANTHROPIC_CUSTOM_HEADERS names go with it. sdk.NewClient links into the
// tests only.
func TestSameAsWholeClient(t *testing.T) {
	for _, tt := range []struct {
		name string
		env  map[string]string
		want map[string]string // headers of the request
	}{
		{"no environment", nil, map[string]string{"Authorization": "Bearer k", "X-Team": ""}},
		{"environment", map[string]string{
			"ANTHROPIC_API_KEY": "env-key", "ANTHROPIC_AUTH_TOKEN": "env-token", "ANTHROPIC_PROFILE": "missing",
			"ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "ANTHROPIC_CUSTOM_HEADERS": "X-Team: blue\nX-Cost-Center:42",
		}, map[string]string{"Authorization": "Bearer k", "X-Api-Key": "", "X-Team": "blue", "X-Cost-Center": "42"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			srv := scripted.Refuse(t, `{"type":"error","error":{"type":"invalid_request_error","message":"stop here"}}`)
			ours := newClient(t, srv.URL, WithTimeout(time.Minute))
			whole := newClient(t, srv.URL, WithTimeout(time.Minute))
			whole.messages = sdk.NewClient(whole.opts.own()...).Messages
			req := agent.Request{Messages: hello, Tools: []agent.ToolDef{{Name: "read", Description: "Read.", Parameters: []byte(`{"type":"object"}`)}}}
			_, errOurs := ours.Complete(context.Background(), req)
			sentOurs := srv.Sent()
			_, errWhole := whole.Complete(context.Background(), req)
			sentWhole := srv.Sent()
			if len(sentOurs) == 0 || !reflect.DeepEqual(sentOurs, sentWhole) {
				t.Fatalf("the requests differ:\nours  %+v\nwhole %+v", sentOurs, sentWhole)
			}
			h := sentOurs[0].Header
			for k, v := range tt.want {
				if got := h.Get(k); got != v {
					t.Errorf("header %s: got %q, want %q", k, got, v)
				}
			}
			for k, values := range h {
				if strings.Contains(strings.Join(values, " "), "env-") {
					t.Errorf("header %s: got a credential of the environment", k)
				}
			}
			if h.Get("Anthropic-Version") == "" {
				t.Errorf("no anthropic-version header: got %v", h)
			}
			if errOurs == nil || errWhole == nil || errOurs.Error() != errWhole.Error() {
				t.Errorf("got errors %v and %v, want the same refusal", errOurs, errWhole)
			}
		})
	}
}
