package mcp

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/unfold-dev/unfold/internal/utf8cut"
)

// Defaults of HTTPOptions.
const (
	DefaultSessionTimeout = 30 * time.Minute
	DefaultBodyTimeout    = 30 * time.Second
	DefaultMaxBodyBytes   = 4 << 20
	// DefaultMaxSessions bounds the sessions open at once: each holds
	// environments (a bash process, ...) until it ends.
	DefaultMaxSessions = 32
)

// HTTPOptions configures [Server.Handler]. The zero value uses the
// defaults and asks for no token.
type HTTPOptions struct {
	// Token, when set, is the bearer token every request must carry
	// (Authorization: Bearer TOKEN); other requests get 401.
	Token string
	// SessionTimeout ends a session that received no request for that
	// long, closing its environments (0: DefaultSessionTimeout).
	SessionTimeout time.Duration
	// BodyTimeout bounds the reading of a request body (0:
	// DefaultBodyTimeout); MaxBodyBytes bounds its size (0:
	// DefaultMaxBodyBytes).
	BodyTimeout  time.Duration
	MaxBodyBytes int64
	// MaxSessions bounds the sessions open at once (0:
	// DefaultMaxSessions). A request that would start one more gets 503
	// Service Unavailable until a session ends (deleted by its client,
	// or idle for SessionTimeout).
	MaxSessions int
	// MaxInFlight and MaxInFlightBytes bound, per session, the requests
	// being answered and the memory they hold as estimated (see
	// [StdioTransport]; 0: DefaultMaxInFlight, DefaultMaxInFlightBytes).
	// A POST whose requests would pass a bound gets 429 Too Many
	// Requests until answers came; a batch's requests are admitted
	// together, and when nothing else is in flight whatever their size.
	MaxInFlight      int
	MaxInFlightBytes int64
}

// sessionHeader is the streamable HTTP transport's session header.
const sessionHeader = "Mcp-Session-Id"

// httpHandler serves streamable HTTP with the SDK's handler, adding what a
// server open to more than one client needs: a session of its own per
// client, body limits, and cancellation of the calls of a client that went
// away.
type httpHandler struct {
	s    *Server
	opts HTTPOptions
	sdk  *sdk.StreamableHTTPHandler
	// base answers the SDK's protocol-version checks for requests of
	// sessions that exist already (or not); it serves no session.
	base *sdk.Server

	// mu guards the fields below.
	mu sync.Mutex
	// open counts the sessions started and not ended yet, counting those
	// being started.
	open int
	// flights holds each session's requests in flight, by session id.
	flights map[string]*inFlight

	// dmu guards desc, the conn of the requests without a session that
	// start none (see describer); nil until the first.
	dmu  sync.Mutex
	desc *conn
}

// connKey carries, in a request's context, the conn a new session is served
// with.
type connKey struct{}

// Handler returns an http.Handler that serves the streamable HTTP transport.
// Every MCP session it starts gets environments and a prompt session of
// its own (built by the server's factory), closed when the session ends:
// deleted by the client, or idle for opts.SessionTimeout. A call whose
// client closed the response stream before the answer is cancelled, as if
// the client had sent notifications/cancelled. By default the SDK refuses
// requests whose Host is not a loopback name when they arrive on a loopback
// address (DNS rebinding protection).
func (s *Server) Handler(opts HTTPOptions) http.Handler {
	if opts.SessionTimeout <= 0 {
		opts.SessionTimeout = DefaultSessionTimeout
	}
	if opts.BodyTimeout <= 0 {
		opts.BodyTimeout = DefaultBodyTimeout
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = DefaultMaxSessions
	}
	h := &httpHandler{s: s, opts: opts, base: sdk.NewServer(implementation(s.opts), nil), flights: map[string]*inFlight{}}
	h.sdk = sdk.NewStreamableHTTPHandler(h.server, &sdk.StreamableHTTPOptions{
		SessionTimeout:               opts.SessionTimeout,
		MaxRequestBodyBytes:          opts.MaxBodyBytes,
		PropagateRequestCancellation: true,
	})
	if opts.Token == "" {
		return h
	}
	return auth.RequireBearerToken(tokenVerifier(opts.Token), &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h)
}

// tokenVerifier accepts exactly token, comparing in constant time.
func tokenVerifier(token string) auth.TokenVerifier {
	return func(_ context.Context, got string, _ *http.Request) (*auth.TokenInfo, error) {
		if subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
			return nil, fmt.Errorf("%w: wrong bearer token", auth.ErrInvalidToken)
		}
		return &auth.TokenInfo{UserID: "token"}, nil
	}
}

