package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/agent/internal/transport"
)

// DefaultBaseURL is the Messages API's address.
const DefaultBaseURL = "https://api.anthropic.com"

// DefaultMaxTokens bounds a reply without [WithMaxTokens].
const DefaultMaxTokens = 8192

// NativeMessages is the [agent.Native] API name of replies from the
// Messages API: their data is the message's content blocks.
const NativeMessages = "anthropic.messages"

type options struct {
	BaseURL    string
	Model      string
	APIKey     string
	MaxTokens  int64
	Policy     transport.Policy
	Timeout    time.Duration
	HTTPClient *http.Client
}

// Option configures a [Client]: [WithAPIKey], [WithMaxTokens],
// [WithMaxRetries], [WithBackoff], [WithTimeout] and [WithHTTPClient].
type Option func(*options)

// WithAPIKey sends key with every request, in an Authorization: Bearer
// header. The environment's key (ANTHROPIC_API_KEY) is never read.
func WithAPIKey(key string) Option { return func(o *options) { o.APIKey = key } }

// WithMaxTokens bounds each reply (default [DefaultMaxTokens]).
func WithMaxTokens(n int) Option { return func(o *options) { o.MaxTokens = int64(n) } }

// WithMaxRetries sets how many times a request that got no reply, or 408,
// 409, 429 or a 5xx status (529 overloaded among them), is tried again
// (default transport.DefaultMaxRetries, 4; 0: never).
func WithMaxRetries(n int) Option { return func(o *options) { o.Policy.MaxRetries = max(n, 0) } }

// WithBackoff sets the first backoff, doubled on each retry with jitter,
// and its ceiling. A Retry-After header wins, up to the ceiling.
func WithBackoff(base, ceiling time.Duration) Option {
	return func(o *options) { o.Policy.BaseDelay, o.Policy.MaxDelay = base, ceiling }
}

// WithTimeout bounds each request: its attempts, the waits between them
// and its streamed reply (default: none). An attempt that runs out of time
// is not made again.
func WithTimeout(d time.Duration) Option { return func(o *options) { o.Timeout = d } }

// WithHTTPClient sends the requests with c.
func WithHTTPClient(c *http.Client) Option { return func(o *options) { o.HTTPClient = c } }

// Client is an agent.Model for Anthropic's Messages API, streaming its
// replies. Every request marks cache breakpoints (cache_control): the end
// of the tools, the system message, the newest message and the last one
// of the previous request, so each request reads the previous one's
// prefix from the cache however many blocks a step added. Deferred tools
// (agent.Request.Deferred) are sent defer_loading with the tool search
// tool, to a model that has it; a result that opened a section loads its
// tools with tool_reference blocks. It is safe for concurrent use.
type Client struct {
	opts   options
	defers bool // the model has the tool search tool (hasToolSearch)
	ep     transport.Endpoint
}

var (
	_ agent.Model    = (*Client)(nil)
	_ agent.Featured = (*Client)(nil)
)

// apiVersion is the version of the Messages API the client speaks, sent
// as the anthropic-version header.
const apiVersion = "2026-10-21"

// New returns a client for the Messages API at baseURL ("" for
// [DefaultBaseURL]) serving model. It fails without a model. The headers
// ANTHROPIC_CUSTOM_HEADERS names ("Name: value" a line) go with every
// request.
func New(baseURL, model string, opt ...Option) (*Client, error) {
	opts := options{BaseURL: baseURL, Model: model, MaxTokens: DefaultMaxTokens, Policy: transport.Policy{MaxRetries: transport.DefaultMaxRetries}}
	for _, o := range opt {
		o(&opts)
	}
	if strings.TrimSpace(opts.BaseURL) == "" {
		opts.BaseURL = DefaultBaseURL
	}
	if strings.TrimSpace(opts.Model) == "" {
		return nil, errors.New("anthropic: new: no model; give the model name, such as claude-sonnet-4-5")
	}
	if opts.MaxTokens <= 0 {
		return nil, fmt.Errorf("anthropic: new: max tokens %d: want a positive number", opts.MaxTokens)
	}
	if opts.Timeout < 0 {
		return nil, errors.New("anthropic: new: negative timeout")
	}
	headers, err := transport.CustomHeaders("ANTHROPIC_CUSTOM_HEADERS")
	if err != nil {
		return nil, fmt.Errorf("anthropic: new: %w", err)
	}
	if opts.Policy.BaseDelay <= 0 {
		opts.Policy.BaseDelay = transport.DefaultBaseDelay
	}
	if opts.Policy.MaxDelay <= 0 {
		opts.Policy.MaxDelay = transport.DefaultMaxDelay
	}
	return &Client{opts: opts, defers: hasToolSearch(opts.Model), ep: endpoint(opts, headers)}, nil
}

