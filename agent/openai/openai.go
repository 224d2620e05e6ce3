package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/agent/internal/transport"
)

// Client is an agent.Model for an OpenAI-compatible chat completions
// endpoint, streaming its replies. It is safe for concurrent use.
type Client struct {
	opts options
	// chat is the SDK's chat service alone, not its whole client: the
	// client would link every service of the API into the program.
	chat sdk.ChatService
	// noStream is set once the endpoint refused a streaming request.
	noStream atomic.Bool
}

var (
	_ agent.Model    = (*Client)(nil)
	_ agent.Featured = (*Client)(nil)
)

// New returns a client for the endpoint at baseURL (such as
// https://api.openai.com/v1 or http://localhost:11434/v1) serving model. It
// fails without a base URL or a model.
func New(baseURL, model string, opt ...Option) (*Client, error) {
	opts, err := newOptions(baseURL, model, opt)
	if err != nil {
		return nil, err
	}
	return &Client{opts: opts, chat: sdk.NewChatService(opts.requestOptions()...)}, nil
}

// Features says that chat completions endpoints cache prompt prefixes (as
// OpenAI, vLLM and llama.cpp do) and have no deferred tools.
func (c *Client) Features() agent.Features { return agent.Features{CachesPrefixes: true} }

// StatusError is a reply with an error status, after any retries. A
// Responses stream that opened with an error event or response.failed
// is retried as its status would be (529 for server_is_overloaded, 500
// for server_error, 429 for rate_limit_exceeded) and has that
// StatusCode.
type StatusError struct {
	StatusCode int
	Message    string // the server's message, or what the reply was
	Attempts   int
	API        string // "chat completions", "responses"
	// InStream says what the error that opened the stream was, such as
	// "overloaded"; "" for an error status.
	InStream string
	// window: the endpoint refused the request for its size (tooLong);
	// output: for the output limit it asked for (namesOutput).
	window, output bool
}

// Is reports whether the error is the endpoint refusing the request for
// its size, [agent.ErrContextWindow], or for the output limit asked for
// with it, [agent.ErrOutputLimit].
func (e *StatusError) Is(target error) bool {
	switch target {
	case agent.ErrContextWindow:
		return e.window && !e.output
	case agent.ErrOutputLimit:
		return e.window && e.output
	}
	return false
}

func (e *StatusError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = "(no message)"
	}
	api := e.API
	if api == "" {
		api = "chat completions"
	}
	s := fmt.Sprintf("openai: %s: %d %s: %s", api, e.StatusCode, http.StatusText(e.StatusCode), msg)
	if e.InStream != "" {
		s = fmt.Sprintf("openai: %s: %s (in the stream): %s", api, e.InStream, msg)
	}
	if e.Attempts > 1 {
		s += fmt.Sprintf(" (after %d attempts)", e.Attempts)
	}
	return s
}

// Complete sends req as a streaming chat completion and returns the
// assembled reply. The SDK retries a request that got no reply, or 429 or
// a 5xx status, after the server's Retry-After or a backoff, each retry
// told to req.OnRetry. An endpoint that answers a streaming request with
// one JSON document is read as such; one that refuses to stream is asked
// again without streaming, and from then on.
func (c *Client) Complete(ctx context.Context, req agent.Request) (agent.Response, error) {
	params, err := c.params(req)
	if err != nil {
		return agent.Response{}, err
	}
	bounded, cancel := transport.Deadline(ctx, c.opts.Timeout)
	defer cancel()
	return complete(ctx, &c.noStream, c.opts.Policy, req,
		func(call *transport.Call) (agent.Response, error) {
			return c.stream(transport.With(bounded, call), call, params, req)
		},
		func(call *transport.Call) (agent.Response, error) {
			cc, err := c.chat.Completions.New(transport.With(bounded, call), params)
			if err != nil {
				return agent.Response{}, err
			}
			return fromCompletion(cc)
		},
		func(call *transport.Call, err error) error { return c.failure(ctx, call, err) })
}

