package scripted

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// MessagesServer is a scripted Messages API endpoint (POST /v1/messages).
// It checks each request against the documented shape: x-api-key and
// anthropic-version headers; model and max_tokens; turns that alternate,
// starting with the user; tool_result blocks first in their turn, each
// answering a tool_use of the turn before; tools defined when any
// tool_use or tool_result block is there; tool_reference blocks only in
// tool results, each naming a deferred tool; deferred tools only with the
// tool search tool and at least one tool not deferred; at most four
// cache_control breakpoints, none on a deferred tool; text blocks with
// text other than white space; tool_use IDs of letters, digits, "_" and
// "-"; and the content blocks of every earlier reply carried back as they
// came.
type MessagesServer struct {
	URL string // the base URL (no /v1)

	recorder
	sent  [][]json.RawMessage // the content blocks of each reply
	cache *anthropicCache
}

// NewMessages starts a Messages API server answering with replies in
// order.
func NewMessages(t testing.TB, replies ...Reply) *MessagesServer {
	s := &MessagesServer{}
	s.URL = s.start(t, replies, http.HandlerFunc(s.handle))
	return s
}

// SimulateCache makes the server report cache reads and writes as
// Anthropic's prompt cache would.
func (s *MessagesServer) SimulateCache() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cache = &anthropicCache{}
}

