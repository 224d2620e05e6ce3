package scripted

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Refusing is a server that answers every request with 400 and the body
// it was given, and keeps each request's headers: for tests of what a
// client sends rather than of what it makes of replies.
type Refusing struct {
	URL string

	mu      sync.Mutex // guards headers
	headers []http.Header
}

// Refuse starts a Refusing server answering with the JSON body, closed
// when t ends.
func Refuse(t *testing.T, body string) *Refusing {
	t.Helper()
	r := &Refusing{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.headers = append(r.headers, req.Header.Clone())
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// Headers returns the headers of every request so far, in order.
func (r *Refusing) Headers() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]http.Header(nil), r.headers...)
}