// endpoint is where the requests go and what they carry: the API's
// version, then the custom headers, then the key (a custom header does
// not replace it). Without an HTTP client of the caller's, one waits at
// most ten minutes for a reply's headers.
func endpoint(o options, custom [][2]string) transport.Endpoint {
	h := http.Header{}
	h.Set("anthropic-version", apiVersion)
	for _, kv := range custom {
		h.Set(kv[0], kv[1])
	}
	h.Set("authorization", "Bearer "+o.APIKey)
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{Transport: http.DefaultTransport}
		if t, ok := http.DefaultTransport.(*http.Transport); ok {
			t = t.Clone()
			t.ResponseHeaderTimeout = 10 * time.Minute
			hc.Transport = t
		}
	}
	return transport.Endpoint{BaseURL: strings.TrimRight(o.BaseURL, "/"), Client: hc, Header: h}
}

// Features says that the API caches prompt prefixes, and that it defers
// tools unless the model is one known to lack the tool search tool
// (Claude Sonnet 4, Opus 4 and 4.1, the Claude 3 models): the loop then
// offers the sections' tools another way.
func (c *Client) Features() agent.Features {
	return agent.Features{CachesPrefixes: true, DefersTools: c.defers}
}

// StatusError is a reply with an error status, after any retries, or an
// error event in the stream of a 200 reply. An error event that opened
// the stream is retried as its status would be (529 for
// overloaded_error, 500 for api_error, 429 for rate_limit_error) and
// has that StatusCode; one not retried (after the reply began, or of
// another type) has StatusCode 200.
type StatusError struct {
	StatusCode int
	Type       string // the error's type, such as "overloaded_error"
	Message    string
	Attempts   int
	// InStream says what the error event that opened the stream was,
	// such as "overloaded"; "" for an error status.
	InStream string
}

func (e *StatusError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = "(no message)"
	}
	var s string
	switch {
	case e.InStream != "":
		s = fmt.Sprintf("anthropic: messages: %s (in the stream): %s", e.InStream, msg)
	case e.StatusCode == http.StatusOK:
		s = fmt.Sprintf("anthropic: messages: the stream reported an error (%s): %s", e.Type, msg)
	default:
		s = fmt.Sprintf("anthropic: messages: %d %s: %s", e.StatusCode, statusText(e.StatusCode), msg)
	}
	if e.Attempts > 1 {
		s += fmt.Sprintf(" (after %d attempts)", e.Attempts)
	}
	return s
}

// Is reports whether the error is the API refusing the request for its
// size, [agent.ErrContextWindow]: a 400 saying the prompt is too long
// ("prompt is too long: 210000 tokens > 200000 maximum"), or 413
// request_too_large (a body past the API's limit); or for the output
// limit asked for with it, [agent.ErrOutputLimit]: "input length and
// `max_tokens` exceed context limit: 188240 + 21333 > 200000" from
// earlier models. The words are what counts, in a 400 or a 413 of any
// error type: compatible endpoints and proxies send them with another
// type or none (OpenRouter), or quote the API's error in theirs
// (LiteLLM's "litellm.BadRequestError: AnthropicException - {...}").
func (e *StatusError) Is(target error) bool {
	if target != agent.ErrContextWindow && target != agent.ErrOutputLimit {
		return false
	}
	if e.StatusCode == http.StatusBadRequest || e.StatusCode == http.StatusRequestEntityTooLarge {
		msg := strings.ToLower(e.Message)
		switch {
		case strings.Contains(msg, "exceed context limit"):
			return target == agent.ErrOutputLimit
		case strings.Contains(msg, "prompt is too long"):
			return target == agent.ErrContextWindow
		}
	}
	return target == agent.ErrContextWindow && (e.StatusCode == http.StatusRequestEntityTooLarge || e.Type == "request_too_large")
}

