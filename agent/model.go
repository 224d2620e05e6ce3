package agent

import (
	"context"
	"encoding/json"
)

// Model is a chat model the loop talks to: messages and tool definitions in,
// an assistant message (text, tool calls or both) out.
//
// Complete is called from one goroutine at a time per run; an adapter shared
// by several runs must be safe for concurrent use. It must return when ctx is
// done, with an error wrapping ctx's error. Request.OnDelta, when set, is
// called from Complete's goroutine with pieces of the reply as they arrive,
// before Complete returns; Complete must not call it after returning. The
// request's slices belong to the caller and must not be kept after Complete
// returns.
type Model interface {
	Complete(ctx context.Context, req Request) (Response, error)
}

// ModelFunc adapts a function to the Model interface.
type ModelFunc func(ctx context.Context, req Request) (Response, error)

// Complete calls f.
func (f ModelFunc) Complete(ctx context.Context, req Request) (Response, error) { return f(ctx, req) }

// Role says who wrote a message.
type Role string

// The roles of a conversation.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool" // the result of one tool call
)

// Message is one message of the conversation.
type Message struct {
	Role    Role   `json:"role"`
	Content string `json:"content,omitempty"`
	// ToolCalls are the calls an assistant message makes.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID names the call a tool message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
}

// ToolCall is one tool call of an assistant message. Arguments is the JSON
// text the model wrote, which may not be valid JSON.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolDef is a tool as a model sees it: a name, a description and the JSON
// schema of its arguments.
type ToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Request is one call to a model.
type Request struct {
	Messages []Message
	Tools    []ToolDef // empty in text-action mode
	// OnDelta, when not nil, receives the reply in pieces as it streams.
	OnDelta func(Delta)
}

// Delta is a piece of a streaming reply: text, or part of a tool call
// (the call's index in the reply, its name when it starts, and a fragment of
// its arguments).
type Delta struct {
	Content   string `json:"content,omitempty"`
	ToolIndex int    `json:"tool_index,omitempty"`
	ToolName  string `json:"tool_name,omitempty"`
	ToolArgs  string `json:"tool_args,omitempty"`
}

// Response is a model's reply.
type Response struct {
	Message      Message `json:"message"` // RoleAssistant
	FinishReason string  `json:"finish_reason,omitempty"`
	Usage        Usage   `json:"usage"`
}

// Usage counts the tokens of one request, or of a whole run.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	CachedTokens     int `json:"cached_tokens,omitempty"` // prompt tokens served from the provider's cache
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{u.PromptTokens + v.PromptTokens, u.CompletionTokens + v.CompletionTokens, u.CachedTokens + v.CachedTokens}
}

// Total returns prompt plus completion tokens.
func (u Usage) Total() int { return u.PromptTokens + u.CompletionTokens }
