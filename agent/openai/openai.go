package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/agent/internal/transport"
)

// Client is an agent.Model for an OpenAI-compatible chat completions
// endpoint, streaming its replies. It is safe for concurrent use.
type Client struct {
	opts options
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
	return &Client{opts: opts}, nil
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
// assembled reply. A request that got no reply, or 408, 409, 429 or a 5xx
// status, is made again after the server's Retry-After or a backoff, each
// retry told to req.OnRetry. An endpoint that answers a streaming request
// with one JSON document is read as such; one that refuses to stream is
// asked again without streaming, and from then on.
func (c *Client) Complete(ctx context.Context, req agent.Request) (agent.Response, error) {
	params, err := c.params(req)
	if err != nil {
		return agent.Response{}, err
	}
	bounded, cancel := transport.Deadline(ctx, c.opts.Timeout)
	defer cancel()
	return complete(ctx, &c.noStream, c.opts.Policy, req,
		func(call *transport.Call) (agent.Response, error) {
			params := params
			params.Stream, params.StreamOptions = true, &streamOptions{IncludeUsage: true}
			return c.stream(bounded, call, params, req)
		},
		func(call *transport.Call) (agent.Response, error) {
			body, err := post(bounded, c.opts, call, "chat/completions", params)
			if err != nil {
				return agent.Response{}, err
			}
			var cc chatCompletion
			if err := decode(body, &cc); err != nil {
				return agent.Response{}, errUnusable
			}
			return fromCompletion(&cc)
		},
		func(call *transport.Call, err error) error { return c.failure(ctx, call, err) })
}

// post sends params as a request that does not stream and returns the
// reply's body.
func post(ctx context.Context, opts options, call *transport.Call, path string, params any) ([]byte, error) {
	res, err := open(ctx, opts, call, path, params)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	reply, err := io.ReadAll(res.Body)
	if err := call.BodyErr(); err != nil {
		return nil, err
	}
	return reply, err
}

// open sends params as a request and returns the reply, as
// transport.Post does: for a streaming request (call.Stream), a 200 that
// is not an event stream has been read into call.Body() and its body is
// empty.
func open(ctx context.Context, opts options, call *transport.Call, path string, params any) (*http.Response, error) {
	body, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	return transport.Post(ctx, opts.endpoint(), call, path, body)
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
	var status *transport.StatusError
	if errors.As(err, &status) && ctx.Err() == nil {
		e := status.API()
		return &StatusError{StatusCode: status.StatusCode, Message: transport.ServerMessage(e.Message, errorObject(status.Body), call), Attempts: call.Attempts(), API: api, InStream: call.Last().InStream, window: tooLong(status.StatusCode, e), output: namesOutput(e.Message)}
	}
	return transport.Failure(ctx, "openai: "+api, opts.BaseURL, opts.Timeout, call, err)
}

// errorObject is what an error status's body says, as it came, for a
// body whose message API did not find: its error object, or the whole
// body when it has none.
func errorObject(body []byte) string {
	var b struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &b) != nil || len(b.Error) == 0 || string(b.Error) == "null" {
		return string(body)
	}
	return string(b.Error)
}

// contextLengthExceeded is the code OpenAI's APIs refuse a request with
// when it does not fit the model's context window.
const contextLengthExceeded = "context_length_exceeded"

