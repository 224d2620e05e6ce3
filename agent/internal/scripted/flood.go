package scripted

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// Flood is a server that answers every request with an event stream that
// goes on and on: its first bytes, then one line again and again.
type Flood struct {
	URL      string
	requests atomic.Int64
	sent     atomic.Int64
}

// NewFlood starts a Flood that sends first, then line until it has sent
// total bytes or the client goes away. A line without a blank line after
// it is an event that never ends.
func NewFlood(t testing.TB, first, line string, total int64) *Flood {
	f := &Flood{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		n, err := io.WriteString(w, first)
		f.sent.Add(int64(n))
		for b := []byte(line); err == nil && f.sent.Load() < total; {
			n, err = w.Write(b)
			f.sent.Add(int64(n))
		}
	}))
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

// Requests returns how many requests the server got.
func (f *Flood) Requests() int { return int(f.requests.Load()) }

// Sent returns how many bytes the server sent.
func (f *Flood) Sent() int64 { return f.sent.Load() }
