package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/agent"
)

// TestPostRetries: Post makes a request again after no reply or a status
// the APIs retry, waits what it announces (the server's Retry-After, up to
// MaxDelay), stops at MaxRetries with the last reply as a StatusError, and
// makes no retry a server says not to, or one whose wait would end past
// the deadline.
func TestPostRetries(t *testing.T) {
	type reply struct {
		status int
		header map[string]string
		body   string
	}
	ok := reply{200, map[string]string{"Content-Type": "application/json"}, `{"ok":true}`}
	limited := reply{429, map[string]string{"Retry-After": "0.02", "Content-Type": "application/json"}, `{"error":{"message":"slow down","type":"rate_limit_error","code":429}}`}
	for _, tt := range []struct {
		name     string
		replies  []reply // the last is repeated
		retries  int
		deadline time.Duration
		want     string // the error; "": ok
		attempts int
		waits    []time.Duration
		reasons  []string
	}{
		{"ok after two", []reply{limited, {503, nil, "busy"}, ok}, 4, 0, "", 3, []time.Duration{20 * time.Millisecond, 0}, []string{"429 rate limited", "503 unavailable"}},
		{"out of retries", []reply{limited}, 2, 0, "429 Too Many Requests: slow down", 3, []time.Duration{20 * time.Millisecond, 20 * time.Millisecond}, nil},
		{"told not to", []reply{{500, map[string]string{"X-Should-Retry": "false"}, `{"error":{"message":"no"}}`}}, 4, 0, "500 Internal Server Error: no", 1, nil, nil},
		{"not retried: 400", []reply{{400, nil, `{"error":{"message":"bad","code":"context_length_exceeded"}}`}}, 4, 0, "400 Bad Request: bad", 1, nil, nil},
		{"past the deadline", []reply{{429, map[string]string{"Retry-After": "30"}, "{}"}}, 4, 500 * time.Millisecond, "429 Too Many Requests: {}", 1, nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var n atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodPost || r.URL.Path != "/v1/chat" || r.Header.Get("X-Key") != "k" || r.Header.Get("Content-Type") != "application/json" {
					http.Error(w, "unexpected request", http.StatusTeapot)
					return
				}
				if b, _ := io.ReadAll(r.Body); string(b) != `{"q":1}` {
					http.Error(w, "body "+string(b), http.StatusTeapot)
					return
				}
				rp := tt.replies[min(int(n.Add(1))-1, len(tt.replies)-1)]
				for k, v := range rp.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(rp.status)
				io.WriteString(w, rp.body)
			}))
			defer srv.Close()
			var waits []time.Duration
			var reasons []string
			c := &Call{Policy: Policy{MaxRetries: tt.retries, BaseDelay: time.Millisecond, MaxDelay: time.Second},
				OnRetry: func(r agent.Retry) { waits, reasons = append(waits, r.Delay), append(reasons, r.Reason) }}
			ctx := context.Background()
			if tt.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.deadline)
				defer cancel()
			}
			res, err := Post(ctx, Endpoint{BaseURL: srv.URL + "/v1/", Header: http.Header{"X-Key": {"k"}}}, c, "/chat", []byte(`{"q":1}`))
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if string(b) != ok.body {
					t.Errorf("body: got %q", b)
				}
			} else if err == nil || err.Error() != tt.want {
				t.Errorf("got %v, want %q", err, tt.want)
			}
			if c.Attempts() != tt.attempts || int(n.Load()) != tt.attempts {
				t.Errorf("attempts: got %d (server saw %d), want %d", c.Attempts(), n.Load(), tt.attempts)
			}
			if len(waits) != len(tt.waits) {
				t.Fatalf("retries: got %v, want %v", waits, tt.waits)
			}
			for i, w := range tt.waits {
				if w != 0 && waits[i] != w || w == 0 && (waits[i] <= 0 || waits[i] > 4*time.Millisecond) {
					t.Errorf("wait %d: got %v, want %v (0: the backoff)", i, waits[i], w)
				}
			}
			if tt.reasons != nil && fmt.Sprint(reasons) != fmt.Sprint(tt.reasons) {
				t.Errorf("reasons: got %q, want %q", reasons, tt.reasons)
			}
			if tt.deadline > 0 && !strings.Contains(c.Last().notRetried(), "the server asks to wait 30s") {
				t.Errorf("not retried: got %q", c.Last().notRetried())
			}
		})
	}
}

