package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
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
	// client is a client of this API at url.
	client func(t *testing.T, url string, opts ...Option) agent.Model
	// doc is a reply of this API as one JSON document.
	doc string
}

// withUsage returns the endpoint's document with the usage given: input
// tokens, those of them cached, output tokens (JSON numbers).
func (ep endpoint) withUsage(t *testing.T, in, cached, out string) string {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal([]byte(ep.doc), &doc); err != nil {
		t.Fatal(err)
	}
	usage := `{"prompt_tokens":` + in + `,"completion_tokens":` + out + `,"prompt_tokens_details":{"cached_tokens":` + cached + `}}`
	if ep.name == "responses" {
		usage = `{"input_tokens":` + in + `,"output_tokens":` + out + `,"input_tokens_details":{"cached_tokens":` + cached + `}}`
	}
	doc["usage"] = json.RawMessage(usage)
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestUsageClamped: token counts the endpoint reports are read within
// [0, 2^40], cached ones within the input's, so the cost of a reply is
// never negative nor absurd.
func TestUsageClamped(t *testing.T) {
	for _, ep := range endpoints(t) {
		for _, tt := range []struct {
			name, in, cached, out string
			want                  agent.Usage
		}{
			{"negative", "-100", "-5", "-1000000", agent.Usage{}},
			{"cached past the input", "100", "5000", "7", agent.Usage{PromptTokens: 100, CachedTokens: 100, CompletionTokens: 7}},
			{"past int64", "9223372036854775807", "9223372036854775807", "9223372036854775807", agent.Usage{PromptTokens: 1 << 40, CachedTokens: 1 << 40, CompletionTokens: 1 << 40}},
		} {
			t.Run(ep.name+"/"+tt.name, func(t *testing.T) {
				m, _ := ep.start(t, []scripted.Reply{{RawType: "application/json", Raw: ep.withUsage(t, tt.in, tt.cached, tt.out)}})
				resp, err := m.Complete(context.Background(), agent.Request{Messages: hello})
				if err != nil {
					t.Fatal(err)
				}
				if resp.Usage != tt.want {
					t.Errorf("got %+v, want %+v", resp.Usage, tt.want)
				}
				cost := agent.DefaultPrices()["gpt-5"].Cost(resp.Usage)
				if cost < 0 || math.IsInf(cost, 0) || cost > 1e9 {
					t.Errorf("cost: got %v, want a finite figure, not negative", cost)
				}
			})
		}
	}
}

func endpoints(t *testing.T) []endpoint {
	fixture, err := os.ReadFile("testdata/response.json")
	if err != nil {
		t.Fatal(err)
	}
	return []endpoint{
		{"chat completions", func(t *testing.T, replies []scripted.Reply, opts ...Option) (agent.Model, func() int) {
			srv := scripted.New(t, replies...)
			return newChat(t, srv.URL, opts...), func() int { return len(srv.Requests()) }
		}, func(t *testing.T, url string, opts ...Option) agent.Model {
			return newChat(t, url, opts...)
		}, `{"id":"chatcmpl-9","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Checking what runs where before deploying."},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12}}`},
		{"responses", func(t *testing.T, replies []scripted.Reply, opts ...Option) (agent.Model, func() int) {
			srv := scripted.NewResponses(t, replies...)
			c := newResponses(t, srv.URL, opts...)
			return c, func() int { return len(srv.Bodies()) }
		}, func(t *testing.T, url string, opts ...Option) agent.Model {
			return newResponses(t, url, opts...)
		}, string(fixture)},
	}
}

func newChat(t *testing.T, url string, opts ...Option) *Client {
	t.Helper()
	c, err := New(url, "m", append([]Option{WithAPIKey("k"), WithBackoff(time.Millisecond, time.Millisecond)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
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
			t.Run("an event that never ends, not asked for again", func(t *testing.T) {
				flood := scripted.NewFlood(t, "event: x\n", "data: "+strings.Repeat("x", 1<<20)+"\n", 256<<20)
				m := ep.client(t, flood.URL)
				allocated, err := allocatedBy(func() error {
					_, err := m.Complete(context.Background(), agent.Request{Messages: hello})
					return err
				})
				if err == nil || !strings.Contains(err.Error(), "the streamed reply has an event over 16777216 bytes; stopped reading it") || flood.Requests() != 1 {
					t.Errorf("got %v after %d requests, want the bound named after one attempt", err, flood.Requests())
				}
				t.Logf("allocated %d MiB, %d MiB sent", allocated>>20, flood.Sent()>>20)
				// What was allocated bounds how much the heap grew.
				if allocated > 128<<20 {
					t.Errorf("allocated %d MiB reading a reply cut off at 16 MiB (%d MiB sent), want at most 128", allocated>>20, flood.Sent()>>20)
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
			for i, refusal := range []scripted.Reply{
				{Status: 400, Error: "stream is not supported by this server"},
				{Status: 422, Error: "Streaming is not supported for this model"},
				{Status: 400, RawType: "application/json", Raw: `{"error":{"message":"Unsupported value: 'stream' does not support true with this model. Only the default (false) value is supported.","type":"invalid_request_error","param":"stream","code":"unsupported_value"}}`},
				{Status: 400, RawType: "application/json", Raw: `{"error":{"message":"Your organization must be verified to stream this model.","type":"invalid_request_error","param":"stream","code":"unsupported_value"}}`},
				{Status: 400, Error: "Unrecognized request argument supplied: stream_options"},
			} {
				t.Run(fmt.Sprintf("refuses to stream %d", i), func(t *testing.T) {
					m, n := ep.start(t, []scripted.Reply{refusal, {Content: "first"}, {Content: "second"}})
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
			}
			// Errors that hold the letters but do not refuse streaming are
			// shown after one request.
			for _, other := range []string{
				"upstream provider error: prompt is too long: 210000 tokens > 200000 maximum",
				`body: {"model": "m", "stream": true}: messages: field required`,
			} {
				t.Run("not a refusal to stream: "+other[:20], func(t *testing.T) {
					m, n := ep.start(t, []scripted.Reply{{Status: 400, Error: other}, {Content: "not asked for"}})
					_, err := m.Complete(context.Background(), agent.Request{Messages: hello})
					if err == nil || !strings.Contains(err.Error(), other) || n() != 1 {
						t.Errorf("got %v after %d requests, want the error after 1", err, n())
					}
				})
			}
		})
	}
}

// allocatedBy returns how many bytes the program allocated while f ran,
// and f's error.
func allocatedBy(f func() error) (uint64, error) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	err := f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, err
}

// TestErrorBodyShapes: the message of an error status is shown whatever
// shape of JSON body it comes in, and a refusal for the request's size
// in vLLM's older shape, its members at the top level, is one.
func TestErrorBodyShapes(t *testing.T) {
	const vllmTooLong = "This model's maximum context length is 4096 tokens. However, your request has 5000 input tokens. Please reduce the length of the input messages."
	for _, ep := range endpoints(t) {
		for _, tt := range []struct {
			name, body string
			message    string // in the error
			want       error  // ErrContextWindow, ErrOutputLimit or nil
		}{
			{"vLLM, too long", `{"object":"error","message":"` + vllmTooLong + `","type":"BadRequestError","param":null,"code":400}`, "400 Bad Request: " + vllmTooLong, agent.ErrContextWindow},
			{"vLLM, the output limit", `{"object":"error","message":"This model's maximum context length is 8192 tokens. However, you requested 9000 tokens (1000 in the messages, 8000 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}`,
				"(1000 in the messages, 8000 in the completion)", agent.ErrOutputLimit},
			{"FastAPI", `{"detail":"Not authenticated"}`, "400 Bad Request: Not authenticated", nil},
			{"Gemini", `[{"error":{"code":400,"message":"Request contains an invalid argument.","status":"INVALID_ARGUMENT"}}]`, "400 Bad Request: Request contains an invalid argument.", nil},
			{"Ollama", `{"error":"model 'm' not found"}`, "400 Bad Request: model 'm' not found", nil},
			{"no message", `{"status":"failed","id":7}`, `400 Bad Request: {"status":"failed","id":7}`, nil},
		} {
			t.Run(ep.name+"/"+tt.name, func(t *testing.T) {
				m, n := ep.start(t, []scripted.Reply{{Status: 400, RawType: "application/json", Raw: tt.body}, {Content: "not asked for"}})
				_, err := m.Complete(context.Background(), agent.Request{Messages: hello})
				var se *StatusError
				if !errors.As(err, &se) || !strings.Contains(err.Error(), tt.message) || n() != 1 {
					t.Fatalf("got %v after %d requests, want a status error with %q after 1", err, n(), tt.message)
				}
				for _, sentinel := range []error{agent.ErrContextWindow, agent.ErrOutputLimit} {
					if got := errors.Is(err, sentinel); got != (sentinel == tt.want) {
						t.Errorf("errors.Is(%v, %v): got %v, want %v", err, sentinel, got, !got)
					}
				}
			})
		}
	}
}
