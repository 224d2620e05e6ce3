package openai

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/unfold-dev/unfold/agent/internal/transport"
)

// Retry defaults.
const (
	DefaultMaxRetries = transport.DefaultMaxRetries
	DefaultBaseDelay  = transport.DefaultBaseDelay
	DefaultMaxDelay   = transport.DefaultMaxDelay
)

// options configure a Client or a Responses.
type options struct {
	BaseURL     string
	Model       string
	APIKey      string
	Policy      transport.Policy
	Timeout     time.Duration
	HTTPClient  *http.Client
	Temperature *float64
	Reasoning   string
	MaxTokens   int64 // 0: the endpoint's own limit
	// Header is what every request carries besides the body's type: the
	// key, the organization and project, the user's own headers.
	Header http.Header
}

// Option configures a [Client] or a [Responses]: [WithAPIKey],
// [WithMaxRetries], [WithBackoff], [WithTimeout], [WithHTTPClient],
// [WithTemperature], [WithReasoningEffort] and [WithMaxTokens]. A streamed
// reply is read up to [MaxReplyBytes].
type Option func(*options)

// WithAPIKey sends key as the bearer token (default none, for local
// servers).
func WithAPIKey(key string) Option {
	return func(o *options) { o.APIKey = key }
}

// WithMaxRetries sets how many times a request that got no reply, or 408,
// 409, 429 or a 5xx status, is tried again (default [DefaultMaxRetries];
// 0: never).
func WithMaxRetries(n int) Option {
	return func(o *options) { o.Policy.MaxRetries = max(n, 0) }
}

// WithBackoff sets the first backoff, doubled on each retry with jitter, and
// its ceiling (defaults [DefaultBaseDelay], [DefaultMaxDelay]). A
// Retry-After header wins, up to the ceiling.
func WithBackoff(base, ceiling time.Duration) Option {
	return func(o *options) { o.Policy.BaseDelay, o.Policy.MaxDelay = base, ceiling }
}

// WithTimeout bounds each request: its attempts, the waits between them
// and its streamed reply (default: none). An attempt that runs out of time
// is not made again.
func WithTimeout(d time.Duration) Option {
	return func(o *options) { o.Timeout = d }
}

// WithHTTPClient sends the requests with c (default http.DefaultClient).
func WithHTTPClient(c *http.Client) Option {
	return func(o *options) { o.HTTPClient = c }
}

// WithTemperature sends temperature with every request.
func WithTemperature(temperature float64) Option {
	return func(o *options) { o.Temperature = &temperature }
}

// WithReasoningEffort asks a reasoning model of the Responses API for this
// effort ("low", "medium", "high").
func WithReasoningEffort(effort string) Option {
	return func(o *options) { o.Reasoning = effort }
}

// WithMaxTokens bounds each reply to n output tokens, reasoning included:
// max_completion_tokens for chat completions, max_output_tokens for the
// Responses API (default: none sent, the endpoint's own limit).
func WithMaxTokens(n int) Option {
	return func(o *options) { o.MaxTokens = int64(n) }
}

// newOptions applies opt over the defaults and checks the result.
func newOptions(baseURL, model string, opt []Option) (options, error) {
	opts := options{BaseURL: baseURL, Model: model, Policy: transport.Policy{MaxRetries: DefaultMaxRetries}}
	for _, o := range opt {
		o(&opts)
	}
	if strings.TrimSpace(opts.BaseURL) == "" {
		return opts, errors.New("openai: new: no base URL; give the endpoint, such as https://api.openai.com/v1")
	}
	if strings.TrimSpace(opts.Model) == "" {
		return opts, errors.New("openai: new: no model; give the model name the endpoint serves")
	}
	if opts.Policy.BaseDelay <= 0 {
		opts.Policy.BaseDelay = DefaultBaseDelay
	}
	if opts.Policy.MaxDelay <= 0 {
		opts.Policy.MaxDelay = DefaultMaxDelay
	}
	if opts.Timeout < 0 {
		return opts, errors.New("openai: new: negative timeout")
	}
	if opts.MaxTokens < 0 {
		return opts, fmt.Errorf("openai: new: max tokens %d: want a positive number, or 0 for the endpoint's limit", opts.MaxTokens)
	}
	header, err := headers(opts.APIKey)
	if err != nil {
		return opts, fmt.Errorf("openai: new: %w", err)
	}
	opts.Header = header
	return opts, nil
}

// headers are the headers of every request: OPENAI_ORG_ID as
// OpenAI-Organization and OPENAI_PROJECT_ID as OpenAI-Project, then the
// headers of OPENAI_CUSTOM_HEADERS (one "Name: value" a line), which
// replace them, then the key given as the bearer token, which replaces an
// Authorization among them; without a key, no Authorization but the
// user's. These are the environment variables OpenAI's SDKs read, but for
// OPENAI_API_KEY and OPENAI_BASE_URL: the key and the endpoint are given.
func headers(key string) (http.Header, error) {
	h := http.Header{}
	if v, ok := os.LookupEnv("OPENAI_ORG_ID"); ok {
		h.Set("OpenAI-Organization", v)
	}
	if v, ok := os.LookupEnv("OPENAI_PROJECT_ID"); ok {
		h.Set("OpenAI-Project", v)
	}
	custom, err := transport.CustomHeaders("OPENAI_CUSTOM_HEADERS")
	if err != nil {
		return nil, err
	}
	for _, kv := range custom {
		h.Set(kv[0], kv[1])
	}
	if key != "" {
		h.Set("Authorization", "Bearer "+key)
	}
	return h, nil
}

// endpoint is where the requests go and what they carry.
func (o options) endpoint() transport.Endpoint {
	return transport.Endpoint{BaseURL: o.BaseURL, Client: o.HTTPClient, Header: o.Header}
}
