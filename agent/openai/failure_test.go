package openai

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/agent/internal/scripted"
	"github.com/unfold-dev/unfold/agent/internal/transport"
)

// endpoint is a scripted server of one API and a client of it.
type endpoint struct {
	name  string
	start func(t *testing.T, replies []scripted.Reply, opts ...Option) (agent.Model, func() int)
	// doc is a reply of this API as one JSON document.
	doc string
}

func endpoints(t *testing.T) []endpoint {
	fixture, err := os.ReadFile("testdata/response.json")
	if err != nil {
		t.Fatal(err)
	}
	return []endpoint{
		{"chat completions", func(t *testing.T, replies []scripted.Reply, opts ...Option) (agent.Model, func() int) {
			srv := scripted.New(t, replies...)
			c, err := New(srv.URL, "m", append([]Option{WithAPIKey("k"), WithBackoff(time.Millisecond, time.Millisecond)}, opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			return c, func() int { return len(srv.Requests()) }
		}, `{"id":"chatcmpl-9","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Checking what runs where before deploying."},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12}}`},
		{"responses", func(t *testing.T, replies []scripted.Reply, opts ...Option) (agent.Model, func() int) {
			srv := scripted.NewResponses(t, replies...)
			c := newResponses(t, srv.URL, opts...)
			return c, func() int { return len(srv.Bodies()) }
		}, string(fixture)},
	}
}

var hello = []agent.Message{{Role: agent.RoleSystem, Content: "sys"}, {Role: agent.RoleUser, Content: "hi"}}

// TestFailures: an endpoint that rate-limits, answers HTML, stalls,
// answers a streaming request with one document, or refuses to stream.
func TestFailures(t *testing.T) {
	for _, ep := range endpoints(t) {
		t.Run(ep.name, func(t *testing.T) {
			t.Run("rate limited, each retry told", func(t *testing.T) {
				m, n := ep.start(t, []scripted.Reply{
					{Status: 429, Error: "slow down", RetryAfter: "0.01"},
					{Status: 503, Error: "busy", RetryAfter: "0.02"},
					{Content: "Checking what runs where before deploying."},
				}, WithBackoff(time.Millisecond, time.Second))
				var retries []agent.Retry
				resp, err := m.Complete(context.Background(), agent.Request{Messages: hello, OnRetry: func(r agent.Retry) { retries = append(retries, r) }})
				if err != nil || resp.Message.Content != "Checking what runs where before deploying." || n() != 3 {
					t.Fatalf("got %+v, %v after %d requests", resp, err, n())
				}
				want := []agent.Retry{{Attempt: 1, Delay: 10 * time.Millisecond, Reason: "429 rate limited"}, {Attempt: 2, Delay: 20 * time.Millisecond, Reason: "503 unavailable"}}
				if len(retries) != 2 || retries[0] != want[0] || retries[1] != want[1] {
					t.Errorf("retries: got %+v, want %+v", retries, want)
				}
			})
			t.Run("HTML", func(t *testing.T) {
				m, n := ep.start(t, []scripted.Reply{{RawType: "text/html; charset=utf-8", Raw: "<!DOCTYPE html><html><body>Welcome to nginx!</body></html>"}})
				_, err := m.Complete(context.Background(), agent.Request{Messages: hello})
				if err == nil || !strings.Contains(err.Error(), `answered 200 text/html; charset=utf-8: "<!DOCTYPE html><html><body>Welcome to nginx!`) || strings.Contains(err.Error(), "cannot reach") || n() != 1 {
					t.Errorf("got %v after %d requests, want the status, content type and first bytes named", err, n())
				}
			})
			t.Run("HTML error page", func(t *testing.T) {
				m, _ := ep.start(t, []scripted.Reply{{Status: 404, RawType: "text/html", Raw: "<html><h1>Not Found</h1></html>"}})
				_, err := m.Complete(context.Background(), agent.Request{Messages: hello})
				var se *StatusError
				if !errors.As(err, &se) || se.StatusCode != 404 || !strings.Contains(err.Error(), `404 text/html: "<html><h1>Not Found</h1></html>"`) {
					t.Errorf("got %v, want a 404 naming the HTML it got", err)
				}
			})
			t.Run("stalls", func(t *testing.T) {
				m, _ := ep.start(t, []scripted.Reply{{Stall: true}}, WithTimeout(100*time.Millisecond), WithMaxRetries(0))
				_, err := m.Complete(context.Background(), agent.Request{Messages: hello})
				if err == nil || !strings.Contains(err.Error(), "no complete reply from") || !strings.Contains(err.Error(), "within 100ms (the request timeout)") {
					t.Errorf("got %v, want the timeout named", err)
				}
			})
			t.Run("stalls, not tried again", func(t *testing.T) {
				m, n := ep.start(t, []scripted.Reply{{Stall: true}, {Content: "too late"}}, WithTimeout(100*time.Millisecond))
				var retries []agent.Retry
				_, err := m.Complete(context.Background(), agent.Request{Messages: hello, OnRetry: func(r agent.Retry) { retries = append(retries, r) }})
				if err == nil || !strings.Contains(err.Error(), "within 100ms (the request timeout)") || n() != 1 || len(retries) != 0 {
					t.Errorf("got %v after %d requests and retries %+v, want the timeout named after one attempt", err, n(), retries)
				}
			})
			t.Run("a document over 8 MiB, not asked for again", func(t *testing.T) {
				big := `{"pad":"` + strings.Repeat("x", transport.MaxBodyBytes) + `"}`
				m, n := ep.start(t, []scripted.Reply{{RawType: "application/json", Raw: big}, {Content: "again"}})
				_, err := m.Complete(context.Background(), agent.Request{Messages: hello})
				if err == nil || !strings.Contains(err.Error(), "the reply is over 8388608 bytes") || n() != 1 {
					t.Errorf("got %v after %d requests, want the size named after one attempt", err, n())
				}
			})
			t.Run("one document for a stream", func(t *testing.T) {
				m, _ := ep.start(t, []scripted.Reply{{RawType: "application/json", Raw: ep.doc}})
				var streamed strings.Builder
				resp, err := m.Complete(context.Background(), agent.Request{Messages: hello, OnDelta: func(d agent.Delta) { streamed.WriteString(d.Content) }})
				if err != nil || resp.Message.Content != "Checking what runs where before deploying." || streamed.String() != resp.Message.Content {
					t.Errorf("got %+v, %v, streamed %q", resp.Message, err, streamed.String())
				}
			})
			t.Run("refuses to stream", func(t *testing.T) {
				m, n := ep.start(t, []scripted.Reply{
					{Status: 400, Error: "stream is not supported by this server"},
					{Content: "first"},
					{Content: "second"},
				})
				msgs := hello
				for _, want := range []string{"first", "second"} {
					resp, err := m.Complete(context.Background(), agent.Request{Messages: msgs})
					if err != nil || resp.Message.Content != want {
						t.Fatalf("got %+v, %v, want %q", resp.Message, err, want)
					}
					msgs = append(msgs, resp.Message, agent.Message{Role: agent.RoleUser, Content: "more"})
				}
				if n() != 3 {
					t.Errorf("requests: got %d, want 3 (one refused, then two without streaming)", n())
				}
			})
		})
	}
}