// server is the SDK's getServer: the new session's server for a request
// that starts one, the base server otherwise.
func (h *httpHandler) server(r *http.Request) *sdk.Server {
	if c, ok := r.Context().Value(connKey{}).(*conn); ok {
		return c.srv
	}
	return h.base
}

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		h.sdk.ServeHTTP(w, r)
		return
	}
	body, err := h.readBody(w, r)
	if err != nil {
		// What is left of the body is not read: the connection closes
		// after the answer (else the server would wait for the rest).
		w.Header().Set("Connection", "close")
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			http.Error(w, fmt.Sprintf("request body exceeds %d bytes", tooLarge.Limit), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "reading the request body: "+err.Error(), http.StatusRequestTimeout)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	msgs, raws := bodyMessages(body)
	if refuseChangedIDs(w, msgs, raws) {
		return
	}
	if r.Header.Get(sessionHeader) == "" {
		h.serveNew(w, r, msgs)
		return
	}
	release, ok := h.admit(w, r, msgs)
	if !ok {
		return
	}
	defer release()
	h.sdk.ServeHTTP(w, r)
	if r.Context().Err() != nil {
		// The client closed the response stream before every answer came:
		// nobody will read them, so the calls stop.
		for _, id := range callIDs(msgs) {
			h.cancel(r, id)
		}
	}
}

// serveNew serves a request without a session. An initialize starts one,
// with environments of its own, taking a place among MaxSessions until it
// ends. Others (server/discover, ...) start none that lives on: they are
// all served by one conn, built at the first of them and kept, so that
// they build no environments and the places bound the environments alive
// at once, whatever the requests are.
func (h *httpHandler) serveNew(w http.ResponseWriter, r *http.Request, msgs []jsonrpc.Message) {
	if !initializes(msgs) {
		c, err := h.describer(r.Context())
		if err != nil {
			http.Error(w, "serving a request without a session: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		h.sdk.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), connKey{}, c)))
		return
	}
	if !h.reserve() {
		w.Header().Set("Retry-After", "60")
		http.Error(w, fmt.Sprintf("starting a session: %d sessions are open, the most this server allows; end one (DELETE with its %s header) or wait until one is idle for %s",
			h.opts.MaxSessions, sessionHeader, h.opts.SessionTimeout), http.StatusServiceUnavailable)
		return
	}
	c, err := h.s.build(r.Context())
	if err != nil {
		h.free()
		http.Error(w, "starting a session: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	// The SDK creates the session with c's server (see server) and closes
	// it again if it does not initialize; c goes when its session does,
	// and so do its place and its requests' bound.
	h.sdk.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), connKey{}, c)))
	id := w.Header().Get(sessionHeader)
	if id != "" {
		h.mu.Lock()
		h.flights[id] = newInFlight(h.opts.MaxInFlight, h.opts.MaxInFlightBytes)
		h.mu.Unlock()
	}
	h.s.watch(c, func() {
		h.mu.Lock()
		delete(h.flights, id)
		h.mu.Unlock()
		h.free()
	})
}

// describer returns the conn that serves the requests without a session
// that start none, building it the first time. The server closes it with
// the others.
func (h *httpHandler) describer(ctx context.Context) (*conn, error) {
	h.dmu.Lock()
	defer h.dmu.Unlock()
	if h.desc == nil {
		c, err := h.s.build(ctx)
		if err != nil {
			return nil, err
		}
		// Should a request start a session all the same (a body read
		// otherwise than the SDK reads it), it must not share these
		// environments.
		c.srv.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
			return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
				if method == "initialize" {
					return nil, errors.New("initialize: not served here; send it again")
				}
				return next(ctx, method, req)
			}
		})
		h.desc = c
	}
	return h.desc, nil
}

// admit takes room in its session's bound for the requests of a POST,
// returning what gives it back. When there is none, it answers 429 and
// reports false. A session it does not know is left to the SDK.
func (h *httpHandler) admit(w http.ResponseWriter, r *http.Request, msgs []jsonrpc.Message) (release func(), ok bool) {
	h.mu.Lock()
	f := h.flights[r.Header.Get(sessionHeader)]
	h.mu.Unlock()
	if f == nil {
		return func() {}, true
	}
	var calls []call
	for _, m := range msgs {
		if req, isReq := m.(*jsonrpc.Request); isReq && req.IsCall() {
			calls = append(calls, call{req.Method, requestCost(req.Method, req.Params, len(req.Params))})
		}
	}
	// Nothing of the batch was taken when it is refused, so what full
	// says is what is in flight besides it.
	taken, ok, err := f.admitAll(calls)
	if !ok {
		why := "server busy: " + f.full() + "; send it again once answers came"
		if err != nil {
			why = "server busy: " + err.Error()
		}
		w.Header().Set("Retry-After", "1")
		http.Error(w, why, http.StatusTooManyRequests)
		return nil, false
	}
	return func() {
		for _, t := range taken {
			f.release(t)
		}
	}, true
}

