// Package scripted has model API servers for tests: a chat completions
// server ([New]), a Responses API server ([NewResponses]) and a Messages
// API server ([NewMessages]). Each listens on 127.0.0.1, records every
// request, checks it against the shape its API documents (the Responses
// and Messages servers answer a request that breaks it with 400 and keep
// the violation), and answers each with the next scripted reply, streamed
// as server-sent events in the API's wire format. With SimulateCache, a
// server reports the cached tokens its provider's prompt cache would.
// [Refuse] starts a server that refuses every request and keeps it, for
// tests of what a client sends. [NewFlood] starts a server whose event
// stream goes on and on, for tests of the bounds on a reply.
package scripted

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Request is one request the server got.
type Request struct {
	Model    string           `json:"model"`
	Messages []map[string]any `json:"messages"`
	Tools    []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	Stream bool `json:"stream"`
	Auth   string
}

// ToolNames returns the names of the tools the request offered.
func (r Request) ToolNames() []string {
	var out []string
	for _, t := range r.Tools {
		out = append(out, t.Function.Name)
	}
	return out
}

// ToolResult returns the content of the tool message answering call id.
func (r Request) ToolResult(id string) (string, bool) {
	for _, m := range r.Messages {
		if m["role"] == "tool" && m["tool_call_id"] == id {
			s, _ := m["content"].(string)
			return s, true
		}
	}
	return "", false
}

// Last returns the content of the last message.
func (r Request) Last() string {
	if len(r.Messages) == 0 {
		return ""
	}
	s, _ := r.Messages[len(r.Messages)-1]["content"].(string)
	return s
}

// Call is a tool call in a reply.
type Call struct {
	ID, Name, Args string
}

// Reply is what the server answers one request with.
type Reply struct {
	Status     int    // an error status; 0 streams a reply
	RetryAfter string // the Retry-After header with an error status
	Error      string // the error message with an error status

	Content   string
	ToolCalls []Call
	// Hang streams the first content chunk, then waits until the client
	// goes away.
	Hang bool
	// Stall waits before answering at all, until the client goes away.
	Stall bool
	// Raw answers with this body and RawType as its content type, status
	// 200 unless Status says otherwise, instead of a stream.
	Raw, RawType string
	// Reasoning adds a reasoning item (Responses) before the reply.
	Reasoning bool
	// Search loads these namespaces (Responses) or tools (Messages) with
	// the provider's own tool search before the calls, as its server
	// would.
	Search []string
	// Stop ends the reply with this reason instead of the usual one:
	// finish_reason (chat completions), stop_reason (Messages), or
	// status incomplete with this reason (Responses). A last call whose
	// Args are not JSON is one the reply was cut in: Messages sends its
	// input {} in the block, as a client's accumulator makes it.
	Stop string
	// Refusal is the reply's refusal: delta.refusal (chat completions),
	// a refusal content part (Responses).
	Refusal string
}

// Text returns a reply that says s.
func Text(s string) Reply { return Reply{Content: s} }

// Calls returns a reply that makes the calls.
func Calls(cs ...Call) Reply { return Reply{ToolCalls: cs} }

// Server is a scripted chat completions endpoint.
type Server struct {
	URL string // the base URL, ending in /v1

	srv *httptest.Server
	mu  sync.Mutex // guards reqs and the script position
	// script gives the reply to request n (0-based); past its end, every
	// request gets the last reply.
	script func(n int, req Request) Reply
	reqs   []Request
	bodies [][]byte
	cache  *openAICache
}

// SimulateCache makes the server report cached tokens as OpenAI's prompt
// cache would (see cache.go), and input tokens counted the same way.
func (s *Server) SimulateCache() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cache = &openAICache{}
}

// Bodies returns the raw bodies of the requests so far.
func (s *Server) Bodies() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.bodies...)
}

// New starts a server answering with replies in order; after the last, every
// request gets a 500 saying the script ended.
func New(t testing.TB, replies ...Reply) *Server {
	return NewFunc(t, func(n int, _ Request) Reply {
		if n < len(replies) {
			return replies[n]
		}
		return Reply{Status: http.StatusInternalServerError, Error: "the script has no more replies"}
	})
}

// NewFunc starts a server answering with script, which sees the request's
// number and the request.
func NewFunc(t testing.TB, script func(n int, req Request) Reply) *Server {
	s := &Server{script: script}
	s.srv = httptest.NewServer(http.HandlerFunc(s.handle))
	s.URL = s.srv.URL + "/v1"
	t.Cleanup(s.srv.Close)
	return s
}