// tooLong reports whether err is an endpoint refusing a request for its
// size: OpenAI's code context_length_exceeded, llama.cpp's type
// exceed_context_size_error, vLLM's "maximum context length is" message
// (as OpenAI's), or 413 (a body past the server's limit).
func tooLong(status int, err transport.APIError) bool {
	switch {
	case status == http.StatusRequestEntityTooLarge:
		return true
	case status != http.StatusBadRequest:
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
	var status *transport.StatusError
	if !errors.As(err, &status) {
		return false
	}
	switch status.StatusCode {
	case http.StatusBadRequest, http.StatusNotFound, http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity, http.StatusNotImplemented:
	default:
		return false
	}
	apiErr := status.API()
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

// stream makes one streaming request (retried as long as nothing has
// streamed) and reads its chunks into the reply.
func (c *Client) stream(ctx context.Context, call *transport.Call, params chatRequest, req agent.Request) (agent.Response, error) {
	res, err := open(ctx, c.opts, call, "chat/completions", params)
	if err != nil {
		return agent.Response{}, err
	}
	defer res.Body.Close()
	var acc chatAccumulator
	var calls callSlots
	// usage is the last usage a chunk carried: each is the reply's total
	// so far. OpenAI sends it once, on the last chunk; other endpoints
	// (Gemini's, Together, Groq, DeepSeek) on many or all, which adding
	// them up would count many times.
	var usage *chatUsage
	streamed := false
	size := 0
	events := transport.NewEvents(res.Body)
	for {
		var chunk chatChunk
		done, err := nextEvent(events, &chunk, true)
		if err != nil {
			return agent.Response{}, call.ReadFailure(streamed, err)
		}
		if done {
			break
		}
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
			return agent.Response{}, transport.ErrOverBody
		}
		if chunk.Usage != nil {
			usage = chunk.Usage
		}
		if !acc.add(&chunk) {
			return agent.Response{}, errors.New("the stream sent a chunk that does not fit the reply so far")
		}
		if req.OnDelta != nil {
			deltas(&chunk, req.OnDelta)
		}
	}
	if err := call.BodyErr(); err != nil {
		return agent.Response{}, err
	}
	if body := call.Body(); body != nil && !streamed {
		// The endpoint answered with one document: a completion, if it
		// is one.
		var cc chatCompletion
		if err := decode(body, &cc); err != nil || len(cc.Choices) == 0 {
			return agent.Response{}, errUnusable
		}
		resp, err := fromCompletion(&cc)
		if err == nil && req.OnDelta != nil && resp.Message.Content != "" {
			req.OnDelta(agent.Delta{Content: resp.Message.Content})
		}
		return resp, err
	}
	cc, ok := acc.completion()
	if !ok {
		return agent.Response{}, errUnusable
	}
	if cc.Choices[0].FinishReason == "" {
		// The body ended cleanly, but the reply did not: a proxy or a
		// worker cut it.
		return agent.Response{}, errors.New("the stream ended before the reply finished")
	}
	if usage != nil {
		cc.Usage = *usage
	}
	return fromCompletion(&cc)
}

// chatAccumulator assembles the first choice of a streamed reply from its
// chunks, as OpenAI's SDKs do: text and refusal joined, the finish_reason
// of the last chunk that has the choice, tool calls by their index (which
// callSlots has made dense), their names and arguments joined, their ID
// and type the last one sent. It refuses, as they do, a chunk whose id is
// not the reply's (the first id sent), or with a choice index outside 0
// to 127; it passes over a chunk with no id, choice or usage (a
// keep-alive, {}).
type chatAccumulator struct {
	id      looseString
	choices bool // a chunk had a choice
	content strings.Builder
	refusal strings.Builder
	finish  looseString
	calls   []accumulatedCall
}

type accumulatedCall struct {
	id, name, args strings.Builder
}

// add adds chunk to the reply, or reports false for a chunk that does not
// fit it.
func (a *chatAccumulator) add(chunk *chatChunk) bool {
	if chunk.ID == "" && len(chunk.Choices) == 0 && chunk.Usage == nil {
		return true // a keep-alive ({}): nothing of the reply
	}
	if a.id != "" && chunk.ID != a.id {
		return false
	}
	for _, ch := range chunk.Choices {
		if ch.Index < 0 || ch.Index > 127 {
			return false
		}
	}
	if a.id == "" {
		a.id = chunk.ID
	}
	for _, ch := range chunk.Choices {
		a.choices = true
		if ch.Index != 0 {
			continue
		}
		a.finish = ch.FinishReason
		a.content.WriteString(string(ch.Delta.Content))
		a.refusal.WriteString(string(ch.Delta.Refusal))
		for _, tc := range ch.Delta.ToolCalls {
			i := int(*tc.Index) // placed: set, and a slot
			for len(a.calls) <= i {
				a.calls = append(a.calls, accumulatedCall{})
			}
			call := &a.calls[i]
			if tc.ID != "" {
				call.id.Reset()
				call.id.WriteString(string(tc.ID))
			}
			call.name.WriteString(string(tc.Function.Name))
			call.args.WriteString(string(tc.Function.Arguments))
		}
	}
	return true
}

// completion returns the reply as a completion with its first choice, or
// false when no chunk had a choice.
func (a *chatAccumulator) completion() (chatCompletion, bool) {
	if !a.choices {
		return chatCompletion{}, false
	}
	var ch chatChoice
	ch.FinishReason = a.finish
	ch.Message.Content, ch.Message.Refusal = contentText(a.content.String()), looseString(a.refusal.String())
	for i := range a.calls {
		var tc chatToolCall
		tc.ID, tc.Function.Name, tc.Function.Arguments = looseString(a.calls[i].id.String()), looseString(a.calls[i].name.String()), argumentsText(a.calls[i].args.String())
		ch.Message.ToolCalls = append(ch.Message.ToolCalls, tc)
	}
	return chatCompletion{Choices: []chatChoice{ch}}, true
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
	ids, names []looseString       // each slot's call ID and name so far
	byIndex    map[int64]int       // the server's index to its latest slot
	byID       map[looseString]int // a call ID to its first slot
}

// place rewrites the tool-call deltas of one chunk.
func (c *callSlots) place(deltas []toolCallDelta) error {
	for i := range deltas {
		tc := &deltas[i]
		hasIndex := tc.Index != nil
		var index int64
		if hasIndex {
			index = int64(*tc.Index)
		}
		slot := -1
		k, known := c.byIndex[index]
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
				c.byIndex[index] = slot
			}
		}
		if c.ids[slot] == "" && tc.ID != "" {
			c.ids[slot] = tc.ID
			if _, ok := c.byID[tc.ID]; !ok {
				if c.byID == nil {
					c.byID = map[looseString]int{}
				}
				c.byID[tc.ID] = slot
			}
		}
		tc.ID = c.ids[slot] // the call keeps its first ID
		if tc.Function.Name != "" && tc.Function.Name == c.names[slot] {
			tc.Function.Name = "" // sent whole again
		}
		c.names[slot] += tc.Function.Name
		tc.Index = new(looseNumber(slot))
	}
	return nil
}

