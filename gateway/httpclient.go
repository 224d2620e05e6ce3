package gateway

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
)

// MaxResponseBytes bounds the body of one HTTP answer of an upstream
// server that is not an event stream, which the SDK reads whole into
// memory, and each event of one that is: the SDK holds an event whole
// until it ends.
const MaxResponseBytes = 16 << 20

// httpClient is the client of a streamable HTTP server at endpoint: it
// adds the configured headers to the requests for the endpoint's origin
// only (a redirect to another host, or from https to http, gets none, so
// a token stays with its server), and cuts off an answer's body past
// MaxResponseBytes with an error naming the server.
func httpClient(server, endpoint string, hdr map[string]string, tasks *taskTools) (*http.Client, error) {
	base, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("url: %w", err)
	}
	return &http.Client{Transport: &upstreamTransport{server: server, base: base, headers: hdr, lists: &listWatch{tasks: tasks}}}, nil
}

// upstreamTransport is httpClient's RoundTripper.
type upstreamTransport struct {
	server  string
	base    *url.URL // the configured endpoint
	headers map[string]string
	lists   *listWatch // shown the answers to tools/list
}

func (t *upstreamTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 && sameOrigin(t.base, r.URL) {
		r = r.Clone(r.Context())
		for k, v := range t.headers {
			r.Header.Set(k, v)
		}
	}
	id, list := watchRequest(r)
	if list {
		t.lists.sent(id)
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil || list && resp.StatusCode/100 != 2 {
		t.lists.forget(id) // no answer comes
	}
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusNotFound && r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") != "" {
		// The server ended the session this request was posted in, and
		// did not run it (MCP's streamable HTTP transport).
		if refused, ok := r.Context().Value(refusedKey{}).(*atomic.Bool); ok {
			refused.Store(true)
		}
	}
	stream := mediaType(resp.Header.Get("Content-Type")) == "text/event-stream"
	if !stream {
		resp.Body = &boundedBody{rc: resp.Body, left: MaxResponseBytes, server: t.server}
	}
	switch {
	case stream:
		resp.Body = &watchBody{ReadCloser: resp.Body, lists: t.lists, stream: true}
	case list:
		resp.Body = &watchBody{ReadCloser: resp.Body, lists: t.lists, list: &id}
	}
	return resp, nil
}

// refusedKey carries, in the context of a request to an upstream server,
// an *atomic.Bool that the request's transport sets when the server
// answers that the request's session ended, and so did not run it.
type refusedKey struct{}

// sameOrigin reports whether the configured headers may go to u: it has
// base's scheme, host and port, or it is base's host over https (an
// upgrade from http, which keeps the token as private as before).
func sameOrigin(base, u *url.URL) bool {
	if !strings.EqualFold(base.Hostname(), u.Hostname()) {
		return false
	}
	if strings.EqualFold(u.Scheme, "https") && !strings.EqualFold(base.Scheme, "https") {
		return true
	}
	return strings.EqualFold(base.Scheme, u.Scheme) && port(base) == port(u)
}

// port is u's port, its scheme's default when it has none.
func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}

// mediaType is a Content-Type without its parameters, lower-case.
func mediaType(ct string) string {
	ct, _, _ = strings.Cut(ct, ";")
	return strings.ToLower(strings.TrimSpace(ct))
}

// boundedBody is a response body that fails once more than left bytes
// were read from it.
type boundedBody struct {
	rc     io.ReadCloser
	left   int64
	server string
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, b.tooBig()
	}
	// One byte past the bound tells a body that ends there from a longer one.
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n + int(b.left), b.tooBig()
	}
	return n, err
}

func (b *boundedBody) tooBig() error {
	return fmt.Errorf("MCP server %s answered with an HTTP body over %d MiB, more than unfold reads from one answer; check that its url is its MCP endpoint",
		b.server, MaxResponseBytes>>20)
}

func (b *boundedBody) Close() error { return b.rc.Close() }
