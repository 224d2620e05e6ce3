package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/agent/internal/scripted"
)

// TestLenientReplies: a reply whose fields come as another JSON type than
// OpenAI's (content as a list of parts, arguments as an object, an id as
// a number, counts and an index as strings) is read, streamed or as one
// document, not failed whole; so is one whose objects come as another
// type (a usage that is a number, a delta that is a string, a status or
// incomplete_details' reason that is a number), read as nothing.
func TestLenientReplies(t *testing.T) {
	chunk := func(delta, finish string) string {
		return `data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + finish + "}]}\n\n"
	}
	doc := func(message, usage string) string {
		return `{"id":"c1","object":"chat.completion","choices":[{"index":0,"message":` + message + `,"finish_reason":"stop"}],"usage":` + usage + `}`
	}
	const usage = `{"prompt_tokens":5,"completion_tokens":3}`
	stream, document := "text/event-stream", "application/json"
	for _, tt := range []struct {
		name, api, contentType, body string
		want                         string
	}{
		{"content as parts, streamed", "chat", stream,
			chunk(`{"role":"assistant","content":[{"type":"thinking","thinking":[{"type":"text","text":"Let me see."}]}]}`, "null") +
				chunk(`{"content":[{"type":"text","text":"Checking "}]}`, "null") + chunk(`{"content":[{"type":"text","text":"staging."}]}`, `"stop"`),
			`"Checking staging." [] 0/0`},
		{"content as parts", "chat", document,
			doc(`{"role":"assistant","content":[{"type":"thinking","thinking":[{"type":"text","text":"Let me see."}]},{"type":"text","text":"Checking staging."}]}`, usage),
			`"Checking staging." [] 5/3`},
		{"arguments as an object, streamed", "chat", stream,
			chunk(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"deploy","arguments":{"target":"staging"}}}]}`, "null") + chunk(`{}`, `"tool_calls"`),
			`"" [call_1 deploy {"target":"staging"}] 0/0`},
		{"arguments as an object", "chat", document,
			doc(`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"deploy","arguments":{"target":"staging"}}}]}`, usage),
			`"" [call_1 deploy {"target":"staging"}] 5/3`},
		{"a numeric call id", "chat", stream,
			chunk(`{"tool_calls":[{"index":0,"id":123,"type":"function","function":{"name":"deploy","arguments":"{}"}}]}`, "null") + chunk(`{}`, `"tool_calls"`),
			`"" [123 deploy {}] 0/0`},
		{"counts and an index as strings", "chat", stream,
			chunk(`{"content":"Done."}`, "null") + `data: {"id":"c1","choices":[{"index":"0","delta":{},"finish_reason":"stop"}]}` + "\n\n" +
				`data: {"id":"c1","choices":[],"usage":{"prompt_tokens":"5","completion_tokens":"3","prompt_tokens_details":{"cached_tokens":null}}}` + "\n\n",
			`"Done." [] 5/3`},
		{"responses: arguments as an object, counts as strings", "responses", document,
			`{"id":"resp_1","object":"response","status":"completed","output":[{"type":"function_call","id":"fc_1","call_id":"call_1","name":"deploy","arguments":{"target":"staging"},"status":"completed"}],"usage":{"input_tokens":"5","output_tokens":3}}`,
			`"" [call_1 deploy {"target":"staging"}] 5/3`},
		{"objects of another type, streamed", "chat", stream,
			`data: {"id":"c1","choices":[{"index":0,"delta":"x","finish_reason":null}]}` + "\n\n" + chunk(`{"content":"Done."}`, "null") +
				`data: {"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":3,"prompt_tokens_details":0}}` + "\n\n",
			`"Done." [] 5/3`},
		{"objects of another type", "chat", document,
			`{"id":"c1","object":"chat.completion","choices":[{"index":0,"message":{"content":"Done.","tool_calls":{}},"finish_reason":"stop"}],"usage":5}`,
			`"Done." [] 0/0`},
		{"responses: status, object and incomplete_details of another type", "responses", document,
			`{"id":"resp_1","object":"response","status":"completed","incomplete_details":{"reason":5},"output":[{"type":"message","content":[{"type":"output_text","text":"Done."}]}],"usage":{"input_tokens":5,"output_tokens":3,"input_tokens_details":0}}`,
			`"Done." [] 5/3`},
		{"responses: an item of another type, streamed", "responses", stream,
			`data: {"type":"response.output_item.added","item":"x"}` + "\n\n" +
				`data: {"type":"response.completed","response":{"object":"response","status":"completed","incomplete_details":["x"],"output":[{"type":"message","content":[{"type":"output_text","text":"Done."}]}],"usage":5}}` + "\n\n",
			`"Done." [] 0/0`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			reply := scripted.Reply{RawType: tt.contentType, Raw: tt.body}
			var m agent.Model
			if tt.api == "responses" {
				m = newResponses(t, scripted.NewResponses(t, reply).URL)
			} else {
				m = newChat(t, scripted.New(t, reply).URL)
			}
			resp, err := m.Complete(context.Background(), agent.Request{Messages: hello})
			if err != nil {
				t.Fatal(err)
			}
			var calls []string
			for _, c := range resp.Message.ToolCalls {
				calls = append(calls, c.ID+" "+c.Name+" "+c.Arguments)
			}
			got := fmt.Sprintf("%q %v %d/%d", resp.Message.Content, calls, resp.Usage.PromptTokens, resp.Usage.CompletionTokens)
			if got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

// TestObjectArgumentsSentBack: a Responses function call whose arguments
// came as an object goes back in the next request with them as a JSON
// string, as the API takes them, and its status as it came.
func TestObjectArgumentsSentBack(t *testing.T) {
	item := json.RawMessage(`{"type":"function_call","id":"fc_1","call_id":"call_1","name":"deploy","arguments":{"target":"staging"},"status":"completed"}`)
	var got struct {
		Arguments, Status string
	}
	if err := json.Unmarshal(sentItem(item), &got); err != nil {
		t.Fatal(err)
	}
	if got.Arguments != `{"target":"staging"}` || got.Status != "completed" {
		t.Errorf("got %+v, want the arguments as a string, the status as it came", got)
	}
}
