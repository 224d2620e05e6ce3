// Package openai connects the agent loop to any OpenAI-compatible chat
// completions endpoint (OpenAI, vLLM, llama.cpp, Ollama, LM Studio, ...),
// built on the official SDK, github.com/openai/openai-go/v3.
//
// # Use
//
//	m, err := openai.New("http://localhost:11434/v1", "qwen3",
//		openai.WithAPIKey(os.Getenv("OPENAI_API_KEY")))
//	a, err := agent.New(m, p)
//
// # Streaming
//
// Every request streams. Text and tool-call fragments reach
// agent.Request.OnDelta as they arrive; tool calls whose arguments come split
// over many chunks are assembled with the SDK's accumulator.
//
// # Errors and retries
//
// A reply with status 429 or 5xx is tried again, up to [WithMaxRetries]
// times, after the server's Retry-After (or Retry-After-Ms) when it sent one
// and an exponential backoff with jitter otherwise, as long as nothing has
// streamed yet. Other statuses, and the last failure, come back as a
// *StatusError with the status and the server's message. An endpoint that
// cannot be reached says so, naming the base URL. A cancelled context stops
// the request, mid-stream included.
package openai
