package anthropic

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/unfold-dev/unfold/agent"
)

// params translates a request: the system message as one system block,
// the conversation as alternating turns (tool results and the text after
// them in one user turn), the tools with the deferred groups last, and the
// three cache breakpoints.
func (c *Client) params(req agent.Request) (sdk.MessageNewParams, error) {
	p := sdk.MessageNewParams{Model: sdk.Model(c.opts.Model), MaxTokens: c.opts.MaxTokens}
	cache := sdk.NewCacheControlEphemeralParam()
	deferred := map[string]bool{}
	for _, g := range req.Deferred {
		for _, t := range g.Tools {
			deferred[t.Name] = true
		}
	}
	var turns []turn
	for i, m := range req.Messages {
		switch m.Role {
		case agent.RoleSystem:
			if i != 0 {
				return p, fmt.Errorf("anthropic: message %d: a system message after the first", i)
			}
			if m.Content != "" {
				p.System = []sdk.TextBlockParam{{Text: m.Content, CacheControl: cache}}
			}
		case agent.RoleUser:
			turns = appendBlock(turns, roleUser, sdk.NewTextBlock(m.Content))
		case agent.RoleTool:
			res := &sdk.ToolResultBlockParam{ToolUseID: m.ToolCallID}
			if strings.HasPrefix(m.Content, "Error: ") {
				res.IsError = sdk.Bool(true)
			}
			res.Content = append(res.Content, sdk.ToolResultBlockParamContentUnion{OfText: &sdk.TextBlockParam{Text: orNone(m.Content)}})
			for _, name := range m.Loads {
				if !deferred[name] {
					// Not deferred in this request (a resumed run
					// started with its section open): the API refuses
					// a reference to it, and the tool is in the list.
					continue
				}
				res.Content = append(res.Content, sdk.ToolResultBlockParamContentUnion{OfToolReference: &sdk.ToolReferenceBlockParam{ToolName: name}})
			}
			turns = appendBlock(turns, roleUser, sdk.ContentBlockParamUnion{OfToolResult: res})
		case agent.RoleAssistant:
			blocks, err := assistantBlocks(m)
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
	}
	for _, t := range turns {
		if t.role == roleUser {
			p.Messages = append(p.Messages, sdk.NewUserMessage(t.blocks...))
		} else {
			p.Messages = append(p.Messages, sdk.NewAssistantMessage(t.blocks...))
		}
	}
	tools, err := toolParams(req)
	if err != nil {
		return p, err
	}
	p.Tools = tools
	return p, nil
}

func orNone(s string) string {
	if s == "" {
		return "(no output)"
	}
	return s
}

// turn is one turn of the conversation being built.
type turn struct {
	role   string
	blocks []sdk.ContentBlockParamUnion
}

const (
	roleUser      = "user"
	roleAssistant = "assistant"
)

// appendBlock adds b to the last turn when it has role, else starts a
// turn. Tool results come before the text of their turn, as the API
// wants, since the loop adds screens after the results.
func appendBlock(turns []turn, role string, b sdk.ContentBlockParamUnion) []turn {
	if n := len(turns); n > 0 && turns[n-1].role == role {
		turns[n-1].blocks = append(turns[n-1].blocks, b)
		return turns
	}
	return append(turns, turn{role: role, blocks: []sdk.ContentBlockParamUnion{b}})
}

// assistantBlocks is an assistant message as content blocks: a reply of
// this API as it came, else its text and tool calls.
func assistantBlocks(m agent.Message) ([]sdk.ContentBlockParamUnion, error) {
	if m.Native != nil && m.Native.API == NativeMessages {
		var raws []json.RawMessage
		if err := json.Unmarshal(m.Native.Data, &raws); err != nil {
			return nil, fmt.Errorf("native content blocks: %w", err)
		}
		out := make([]sdk.ContentBlockParamUnion, 0, len(raws))
		for _, r := range raws {
			out = append(out, param.Override[sdk.ContentBlockParamUnion](r))
		}
		return out, nil
	}
	var out []sdk.ContentBlockParamUnion
	if m.Content != "" {
		out = append(out, sdk.NewTextBlock(m.Content))
	}
	for _, tc := range m.ToolCalls {
		input := json.RawMessage(tc.Arguments)
		var obj map[string]any
		if json.Unmarshal(input, &obj) != nil {
			// The API takes objects only; the model wrote something else.
			input = json.RawMessage(`{}`)
		}
		out = append(out, sdk.ContentBlockParamUnion{OfToolUse: &sdk.ToolUseBlockParam{ID: tc.ID, Name: tc.Name, Input: input}})
	}
	if len(out) == 0 {
		out = append(out, sdk.NewTextBlock("(no reply)"))
	}
	return out, nil
}

// markLast puts a cache breakpoint on the last of blocks.
func markLast(blocks []sdk.ContentBlockParamUnion) {
	if len(blocks) == 0 {
		return
	}
	b := &blocks[len(blocks)-1]
	cache := sdk.NewCacheControlEphemeralParam()
	switch {
	case b.OfText != nil:
		b.OfText.CacheControl = cache
	case b.OfToolResult != nil:
		b.OfToolResult.CacheControl = cache
	case b.OfToolUse != nil:
		b.OfToolUse.CacheControl = cache
	}
	// A block sent as it came back (native) keeps no breakpoint: the turn
	// after it, ours, has one from the next request on.
}

// toolParams returns the offered tools outside the deferred groups, the
// last with a cache breakpoint; then, when there are groups, the tool
// search tool and the groups' tools, defer_loading.
func toolParams(req agent.Request) ([]sdk.ToolUnionParam, error) {
	inGroup := map[string]bool{}
	for _, g := range req.Deferred {
		for _, t := range g.Tools {
			inGroup[t.Name] = true
		}
	}
	var out []sdk.ToolUnionParam
	for _, t := range req.Tools {
		if inGroup[t.Name] {
			continue
		}
		tp, err := toolParam(t)
		if err != nil {
			return nil, err
		}
		out = append(out, sdk.ToolUnionParam{OfTool: tp})
	}
	if n := len(out); n > 0 {
		out[n-1].OfTool.CacheControl = sdk.NewCacheControlEphemeralParam()
	}
	if len(req.Deferred) == 0 {
		return out, nil
	}
	out = append(out, sdk.ToolUnionParam{OfToolSearchToolRegex20251119: &sdk.ToolSearchToolRegex20251119Param{
		Type: sdk.ToolSearchToolRegex20251119TypeToolSearchToolRegex20251119,
	}})
	for _, g := range req.Deferred {
		for _, t := range g.Tools {
			tp, err := toolParam(t)
			if err != nil {
				return nil, err
			}
			tp.DeferLoading = sdk.Bool(true)
			if g.Summary != "" {
				tp.Description = sdk.String(fmt.Sprintf("%s (Section %q: %s)", t.Description, g.Section, strings.TrimSpace(g.Summary)))
			}
			out = append(out, sdk.ToolUnionParam{OfTool: tp})
		}
	}
	return out, nil
}

func toolParam(t agent.ToolDef) (*sdk.ToolParam, error) {
	var schema struct {
		Properties any      `json:"properties"`
		Required   []string `json:"required"`
	}
	if len(t.Parameters) > 0 {
		if err := json.Unmarshal(t.Parameters, &schema); err != nil {
			return nil, fmt.Errorf("anthropic: tool %s: parameters: %w", t.Name, err)
		}
	}
	in := sdk.ToolInputSchemaParam{Properties: schema.Properties, Required: schema.Required}
	var extra map[string]any
	if len(t.Parameters) > 0 && json.Unmarshal(t.Parameters, &extra) == nil {
		delete(extra, "type")
		delete(extra, "properties")
		delete(extra, "required")
		if len(extra) > 0 {
			in.ExtraFields = extra
		}
	}
	return &sdk.ToolParam{Name: t.Name, Description: sdk.String(t.Description), InputSchema: in}, nil
}
