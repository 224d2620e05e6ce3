package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestDelay(t *testing.T) {
	c := &Call{Policy: Policy{BaseDelay: 100 * time.Millisecond, MaxDelay: 10 * time.Second}}
	tests := []struct {
		name   string
		header http.Header
		want   time.Duration
	}{
		{"seconds", http.Header{"Retry-After": {"2"}}, 2 * time.Second},
		{"fraction", http.Header{"Retry-After": {"0.25"}}, 250 * time.Millisecond},
		{"milliseconds win", http.Header{"Retry-After-Ms": {"125"}, "Retry-After": {"3"}}, 125 * time.Millisecond},
		{"capped", http.Header{"Retry-After": {"3600"}}, 10 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := c.delay(1, &http.Response{Header: tt.header}); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
	t.Run("backoff without header", func(t *testing.T) {
		for attempt, hi := range map[int]time.Duration{1: 100 * time.Millisecond, 3: 400 * time.Millisecond, 20: 10 * time.Second} {
			if got := c.delay(attempt, &http.Response{Header: http.Header{}}); got < hi/2 || got > hi {
				t.Errorf("attempt %d: got %v, want between %v and %v", attempt, got, hi/2, hi)
			}
		}
	})
}

func TestDescribe(t *testing.T) {
	tests := []struct {
		r    Reply
		want string
	}{
		{Reply{Status: 200, ContentType: "text/html", Head: []byte("<html>")}, `200 text/html: "<html>"`},
		{Reply{Status: 502}, "502 no content type, empty body"},
		{Reply{Status: 200, ContentType: "application/octet-stream", Head: []byte{0xff, 'a'}}, `200 application/octet-stream: "?a"`},
	}
	for _, tt := range tests {
		if got := tt.r.Describe(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}

// TestCustomHeaders reads a custom-headers variable as the SDKs do: lines
// without a colon are passed over, and a header the HTTP client would
// refuse is reported with its line.
func TestCustomHeaders(t *testing.T) {
	for _, tt := range []struct {
		value, want string
		headers     [][2]string
	}{
		{"", "", nil},
		{"X-Team: blue\nX-Cost-Center:42\r\n", "", [][2]string{{"X-Team", "blue"}, {"X-Cost-Center", "42"}}},
		{"just a note\n", "", nil},
		{"X-Team: blue\n:x", `TEST_HEADERS, line 2: ":x" is not a header: write one "Name: value" a line`, nil},
		{"Bad Name: x", `TEST_HEADERS, line 1: "Bad Name: x" is not a header`, nil},
		{"X-Ok: a\x01b", `TEST_HEADERS, line 1: "X-Ok: a\x01b" is not a header`, nil},
	} {
		t.Setenv("TEST_HEADERS", tt.value)
		headers, err := CustomHeaders("TEST_HEADERS")
		if got := fmt.Sprint(err); tt.want == "" && err != nil || tt.want != "" && !strings.HasPrefix(got, tt.want) {
			t.Errorf("%q: got %v, want %q", tt.value, err, tt.want)
		}
		if !slices.Equal(headers, tt.headers) {
			t.Errorf("%q: got headers %v, want %v", tt.value, headers, tt.headers)
		}
	}
}

// readThrough reads a body from url through Post and returns how many
// bytes it read and the read's error: the body of a 2xx reply, else the
// one an error status came with. stream: the request asks for a stream.
func readThrough(t *testing.T, url string, stream bool) (int64, error, *Call) {
	t.Helper()
	c := &Call{Stream: stream}
	res, err := Post(context.Background(), Endpoint{BaseURL: url}, c, "", nil)
	if se := (*StatusError)(nil); errors.As(err, &se) {
		return int64(len(se.Body)), c.BodyErr(), c
	}
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	n, err := io.Copy(io.Discard, res.Body)
	return n, err, c
}

// serve starts a server that answers with contentType and status, then
// body written again and again until total bytes are sent or the client
// goes away.
func serve(t *testing.T, contentType string, status int, body string, total int) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		for sent := 0; sent < total; sent += len(body) {
			if _, err := io.WriteString(w, body); err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestBodyBounds: a streamed reply is read up to the end of an event over
// MaxEventBytes or of a stream over MaxStreamBytes, a body read whole up
// to MaxBodyBytes (an event stream too, when it comes with an error status
// or to a request that did not stream); the read that passes the bound
// fails with the Call's BodyErr. Events within the bounds, whatever their
// line endings, are read whole.
func TestBodyBounds(t *testing.T) {
	mib := strings.Repeat("x", 1<<20)
	for _, tt := range []struct {
		name, contentType string
		status            int
		body              string
		total             int
		want              string // "": read whole
		limit             int64  // bytes read at most
		plain             bool   // the request does not ask for a stream
	}{
		{"an event that never ends", "text/event-stream", 200, "data: " + mib + "\n", 64 << 20,
			"the streamed reply has an event over 16777216 bytes; stopped reading it", MaxEventBytes + 64<<10, false},
		{"an event that never ends, lines ended by \\r\\n", "text/event-stream", 200, "data: " + mib + "\r\n", 64 << 20,
			"the streamed reply has an event over 16777216 bytes; stopped reading it", MaxEventBytes + 64<<10, false},
		{"a line that never ends", "text/event-stream; charset=utf-8", 200, mib, 64 << 20,
			"the streamed reply has an event over 16777216 bytes", MaxEventBytes + 64<<10, false},
		{"a stream that never ends", "text/event-stream", 200, "event: ping\ndata: " + mib[:64<<10] + "\n\n", MaxStreamBytes + 1<<20,
			"the streamed reply is over 134217728 bytes; stopped reading it", MaxStreamBytes + 64<<10, false},
		{"an error page", "text/html", 500, mib, 64 << 20,
			"the reply is over 8388608 bytes; stopped reading it", MaxBodyBytes + 64<<10, false},
		{"an error status with a stream that never ends", "text/event-stream", 500, "data: {}\n\n", 64 << 20,
			"the reply is over 8388608 bytes; stopped reading it", MaxBodyBytes + 64<<10, false},
		{"a stream that never ends, not asked for", "text/event-stream", 200, "data: {}\n\n", 64 << 20,
			"the reply is over 8388608 bytes; stopped reading it", MaxBodyBytes + 64<<10, true},
		{"events of 12 MiB, lines ended by \\n", "text/event-stream", 200, strings.Repeat("data: "+mib+"\n", 12) + "\n", 48 << 20, "", 48 << 20, false},
		{"events of 12 MiB, lines ended by \\r\\n", "text/event-stream", 200, strings.Repeat("data: "+mib+"\r\n", 12) + "\r\n", 48 << 20, "", 48 << 20, false},
		{"events of 12 MiB, lines ended by \\r", "text/event-stream", 200, strings.Repeat("data: "+mib+"\r", 12) + "\r", 48 << 20, "", 48 << 20, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n, err, c := readThrough(t, serve(t, tt.contentType, tt.status, tt.body, tt.total), !tt.plain)
			if tt.want == "" {
				if err != nil || n < int64(tt.total) || c.BodyErr() != nil {
					t.Errorf("got %d bytes, %v, body error %v; want %d bytes read whole", n, err, c.BodyErr(), tt.total)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) || !errors.Is(c.BodyErr(), err) {
				t.Errorf("got %v, body error %v; want %q", err, c.BodyErr(), tt.want)
			}
			if n > tt.limit {
				t.Errorf("read %d bytes, want at most %d", n, tt.limit)
			}
		})
	}
}

// TestTokens: a token count an endpoint reports is read within
// [0, MaxTokens].
func TestTokens(t *testing.T) {
	for _, tt := range []struct {
		in   float64
		want int
	}{
		{0, 0}, {1234, 1234}, {-1, 0}, {-1e6, 0}, {MaxTokens, MaxTokens},
		{math.MaxInt64, MaxTokens}, {1e30, MaxTokens}, {math.Inf(1), MaxTokens}, {math.Inf(-1), 0},
	} {
		if got := Tokens(tt.in); got != tt.want {
			t.Errorf("Tokens(%g): got %d, want %d", tt.in, got, tt.want)
		}
	}
}

// TestOneErrorPerBound: each bound fails with one error value, whichever
// reader passed it, so that callers can tell it with errors.Is: a reply
// over MaxBodyBytes (a document answering a streaming request, read whole
// by Post, or a body read as it streams) is ErrOverBody, an event over
// MaxEventBytes (in a bounded body or read by Events) errOverEvent.
func TestOneErrorPerBound(t *testing.T) {
	mib := strings.Repeat("x", 1<<20)
	_, _, c := readThrough(t, serve(t, "application/json", 200, mib, 16<<20), true)
	if !errors.Is(c.BodyErr(), ErrOverBody) {
		t.Errorf("a document over MaxBodyBytes answering a streaming request: got %v, want ErrOverBody", c.BodyErr())
	}
	if _, err, _ := readThrough(t, serve(t, "application/json", 200, mib, 16<<20), false); !errors.Is(err, ErrOverBody) {
		t.Errorf("a body over MaxBodyBytes: got %v, want ErrOverBody", err)
	}
	r := io.MultiReader(strings.NewReader("data: "), io.LimitReader(neverEnding('x'), MaxEventBytes+1))
	if _, _, err := NewEvents(r).Next(); !errors.Is(err, errOverEvent) {
		t.Errorf("Events reading an event over MaxEventBytes: got %v, want errOverEvent", err)
	}
}

// neverEnding is a reader of one byte, again and again.
type neverEnding byte

func (b neverEnding) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}