func statusText(code int) string {
	if code == 529 {
		return "Overloaded"
	}
	return http.StatusText(code)
}

// Complete sends req as a streaming message and returns the assembled
// reply. A request that got no reply or a retryable status is sent again
// (transport.Post), each retry told to req.OnRetry first. An endpoint
// that answers with one JSON message instead of a stream is read as
// such. A request with deferred tools that the API refuses for them
// fails saying how to run without.
func (c *Client) Complete(ctx context.Context, req agent.Request) (agent.Response, error) {
	resp, err := c.send(ctx, req)
	if err != nil && c.defers && len(req.Deferred) > 0 {
		return resp, refusedSearch(err, c.opts.Model)
	}
	return resp, err
}

func (c *Client) send(ctx context.Context, req agent.Request) (agent.Response, error) {
	p, err := c.body(req)
	if err != nil {
		return agent.Response{}, err
	}
	body, err := json.Marshal(p)
	if err != nil {
		return agent.Response{}, fmt.Errorf("anthropic: messages: %w", err)
	}
	bounded, cancel := transport.Deadline(ctx, c.opts.Timeout)
	defer cancel()
	call := &transport.Call{Policy: c.opts.Policy, OnRetry: req.OnRetry, Stream: true}
	resp, err := c.stream(bounded, call, body, req.OnDelta)
	if err == nil {
		return resp, nil
	}
	if ctx.Err() == nil {
		var se *transport.StatusError
		if errors.As(err, &se) {
			api := se.API()
			return agent.Response{}, &StatusError{StatusCode: se.StatusCode, Type: api.Type, Message: transport.ServerMessage(api.Message, string(se.Body), call), Attempts: call.Attempts(), InStream: call.Last().InStream}
		}
		var ours *StatusError
		if errors.As(err, &ours) {
			ours.Attempts = call.Attempts()
			return agent.Response{}, ours
		}
	}
	return agent.Response{}, transport.Failure(ctx, "anthropic: messages", c.opts.BaseURL, c.opts.Timeout, call, err)
}

var errUnusable = errors.New("the reply is not a message")

// stream posts body and reads the reply: an event stream, put together
// by an accumulator up to its message_stop, or one JSON message.
func (c *Client) stream(ctx context.Context, call *transport.Call, body []byte, onDelta func(agent.Delta)) (agent.Response, error) {
	res, err := transport.Post(ctx, c.ep, call, "v1/messages", body)
	if err != nil {
		return agent.Response{}, err
	}
	defer res.Body.Close()
	if err := call.BodyErr(); err != nil {
		return agent.Response{}, err
	}
	if body := call.Body(); body != nil {
		resp, err := parseMessage(body)
		if err == nil && onDelta != nil && resp.Message.Content != "" {
			onDelta(agent.Delta{Content: resp.Message.Content})
		}
		return resp, err
	}
	acc := accumulator{call: call, tool: map[int64]int{}, onDelta: onDelta}
	events := transport.NewEvents(res.Body)
	// Reading ends at message_stop: a server or proxy that keeps the
	// stream open after it (pings, an upstream it does not close) would
	// otherwise hold the finished reply until the request's timeout.
	for !acc.stopped {
		name, data, err := events.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return agent.Response{}, call.ReadFailure(acc.streamed, err)
		}
		if err := acc.event(name, data); err != nil {
			return agent.Response{}, err
		}
	}
	if err := call.BodyErr(); err != nil {
		return agent.Response{}, err
	}
	if !acc.stopped {
		if acc.streamed {
			return agent.Response{}, errors.New("the stream ended before the message stopped")
		}
		return agent.Response{}, errUnusable
	}
	return acc.response()
}