// complete makes a model call: streaming, unless the endpoint refused to
// stream before; without streaming when it refuses now, and from then on.
// failure names what went wrong.
func complete(ctx context.Context, noStream *atomic.Bool, policy transport.Policy, req agent.Request,
	stream, plain func(*transport.Call) (agent.Response, error), failure func(*transport.Call, error) error) (agent.Response, error) {
	if !noStream.Load() {
		call := &transport.Call{Policy: policy, OnRetry: req.OnRetry, Stream: true}
		resp, err := stream(call)
		if err == nil {
			return resp, nil
		}
		if !refusesStream(err) {
			return agent.Response{}, failure(call, err)
		}
		noStream.Store(true)
	}
	call := &transport.Call{Policy: policy, OnRetry: req.OnRetry}
	resp, err := plain(call)
	if err != nil {
		return agent.Response{}, failure(call, err)
	}
	return resp, nil
}

// failure names what went wrong, or is nil.
func (c *Client) failure(ctx context.Context, call *transport.Call, err error) error {
	return failure(ctx, c.opts, "chat completions", call, err)
}

// failure names what went wrong with call to api, or is nil: the API's
// own error as a *StatusError, anything else as the transport says.
func failure(ctx context.Context, opts options, api string, call *transport.Call, err error) error {
	if err == nil {
		return nil
	}
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) && ctx.Err() == nil {
		return &StatusError{StatusCode: apiErr.StatusCode, Message: serverMessage(apiErr, call), Attempts: call.Attempts(), API: api, InStream: call.Last().InStream, window: tooLong(apiErr), output: namesOutput(apiErr.Message)}
	}
	return transport.Failure(ctx, "openai: "+api, opts.BaseURL, opts.Timeout, call, err)
}

// contextLengthExceeded is the code OpenAI's APIs refuse a request with
// when it does not fit the model's context window.
const contextLengthExceeded = "context_length_exceeded"

// tooLong reports whether err is an endpoint refusing a request for its
// size: OpenAI's code context_length_exceeded, llama.cpp's type
// exceed_context_size_error, vLLM's "maximum context length is" message
// (as OpenAI's), or 413 (a body past the server's limit).
func tooLong(err *sdk.Error) bool {
	switch {
	case err.StatusCode == http.StatusRequestEntityTooLarge:
		return true
	case err.StatusCode != http.StatusBadRequest:
		return false
	}
	return err.Code == contextLengthExceeded || err.Type == "exceed_context_size_error" ||
		strings.Contains(strings.ToLower(err.Message), "maximum context length is")
}

// namesOutput reports whether a refusal for the request's size names the
// output limit asked for: vLLM's "'max_tokens' or 'max_completion_tokens'
// is too large: 40000", OpenAI's "you requested 9000 tokens (1000 in the
// messages, 8000 in the completion)".
func namesOutput(msg string) bool {
	msg = strings.ToLower(msg)
	return strings.Contains(msg, "max_tokens") || strings.Contains(msg, "max_completion_tokens") || strings.Contains(msg, "in the completion")
}

// refusesStream reports whether err is an endpoint saying it does not
// stream: an error status naming stream or stream_options as the
// parameter at fault (OpenAI's "'stream' does not support true with this
// model", param "stream"), or a message that names streaming as a word
// and says it is not supported. A message that only holds the letters
// (a proxy's "upstream error") or a body that echoes the request is
// another error, shown as it is.
func refusesStream(err error) bool {
	var apiErr *sdk.Error
	if !errors.As(err, &apiErr) {
		return false
	}
	switch apiErr.StatusCode {
	case http.StatusBadRequest, http.StatusNotFound, http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity, http.StatusNotImplemented:
	default:
		return false
	}
	if apiErr.Param == "stream" || apiErr.Param == "stream_options" {
		return true
	}
	msg := strings.ToLower(apiErr.Message)
	return streamWord().MatchString(msg) && streamRefusal().MatchString(msg)
}

