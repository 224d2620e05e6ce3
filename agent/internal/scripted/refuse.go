package scripted

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Refusing is a server that answers every request with 400 and the body
// it was given, and keeps each request: for tests of what a client sends
// rather than of what it makes of replies.
type Refusing struct {
	URL string

	mu   sync.Mutex // guards got
	got  []Sent
	body string
}

// Sent is a request as a Refusing server got it.
type Sent struct {
	Method, Path string
	Header       http.Header
	Body         []byte
}

// Refuse starts a Refusing server answering with the JSON body, closed
// when t ends.
func Refuse(t *testing.T, body string) *Refusing {
	t.Helper()
	r := &Refusing{body: body}
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

func (r *Refusing) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	data, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	r.mu.Lock()
	r.got = append(r.got, Sent{Method: req.Method, Path: req.URL.RequestURI(), Header: req.Header.Clone(), Body: data})
	r.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	w.Write([]byte(r.body))
}

// Sent returns every request so far, in order, and forgets them.
func (r *Refusing) Sent() []Sent {
	r.mu.Lock()
	defer r.mu.Unlock()
	got := r.got
	r.got = nil
	return got
}
