package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/unfold-dev/unfold/agent"
)

// Retry defaults.
const (
	DefaultMaxRetries = 4
	DefaultBaseDelay  = 500 * time.Millisecond
	DefaultMaxDelay   = 30 * time.Second
)

// maxErrorMessage bounds the server message an error quotes.
const maxErrorMessage = 2 << 10

// options configure a Client.
type options struct {
	BaseURL     string
	Model       string
	APIKey      string
	MaxRetries  int
	BaseDelay   time.Duration
	MaxDelay    time.Duration
	HTTPClient  *http.Client
	Temperature *float64
}

// Option configures a [Client].
type Option func(*options)

// WithAPIKey sends key as the bearer token (default none, for local
// servers).
func WithAPIKey(key string) Option {
	return func(o *options) { o.APIKey = key }
}

// WithMaxRetries sets how many times a request that got 429 or a 5xx status
// is tried again (default [DefaultMaxRetries]; 0: never).
func WithMaxRetries(n int) Option {
	return func(o *options) { o.MaxRetries = max(n, 0) }
}

// WithBackoff sets the first backoff, doubled on each retry with jitter, and
// its ceiling (defaults [DefaultBaseDelay], [DefaultMaxDelay]). A
// Retry-After header wins, up to the ceiling.
func WithBackoff(base, ceiling time.Duration) Option {
	return func(o *options) { o.BaseDelay, o.MaxDelay = base, ceiling }
}

// WithHTTPClient sends the requests with c (default http.DefaultClient).
func WithHTTPClient(c *http.Client) Option {
	return func(o *options) { o.HTTPClient = c }
}

// WithTemperature sends temperature with every request.
func WithTemperature(temperature float64) Option {
	return func(o *options) { o.Temperature = &temperature }
}

// Client is an agent.Model for an OpenAI-compatible chat completions
// endpoint, streaming its replies. It is safe for concurrent use.
type Client struct {
	opts   options
	client sdk.Client
	sleep  func(ctx context.Context, d time.Duration) error
}

var _ agent.Model = (*Client)(nil)

// New returns a client for the endpoint at baseURL (such as
// https://api.openai.com/v1 or http://localhost:11434/v1) serving model. It
// fails without a base URL or a model.
func New(baseURL, model string, opt ...Option) (*Client, error) {
	opts := options{BaseURL: baseURL, Model: model, MaxRetries: DefaultMaxRetries}
	for _, o := range opt {
		o(&opts)
	}
	if strings.TrimSpace(opts.BaseURL) == "" {
		return nil, errors.New("openai: new: no base URL; give the endpoint, such as https://api.openai.com/v1")
	}
	if strings.TrimSpace(opts.Model) == "" {
		return nil, errors.New("openai: new: no model; give the model name the endpoint serves")
	}
	if opts.BaseDelay <= 0 {
		opts.BaseDelay = DefaultBaseDelay
	}
	if opts.MaxDelay <= 0 {
		opts.MaxDelay = DefaultMaxDelay
	}
	ro := []option.RequestOption{
		option.WithBaseURL(strings.TrimRight(opts.BaseURL, "/") + "/"),
		option.WithAPIKey(opts.APIKey),
		// Retries are ours, so that deltas already streamed are never sent
		// twice and the error after the last one says what happened.
		option.WithMaxRetries(0),
	}
	if opts.HTTPClient != nil {
		ro = append(ro, option.WithHTTPClient(opts.HTTPClient))
	}
	return &Client{opts: opts, client: sdk.NewClient(ro...), sleep: sleepCtx}, nil
}

// StatusError is a reply with an error status, after any retries.
type StatusError struct {
	StatusCode int
	Message    string // the server's message
	Attempts   int
}

func (e *StatusError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = "(no message)"
	}
	s := fmt.Sprintf("openai: chat completions: %d %s: %s", e.StatusCode, http.StatusText(e.StatusCode), msg)
	if e.Attempts > 1 {
		s += fmt.Sprintf(" (after %d attempts)", e.Attempts)
	}
	return s
}

// Complete sends req as a streaming chat completion and returns the
// assembled reply. Replies with status 429 or 5xx are retried with backoff,
// honouring Retry-After, as long as nothing has streamed yet.
func (c *Client) Complete(ctx context.Context, req agent.Request) (agent.Response, error) {
	params, err := c.params(req)
	if err != nil {
		return agent.Response{}, err
	}
	for attempt := 1; ; attempt++ {
		resp, streamed, err := c.stream(ctx, params, req.OnDelta)
		if err == nil {
			return resp, nil
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			if errors.Is(err, ctxErr) {
				return agent.Response{}, fmt.Errorf("openai: chat completions: %w", err)
			}
			return agent.Response{}, fmt.Errorf("openai: chat completions: %w (%v)", ctxErr, err)
		}
		var apiErr *sdk.Error
		if !errors.As(err, &apiErr) {
			if streamed {
				return agent.Response{}, fmt.Errorf("openai: chat completions: the stream broke: %w", err)
			}
			return agent.Response{}, fmt.Errorf("openai: chat completions: cannot reach %s: %w", c.opts.BaseURL, err)
		}
		se := &StatusError{StatusCode: apiErr.StatusCode, Message: serverMessage(apiErr), Attempts: attempt}
		retryable := apiErr.StatusCode == http.StatusTooManyRequests || apiErr.StatusCode >= 500
		if !retryable || streamed || attempt > c.opts.MaxRetries {
			return agent.Response{}, se
		}
		if err := c.sleep(ctx, c.delay(attempt, apiErr.Response)); err != nil {
			return agent.Response{}, fmt.Errorf("openai: chat completions: %w (while waiting to retry %v)", err, se)
		}
	}
}

