package anthropic

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/unfold-dev/unfold/agent"
)

// request is the body of a request to the Messages API, with only the
// fields unfold sends. The fields of each struct are in the order of
// their names, so every object is sent with its keys sorted.
type request struct {
	MaxTokens int64     `json:"max_tokens"`
	Messages  []message `json:"messages"`
	Model     string    `json:"model"`
	Stream    bool      `json:"stream"`
	System    []block   `json:"system,omitempty"`
	Tools     []any     `json:"tools,omitempty"` // tool and searchTool
}

type message struct {
	Content []block `json:"content"`
	Role    string  `json:"role"`
}

// block is a content block: text, tool_use, tool_result or
// tool_reference, or, with native set, a block of the API's own reply
// sent back as it came.
type block struct {
	CacheControl *cacheControl   `json:"cache_control,omitempty"`
	Content      []block         `json:"content,omitempty"`
	ID           string          `json:"id,omitempty"`
	Input        json.RawMessage `json:"input,omitempty"`
	IsError      bool            `json:"is_error,omitempty"`
	Name         string          `json:"name,omitempty"`
	Text         string          `json:"text,omitempty"`
	ToolName     string          `json:"tool_name,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	Type         string          `json:"type"`

	native json.RawMessage
}

func (b block) MarshalJSON() ([]byte, error) {
	if b.native != nil {
		return b.native, nil
	}
	type plain block // without this method
	return json.Marshal(plain(b))
}

func textBlock(s string) block { return block{Type: "text", Text: s} }

// cacheControl marks a cache breakpoint.
type cacheControl struct {
	Type string `json:"type"`
}

var ephemeral = &cacheControl{Type: "ephemeral"}

// tool is a tool the model may call.
type tool struct {
	CacheControl *cacheControl   `json:"cache_control,omitempty"`
	DeferLoading bool            `json:"defer_loading,omitempty"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"input_schema"`
	Name         string          `json:"name"`
}

// searchTool is the tool search tool (regex), which finds deferred tools.
type searchTool struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// body translates a request: the system message as one system block, the
// conversation as alternating turns (tool results and the text after
// them in one user turn), the tools with the deferred groups last (when
// the model has the tool search tool), and the cache breakpoints.
func (c *Client) body(req agent.Request) (request, error) {
	p := request{Model: c.opts.Model, MaxTokens: c.opts.MaxTokens, Messages: []message{}, Stream: true}
	if !c.defers {
		// The model has no tool search: the loop offers the sections'
		// tools another way (Features.DefersTools is false).
		req.Deferred = nil
	}
	ids := toolIDs{of: map[string]string{}, sent: map[string]bool{}}
	deferred := map[string]bool{}
	for _, g := range req.Deferred {
		for _, t := range g.Tools {
			deferred[t.Name] = true
		}
	}
	var turns []turn
	// The API refuses a tool_use ID sent twice in a conversation.
	for i, m := range agent.DistinctCallIDs(req.Messages) {
		switch m.Role {
		case agent.RoleSystem:
			if i != 0 {
				return p, fmt.Errorf("anthropic: message %d: a system message after the first", i)
			}
			if strings.TrimSpace(m.Content) != "" {
				p.System = []block{{Type: "text", Text: m.Content, CacheControl: ephemeral}}
			}
		case agent.RoleUser:
			turns = appendBlock(turns, roleUser, textBlock(nonBlank(m.Content, "(no text)")))
		case agent.RoleTool:
			res := block{Type: "tool_result", ToolUseID: ids.id(m.ToolCallID), IsError: strings.HasPrefix(m.Content, "Error: ")}
			res.Content = append(res.Content, textBlock(nonBlank(m.Content, "(no output)")))
			for _, name := range m.Loads {
				if !deferred[name] {
					// Not deferred in this request (a resumed run
					// started with its section open): the API refuses
					// a reference to it, and the tool is in the list.
					continue
				}
				res.Content = append(res.Content, block{Type: "tool_reference", ToolName: name})
			}
			turns = appendBlock(turns, roleUser, res)
		case agent.RoleAssistant:
			blocks, err := assistantBlocks(m, &ids)
			if err != nil {
				return p, fmt.Errorf("anthropic: message %d: %w", i, err)
			}
			for _, b := range blocks {
				turns = appendBlock(turns, roleAssistant, b)
			}
		default:
			return p, fmt.Errorf("anthropic: message %d: unknown role %q", i, m.Role)
		}
	}
	if n := len(turns); n > 0 {
		markLast(turns[n-1].blocks)
		if prev := previousEnd(turns); prev >= 0 {
			markLast(turns[prev].blocks)
		}
	}
	for _, t := range turns {
		p.Messages = append(p.Messages, message{Role: t.role, Content: t.blocks})
	}
	tools, err := toolParams(req)
	if err != nil {
		return p, err
	}
	p.Tools = tools
	return p, nil
}

// nonBlank is s, or placeholder when s is empty or only white space: the
// API refuses a text block without other text (a transcript of another
// API may hold one, such as "\n\n" beside tool calls).
func nonBlank(s, placeholder string) string {
	if strings.TrimSpace(s) == "" {
		return placeholder
	}
	return s
}

// previousEnd returns the index of the turn that ended the request before
// this one, the turn before the newest reply, or -1 for a first request.
// Its last block keeps the breakpoint that request had. The API looks for
// a written prefix at most 20 blocks before a breakpoint, and a step with
// many tool calls adds a tool_use and a tool_result block for each: with
// only the newest breakpoint, a step of ten calls or more would read none
// of the conversation from the cache. Tools and system take at most two
// of the four breakpoints a request may have, so both of these fit.
func previousEnd(turns []turn) int {
	for i := len(turns) - 1; i > 0; i-- {
		if turns[i].role == roleAssistant {
			return i - 1
		}
	}
	return -1
}

// toolIDs maps the tool call IDs of a conversation onto the API's pattern,
// ^[a-zA-Z0-9_-]+$, the same
// way in every request, so that each tool_result answers its tool_use and
// the prefix stays the same. The IDs it is given are distinct
// ([agent.DistinctCallIDs]). An ID that fits is kept. Another (an
// OpenAI-compatible server's "functions.bash:0", say) becomes its
// characters with "_" for those outside the pattern, then "_" and a hash of
// the whole ID; should that still be an ID already sent, a count follows,
// so that two IDs never become one.
type toolIDs struct {
	of   map[string]string // an ID as the conversation has it: as sent
	sent map[string]bool   // the IDs sent
}

func (t *toolIDs) id(orig string) string {
	if s, ok := t.of[orig]; ok {
		return s
	}
	s := orig
	if orig == "" || strings.IndexFunc(orig, outsideID) >= 0 {
		sum := sha256.Sum256([]byte(orig))
		s = strings.Map(func(r rune) rune {
			if outsideID(r) {
				return '_'
			}
			return r
		}, orig) + "_" + hex.EncodeToString(sum[:6])
	}
	for n, base := 2, s; t.sent[s]; n++ {
		s = fmt.Sprintf("%s_%d", base, n)
	}
	t.of[orig], t.sent[s] = s, true
	return s
}

// keep records id, a tool_use ID of the API's own reply, as sent unchanged.
func (t *toolIDs) keep(id string) {
	t.of[id], t.sent[id] = id, true
}

func outsideID(r rune) bool {
	return !(r == '_' || r == '-' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
}

// turn is one turn of the conversation being built.
type turn struct {
	role   string
	blocks []block
}

const (
	roleUser      = "user"
	roleAssistant = "assistant"
)

// appendBlock adds b to the last turn when it has role, else starts a
// turn. Tool results come before the text of their turn, as the API
// wants, since the loop adds screens after the results.
func appendBlock(turns []turn, role string, b block) []turn {
	if n := len(turns); n > 0 && turns[n-1].role == role {
		turns[n-1].blocks = append(turns[n-1].blocks, b)
		return turns
	}
	return append(turns, turn{role: role, blocks: []block{b}})
}

// assistantBlocks is an assistant message as content blocks: a reply of
// this API as it came but for text blocks of only white space, else its
// text (unless only white space) and its tool calls, their IDs mapped by
// ids.
func assistantBlocks(m agent.Message, ids *toolIDs) ([]block, error) {
	if m.Native != nil && m.Native.API == NativeMessages {
		for _, tc := range m.ToolCalls {
			ids.keep(tc.ID) // the API's own, sent as they came
		}
		var raws []json.RawMessage
		if err := json.Unmarshal(m.Native.Data, &raws); err != nil {
			return nil, fmt.Errorf("native content blocks: %w", err)
		}
		out := make([]block, 0, len(raws))
		for _, r := range raws {
			if blankText(r) {
				continue
			}
			out = append(out, block{native: r})
		}
		// With no block left the reply is no turn at all: the user turns
		// around it join, as for a reply with no content.
		return out, nil
	}
	var out []block
	if strings.TrimSpace(m.Content) != "" {
		out = append(out, textBlock(m.Content))
	}
	for _, tc := range m.ToolCalls {
		input := json.RawMessage(tc.Arguments)
		var obj map[string]any
		if json.Unmarshal(input, &obj) != nil {
			// The API takes objects only; the model wrote something else.
			input = json.RawMessage(`{}`)
		}
		out = append(out, block{Type: "tool_use", ID: ids.id(tc.ID), Name: tc.Name, Input: input})
	}
	if len(out) == 0 {
		out = append(out, textBlock("(no reply)"))
	}
	return out, nil
}

// blankText reports whether the content block raw is a text block that is
// empty or only white space. Claude sends such a block as its whole reply
// at times ("\n\n" after tool results); the API refuses it when it comes
// back ("text content blocks must contain non-whitespace text").
func blankText(raw json.RawMessage) bool {
	var b struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	return json.Unmarshal(raw, &b) == nil && b.Type == "text" && strings.TrimSpace(b.Text) == ""
}

// markLast puts a cache breakpoint on the last of blocks.
func markLast(blocks []block) {
	if n := len(blocks); n > 0 && blocks[n-1].native == nil {
		blocks[n-1].CacheControl = ephemeral
	}
	// A block sent as it came back (native) keeps no breakpoint: the turn
	// after it, ours, has one from the next request on.
}

// toolParams returns the offered tools outside the deferred groups, the
// last with a cache breakpoint; then, when there are groups, the tool
// search tool and the groups' tools, defer_loading.
func toolParams(req agent.Request) ([]any, error) {
	inGroup := map[string]bool{}
	for _, g := range req.Deferred {
		for _, t := range g.Tools {
			inGroup[t.Name] = true
		}
	}
	var out []any
	var last *tool
	for _, t := range req.Tools {
		if inGroup[t.Name] {
			continue
		}
		tp, err := toolParam(t)
		if err != nil {
			return nil, err
		}
		out, last = append(out, tp), tp
	}
	if last != nil {
		last.CacheControl = ephemeral
	}
	if len(req.Deferred) == 0 {
		return out, nil
	}
	out = append(out, searchTool{Type: "tool_search_tool_regex_20251119", Name: "tool_search_tool_regex"})
	for _, g := range req.Deferred {
		for _, t := range g.Tools {
			tp, err := toolParam(t)
			if err != nil {
				return nil, err
			}
			tp.DeferLoading = true
			if g.Summary != "" {
				tp.Description = fmt.Sprintf("%s (Section %q: %s)", t.Description, g.Section, strings.TrimSpace(g.Summary))
			}
			out = append(out, tp)
		}
	}
	return out, nil
}

// toolParam is t as the API takes it: its parameters, a JSON schema, as
// the input schema, of type object whatever type they give. A tool
// without parameters, or with an object schema and nothing more, has the
// schema {"type": "object"}: the API refuses a tool without input_schema.
func toolParam(t agent.ToolDef) (*tool, error) {
	var schema struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	in := map[string]json.RawMessage{}
	if len(t.Parameters) > 0 {
		if err := json.Unmarshal(t.Parameters, &schema); err != nil {
			return nil, fmt.Errorf("anthropic: tool %s: parameters: %w", t.Name, err)
		}
		if json.Unmarshal(t.Parameters, &in) != nil {
			in = map[string]json.RawMessage{}
		}
		delete(in, "properties")
		delete(in, "required")
		if len(schema.Properties) > 0 && string(schema.Properties) != "null" {
			in["properties"] = schema.Properties
		}
		if schema.Required != nil {
			in["required"], _ = json.Marshal(schema.Required)
		}
	}
	in["type"] = json.RawMessage(`"object"`)
	raw, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("anthropic: tool %s: parameters: %w", t.Name, err)
	}
	return &tool{Name: t.Name, Description: t.Description, InputSchema: raw}, nil
}
