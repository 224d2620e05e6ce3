package scripted

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"testing"
)

// ResponsesServer is a scripted Responses API endpoint (POST
// /v1/responses). It checks each request against the documented shape:
// input items of known types, every function_call_output answering a
// function call of an earlier item, the output items of every earlier
// reply (reasoning and tool searches included) carried back in order,
// tools that are functions, tool_search or namespaces whose functions
// defer_loading, tool_search offered whenever anything is deferred, and
// with store false, reasoning.encrypted_content included.
type ResponsesServer struct {
	URL string // the base URL, ending in /v1

	recorder
	sent  [][]json.RawMessage // the output items of each reply
	cache *openAICache
}

// NewResponses starts a Responses API server answering with replies in
// order.
func NewResponses(t testing.TB, replies ...Reply) *ResponsesServer {
	s := &ResponsesServer{}
	s.URL = s.start(t, replies, http.HandlerFunc(s.handle)) + "/v1"
	return s
}

// SimulateCache makes the server report cached tokens as OpenAI's prompt
// cache would.
func (s *ResponsesServer) SimulateCache() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cache = &openAICache{}
}

// ResponsesRequest is the part of a request body the checks read.
type ResponsesRequest struct {
	Model        string            `json:"model"`
	Instructions string            `json:"instructions"`
	Input        []json.RawMessage `json:"input"`
	Tools        []json.RawMessage `json:"tools"`
	Stream       bool              `json:"stream"`
	Store        *bool             `json:"store"`
	Include      []string          `json:"include"`
}