// MaxReplyBytes bounds the text and tool arguments of one streamed reply.
const MaxReplyBytes = 8 << 20

// stream makes one streaming request. streamed says whether any chunk
// arrived, after which a failure cannot be retried.
func (c *Client) stream(ctx context.Context, params sdk.ChatCompletionNewParams, onDelta func(agent.Delta)) (agent.Response, bool, error) {
	s := c.client.Chat.Completions.NewStreaming(ctx, params)
	defer s.Close()
	var acc sdk.ChatCompletionAccumulator
	streamed := false
	size := 0
	for s.Next() {
		chunk := s.Current()
		streamed = true
		for _, ch := range chunk.Choices {
			size += len(ch.Delta.Content) + len(ch.Delta.Refusal)
			for _, tc := range ch.Delta.ToolCalls {
				size += len(tc.Function.Arguments) + len(tc.Function.Name)
			}
		}
		if size > MaxReplyBytes {
			return agent.Response{}, true, fmt.Errorf("the reply is over %d bytes; stopped reading it", MaxReplyBytes)
		}
		if !acc.AddChunk(chunk) {
			return agent.Response{}, true, errors.New("the stream sent a chunk that does not fit the reply so far")
		}
		if onDelta == nil {
			continue
		}
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
	if err := s.Err(); err != nil {
		return agent.Response{}, streamed, err
	}
	if len(acc.Choices) == 0 {
		return agent.Response{}, streamed, errors.New("the reply has no choices")
	}
	choice := acc.Choices[0]
	out := agent.Response{
		Message:      agent.Message{Role: agent.RoleAssistant, Content: choice.Message.Content},
		FinishReason: choice.FinishReason,
		Usage: agent.Usage{
			PromptTokens:     int(acc.Usage.PromptTokens),
			CompletionTokens: int(acc.Usage.CompletionTokens),
			CachedTokens:     int(acc.Usage.PromptTokensDetails.CachedTokens),
		},
	}
	for _, tc := range choice.Message.ToolCalls {
		out.Message.ToolCalls = append(out.Message.ToolCalls, agent.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	return out, streamed, nil
}

// params translates a request to the SDK's parameters.
func (c *Client) params(req agent.Request) (sdk.ChatCompletionNewParams, error) {
	p := sdk.ChatCompletionNewParams{
		Model:         shared.ChatModel(c.opts.Model),
		StreamOptions: sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)},
	}
	if c.opts.Temperature != nil {
		p.Temperature = sdk.Float(*c.opts.Temperature)
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
						Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: tc.Arguments},
					},
				})
			}
			p.Messages = append(p.Messages, sdk.ChatCompletionMessageParamUnion{OfAssistant: am})
		default:
			return p, fmt.Errorf("openai: message %d: unknown role %q", i, m.Role)
		}
	}
	for _, t := range req.Tools {
		var schema map[string]any
		if len(t.Parameters) > 0 {
			if err := json.Unmarshal(t.Parameters, &schema); err != nil {
				return p, fmt.Errorf("openai: tool %s: parameters: %w", t.Name, err)
			}
		}
		p.Tools = append(p.Tools, sdk.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name:        t.Name,
			Description: sdk.String(t.Description),
			Parameters:  shared.FunctionParameters(schema),
		}))
	}
	return p, nil
}

// delay is how long to wait before retry number attempt: the server's
// Retry-After when it gave one, else exponential backoff with jitter; never
// more than MaxDelay.
func (c *Client) delay(attempt int, resp *http.Response) time.Duration {
	if d, ok := retryAfter(resp); ok {
		return min(d, c.opts.MaxDelay)
	}
	d := c.opts.BaseDelay << min(attempt-1, 16)
	d = min(d, c.opts.MaxDelay)
	return d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
}

// retryAfter reads Retry-After-Ms, or Retry-After in seconds or as a date.
func retryAfter(resp *http.Response) (time.Duration, bool) {
	if resp == nil {
		return 0, false
	}
	if v := resp.Header.Get("Retry-After-Ms"); v != "" {
		if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 && f < 1e9 {
			return time.Duration(f * float64(time.Millisecond)), true
		}
	}
	v := resp.Header.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 && f < 1e6 {
		return time.Duration(f * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0), true
	}
	return 0, false
}

// serverMessage is the message the server gave with an error status.
func serverMessage(e *sdk.Error) string {
	msg := strings.TrimSpace(e.Message)
	if msg == "" {
		msg = strings.TrimSpace(e.RawJSON())
	}
	if len(msg) > maxErrorMessage {
		msg = msg[:maxErrorMessage] + "..."
	}
	return msg
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