// MessagesRequest is the part of a request body the checks read.
type MessagesRequest struct {
	Model     string            `json:"model"`
	MaxTokens int               `json:"max_tokens"`
	System    []json.RawMessage `json:"system"`
	Messages  []struct {
		Role    string            `json:"role"`
		Content []json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools  []json.RawMessage `json:"tools"`
	Stream bool              `json:"stream"`
}

type block struct {
	Type         string            `json:"type"`
	Text         string            `json:"text"`
	ID           string            `json:"id"`
	Name         string            `json:"name"`
	ToolUseID    string            `json:"tool_use_id"`
	ToolName     string            `json:"tool_name"`
	Content      json.RawMessage   `json:"content"`
	CacheControl *json.RawMessage  `json:"cache_control"`
	DeferLoading bool              `json:"defer_loading"`
	Inner        []json.RawMessage `json:"-"`
}

// layout returns the request's pieces in cache order (tools, system,
// message blocks) and which carry cache_control.
func (req MessagesRequest) layout() (segs []string, breaks []int) {
	add := func(raw json.RawMessage) {
		var b block
		_ = json.Unmarshal(raw, &b)
		if b.DeferLoading {
			return // not in the prompt until loaded
		}
		if b.CacheControl != nil {
			breaks = append(breaks, len(segs))
		}
		// A breakpoint marks where to cache; it is not part of the prefix.
		segs = append(segs, string(withoutCache(raw)))
	}
	for _, t := range req.Tools {
		add(t)
	}
	for _, s := range req.System {
		add(s)
	}
	for _, m := range req.Messages {
		for _, c := range m.Content {
			add(c)
		}
	}
	return segs, breaks
}

var toolUseID = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

func checkMessages(r *http.Request, req MessagesRequest, sent [][]json.RawMessage) []string {
	var bad []string
	if r.Header.Get("X-Api-Key") == "" && !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") || r.Header.Get("Anthropic-Version") == "" {
		bad = append(bad, "headers: an API key (x-api-key or a bearer token) and anthropic-version are required")
	}
	if req.Model == "" || req.MaxTokens <= 0 {
		bad = append(bad, "model and max_tokens are required")
	}
	breaks := 0
	deferredTools := map[string]bool{}
	search, plain := false, false
	for i, raw := range req.Tools {
		var t struct {
			block
			Type        string          `json:"type"`
			InputSchema json.RawMessage `json:"input_schema"`
		}
		if err := json.Unmarshal(raw, &t); err != nil {
			bad = append(bad, fmt.Sprintf("tools[%d]: %v", i, err))
			continue
		}
		if t.CacheControl != nil {
			breaks++
			if t.DeferLoading {
				bad = append(bad, fmt.Sprintf("tools[%d]: a deferred tool cannot have cache_control", i))
			}
		}
		switch t.Type {
		case "tool_search_tool_regex_20251119", "tool_search_tool_bm25_20251119":
			search = true
		case "", "custom":
			if !toolName.MatchString(t.Name) || len(t.InputSchema) == 0 {
				bad = append(bad, fmt.Sprintf("tools[%d]: a tool needs a valid name and input_schema", i))
			}
			if t.DeferLoading {
				deferredTools[t.Name] = true
			} else {
				plain = true
			}
		default:
			bad = append(bad, fmt.Sprintf("tools[%d]: unexpected type %q", i, t.Type))
		}
	}
	if len(deferredTools) > 0 && (!search || !plain) {
		bad = append(bad, "tools: deferred tools need the tool search tool and at least one tool that is not deferred")
	}
	for _, s := range req.System {
		var b block
		_ = json.Unmarshal(s, &b)
		if b.Type != "text" {
			bad = append(bad, "system: want text blocks")
		}
		if strings.TrimSpace(b.Text) == "" {
			bad = append(bad, "system: text content blocks must contain non-whitespace text")
		}
		if b.CacheControl != nil {
			breaks++
		}
	}
	var prevUses map[string]bool
	allUses := map[string]bool{} // the tool_use IDs of the whole request
	toolBlocks := false
	for i, m := range req.Messages {
		want := "user"
		if i%2 == 1 {
			want = "assistant"
		}
		if m.Role != want {
			bad = append(bad, fmt.Sprintf("messages[%d]: role %q, want %q: turns alternate, starting with the user", i, m.Role, want))
		}
		if len(m.Content) == 0 {
			bad = append(bad, fmt.Sprintf("messages[%d]: empty content", i))
		}
		uses := map[string]bool{}
		textSeen := false
		for j, raw := range m.Content {
			var b block
			if err := json.Unmarshal(raw, &b); err != nil {
				bad = append(bad, fmt.Sprintf("messages[%d].content[%d]: %v", i, j, err))
				continue
			}
			if b.CacheControl != nil {
				breaks++
			}
			switch b.Type {
			case "text":
				textSeen = true
				if strings.TrimSpace(b.Text) == "" {
					bad = append(bad, fmt.Sprintf("messages[%d].content[%d]: text content blocks must contain non-whitespace text", i, j))
				}
			case "tool_use":
				if allUses[b.ID] {
					bad = append(bad, fmt.Sprintf("messages.%d.content.%d: `tool_use` ids must be unique", i, j))
				}
				uses[b.ID], allUses[b.ID] = true, true
				if !toolUseID.MatchString(b.ID) {
					bad = append(bad, fmt.Sprintf("messages[%d].content[%d].id: String should match pattern '^[a-zA-Z0-9_-]+$'", i, j))
				}
				toolBlocks = true
			case "tool_result":
				toolBlocks = true
				if textSeen {
					bad = append(bad, fmt.Sprintf("messages[%d].content[%d]: tool_result blocks must come before any text", i, j))
				}
				if !prevUses[b.ToolUseID] {
					bad = append(bad, fmt.Sprintf("messages[%d].content[%d]: tool_result for %q answers no tool_use of the turn before", i, j, b.ToolUseID))
				}
				var inner []block
				if len(b.Content) > 0 && b.Content[0] == '[' {
					_ = json.Unmarshal(b.Content, &inner)
				}
				for _, x := range inner {
					if x.Type == "tool_reference" && !deferredTools[x.ToolName] {
						bad = append(bad, fmt.Sprintf("messages[%d].content[%d]: tool_reference to %q, which is not a deferred tool", i, j, x.ToolName))
					}
				}
			case "tool_reference":
				bad = append(bad, fmt.Sprintf("messages[%d].content[%d]: tool_reference outside a tool_result", i, j))
			case "thinking", "redacted_thinking", "server_tool_use", "tool_search_tool_result":
			default:
				bad = append(bad, fmt.Sprintf("messages[%d].content[%d]: unknown block type %q", i, j, b.Type))
			}
		}
		prevUses = uses
	}
	if toolBlocks && len(req.Tools) == 0 {
		bad = append(bad, "Requests which include tool_use or tool_result blocks must define tools.")
	}
	if breaks > 4 {
		bad = append(bad, fmt.Sprintf("%d cache_control breakpoints: at most 4", breaks))
	}
	// Every reply's blocks came back as they were, in order, but for text
	// blocks of only white space, which the API would refuse. A reply with
	// no other block is no turn: the user turns around it join.
	turn := 1
	for n, all := range sent {
		var blocks []json.RawMessage
		for _, b := range all {
			var x block
			if json.Unmarshal(b, &x) == nil && x.Type == "text" && strings.TrimSpace(x.Text) == "" {
				continue
			}
			blocks = append(blocks, b)
		}
		if len(blocks) == 0 {
			continue
		}
		if turn >= len(req.Messages) {
			break
		}
		at := turn
		turn += 2
		got := req.Messages[at].Content
		if len(got) != len(blocks) {
			bad = append(bad, fmt.Sprintf("messages[%d]: reply %d had %d content blocks, %d came back", at, n+1, len(blocks), len(got)))
			continue
		}
		for j := range blocks {
			if !jsonEqual(withoutCache(got[j]), blocks[j]) {
				bad = append(bad, fmt.Sprintf("messages[%d].content[%d]: want the reply's block %s back as it was", at, j, short(blocks[j])))
			}
		}
	}
	return bad
}