var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// check returns what req breaks, given the output items already sent.
func checkResponses(req ResponsesRequest, sent [][]json.RawMessage) []string {
	var bad []string
	if req.Model == "" {
		bad = append(bad, "model: required")
	}
	if req.Store == nil || *req.Store {
		bad = append(bad, "store: want false, so that reasoning goes back in the input")
	} else if !slices.Contains(req.Include, "reasoning.encrypted_content") {
		bad = append(bad, "include: want reasoning.encrypted_content with store false")
	}
	calls := map[string]bool{}    // the call_ids of the function calls
	answered := map[string]bool{} // the call_ids of the outputs
	for i, raw := range req.Input {
		var it struct {
			Type    string          `json:"type"`
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
			CallID  string          `json:"call_id"`
			Name    string          `json:"name"`
			Output  *string         `json:"output"`
			Args    json.RawMessage `json:"arguments"`
		}
		if err := json.Unmarshal(raw, &it); err != nil {
			bad = append(bad, fmt.Sprintf("input[%d]: %v", i, err))
			continue
		}
		if it.Type == "" && it.Role != "" {
			it.Type = "message" // an easy input message may leave out its type
		}
		switch it.Type {
		case "message":
			if it.Role != "user" && it.Role != "assistant" && it.Role != "developer" && it.Role != "system" || len(it.Content) == 0 {
				bad = append(bad, fmt.Sprintf("input[%d]: a message needs a role and content", i))
			}
		case "function_call":
			if it.CallID == "" || it.Name == "" {
				bad = append(bad, fmt.Sprintf("input[%d]: a function_call needs call_id and name", i))
			}
			var args string
			if json.Unmarshal(it.Args, &args) != nil || !json.Valid([]byte(args)) {
				bad = append(bad, fmt.Sprintf("input[%d]: a function_call's arguments must be a JSON string", i))
			}
			if calls[it.CallID] {
				bad = append(bad, fmt.Sprintf("input[%d]: Duplicate 'call_id': %q", i, it.CallID))
			}
			calls[it.CallID] = true
		case "function_call_output":
			if answered[it.CallID] {
				bad = append(bad, fmt.Sprintf("input[%d]: Duplicate function_call_output for call_id %q", i, it.CallID))
			}
			answered[it.CallID] = true
			if it.Output == nil {
				bad = append(bad, fmt.Sprintf("input[%d]: function_call_output needs output", i))
			}
			if !calls[it.CallID] {
				bad = append(bad, fmt.Sprintf("input[%d]: no function call found with call_id %q", i, it.CallID))
			}
		case "reasoning", "tool_search_call", "tool_search_output":
		default:
			bad = append(bad, fmt.Sprintf("input[%d]: unknown item type %q", i, it.Type))
		}
	}
	// Every reply's output items, in order, as they came.
	at := 0
	for n, items := range sent {
		for _, want := range items {
			found := false
			for ; at < len(req.Input); at++ {
				if jsonEqual(req.Input[at], want) || cutCallBack(req.Input[at], want) {
					found = true
					at++
					break
				}
			}
			if !found {
				bad = append(bad, fmt.Sprintf("input: output item %s of reply %d is not carried back in order", short(want), n+1))
				break
			}
		}
	}
	deferred, search := false, false
	for i, raw := range req.Tools {
		var tl struct {
			Type         string            `json:"type"`
			Name         string            `json:"name"`
			Description  string            `json:"description"`
			Parameters   json.RawMessage   `json:"parameters"`
			DeferLoading bool              `json:"defer_loading"`
			Tools        []json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(raw, &tl); err != nil {
			bad = append(bad, fmt.Sprintf("tools[%d]: %v", i, err))
			continue
		}
		switch tl.Type {
		case "function":
			if !toolName.MatchString(tl.Name) || len(tl.Parameters) == 0 {
				bad = append(bad, fmt.Sprintf("tools[%d]: a function needs a valid name and parameters", i))
			}
			deferred = deferred || tl.DeferLoading
		case "tool_search":
			search = true
		case "namespace":
			if !toolName.MatchString(tl.Name) || tl.Description == "" || len(tl.Tools) == 0 {
				bad = append(bad, fmt.Sprintf("tools[%d]: a namespace needs a valid name, a description and tools", i))
			}
			for j, raw := range tl.Tools {
				var f struct {
					Type         string          `json:"type"`
					Name         string          `json:"name"`
					Parameters   json.RawMessage `json:"parameters"`
					DeferLoading bool            `json:"defer_loading"`
				}
				if json.Unmarshal(raw, &f) != nil || f.Type != "function" || !toolName.MatchString(f.Name) || len(f.Parameters) == 0 {
					bad = append(bad, fmt.Sprintf("tools[%d].tools[%d]: want a function with a name and parameters", i, j))
				}
				deferred = deferred || f.DeferLoading
			}
		default:
			bad = append(bad, fmt.Sprintf("tools[%d]: unexpected tool type %q", i, tl.Type))
		}
	}
	if deferred && !search {
		bad = append(bad, "tools: deferred tools need the tool_search tool")
	}
	return bad
}

func (s *ResponsesServer) handle(w http.ResponseWriter, r *http.Request) {
	var req ResponsesRequest
	body, ok := read(w, r, "/v1/responses", &req)
	if !ok {
		return
	}
	s.mu.Lock()
	n := len(s.bodies)
	s.bodies = append(s.bodies, body)
	bad := checkResponses(req, s.sent)
	s.bad = append(s.bad, bad...)
	usage := map[string]any{"input_tokens": 100, "output_tokens": 10, "total_tokens": 110,
		"input_tokens_details": map[string]any{"cached_tokens": 40}, "output_tokens_details": map[string]any{"reasoning_tokens": 0}}
	if s.cache != nil {
		total, cached := s.cache.serve(pieces(req.Tools, req.Instructions, req.Input))
		usage["input_tokens"], usage["total_tokens"] = total, total+10
		usage["input_tokens_details"] = map[string]any{"cached_tokens": cached}
	}
	s.mu.Unlock()
	if len(bad) > 0 {
		writeError(w, http.StatusBadRequest, "invalid_request_error", bad[0])
		return
	}
	reply := s.script(n)
	if writeSpecial(w, r, reply) {
		return
	}
	if reply.Status != 0 {
		if reply.RetryAfter != "" {
			w.Header().Set("Retry-After", reply.RetryAfter)
		}
		writeError(w, reply.Status, "server_error", reply.Error)
		return
	}
	if miss := unloadedResponses(req, reply); miss != "" {
		s.refuse(w, miss)
		return
	}
	items := responseItems(n, reply, req)
	s.mu.Lock()
	s.sent = append(s.sent, items)
	s.mu.Unlock()
	resp := map[string]any{
		"id": fmt.Sprintf("resp_%d", n), "object": "response", "created_at": 1, "status": "completed",
		"model": req.Model, "output": items, "usage": usage,
	}
	done := "response.completed"
	if reply.Stop != "" {
		resp["status"], resp["incomplete_details"] = "incomplete", map[string]any{"reason": reply.Stop}
		done = "response.incomplete"
	}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(resp)
		return
	}
	stream := newSSE(w)
	stream.event("response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": resp["id"], "object": "response", "status": "in_progress", "output": []any{}}})
	for i, raw := range items {
		var it struct {
			Type, ID, Name string
			Content        []struct{ Text string }
			Arguments      string
		}
		_ = json.Unmarshal(raw, &it)
		stream.event("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": i, "item": json.RawMessage(raw)})
		switch it.Type {
		case "message":
			for _, piece := range split(it.Content[0].Text, 7) {
				stream.event("response.output_text.delta", map[string]any{"type": "response.output_text.delta", "item_id": it.ID, "output_index": i, "content_index": 0, "delta": piece})
			}
		case "function_call":
			for _, piece := range split(it.Arguments, 3) {
				stream.event("response.function_call_arguments.delta", map[string]any{"type": "response.function_call_arguments.delta", "item_id": it.ID, "output_index": i, "delta": piece})
			}
		}
		stream.event("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": i, "item": json.RawMessage(raw)})
	}
	stream.event(done, map[string]any{"type": done, "response": resp})
}

