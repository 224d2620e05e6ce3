package scripted

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
)

// recorder is what the Responses and Messages servers share: the
// script, the request bodies and what they broke.
type recorder struct {
	srv    *httptest.Server
	mu     sync.Mutex // guards the fields below and those of the server embedding it
	script func(n int) Reply
	bodies []json.RawMessage
	bad    []string
}

// start serves h on 127.0.0.1 until the test ends, answering with replies
// in order; it returns the server's URL.
func (r *recorder) start(t testing.TB, replies []Reply, h http.Handler) string {
	r.script = func(n int) Reply {
		if n < len(replies) {
			return replies[n]
		}
		return Reply{Status: http.StatusInternalServerError, Error: "the script has no more replies"}
	}
	r.srv = httptest.NewServer(h)
	t.Cleanup(r.srv.Close)
	return r.srv.URL
}

// Bodies returns the request bodies so far.
func (r *recorder) Bodies() []json.RawMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.bodies)
}

// Violations returns what requests broke of the documented shape.
func (r *recorder) Violations() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.bad)
}

// read takes a POST to path and decodes its body into req; it answers a
// request that is not one and reports whether it was.
func read(w http.ResponseWriter, r *http.Request, path string, req any) ([]byte, bool) {
	if r.Method != http.MethodPost || r.URL.Path != path {
		http.Error(w, "not found", http.StatusNotFound)
		return nil, false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err == nil {
		err = json.Unmarshal(body, req)
	}
	if err != nil {
		http.Error(w, "bad request body", http.StatusBadRequest)
		return nil, false
	}
	return body, true
}

// refuse keeps msg as a violation and answers 400 with it.
func (r *recorder) refuse(w http.ResponseWriter, msg string) {
	r.mu.Lock()
	r.bad = append(r.bad, msg)
	r.mu.Unlock()
	writeError(w, http.StatusBadRequest, "invalid_request_error", msg)
}
