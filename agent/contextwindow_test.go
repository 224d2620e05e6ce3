package agent_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/agent/anthropic"
	"github.com/unfold-dev/unfold/agent/internal/scripted"
	"github.com/unfold-dev/unfold/agent/openai"
)

// responseFailed is a Responses stream that fails with err, an error
// object, after response.created.
func responseFailed(err string) string {
	resp := `{"id":"resp_1","object":"response","created_at":1,"model":"gpt-5","output":[],"status":"%s","error":%s}`
	created := strings.Replace(strings.Replace(resp, "%s", "in_progress", 1), "%s", "null", 1)
	failed := strings.Replace(strings.Replace(resp, "%s", "failed", 1), "%s", err, 1)
	return "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":" + created + "}\n\n" +
		"event: response.failed\ndata: {\"type\":\"response.failed\",\"sequence_number\":1,\"response\":" + failed + "}\n\n"
}

// TestContextWindow: a request the API refuses because the conversation
// outgrew the model's context window, in each API's own words, ends the
// run with ErrContextWindow, the server's message, and what to do
// instead of a resume that sends the same conversation again. A refusal
// that names the output limit asked for (max_tokens) ends it with
// ErrOutputLimit, which says to ask for fewer output tokens. Other
// refusals of a request are taken for neither.
func TestContextWindow(t *testing.T) {
	const (
		openaiTooLong    = `{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`
		responsesTooLong = `{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}`
		openaiOther      = `{"error":{"message":"Invalid 'messages[1].content': string too long. Expected a string with maximum length 10485760, but got a string with length 10485761 instead.","type":"invalid_request_error","param":"messages[1].content","code":"string_above_max_length"}}`
		anthropicTooLong = `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`
		anthropicInput   = `{"type":"error","error":{"type":"invalid_request_error","message":"input length and ` + "`max_tokens`" + ` exceed context limit: 188240 + 21333 > 200000, decrease input length or ` + "`max_tokens`" + ` and try again"}}`
		anthropicLarge   = `{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}`
		anthropicOther   = `{"type":"error","error":{"type":"invalid_request_error","message":"messages.1.content: Input should be a valid list"}}`
		llamaCpp         = `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":5000,"n_ctx":4096}}`
		vllmMaxTokens    = `{"error":{"message":"'max_tokens' or 'max_completion_tokens' is too large: 40000. This model's maximum context length is 32768 tokens and your request has 412 input tokens (40000 > 32768 - 412). None","type":"BadRequestError","param":null,"code":400}}`
		openaiCompletion = `{"error":{"message":"This model's maximum context length is 8192 tokens. However, you requested 9000 tokens (1000 in the messages, 8000 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`
	)
	jsonReply := func(status int, body string) scripted.Reply {
		return scripted.Reply{Status: status, RawType: "application/json", Raw: body}
	}
	tests := []struct {
		api, name string
		reply     scripted.Reply
		want      error  // ErrContextWindow, ErrOutputLimit or nil
		message   string // of the server, in the error
	}{
		{"chat completions", "context_length_exceeded", jsonReply(400, openaiTooLong), agent.ErrContextWindow, "maximum context length is 128000 tokens"},
		{"chat completions", "llama.cpp", jsonReply(400, llamaCpp), agent.ErrContextWindow, "exceeds the available context size"},
		{"chat completions", "413", jsonReply(413, `{"error":{"message":"request entity too large"}}`), agent.ErrContextWindow, "request entity too large"},
		{"chat completions", "another 400", jsonReply(400, openaiOther), nil, "string too long"},
		{"chat completions", "vLLM's max_tokens too large", jsonReply(400, vllmMaxTokens), agent.ErrOutputLimit, "'max_tokens' or 'max_completion_tokens' is too large: 40000"},
		{"chat completions", "in the completion", jsonReply(400, openaiCompletion), agent.ErrOutputLimit, "(1000 in the messages, 8000 in the completion)"},
		{"responses", "context_length_exceeded", jsonReply(400, responsesTooLong), agent.ErrContextWindow, "exceeds the context window of this model"},
		{"responses", "in the stream", scripted.Reply{RawType: "text/event-stream", Raw: responseFailed(`{"code":"context_length_exceeded","message":"Your input exceeds the context window of this model."}`)}, agent.ErrContextWindow, "context_length_exceeded: Your input exceeds"},
		{"responses", "another failure in the stream", scripted.Reply{RawType: "text/event-stream", Raw: responseFailed(`{"code":"invalid_prompt","message":"Invalid prompt."}`)}, nil, "invalid_prompt: Invalid prompt."},
		{"messages", "prompt is too long", jsonReply(400, anthropicTooLong), agent.ErrContextWindow, "prompt is too long: 210000 tokens > 200000 maximum"},
		{"messages", "input and max_tokens", jsonReply(400, anthropicInput), agent.ErrOutputLimit, "exceed context limit: 188240 + 21333 > 200000"},
		{"messages", "413", jsonReply(413, anthropicLarge), agent.ErrContextWindow, "Request exceeds the maximum allowed number of bytes"},
		{"messages", "another 400", jsonReply(400, anthropicOther), nil, "Input should be a valid list"},
	}
	for _, tt := range tests {
		t.Run(tt.api+"/"+tt.name, func(t *testing.T) {
			var api scriptedAPI
			for _, a := range scriptedAPIs {
				if a.name == tt.api {
					api = a
				}
			}
			m, violations := api.start(t, scripted.Calls(call("c1", "deploy", `{"target":"staging"}`)), tt.reply, scripted.Text("not asked for"))
			p, deployed := deployPrompt()
			res, err, _ := runRecorded(t, m, p, "deploy to staging")
			if v := violations(); len(v) > 0 {
				t.Errorf("violations: %q", v)
			}
			if got := deployed(); len(got) != 1 || res == nil || res.Steps != 2 {
				t.Fatalf("deployed %q, result %+v; want one deploy, the run ended at step 2", got, res)
			}
			if err == nil || !strings.Contains(err.Error(), tt.message) {
				t.Fatalf("got %v, want the server's %q", err, tt.message)
			}
			var openaiErr *openai.StatusError
			var anthropicErr *anthropic.StatusError
			if tt.reply.Status != 0 && !errors.As(err, &openaiErr) && !errors.As(err, &anthropicErr) {
				t.Errorf("got %T, want the adapter's *StatusError in the chain", errors.Unwrap(err))
			}
			for _, sentinel := range []error{agent.ErrContextWindow, agent.ErrOutputLimit} {
				if got := errors.Is(err, sentinel); got != (sentinel == tt.want) {
					t.Fatalf("errors.Is(%v, %v): got %v, want %v", err, sentinel, got, !got)
				}
			}
			wants := []string{"agent: the conversation is longer than the model's context window (", "resuming this conversation sends it again; start a new run"}
			switch tt.want {
			case nil:
				return
			case agent.ErrOutputLimit:
				wants = []string{"agent: the output limit and the conversation do not fit the model's context window (", "ask for fewer output tokens (the model's max tokens option)"}
			}
			for _, want := range wants {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("got %q, want %q in it", err, want)
				}
			}
		})
	}
}