var (
	// streamWord finds streaming named as a word in an error message.
	streamWord = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\bstream(ing|_options)?\b`)
	})
	// streamRefusal finds the words servers refuse a parameter or a
	// feature with.
	streamRefusal = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`not supported|unsupported|(not|n't) support|not allowed|not permitted|not available|unrecognized|unknown (parameter|field|argument)|extra inputs|only the default|disabled`)
	})
)

// MaxReplyBytes bounds the text and tool arguments of one streamed reply.
const MaxReplyBytes = transport.MaxBodyBytes

// errUnusable marks a reply that came but was not a chat completion.
var errUnusable = errors.New("the reply is not a chat completion")

// stream makes one streaming request (the SDK retrying it as long as
// nothing has streamed).
func (c *Client) stream(ctx context.Context, call *transport.Call, params sdk.ChatCompletionNewParams, req agent.Request) (agent.Response, error) {
	params.StreamOptions = sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)}
	s := c.chat.Completions.NewStreaming(ctx, params)
	defer s.Close()
	var acc sdk.ChatCompletionAccumulator
	var calls callSlots
	// usage is the last usage a chunk carried: each is the reply's total
	// so far. OpenAI sends it once, on the last chunk; other endpoints
	// (Gemini's, Together, Groq, DeepSeek) on many or all, which the
	// accumulator would add up.
	var usage sdk.CompletionUsage
	streamed := false
	size := 0
	for s.Next() {
		chunk := s.Current()
		streamed = true
		for i := range chunk.Choices {
			ch := &chunk.Choices[i]
			size += len(ch.Delta.Content) + len(ch.Delta.Refusal)
			for _, tc := range ch.Delta.ToolCalls {
				size += len(tc.Function.Arguments) + len(tc.Function.Name)
			}
			if ch.Index != 0 {
				// Only the first choice is read.
				ch.Delta.ToolCalls = nil
				continue
			}
			if err := calls.place(ch.Delta.ToolCalls); err != nil {
				return agent.Response{}, err
			}
		}
		if size > MaxReplyBytes {
			return agent.Response{}, fmt.Errorf("the reply is over %d bytes; stopped reading it", MaxReplyBytes)
		}
		if chunk.JSON.Usage.Valid() {
			usage = chunk.Usage
		}
		if !acc.AddChunk(chunk) {
			return agent.Response{}, errors.New("the stream sent a chunk that does not fit the reply so far")
		}
		if req.OnDelta != nil {
			deltas(chunk, req.OnDelta)
		}
	}
	if err := call.BodyErr(); err != nil {
		return agent.Response{}, err // before the SDK's error: it is this one, wrapped
	}
	if err := s.Err(); err != nil {
		if streamed {
			return agent.Response{}, fmt.Errorf("the stream broke: %w", err)
		}
		return agent.Response{}, err
	}
	if body := call.Body(); body != nil && !streamed {
		// The endpoint answered with one document: a completion, if it
		// is one.
		var cc sdk.ChatCompletion
		if err := json.Unmarshal(body, &cc); err != nil || len(cc.Choices) == 0 {
			return agent.Response{}, errUnusable
		}
		resp, err := fromCompletion(&cc)
		if err == nil && req.OnDelta != nil && resp.Message.Content != "" {
			req.OnDelta(agent.Delta{Content: resp.Message.Content})
		}
		return resp, err
	}
	if len(acc.Choices) == 0 {
		return agent.Response{}, errUnusable
	}
	if acc.Choices[0].FinishReason == "" {
		// The body ended cleanly, but the reply did not: a proxy or a
		// worker cut it.
		return agent.Response{}, errors.New("the stream ended before the reply finished")
	}
	acc.ChatCompletion.Usage = usage
	resp, err := fromCompletion(&acc.ChatCompletion)
	return resp, err
}