// deltas reports a chunk's pieces of the first choice.
func deltas(chunk *chatChunk, onDelta func(agent.Delta)) {
	for _, ch := range chunk.Choices {
		if ch.Index != 0 {
			continue
		}
		if ch.Delta.Content != "" {
			onDelta(agent.Delta{Content: string(ch.Delta.Content)})
		}
		for _, tc := range ch.Delta.ToolCalls {
			if tc.Function.Name != "" || tc.Function.Arguments != "" {
				onDelta(agent.Delta{ToolIndex: int(*tc.Index), ToolName: string(tc.Function.Name), ToolArgs: string(tc.Function.Arguments)})
			}
		}
	}
}

// fromCompletion reads a completion's first choice. A refusal is the
// message's text; the last tool call of a reply cut by its token limit
// or a content filter is marked cut.
func fromCompletion(cc *chatCompletion) (agent.Response, error) {
	if len(cc.Choices) == 0 {
		return agent.Response{}, errUnusable
	}
	choice := cc.Choices[0]
	if len(choice.Message.ToolCalls) > transport.MaxToolCalls {
		return agent.Response{}, transport.TooManyCalls
	}
	reason, refusal := string(choice.FinishReason), string(choice.Message.Refusal)
	prompt := transport.Tokens(float64(cc.Usage.PromptTokens))
	out := agent.Response{
		Message:      agent.Message{Role: agent.RoleAssistant, Content: string(choice.Message.Content) + refusal},
		Finish:       chatFinish(reason, refusal),
		FinishReason: reason,
		Usage: agent.Usage{
			PromptTokens:     prompt,
			CompletionTokens: transport.Tokens(float64(cc.Usage.CompletionTokens)),
			// Cached tokens are some of the prompt's.
			CachedTokens: min(transport.Tokens(float64(cc.Usage.PromptTokensDetails.CachedTokens)), prompt),
		},
	}
	for _, tc := range choice.Message.ToolCalls {
		if tc.ID == "" && tc.Function.Name == "" && tc.Function.Arguments == "" {
			continue // a slot a stream's index skipped
		}
		out.Message.ToolCalls = append(out.Message.ToolCalls, agent.ToolCall{ID: string(tc.ID), Name: string(tc.Function.Name), Arguments: string(tc.Function.Arguments)})
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

// params translates a request to the API's.
func (c *Client) params(req agent.Request) (chatRequest, error) {
	p := chatRequest{Model: c.opts.Model, Temperature: c.opts.Temperature, MaxCompletionTokens: c.opts.MaxTokens}
	for i, m := range req.Messages {
		switch m.Role {
		case agent.RoleSystem, agent.RoleUser:
			p.Messages = append(p.Messages, chatMessage{Role: string(m.Role), Content: &m.Content})
		case agent.RoleTool:
			p.Messages = append(p.Messages, chatMessage{Role: "tool", Content: &m.Content, ToolCallID: &m.ToolCallID})
		case agent.RoleAssistant:
			am := chatMessage{Role: "assistant"}
			if m.Content != "" || len(m.ToolCalls) == 0 {
				am.Content = &m.Content
			}
			for _, tc := range m.ToolCalls {
				sent := chatToolCall{ID: looseString(tc.ID), Type: "function"}
				sent.Function.Name, sent.Function.Arguments = looseString(tc.Name), argumentsText(sentArguments(tc.Arguments))
				am.ToolCalls = append(am.ToolCalls, sent)
			}
			p.Messages = append(p.Messages, am)
		default:
			return p, fmt.Errorf("openai: message %d: unknown role %q", i, m.Role)
		}
	}
	for _, t := range req.Tools {
		schema, err := schemaOf(t)
		if err != nil {
			return p, err
		}
		p.Tools = append(p.Tools, chatTool{Type: "function", Function: functionDef{Name: t.Name, Description: t.Description, Parameters: schema}})
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

// chatRequest is a chat completions request: what unfold sends of it.
type chatRequest struct {
	Model               string         `json:"model"`
	Messages            []chatMessage  `json:"messages"`
	Tools               []chatTool     `json:"tools,omitempty"`
	Temperature         *float64       `json:"temperature,omitempty"`
	MaxCompletionTokens int64          `json:"max_completion_tokens,omitempty"`
	Stream              bool           `json:"stream,omitempty"`
	StreamOptions       *streamOptions `json:"stream_options,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// chatMessage is a message of a request: content is left out only of an
// assistant message that makes calls and says nothing.
type chatMessage struct {
	Role       string         `json:"role"`
	Content    *string        `json:"content,omitempty"`
	ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID *string        `json:"tool_call_id,omitempty"`
}

// chatToolCall is a tool call, of a request's assistant message or of a
// reply (its fields are sent as strings, and read leniently).
type chatToolCall struct {
	ID       looseString `json:"id"`
	Type     string      `json:"type"`
	Function struct {
		Name      looseString   `json:"name"`
		Arguments argumentsText `json:"arguments"`
	} `json:"function"`
}

type chatTool struct {
	Type     string      `json:"type"`
	Function functionDef `json:"function"`
}

// functionDef is a tool offered: without parameters when the tool has
// none.
type functionDef struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters,omitzero"`
}

// chatCompletion is a reply: what unfold reads of it.
type chatCompletion struct {
	Choices []chatChoice `json:"choices"`
	Usage   chatUsage    `json:"usage"`
}

type chatChoice struct {
	Message struct {
		Content   contentText    `json:"content"`
		Refusal   looseString    `json:"refusal"`
		ToolCalls []chatToolCall `json:"tool_calls"`
	} `json:"message"`
	FinishReason looseString `json:"finish_reason"`
}

// chatUsage are a reply's token counts, read as numbers whatever their
// size (see transport.Tokens).
type chatUsage struct {
	PromptTokens        looseNumber `json:"prompt_tokens"`
	CompletionTokens    looseNumber `json:"completion_tokens"`
	PromptTokensDetails struct {
		CachedTokens looseNumber `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// chatChunk is one chunk of a streamed reply.
type chatChunk struct {
	ID      looseString `json:"id"`
	Choices []struct {
		Index looseNumber `json:"index"`
		Delta struct {
			Content   contentText     `json:"content"`
			Refusal   looseString     `json:"refusal"`
			ToolCalls []toolCallDelta `json:"tool_calls"`
		} `json:"delta"`
		FinishReason looseString `json:"finish_reason"`
	} `json:"choices"`
	Usage *chatUsage `json:"usage"` // nil: none in this chunk
}

// toolCallDelta is a piece of a streamed tool call.
type toolCallDelta struct {
	Index    *looseNumber `json:"index"` // nil: not sent
	ID       looseString  `json:"id"`
	Function struct {
		Name      looseString   `json:"name"`
		Arguments argumentsText `json:"arguments"`
	} `json:"function"`
}