// parseMessage reads a Messages API message: its text, its tool calls,
// its stop reason and its usage. Its content blocks, whatever their type
// (thinking, server tool searches and their results), are kept as the
// message's Native data, sent back as they are with the next request. A
// tool call that is the last block of a reply that did not finish is
// marked cut: the reply ended while the model was writing it.
func parseMessage(raw []byte) (agent.Response, error) {
	var m struct {
		Type       string            `json:"type"`
		Content    []json.RawMessage `json:"content"`
		StopReason string            `json:"stop_reason"`
		Usage      json.RawMessage   `json:"usage"`
	}
	if err := json.Unmarshal(raw, &m); err != nil || m.Type != "message" {
		return agent.Response{}, errUnusable
	}
	// The counts are read as they come, numbers or numeric strings (as
	// some proxies send them); usage of another shape counts nothing,
	// rather than losing the reply.
	var usage map[string]json.RawMessage
	_ = json.Unmarshal(m.Usage, &usage)
	input, output := transport.Tokens(transport.Number(usage["input_tokens"])), transport.Tokens(transport.Number(usage["output_tokens"]))
	write, read := transport.Tokens(transport.Number(usage["cache_creation_input_tokens"])), transport.Tokens(transport.Number(usage["cache_read_input_tokens"]))
	out := agent.Response{
		Message:      agent.Message{Role: agent.RoleAssistant},
		Finish:       finishOf(m.StopReason),
		FinishReason: m.StopReason,
		Usage: agent.Usage{
			PromptTokens:     input + write + read,
			CompletionTokens: output,
			CachedTokens:     read,
			CacheWriteTokens: write,
		},
	}
	var text strings.Builder
	blocks := make([]json.RawMessage, 0, len(m.Content))
	cut := false // the last block is a tool call the reply ended in
	for i, b := range m.Content {
		// Only the fields read of the block's type are decoded: a field
		// of another type, or of a block type not known, never loses
		// the reply.
		var blk struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(b, &blk); err != nil {
			return agent.Response{}, fmt.Errorf("content block %d: %w", i, err)
		}
		switch blk.Type {
		case "text":
			var t struct {
				Text string `json:"text"`
			}
			if err := json.Unmarshal(b, &t); err != nil {
				return agent.Response{}, fmt.Errorf("content block %d: %w", i, err)
			}
			text.WriteString(t.Text)
		case "tool_use":
			var call struct {
				ID    string          `json:"id"`
				Name  string          `json:"name"`
				Input json.RawMessage `json:"input"`
			}
			if err := json.Unmarshal(b, &call); err != nil {
				return agent.Response{}, fmt.Errorf("content block %d: %w", i, err)
			}
			args := string(call.Input)
			if args == "" || args == "null" {
				args = "{}"
			}
			if len(out.Message.ToolCalls) == transport.MaxToolCalls {
				return agent.Response{}, transport.TooManyCalls
			}
			out.Message.ToolCalls = append(out.Message.ToolCalls, agent.ToolCall{ID: call.ID, Name: call.Name, Arguments: args})
		}
		cut = blk.Type == "tool_use"
		clean, err := withoutNulls(b, strings.HasSuffix(blk.Type, "tool_use"))
		if err != nil {
			return agent.Response{}, fmt.Errorf("content block %d: %w", i, err)
		}
		blocks = append(blocks, clean)
	}
	if cut {
		switch out.Finish {
		case agent.FinishTruncated, agent.FinishRefused:
			out.Message.ToolCalls[len(out.Message.ToolCalls)-1].Cut = true
		}
	}
	out.Message.Content = text.String()
	data, err := json.Marshal(blocks)
	if err != nil {
		return agent.Response{}, err
	}
	out.Message.Native = &agent.Native{API: NativeMessages, Data: data}
	return out, nil
}

// finishOf maps a stop reason onto the loop's. One it does not know is
// taken as finished.
func finishOf(stopReason string) agent.Finish {
	switch stopReason {
	case "max_tokens", "model_context_window_exceeded":
		return agent.FinishTruncated
	case "refusal":
		return agent.FinishRefused
	case "pause_turn":
		return agent.FinishPaused
	}
	return agent.FinishComplete
}

// withoutNulls drops a block's null fields: a reply's block marks absent
// fields null, a request's leaves them out. A block that takes input
// (tool_use, server_tool_use) keeps one, {} for none: the API refuses
// such a block without it.
func withoutNulls(b json.RawMessage, takesInput bool) (json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		return nil, err
	}
	for k, v := range obj {
		if string(v) == "null" {
			delete(obj, k)
		}
	}
	if _, ok := obj["input"]; takesInput && !ok {
		obj["input"] = json.RawMessage("{}")
	}
	return json.Marshal(obj)
}