// callSlots assembles the streamed tool calls of a reply's first choice
// where the accumulator, which keys calls by index and appends each
// name, would join them. Servers differ from OpenAI's stream: some send
// the whole name again in every chunk (MiniMax through NVIDIA NIM,
// Fireworks, Kimi), some leave out the index and send parallel calls one
// to a chunk (Gemini's OpenAI-compatible endpoint), some count indices
// from 1. A call is found by its index, unless it carries both a name
// and an ID other than the call's there (some servers send every call at
// index 0); then by its ID; a delta with neither is the last call's. A
// new index or ID starts a call in the next slot. place rewrites each
// delta's index to its slot and its ID to the call's first, and drops a
// name equal to the call's name so far, before the accumulator sees them.
type callSlots struct {
	ids, names []string       // each slot's call ID and name so far
	byIndex    map[int64]int  // the server's index to its latest slot
	byID       map[string]int // a call ID to its first slot
}

// place rewrites the tool-call deltas of one chunk.
func (c *callSlots) place(deltas []sdk.ChatCompletionChunkChoiceDeltaToolCall) error {
	for i := range deltas {
		tc := &deltas[i]
		hasIndex := tc.JSON.Index.Valid()
		slot := -1
		k, known := c.byIndex[tc.Index]
		switch {
		case hasIndex && known && (tc.ID == "" || c.ids[k] == "" || c.ids[k] == tc.ID || tc.Function.Name == ""):
			// A new ID with no name continues the call: some servers
			// change the ID after the first chunk (Poolside) or in every
			// chunk (mlx-openai-server), and the index is OpenAI's key.
			slot = k
		case hasIndex && !known:
			// A new index is a new call, whatever its ID: two calls of
			// a reply may have one ID, which the loop renames.
		case tc.ID != "":
			if k, ok := c.byID[tc.ID]; ok {
				slot = k
			}
		case len(c.ids) > 0:
			slot = len(c.ids) - 1
		}
		if slot < 0 {
			if len(c.ids) >= transport.MaxToolCalls {
				return transport.TooManyCalls
			}
			slot = len(c.ids)
			c.ids = append(c.ids, "")
			c.names = append(c.names, "")
			if hasIndex {
				if c.byIndex == nil {
					c.byIndex = map[int64]int{}
				}
				c.byIndex[tc.Index] = slot
			}
		}
		if c.ids[slot] == "" && tc.ID != "" {
			c.ids[slot] = tc.ID
			if _, ok := c.byID[tc.ID]; !ok {
				if c.byID == nil {
					c.byID = map[string]int{}
				}
				c.byID[tc.ID] = slot
			}
		}
		tc.ID = c.ids[slot] // the call keeps its first ID
		if tc.Function.Name != "" && tc.Function.Name == c.names[slot] {
			tc.Function.Name = "" // sent whole again
		}
		c.names[slot] += tc.Function.Name
		tc.Index = int64(slot)
	}
	return nil
}

// deltas reports a chunk's pieces of the first choice.
func deltas(chunk sdk.ChatCompletionChunk, onDelta func(agent.Delta)) {
	for _, ch := range chunk.Choices {
		if ch.Index != 0 {
			continue
		}
		if ch.Delta.Content != "" {
			onDelta(agent.Delta{Content: ch.Delta.Content})
		}
		for _, tc := range ch.Delta.ToolCalls {
			if tc.Function.Name != "" || tc.Function.Arguments != "" {
				onDelta(agent.Delta{ToolIndex: int(tc.Index), ToolName: tc.Function.Name, ToolArgs: tc.Function.Arguments})
			}
		}
	}
}