// unloaded names a call of the reply the model could not make: a
// deferred tool no tool_reference of the request loaded.
func unloaded(req MessagesRequest, reply Reply) string {
	deferred := map[string]bool{}
	for _, raw := range req.Tools {
		var b block
		_ = json.Unmarshal(raw, &b)
		if b.DeferLoading {
			deferred[b.Name] = true
		}
	}
	loaded := map[string]bool{}
	for _, m := range req.Messages {
		for _, raw := range m.Content {
			var b block
			_ = json.Unmarshal(raw, &b)
			var inner []block
			if b.Type == "tool_result" && len(b.Content) > 0 && b.Content[0] == '[' {
				_ = json.Unmarshal(b.Content, &inner)
			}
			for _, x := range inner {
				if x.Type == "tool_reference" {
					loaded[x.ToolName] = true
				}
			}
		}
	}
	for _, c := range reply.ToolCalls {
		if deferred[c.Name] && !loaded[c.Name] {
			return fmt.Sprintf("the script calls %s, a deferred tool no tool_reference loaded", c.Name)
		}
	}
	return ""
}

func withoutCache(raw json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return raw
	}
	delete(m, "cache_control")
	b, _ := json.Marshal(m)
	return b
}

func (s *MessagesServer) handle(w http.ResponseWriter, r *http.Request) {
	var req MessagesRequest
	body, ok := read(w, r, "/v1/messages", &req)
	if !ok {
		return
	}
	s.mu.Lock()
	n := len(s.bodies)
	s.bodies = append(s.bodies, body)
	bad := checkMessages(r, req, s.sent)
	s.bad = append(s.bad, bad...)
	usage := map[string]any{"input_tokens": 100, "output_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 40}
	if s.cache != nil {
		segs, breaks := req.layout()
		in, read, write := s.cache.serve(segs, breaks)
		usage = map[string]any{"input_tokens": in, "output_tokens": 10, "cache_creation_input_tokens": write, "cache_read_input_tokens": read}
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
		typ := "api_error"
		switch reply.Status {
		case http.StatusTooManyRequests:
			typ = "rate_limit_error"
		case 529:
			typ = "overloaded_error"
		}
		writeError(w, reply.Status, typ, reply.Error)
		return
	}
	if miss := unloaded(req, reply); miss != "" {
		s.refuse(w, miss)
		return
	}
	var blocks []json.RawMessage
	add := func(v any) {
		b, _ := json.Marshal(v)
		blocks = append(blocks, b)
	}
	if reply.Reasoning {
		add(map[string]any{"type": "thinking", "thinking": "Let me work out what to call.", "signature": fmt.Sprintf("sig-%d", n)})
	}
	if reply.Content != "" {
		add(map[string]any{"type": "text", "text": reply.Content})
	}
	cutArgs := map[int]string{} // block index: the input a cut call streams
	for _, c := range reply.ToolCalls {
		in := json.RawMessage(c.Args)
		if !json.Valid(in) {
			cutArgs[len(blocks)] = c.Args
			in = json.RawMessage(`{}`)
		}
		add(map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": in})
	}
	s.mu.Lock()
	s.sent = append(s.sent, blocks)
	s.mu.Unlock()
	stop := "end_turn"
	if len(reply.ToolCalls) > 0 {
		stop = "tool_use"
	}
	stop = cmp.Or(reply.Stop, stop)
	st := newSSE(w)
	st.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": fmt.Sprintf("msg_%d", n), "type": "message", "role": "assistant", "model": req.Model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": usage["input_tokens"], "output_tokens": 1, "cache_creation_input_tokens": usage["cache_creation_input_tokens"], "cache_read_input_tokens": usage["cache_read_input_tokens"]},
	}})
	for i, raw := range blocks {
		var b map[string]any
		_ = json.Unmarshal(raw, &b)
		start := map[string]any{}
		for k, v := range b {
			start[k] = v
		}
		switch b["type"] {
		case "text":
			start["text"] = ""
		case "thinking":
			start["thinking"], start["signature"] = "", ""
		case "tool_use":
			start["input"] = map[string]any{}
		}
		st.event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": start})
		switch b["type"] {
		case "text":
			for _, piece := range split(b["text"].(string), 7) {
				st.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": piece}})
			}
		case "thinking":
			st.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "thinking_delta", "thinking": b["thinking"]}})
			st.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "signature_delta", "signature": b["signature"]}})
		case "tool_use":
			in, _ := json.Marshal(b["input"])
			if cut, ok := cutArgs[i]; ok {
				in = []byte(cut)
			}
			for _, piece := range split(string(in), 3) {
				st.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": piece}})
			}
		}
		st.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	st.event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": usage["output_tokens"]}})
	st.event("message_stop", map[string]any{"type": "message_stop"})
}
