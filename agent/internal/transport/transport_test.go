package transport

import (
	"fmt"
	"net/http"
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
