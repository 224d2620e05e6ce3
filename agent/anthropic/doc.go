// Package anthropic connects the agent loop to Anthropic's Messages API.
// It speaks the API over net/http, with the retries and bounds of
// agent/internal/transport, through small structs of its own holding
// only the fields unfold sends and reads.
//
// # Use
//
//	m, err := anthropic.New(os.Getenv("ANTHROPIC_BASE_URL"), "claude-sonnet-4-5",
//		anthropic.WithAPIKey(os.Getenv("ANTHROPIC_API_KEY")))
//	a, err := agent.New(m, p)
//
// # Prompt caching
//
// Every request marks four cache breakpoints (cache_control, ephemeral):
// the last tool that is not deferred, the system message, the last block
// of the newest message, and the last block of the request before, which
// keeps the breakpoint it had. The provider caches the prefix up to each;
// the next request, which starts with the whole of this one under the
// agent's append disclosure, reads it back, however many blocks a step of
// parallel calls added (the API looks for a cached prefix at most 20
// blocks before a breakpoint). The reply's usage gives the tokens read
// from the cache and written to it.
//
// # Deferred tools
//
// The tools of the sections closed when the run started
// (agent.Request.Deferred) are sent defer_loading, with the tool search
// tool (regex), to a model that has it: Claude Haiku 4.5, Sonnet 4.5,
// Opus 4.5 and later, and any model name not known as Claude's. For the
// earlier Claude models [Client.Features] says the client does not defer
// tools, and the loop offers them another way. Deferred tools cost
// nothing until loaded, and the tool list is the same in every request.
// The result of the call that opened a section carries a tool_reference
// block per tool it loads (agent.Message.Loads). Should the API refuse
// the tool search tool for a model, the error says to use the rerender
// disclosure. A conversation another API wrote is sent as this one takes
// it: text of white space alone left out or replaced, and tool call IDs
// outside ^[a-zA-Z0-9_-]+$ mapped into it.
// The model may also find them with the tool search tool; its server-side
// calls and results, like thinking blocks, are kept as the message's
// agent.Native data and go back with the next request as they came.
//
// # Streaming, errors and retries
//
// Every request streams; text and tool input fragments reach
// agent.Request.OnDelta. A request that got no reply, or 408, 409, 429,
// a 5xx or 529 (overloaded), is sent again up to [WithMaxRetries] times,
// after Retry-After or a backoff; each retry is told to
// agent.Request.OnRetry. A 200 stream that opens with an error event
// before any content (overloaded_error, api_error, rate_limit_error) is
// retried the same way, as 529, 500 or 429 ("overloaded (in the
// stream)"). [WithTimeout] bounds each request, retries included. A failure comes back as a *StatusError (status, error type,
// message), or names the reply that could not be used, the timeout, or
// the endpoint that could not be reached. A 400 saying the prompt is too
// long (of any error type, or quoted in a proxy's message), or a 413, is
// one for which errors.Is(err, [agent.ErrContextWindow]) holds; one
// saying the input and max_tokens exceed the context limit,
// [agent.ErrOutputLimit]. A stream is read up to its message_stop.
//
// A reply keeps its content blocks, thinking included, as [agent.Native]
// data under the API name [NativeMessages], and goes back to the API as
// it came.
//
// # Stop reasons
//
// stop_reason becomes the reply's agent.Finish: max_tokens and
// model_context_window_exceeded are truncated, refusal refused,
// pause_turn paused, the others complete. A tool_use block that is the
// last of a reply cut short is marked agent.ToolCall.Cut, with the input
// the model wrote as its arguments; its block goes back to the API with
// the input {} in place of input that is not JSON. In a reply that
// finished, input that is not JSON fails the reply. A block of a tool's
// use that started with no input (none, null, {}) gets its deltas', and
// goes back with {} if they brought none.
//
// # Headers
//
// Every request carries anthropic-version, the key given to [WithAPIKey]
// as Authorization: Bearer (the environment's key is never read), and the
// headers ANTHROPIC_CUSTOM_HEADERS names, one "Name: value" a line.
package anthropic