// badArguments names an assistant tool call of req whose arguments are
// not JSON, which strict servers refuse (vLLM, Ollama and gateways parse
// them to apply the model's chat template).
func badArguments(req Request) string {
	for i, m := range req.Messages {
		calls, _ := m["tool_calls"].([]any)
		for j, c := range calls {
			fn, _ := c.(map[string]any)["function"].(map[string]any)
			if args, _ := fn["arguments"].(string); !json.Valid([]byte(args)) {
				return fmt.Sprintf("messages[%d].tool_calls[%d].function.arguments: invalid JSON %q", i, j, args)
			}
		}
	}
	return ""
}

// Requests returns the requests so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req Request
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "bad request body: "+err.Error(), http.StatusBadRequest)
		return
	}
	req.Auth = r.Header.Get("Authorization")
	if bad := badArguments(req); bad != "" {
		// As strict OpenAI-compatible servers answer.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": bad, "type": "invalid_request_error"}})
		return
	}
	s.mu.Lock()
	n := len(s.reqs)
	s.reqs = append(s.reqs, req)
	s.bodies = append(s.bodies, body)
	usage := map[string]any{"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110,
		"prompt_tokens_details": map[string]any{"cached_tokens": 40}}
	if s.cache != nil {
		var raw struct {
			Tools    []json.RawMessage `json:"tools"`
			Messages []json.RawMessage `json:"messages"`
		}
		_ = json.Unmarshal(body, &raw)
		total, cached := s.cache.serve(pieces(raw.Tools, raw.Messages))
		usage = map[string]any{"prompt_tokens": total, "completion_tokens": 10, "total_tokens": total + 10,
			"prompt_tokens_details": map[string]any{"cached_tokens": cached}}
	}
	s.mu.Unlock()
	reply := s.script(n, req)
	if writeSpecial(w, r, reply) {
		return
	}
	if reply.Status != 0 {
		if reply.RetryAfter != "" {
			w.Header().Set("Retry-After", reply.RetryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(reply.Status)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": reply.Error, "type": "server_error"}})
		return
	}
	if !req.Stream {
		msg := map[string]any{"role": "assistant", "content": reply.Content}
		var calls []any
		for _, c := range reply.ToolCalls {
			calls = append(calls, map[string]any{"id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": c.Args}})
		}
		finish := "stop"
		if len(calls) > 0 {
			msg["tool_calls"], finish = calls, "tool_calls"
		}
		if reply.Refusal != "" {
			msg["refusal"] = reply.Refusal
		}
		finish = cmp.Or(reply.Stop, finish)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage,
		})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	flusher, _ := w.(http.Flusher)
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		}
	}
	send(chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	if reply.Hang {
		send(chunk(map[string]any{"content": "thinking"}, nil))
		<-r.Context().Done()
		return
	}
	for _, piece := range split(reply.Content, 7) {
		send(chunk(map[string]any{"content": piece}, nil))
	}
	for _, piece := range split(reply.Refusal, 7) {
		send(chunk(map[string]any{"refusal": piece}, nil))
	}
	for i, c := range reply.ToolCalls {
		send(chunk(map[string]any{"tool_calls": []any{map[string]any{
			"index": i, "id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": ""},
		}}}, nil))
		for _, piece := range split(c.Args, 3) {
			send(chunk(map[string]any{"tool_calls": []any{map[string]any{
				"index": i, "function": map[string]any{"arguments": piece},
			}}}, nil))
		}
	}
	finish := "stop"
	if len(reply.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	send(chunk(map[string]any{}, cmp.Or(reply.Stop, finish)))
	send(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": req.Model, "choices": []any{},
		"usage": usage,
	})
	fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}

// writeSpecial answers with a raw body, or stalls; it reports whether it
// did.
func writeSpecial(w http.ResponseWriter, r *http.Request, reply Reply) bool {
	switch {
	case reply.Stall:
		<-r.Context().Done()
		return true
	case reply.RawType != "":
		w.Header().Set("Content-Type", reply.RawType)
		if reply.RetryAfter != "" {
			w.Header().Set("Retry-After", reply.RetryAfter)
		}
		w.WriteHeader(cmp.Or(reply.Status, http.StatusOK))
		_, _ = io.WriteString(w, reply.Raw)
		return true
	}
	return false
}

// split cuts s into pieces of at most n bytes (n > 0), at rune boundaries.
func split(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		k := min(n, len(s))
		for k < len(s) && k > 0 && s[k]&0xC0 == 0x80 {
			k++
		}
		out = append(out, s[:k])
		s = s[k:]
	}
	return out
}
