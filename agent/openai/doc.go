// Package openai connects the agent loop to OpenAI's APIs: [Client]
// speaks chat completions, the API of every OpenAI-compatible endpoint
// (OpenAI, vLLM, llama.cpp, Ollama, LM Studio, ...), and [Responses]
// speaks the Responses API. Both speak the API itself over net/http, with
// the retries of the adapters' transport and small structs holding only
// the fields unfold sends and reads; no SDK is linked.
//
// Every request carries the key given as a bearer token (the
// environment's OPENAI_API_KEY is never read, nor OPENAI_BASE_URL), and,
// as OpenAI's SDKs send them, OPENAI_ORG_ID as OpenAI-Organization,
// OPENAI_PROJECT_ID as OpenAI-Project and the headers of
// OPENAI_CUSTOM_HEADERS, one "Name: value" a line.
//
// # Use
//
//	m, err := openai.New("http://localhost:11434/v1", "qwen3",
//		openai.WithAPIKey(os.Getenv("OPENAI_API_KEY")))
//	r, err := openai.NewResponses("https://api.openai.com/v1", "gpt-5",
//		openai.WithAPIKey(os.Getenv("OPENAI_API_KEY")))
//	a, err := agent.New(m, p)
//
// # Streaming
//
// Every request streams. Text and tool-call fragments reach
// agent.Request.OnDelta as they arrive; chat completion tool calls whose
// arguments come split over many chunks are assembled as OpenAI's SDKs
// assemble them, Responses replies are read from response.completed. An
// endpoint that answers a streaming request with one JSON document is read
// as such; one that refuses to stream (a 4xx status naming "stream") is
// asked again without streaming, and from then on.
//
// # Deferred tools (Responses)
//
// The tools of the sections closed when the run started
// (agent.Request.Deferred) are sent as one namespace per section, each
// function defer_loading, with the tool_search tool: the tool list is the
// same in every request of a run, so the provider's prompt cache keeps it.
// The model loads a namespace when it needs it; calling a deferred tool
// opens its section (see the agent package). Replies are not stored on the
// server (store: false): each reply's output items, reasoning (encrypted)
// and tool searches included, are kept as the message's agent.Native data
// and go back with the next request, as the API requires.
//
// # Errors and retries
//
// A request that got no reply, or 408, 409, 429 or a 5xx status, is made
// again up to [WithMaxRetries] times, after the server's Retry-After (or
// Retry-After-Ms) or an exponential backoff with jitter; each retry is
// told to agent.Request.OnRetry before its wait ("429 rate limited", and
// the wait). A Responses stream that opens with an error event or
// response.failed before any output (server_is_overloaded, server_error,
// rate_limit_exceeded) is retried the same way, as 529, 500 or 429
// ("overloaded (in the stream)"). [WithTimeout] bounds each request,
// retries and streamed reply included.
// What fails comes back named: a *StatusError with the status and the
// server's message (or, for a page that is not JSON, its content type and
// first bytes); a reply that is not what the API sends, by its status,
// content type and first bytes; an attempt that ran out of time, by the
// timeout; an endpoint that cannot be reached, by its base URL. A cancelled
// context stops the request, mid-stream included. A request refused for
// its size (code context_length_exceeded, as a status or in a
// response.failed event; llama.cpp's exceed_context_size_error; vLLM's
// "maximum context length is" message; 413) is an error for which
// errors.Is(err, [agent.ErrContextWindow]) holds; when its message names
// the output limit (max_tokens, max_completion_tokens, "in the
// completion"), [agent.ErrOutputLimit] instead.
//
// A Responses reply keeps its output items, reasoning items included, as
// [agent.Native] data under the API name [NativeResponses], and goes back
// to the API as it came.
//
// # How a reply ends
//
// The finish_reason (chat completions) or the response's status and
// incomplete_details (Responses) becomes the reply's agent.Finish: length
// and max_output_tokens are truncated, content_filter filtered, a
// refusal refused (its text is the reply's content). The last tool call
// of a reply cut short is marked agent.ToolCall.Cut. A chat completions
// stream that ends before its choice has a finish_reason is refused ("the
// stream ended before the reply finished"), as a Responses stream that
// ends before response.completed or response.incomplete is.
package openai
