package transport

import (
	"net/http"
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