// fromCompletion reads a completion's first choice. A refusal is the
// message's text; the last tool call of a reply cut by its token limit
// or a content filter is marked cut.
func fromCompletion(cc *sdk.ChatCompletion) (agent.Response, error) {
	if len(cc.Choices) == 0 {
		return agent.Response{}, errUnusable
	}
	choice := cc.Choices[0]
	if len(choice.Message.ToolCalls) > transport.MaxToolCalls {
		return agent.Response{}, transport.TooManyCalls
	}
	out := agent.Response{
		Message:      agent.Message{Role: agent.RoleAssistant, Content: choice.Message.Content + choice.Message.Refusal},
		Finish:       chatFinish(choice.FinishReason, choice.Message.Refusal),
		FinishReason: choice.FinishReason,
		Usage: agent.Usage{
			PromptTokens:     transport.Tokens(float64(cc.Usage.PromptTokens)),
			CompletionTokens: transport.Tokens(float64(cc.Usage.CompletionTokens)),
			// Cached tokens are some of the prompt's.
			CachedTokens: min(transport.Tokens(float64(cc.Usage.PromptTokensDetails.CachedTokens)), transport.Tokens(float64(cc.Usage.PromptTokens))),
		},
	}
	for _, tc := range choice.Message.ToolCalls {
		if tc.ID == "" && tc.Function.Name == "" && tc.Function.Arguments == "" {
			continue // a slot a stream's index skipped
		}
		out.Message.ToolCalls = append(out.Message.ToolCalls, agent.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	if n := len(out.Message.ToolCalls); n > 0 && (out.Finish == agent.FinishTruncated || out.Finish == agent.FinishFiltered) {
		out.Message.ToolCalls[n-1].Cut = true
	}
	return out, nil
}

// chatFinish maps a finish_reason onto the loop's: a refusal, whatever
// the reason, is one.
func chatFinish(reason, refusal string) agent.Finish {
	switch {
	case refusal != "":
		return agent.FinishRefused
	case reason == "length":
		return agent.FinishTruncated
	case reason == "content_filter":
		return agent.FinishFiltered
	}
	return agent.FinishComplete
}

// params translates a request to the SDK's parameters.
func (c *Client) params(req agent.Request) (sdk.ChatCompletionNewParams, error) {
	p := sdk.ChatCompletionNewParams{Model: shared.ChatModel(c.opts.Model)}
	if c.opts.Temperature != nil {
		p.Temperature = sdk.Float(*c.opts.Temperature)
	}
	if c.opts.MaxTokens > 0 {
		p.MaxCompletionTokens = sdk.Int(c.opts.MaxTokens)
	}
	for i, m := range req.Messages {
		switch m.Role {
		case agent.RoleSystem:
			p.Messages = append(p.Messages, sdk.SystemMessage(m.Content))
		case agent.RoleUser:
			p.Messages = append(p.Messages, sdk.UserMessage(m.Content))
		case agent.RoleTool:
			p.Messages = append(p.Messages, sdk.ToolMessage(m.Content, m.ToolCallID))
		case agent.RoleAssistant:
			am := &sdk.ChatCompletionAssistantMessageParam{}
			if m.Content != "" || len(m.ToolCalls) == 0 {
				am.Content.OfString = sdk.String(m.Content)
			}
			for _, tc := range m.ToolCalls {
				am.ToolCalls = append(am.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
						ID:       tc.ID,
						Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: sentArguments(tc.Arguments)},
					},
				})
			}
			p.Messages = append(p.Messages, sdk.ChatCompletionMessageParamUnion{OfAssistant: am})
		default:
			return p, fmt.Errorf("openai: message %d: unknown role %q", i, m.Role)
		}
	}
	for _, t := range req.Tools {
		schema, err := schemaOf(t)
		if err != nil {
			return p, err
		}
		p.Tools = append(p.Tools, sdk.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name:        t.Name,
			Description: sdk.String(t.Description),
			Parameters:  shared.FunctionParameters(schema),
		}))
	}
	return p, nil
}

// sentArguments is a call's arguments as they go back in the history:
// {} for arguments that are not JSON (a reply cut in the call, a model's
// slip), which strict servers refuse with the whole request. The call's
// result says what was wrong with them.
func sentArguments(args string) string {
	if !json.Valid([]byte(args)) {
		return "{}"
	}
	return args
}

func schemaOf(t agent.ToolDef) (map[string]any, error) {
	var schema map[string]any
	if len(t.Parameters) > 0 {
		if err := json.Unmarshal(t.Parameters, &schema); err != nil {
			return nil, fmt.Errorf("openai: tool %s: parameters: %w", t.Name, err)
		}
	}
	return schema, nil
}

// serverMessage is the message the server gave with an error status, or,
// when the reply was not JSON, what it was.
func serverMessage(e *sdk.Error, call *transport.Call) string {
	return transport.ServerMessage(e.Message, e.RawJSON(), call)
}