// reserve takes a place for a new session, reporting whether there was
// one.
func (h *httpHandler) reserve() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.open >= h.opts.MaxSessions {
		return false
	}
	h.open++
	return true
}

// free gives back a session's place.
func (h *httpHandler) free() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.open--
}

// readBody reads the request body within the body timeout and size limit.
func (h *httpHandler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	rc := http.NewResponseController(w)
	// Not every ResponseWriter supports deadlines (a test recorder does
	// not); the size limit holds anyway.
	if rc.SetReadDeadline(time.Now().Add(h.opts.BodyTimeout)) == nil {
		defer rc.SetReadDeadline(time.Time{})
	}
	return io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes))
}

// bodyMessages returns the messages of a POST body, one message or a
// batch, with the bytes of each; none when it is neither. They are decoded
// as the SDK decodes them (keys matched case-sensitively), so that what is
// counted is what the SDK serves.
func bodyMessages(body []byte) ([]jsonrpc.Message, [][]byte) {
	if trimmed := bytes.TrimSpace(body); len(trimmed) > 0 && trimmed[0] == '[' {
		var raws []json.RawMessage
		if json.Unmarshal(trimmed, &raws) != nil {
			return nil, nil
		}
		msgs := make([]jsonrpc.Message, 0, len(raws))
		bodies := make([][]byte, 0, len(raws))
		for _, raw := range raws {
			m, err := jsonrpc.DecodeMessage(raw)
			if err != nil {
				return nil, nil
			}
			msgs, bodies = append(msgs, m), append(bodies, raw)
		}
		return msgs, bodies
	}
	m, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		return nil, nil
	}
	return []jsonrpc.Message{m}, [][]byte{body}
}

// refuseChangedIDs answers 400 Bad Request, with a JSON-RPC error that
// carries the id as it was written, when a request of the POST has a
// number id the SDK would answer under another id, or a cancellation
// names one (see changedID); it reports whether it did. Nothing of the
// POST is served then.
func refuseChangedIDs(w http.ResponseWriter, msgs []jsonrpc.Message, raws [][]byte) bool {
	for i, m := range msgs {
		id, changed := changedID(m, raws[i])
		if !changed {
			continue
		}
		message := changedIDMessage(id)
		if req, _ := m.(*jsonrpc.Request); !req.IsCall() {
			message = fmt.Sprintf("invalid request: notifications/cancelled names request %s, an id no request here can have (see the error for such a request)", utf8cut.Prefix(string(id), maxShownID))
			id = nil
		}
		if len(msgs) > 1 {
			message += "; nothing of the batch was served"
		}
		data, err := json.Marshal(errorResponse(id, jsonrpc.CodeInvalidRequest, message))
		if err != nil {
			http.Error(w, message, http.StatusBadRequest)
			return true
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write(data)
		return true
	}
	return false
}

// callIDs returns the ids of the requests among msgs.
func callIDs(msgs []jsonrpc.Message) []any {
	var ids []any
	for _, m := range msgs {
		if req, ok := m.(*jsonrpc.Request); ok && req.IsCall() {
			ids = append(ids, req.ID.Raw())
		}
	}
	return ids
}

// initializes reports whether msgs hold an initialize request.
func initializes(msgs []jsonrpc.Message) bool {
	for _, m := range msgs {
		if req, ok := m.(*jsonrpc.Request); ok && req.Method == "initialize" {
			return true
		}
	}
	return false
}

// cancel delivers notifications/cancelled for the request id to the
// session of r, through the SDK's handler as the client would.
func (h *httpHandler) cancel(r *http.Request, id any) {
	body, err := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"method":  "notifications/cancelled",
		"params":  map[string]any{"requestId": id, "reason": "the client closed the response stream"},
	})
	if err != nil {
		return
	}
	req := r.Clone(context.WithoutCancel(r.Context()))
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.ContentLength = int64(len(body))
	h.sdk.ServeHTTP(&discard{header: http.Header{}}, req)
}

// discard is a ResponseWriter that keeps nothing.
type discard struct{ header http.Header }

func (d *discard) Header() http.Header         { return d.header }
func (d *discard) Write(p []byte) (int, error) { return len(p), nil }
func (d *discard) WriteHeader(int)             {}