// responseItems is a reply as the Responses API's output items.
func responseItems(n int, reply Reply, req ResponsesRequest) []json.RawMessage {
	var items []any
	if reply.Reasoning {
		items = append(items, map[string]any{"type": "reasoning", "id": fmt.Sprintf("rs_%d", n), "summary": []any{},
			"encrypted_content": fmt.Sprintf("gAAAA-reasoning-%d", n)})
	}
	if len(reply.Search) > 0 {
		var loaded []any
		for _, raw := range req.Tools {
			var tl struct{ Type, Name string }
			_ = json.Unmarshal(raw, &tl)
			if tl.Type == "namespace" && slices.Contains(reply.Search, tl.Name) {
				loaded = append(loaded, json.RawMessage(raw))
			}
		}
		items = append(items,
			map[string]any{"type": "tool_search_call", "id": fmt.Sprintf("tsc_%d", n), "call_id": nil, "execution": "server", "status": "completed", "arguments": map[string]any{"paths": reply.Search}},
			map[string]any{"type": "tool_search_output", "id": fmt.Sprintf("tso_%d", n), "call_id": nil, "execution": "server", "status": "completed", "tools": loaded},
		)
	}
	status := "completed"
	if reply.Stop != "" {
		status = "incomplete"
	}
	if reply.Content != "" {
		items = append(items, map[string]any{"type": "message", "id": fmt.Sprintf("msg_%d", n), "status": status, "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": reply.Content, "annotations": []any{}}}})
	}
	if reply.Refusal != "" {
		items = append(items, map[string]any{"type": "message", "id": fmt.Sprintf("msg_%d_refusal", n), "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "refusal", "refusal": reply.Refusal}}})
	}
	for i, c := range reply.ToolCalls {
		st := "completed"
		if !json.Valid([]byte(c.Args)) {
			st = status
		}
		items = append(items, map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%d_%d", n, i), "call_id": c.ID, "name": c.Name,
			"arguments": c.Args, "status": st})
	}
	out := make([]json.RawMessage, len(items))
	for i, it := range items {
		out[i], _ = json.Marshal(it)
	}
	return out
}

// unloadedResponses names a call of the reply the model could not make: a
// function of a namespace no tool search of the input or the reply loaded.
func unloadedResponses(req ResponsesRequest, reply Reply) string {
	owner := map[string]string{}
	for _, raw := range req.Tools {
		var tl struct {
			Type, Name string
			Tools      []struct{ Name string }
		}
		_ = json.Unmarshal(raw, &tl)
		if tl.Type == "namespace" {
			for _, f := range tl.Tools {
				owner[f.Name] = tl.Name
			}
		}
	}
	loaded := map[string]bool{}
	for _, ns := range reply.Search {
		loaded[ns] = true
	}
	for _, raw := range req.Input {
		var it struct {
			Type  string
			Tools []struct{ Name string }
		}
		_ = json.Unmarshal(raw, &it)
		if it.Type == "tool_search_output" {
			for _, tl := range it.Tools {
				loaded[tl.Name] = true
			}
		}
	}
	for _, c := range reply.ToolCalls {
		if ns, ok := owner[c.Name]; ok && !loaded[ns] {
			return fmt.Sprintf("the script calls %s, whose namespace %s no tool search loaded", c.Name, ns)
		}
	}
	return ""
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
}

// sse writes server-sent events.
type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func newSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	f, _ := w.(http.Flusher)
	return &sse{w: w, f: f}
}

func (s *sse) event(name string, v any) {
	b, _ := json.Marshal(v)
	fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", name, b)
	if s.f != nil {
		s.f.Flush()
	}
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

func short(b json.RawMessage) string {
	if len(b) > 60 {
		return string(b[:60]) + "..."
	}
	return string(b)
}

// cutCallBack reports whether got is want, a function call whose arguments
// are not JSON (cut by the output limit), carried back as the API takes
// it: the same item with the arguments {} and, when it had a status,
// completed.
func cutCallBack(got, want json.RawMessage) bool {
	var g, w map[string]any
	if json.Unmarshal(got, &g) != nil || json.Unmarshal(want, &w) != nil || w["type"] != "function_call" {
		return false
	}
	if args, _ := w["arguments"].(string); json.Valid([]byte(args)) || g["arguments"] != "{}" {
		return false
	}
	if _, ok := w["status"]; ok && g["status"] != "completed" {
		return false
	}
	delete(g, "arguments")
	delete(w, "arguments")
	delete(g, "status")
	delete(w, "status")
	a, _ := json.Marshal(g)
	b, _ := json.Marshal(w)
	return string(a) == string(b)
}
