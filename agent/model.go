package agent

import (
	"context"
	"encoding/json"
	"math"
	"time"
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
// returns. Request.OnRetry, when set, is called the same way before each
// retry the adapter makes.
//
// A model may also implement [Featured] to say what its API supports.
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
	// Loads names the deferred tools ([Request.Deferred]) a tool message
	// makes available: the tools of the sections the call opened. An
	// adapter whose API loads deferred tools by reference sends one
	// reference per name with the result.
	Loads []string `json:"loads,omitempty"`
	// Native is an assistant message as the provider's API gave it, for
	// an adapter that must send it back as it was (reasoning items,
	// server-side tool searches); other adapters ignore it.
	Native *Native `json:"native,omitempty"`
}

// Native is a reply in one API's own format.
type Native struct {
	API  string          `json:"api"` // the adapter that wrote it, such as "openai.responses"
	Data json.RawMessage `json:"data"`
}

// ToolCall is one tool call of an assistant message. Arguments is the JSON
// text the model wrote, which may not be valid JSON.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	// Cut says the reply ended while the model was writing this call
	// (it reached its output token limit): Arguments are what came, and
	// the loop answers the call without running it.
	Cut bool `json:"cut,omitempty"`
}

// ToolDef is a tool as a model sees it: a name, a description and the JSON
// schema of its arguments.
type ToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// ToolGroup is the tools of one section that was not shown in full when
// the run started.
type ToolGroup struct {
	Section string    `json:"section"` // the section's dotted path
	Title   string    `json:"title"`
	Summary string    `json:"summary,omitempty"`
	Tools   []ToolDef `json:"tools"`
}

// Request is one call to a model.
type Request struct {
	Messages []Message
	// Tools are the tools offered now, empty in text-action mode. With
	// [DisclosureAppend] the list only grows: the tools of a section that
	// opens are added at its end.
	Tools []ToolDef
	// Deferred, with DisclosureAppend, is the tools of every section not
	// shown in full when the run started, the same in every request of
	// the run. An adapter whose API defers tools natively
	// (Features.DefersTools) declares these groups deferred from the first
	// request and sends a tool of Tools that is in a group only through
	// its group, loaded by the result that opened it ([Message.Loads]), so
	// the tool list it sends never changes. Other adapters ignore it.
	Deferred []ToolGroup
	// OnDelta, when not nil, receives the reply in pieces as it streams.
	OnDelta func(Delta)
	// OnRetry, when not nil, is told about each retry before its wait.
	OnRetry func(Retry)
}

// Retry is a request an adapter is about to send again.
type Retry struct {
	Attempt int           `json:"attempt"` // the attempt that failed, from 1
	Delay   time.Duration `json:"delay"`   // the wait before the next one
	Reason  string        `json:"reason"`  // what failed: "429 rate limited", "connection refused"
}

// Features are what a model's API supports, for the loop to choose how to
// show sections.
type Features struct {
	// CachesPrefixes: the provider bills and serves a prompt prefix it has
	// seen before for less, so [DisclosureAppend] is the default.
	CachesPrefixes bool
	// DefersTools: the adapter sends Request.Deferred as the API's own
	// deferred tools.
	DefersTools bool
}

// Featured is implemented by models that say what their API supports;
// a model that does not has no features.
type Featured interface {
	Features() Features
}

func featuresOf(m Model) Features {
	if f, ok := m.(Featured); ok {
		return f.Features()
	}
	return Features{}
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
	Message Message `json:"message"` // RoleAssistant
	// Finish is why the reply ended, which the loop acts on; ""
	// is FinishComplete.
	Finish Finish `json:"finish,omitempty"`
	// FinishReason is the provider's own word for it (stop_reason,
	// finish_reason), for the transcript.
	FinishReason string `json:"finish_reason,omitempty"`
	Usage        Usage  `json:"usage"`
}

// Usage counts the tokens of one request, or of a whole run. The first
// four are the provider's figures; the last two are the run's own count
// of the request as the loop laid it out (tools, system message, messages,
// in the order providers cache them), with the run's token counter.
type Usage struct {
	// PromptTokens are all input tokens, cached or not.
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// CachedTokens are the input tokens served from the provider's cache
	// (cached_tokens, cache_read_input_tokens).
	CachedTokens int `json:"cached_tokens,omitempty"`
	// CacheWriteTokens are the input tokens the provider wrote to its
	// cache (cache_creation_input_tokens), billed higher by some.
	CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
	// RequestTokens is the request as the run counts it.
	RequestTokens int `json:"request_tokens,omitempty"`
	// PrefixTokens are those of RequestTokens in a prefix identical to
	// the previous request: what a prefix cache can serve.
	PrefixTokens int `json:"prefix_tokens,omitempty"`
}

// Add returns the sum of u and v. A sum past the range of int stays at
// its end instead of wrapping around.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		PromptTokens: addTokens(u.PromptTokens, v.PromptTokens), CompletionTokens: addTokens(u.CompletionTokens, v.CompletionTokens),
		CachedTokens: addTokens(u.CachedTokens, v.CachedTokens), CacheWriteTokens: addTokens(u.CacheWriteTokens, v.CacheWriteTokens),
		RequestTokens: addTokens(u.RequestTokens, v.RequestTokens), PrefixTokens: addTokens(u.PrefixTokens, v.PrefixTokens),
	}
}

// Total returns prompt plus completion tokens, as Add sums them.
func (u Usage) Total() int { return addTokens(u.PromptTokens, u.CompletionTokens) }

// addTokens returns a+b, held at math.MaxInt or math.MinInt when the sum
// is past them.
func addTokens(a, b int) int {
	switch {
	case b > 0 && a > math.MaxInt-b:
		return math.MaxInt
	case b < 0 && a < math.MinInt-b:
		return math.MinInt
	}
	return a + b
}