// TestPostNoReply: a request that gets no reply is made again, and ends
// with the error of the last attempt; a context that ends in a wait ends
// the call at once.
func TestPostNoReply(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	url := srv.URL
	srv.Close() // nothing listens there now
	var retries int
	c := &Call{Policy: Policy{MaxRetries: 2, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond}, OnRetry: func(agent.Retry) { retries++ }}
	_, err := Post(context.Background(), Endpoint{BaseURL: url}, c, "x", nil)
	if err == nil || c.Attempts() != 3 || retries != 2 || c.Last().Status != 0 {
		t.Errorf("got %v after %d attempts, %d retries told; want no reply after 3", err, c.Attempts(), retries)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c = &Call{Policy: Policy{MaxRetries: 2, BaseDelay: time.Hour, MaxDelay: time.Hour}, OnRetry: func(agent.Retry) { cancel() }}
	if _, err := Post(ctx, Endpoint{BaseURL: url}, c, "x", nil); !errors.Is(err, context.Canceled) || c.Attempts() != 1 {
		t.Errorf("got %v after %d attempts, want the context's end after one", err, c.Attempts())
	}
}

// TestStatusErrorAPI reads the error object of OpenAI's APIs, the
// Messages API, and servers that give a number for a code, and the
// message of error bodies of other shapes: vLLM's, Ollama's, FastAPI's,
// Gemini's.
func TestStatusErrorAPI(t *testing.T) {
	for _, tt := range []struct {
		body string
		want APIError
		text string
	}{
		{`{"error":{"message":"too long","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`,
			APIError{"too long", "invalid_request_error", "context_length_exceeded", "messages"}, "400 Bad Request: too long"},
		{`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, APIError{Message: "Overloaded", Type: "overloaded_error"}, "400 Bad Request: Overloaded"},
		{`{"error":{"code":400,"message":"bad","type":"invalid_request_error"}}`, APIError{"bad", "invalid_request_error", "400", ""}, "400 Bad Request: bad"},
		{`{"object":"error","message":"This model's maximum context length is 4096 tokens. However, your request has 5000 input tokens.","type":"BadRequestError","param":null,"code":400}`,
			APIError{"This model's maximum context length is 4096 tokens. However, your request has 5000 input tokens.", "BadRequestError", "400", ""}, "400 Bad Request: This model's maximum context length is 4096 tokens. However, your request has 5000 input tokens."},
		{`{"error":"model 'm' not found"}`, APIError{Message: "model 'm' not found"}, "400 Bad Request: model 'm' not found"},
		{`{"detail":"Not authenticated"}`, APIError{Message: "Not authenticated"}, "400 Bad Request: Not authenticated"},
		{`{"detail":[{"loc":["body","model"],"msg":"Field required","type":"missing"}]}`, APIError{Message: "Field required"}, "400 Bad Request: Field required"},
		{`[{"error":{"code":400,"message":"Request contains an invalid argument.","status":"INVALID_ARGUMENT"}}]`, APIError{Message: "Request contains an invalid argument.", Code: "400"}, "400 Bad Request: Request contains an invalid argument."},
		{`{"status":"failed"}`, APIError{}, `400 Bad Request: {"status":"failed"}`},
		{`[]`, APIError{}, "400 Bad Request: []"},
		{`<html>oops</html>`, APIError{}, "400 Bad Request: <html>oops</html>"},
		{``, APIError{}, "400 Bad Request: (no message)"},
	} {
		e := &StatusError{StatusCode: 400, Body: []byte(tt.body)}
		if got := e.API(); got != tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.body, got, tt.want)
		}
		if got := e.Error(); got != tt.text {
			t.Errorf("%s: got %q, want %q", tt.body, got, tt.text)
		}
	}
}

// TestEvents reads events whatever their line endings, comments, fields
// it does not know, data over several lines, reads cut anywhere, a stream
// that ends without the last blank line, and one that begins with a byte
// order mark.
func TestEvents(t *testing.T) {
	stream := ": hello\n\nevent: a\ndata: 1\nid: 7\n\ndata: x\ndata:y\n\nevent: b\r\ndata: {\"z\": 2}\r\n\r\nevent: c\rdata: \r\rdata: last"
	want := "a=1|=x\ny|b={\"z\": 2}|c=|"
	for _, ending := range []string{"", "\n", "\r"} {
		for step := 1; step <= len(stream)+1; step++ {
			e := NewEvents(&chunks{s: stream + ending, step: step})
			var got strings.Builder
			for {
				name, data, err := e.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&got, "%s=%s|", name, data)
			}
			w := want
			if ending != "" {
				w += "=last|"
			}
			if got.String() != w {
				t.Fatalf("ending %q, reads of %d: got %q, want %q", ending, step, got.String(), w)
			}
		}
	}
	// A byte order mark the stream begins with is not part of the first
	// field's name.
	bommed := "\ufeffdata: 1\n\ndata: 2\n\n"
	for step := 1; step <= len(bommed); step++ {
		e := NewEvents(&chunks{s: bommed, step: step})
		var got strings.Builder
		for {
			name, data, err := e.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&got, "%s=%s|", name, data)
		}
		if got.String() != "=1|=2|" {
			t.Fatalf("a stream that begins with a byte order mark, reads of %d: got %q, want %q", step, got.String(), "=1|=2|")
		}
	}
	e := NewEvents(strings.NewReader("data: " + strings.Repeat("x", MaxEventBytes)))
	if _, _, err := e.Next(); err == nil || !strings.Contains(err.Error(), "an event over") {
		t.Errorf("a long event: got %v", err)
	}
}

// chunks reads s step bytes at a time.
type chunks struct {
	s    string
	step int
}

func (c *chunks) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	n := copy(p, c.s[:min(c.step, len(c.s))])
	c.s = c.s[n:]
	return n, nil
}

// TestPostRedirects: a redirect to another origin is not followed (the
// request holds the conversation and the key) and the error says where
// it led; one within the endpoint's origin is followed with the body.
func TestPostRedirects(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		io.WriteString(w, "{}")
	}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away/chat":
			http.Redirect(w, r, other.URL+"/v1/chat", http.StatusTemporaryRedirect)
		case "/moved/chat":
			http.Redirect(w, r, "/v1/chat", http.StatusPermanentRedirect)
		case "/v1/chat":
			b, _ := io.ReadAll(r.Body)
			w.Write(b)
		}
	}))
	defer srv.Close()
	ep := Endpoint{BaseURL: srv.URL, Header: http.Header{"Authorization": {"Bearer secret"}}}
	_, err := Post(context.Background(), ep, &Call{}, "away/chat", []byte(`{"q":1}`))
	if err == nil || !strings.Contains(err.Error(), "redirects the request to "+other.URL+", another origin") || elsewhere.Load() != 0 {
		t.Errorf("a redirect elsewhere: got %v, %d requests there; want it refused, none sent", err, elsewhere.Load())
	}
	res, err := Post(context.Background(), ep, &Call{}, "moved/chat", []byte(`{"q":1}`))
	if err != nil {
		t.Fatalf("a redirect within the endpoint: %v", err)
	}
	defer res.Body.Close()
	if b, _ := io.ReadAll(res.Body); string(b) != `{"q":1}` {
		t.Errorf("a redirect within the endpoint: got %q, want the body sent again", b)
	}
}

// TestPostRetryAfterStalledBody: a reply retried whose body stalls does
// not hold the retry: the next attempt is made, not read on.
func TestPostRetryAfterStalledBody(t *testing.T) {
	var n atomic.Int32
	release := make(chan struct{})
	defer close(release)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			w.Header().Set("Content-Length", "100000")
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, "busy, and then nothing")
			w.(http.Flusher).Flush()
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		io.WriteString(w, `{"ok":true}`)
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := &Call{Policy: Policy{MaxRetries: 1, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond}}
	res, err := Post(ctx, Endpoint{BaseURL: srv.URL}, c, "x", nil)
	if err != nil {
		t.Fatalf("got %v after %d attempts, want the second attempt's reply", err, c.Attempts())
	}
	res.Body.Close()
}

// TestPostNoReplyDeadline: with no reply, a retry whose wait would end
// past the deadline is not made either: the call fails at once with the
// reason, not later with the deadline.
func TestPostNoReplyDeadline(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	url := srv.URL
	srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := &Call{Policy: Policy{MaxRetries: 3, BaseDelay: time.Hour, MaxDelay: time.Hour}}
	_, err := Post(ctx, Endpoint{BaseURL: url}, c, "x", nil)
	if err == nil || errors.Is(err, context.DeadlineExceeded) || c.Attempts() != 1 {
		t.Fatalf("got %v after %d attempts, want the connection's error after one", err, c.Attempts())
	}
	msg := Failure(ctx, "test", url, time.Minute, c, err).Error()
	if !strings.Contains(msg, "cannot reach") || !strings.Contains(msg, "(not retried: the next try would be in") {
		t.Errorf("got %q, want it to say why it was not retried", msg)
	}
}

// TestPostRedirectErrors: a 3xx that comes back says what it is: a
// redirect within the endpoint that the client's own CheckRedirect
// stopped names the address, not another origin; a 3xx without Location
// and a 304 say they lead nowhere.
func TestPostRedirectErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/moved/chat":
			http.Redirect(w, r, "/v1/chat", http.StatusFound)
		case "/nowhere/chat":
			w.WriteHeader(http.StatusFound)
		case "/same/chat":
			w.WriteHeader(http.StatusNotModified)
		}
	}))
	defer srv.Close()
	stop := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tt := range []struct {
		path string
		want string
	}{
		{"moved/chat", "the endpoint answered 302 Found, a redirect to " + srv.URL + "/v1/chat that the HTTP client's CheckRedirect did not follow"},
		{"nowhere/chat", "the endpoint answered 302 Found, which leads to no other address"},
		{"same/chat", "the endpoint answered 304 Not Modified, which leads to no other address"},
	} {
		_, err := Post(context.Background(), Endpoint{BaseURL: srv.URL, Client: stop}, &Call{}, tt.path, []byte(`{}`))
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) || strings.Contains(err.Error(), "another origin") {
			t.Errorf("%s: got %v, want %q", tt.path, err, tt.want)
		}
	}
}
