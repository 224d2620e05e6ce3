package openai

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/agent/internal/transport"
)

// NativeResponses is the [agent.Native] API name of replies from the
// Responses API: their data is the response's output items.
const NativeResponses = "openai.responses"

// Responses is an agent.Model for the OpenAI Responses API (POST
// /responses), streaming its replies. Deferred tools (agent.Request.
// Deferred) are sent as one namespace per section, each tool
// defer_loading, with the tool_search tool, so the tool list never
// changes in a run: the model loads a namespace's tools when it needs
// them. Nothing is stored on the server (store: false); the reply's output
// items, reasoning included (encrypted), go back with the next request as
// the API requires. It is safe for concurrent use.
type Responses struct {
	opts     options
	noStream atomic.Bool
}

var (
	_ agent.Model    = (*Responses)(nil)
	_ agent.Featured = (*Responses)(nil)
)

// NewResponses returns a Responses API client for the endpoint at
// baseURL (https://api.openai.com/v1) serving model.
func NewResponses(baseURL, model string, opt ...Option) (*Responses, error) {
	opts, err := newOptions(baseURL, model, opt)
	if err != nil {
		return nil, err
	}
	return &Responses{opts: opts}, nil
}

// Features says that the API caches prompt prefixes and defers tools.
func (c *Responses) Features() agent.Features {
	return agent.Features{CachesPrefixes: true, DefersTools: true}
}

// Complete sends req and returns the reply, streamed; retries and
// fallbacks are those of [Client.Complete].
func (c *Responses) Complete(ctx context.Context, req agent.Request) (agent.Response, error) {
	params, err := c.params(req)
	if err != nil {
		return agent.Response{}, err
	}
	bounded, cancel := transport.Deadline(ctx, c.opts.Timeout)
	defer cancel()
	return complete(ctx, &c.noStream, c.opts.Policy, req,
		func(call *transport.Call) (agent.Response, error) {
			params := params
			params.Stream = true
			return c.stream(bounded, call, params, req)
		},
		func(call *transport.Call) (agent.Response, error) {
			body, err := post(bounded, c.opts, call, "responses", params)
			if err != nil {
				return agent.Response{}, err
			}
			return parseResponse(body)
		},
		func(call *transport.Call, err error) error { return c.failure(ctx, call, err) })
}

func (c *Responses) failure(ctx context.Context, call *transport.Call, err error) error {
	return failure(ctx, c.opts, "responses", call, err)
}

// stream makes one streaming request and reads its events up to
// response.completed (or response.incomplete), not to the stream's end.
func (c *Responses) stream(ctx context.Context, call *transport.Call, params responsesRequest, req agent.Request) (agent.Response, error) {
	res, err := open(ctx, c.opts, call, "responses", params)
	if err != nil {
		return agent.Response{}, err
	}
	defer res.Body.Close()
	var done []byte
	streamed := false
	size := 0
	calls := map[looseString]int{} // item id of a function call: its index in the reply
	events := transport.NewEvents(res.Body)
	// The stream is read up to the event that ends the response: a
	// server (a proxy) may keep the connection open after it.
	for done == nil {
		var ev responsesEvent
		end, err := nextEvent(events, &ev, false)
		if err != nil {
			return agent.Response{}, call.ReadFailure(streamed, err)
		}
		if end {
			break
		}
		streamed = true
		delta := transport.Text(ev.Delta)
		size += len(delta)
		if size > MaxReplyBytes {
			return agent.Response{}, transport.ErrOverBody
		}
		switch ev.Type {
		case "response.output_text.delta":
			if req.OnDelta != nil {
				req.OnDelta(agent.Delta{Content: delta})
			}
		case "response.output_item.added":
			if ev.Item.Type == "function_call" {
				if len(calls) == transport.MaxToolCalls {
					return agent.Response{}, transport.TooManyCalls
				}
				calls[ev.Item.ID] = len(calls)
				if req.OnDelta != nil {
					req.OnDelta(agent.Delta{ToolIndex: calls[ev.Item.ID], ToolName: string(ev.Item.Name)})
				}
			}
		case "response.function_call_arguments.delta":
			if req.OnDelta != nil {
				req.OnDelta(agent.Delta{ToolIndex: calls[ev.ItemID], ToolArgs: delta})
			}
		case "response.completed", "response.incomplete":
			// The response holds the whole reply, which deltas may not
			// have brought: it is bounded as they are.
			if len(ev.Response) > MaxReplyBytes {
				return agent.Response{}, transport.ErrOverBody
			}
			done = append([]byte{}, ev.Response...)
		case "response.failed":
			code, msg := failureOf(string(ev.Response))
			switch strings.TrimSpace(msg) {
			case "", "{}", "null":
				return agent.Response{}, errors.New("the response failed with no message")
			}
			if code != "" {
				msg = code + ": " + msg
			}
			return agent.Response{}, &failedInStream{text: "the response failed: " + msg, code: code}
		case "error":
			code, msg := ev.codeAndMessage()
			if code == "" && msg == "" {
				return agent.Response{}, errNoMessage
			}
			return agent.Response{}, &failedInStream{text: "the stream reported an error: " + strings.TrimSpace(code+" "+msg), code: code}
		}
	}
	if err := call.BodyErr(); err != nil {
		return agent.Response{}, err
	}
	if body := call.Body(); body != nil && !streamed {
		resp, err := parseResponse(body)
		if err == nil && req.OnDelta != nil && resp.Message.Content != "" {
			req.OnDelta(agent.Delta{Content: resp.Message.Content})
		}
		return resp, err
	}
	if done == nil {
		if streamed {
			return agent.Response{}, errors.New("the stream ended before the response completed")
		}
		return agent.Response{}, errUnusableResponse
	}
	return parseResponse(done)
}

// responsesEvent is an event of a streamed response: what unfold reads
// of it.
type responsesEvent struct {
	Type looseString `json:"type"`
	// Delta is a string for the events read (text and arguments); other
	// events may send another value, which is not read.
	Delta  json.RawMessage `json:"delta"`
	ItemID looseString     `json:"item_id"`
	Item   struct {
		Type looseString `json:"type"`
		ID   looseString `json:"id"`
		Name looseString `json:"name"`
	} `json:"item"`
	Response json.RawMessage `json:"response"`
	// Code and Message are an error event's, at its top or in its error
	// object; an error that is a string is its message.
	Code    json.RawMessage `json:"code"`
	Message json.RawMessage `json:"message"`
	Error   json.RawMessage `json:"error"`
}

// codeAndMessage returns an error event's code and message: its own, or,
// as OpenAI sends them, its error object's, or an error string.
func (ev *responsesEvent) codeAndMessage() (code, message string) {
	var inner struct {
		Code    json.RawMessage `json:"code"`
		Message json.RawMessage `json:"message"`
	}
	if decode(ev.Error, &inner) != nil {
		inner.Message = ev.Error
	}
	return cmp.Or(transport.Text(ev.Code), transport.Text(inner.Code)), cmp.Or(transport.Text(ev.Message), transport.Text(inner.Message))
}

var errUnusableResponse = errors.New("the reply is not a response")

// failedInStream is a response that failed in its stream, after it began:
// an error event or response.failed, with the error's code.
type failedInStream struct {
	text string
	code string // the error's code, such as context_length_exceeded
}

func (e *failedInStream) Error() string { return e.text }

// Is reports whether the error is the request not fitting the model's
// context window, [agent.ErrContextWindow].
func (e *failedInStream) Is(target error) bool {
	return target == agent.ErrContextWindow && e.code == contextLengthExceeded
}

// failureOf returns the code and message of a failed response's error, or
// no code and the response as it came.
func failureOf(raw string) (code, message string) {
	var r struct {
		Error struct{ Code, Message looseString } `json:"error"`
	}
	if decode([]byte(raw), &r) == nil && r.Error.Message != "" {
		return string(r.Error.Code), string(r.Error.Message)
	}
	return "", raw
}

// parseResponse reads a Responses API response object: the text of its
// messages (a refusal among them), its function calls, its status and its
// usage. A function call the response ended in while incomplete is marked
// cut. Its output items, whatever
// their type (reasoning, tool searches, calls), are kept as the message's
// Native data, sent back as they are with the next request.
func parseResponse(raw []byte) (agent.Response, error) {
	var r struct {
		Object looseString       `json:"object"`
		Status looseString       `json:"status"`
		Output []json.RawMessage `json:"output"`
		Usage  struct {
			InputTokens        looseNumber `json:"input_tokens"`
			OutputTokens       looseNumber `json:"output_tokens"`
			InputTokensDetails struct {
				CachedTokens looseNumber `json:"cached_tokens"`
			} `json:"input_tokens_details"`
		} `json:"usage"`
		Incomplete *struct {
			Reason looseString `json:"reason"`
		} `json:"incomplete_details"`
	}
	if err := decode(raw, &r); err != nil || r.Object != "response" {
		return agent.Response{}, errUnusableResponse
	}
	out := agent.Response{
		Message:      agent.Message{Role: agent.RoleAssistant},
		Finish:       agent.FinishComplete,
		FinishReason: string(r.Status),
		Usage: agent.Usage{
			PromptTokens: transport.Tokens(float64(r.Usage.InputTokens)), CompletionTokens: transport.Tokens(float64(r.Usage.OutputTokens)),
			// Cached tokens are some of the input's.
			CachedTokens: min(transport.Tokens(float64(r.Usage.InputTokensDetails.CachedTokens)), transport.Tokens(float64(r.Usage.InputTokens))),
		},
	}
	if r.Incomplete != nil && r.Incomplete.Reason != "" {
		out.FinishReason = string(r.Incomplete.Reason)
	}
	if r.Status == "incomplete" {
		out.Finish = agent.FinishTruncated
		if out.FinishReason == "content_filter" {
			out.Finish = agent.FinishFiltered
		}
	}
	var text strings.Builder
	refused, cut := false, false // cut: the last item is a function call the reply ended in
	for i, item := range r.Output {
		var it struct {
			Type      looseString   `json:"type"`
			CallID    looseString   `json:"call_id"`
			Name      looseString   `json:"name"`
			Arguments argumentsText `json:"arguments"`
			// Content is a message's list of parts; other items' content
			// is not read.
			Content json.RawMessage `json:"content"`
		}
		if err := decode(item, &it); err != nil {
			return agent.Response{}, fmt.Errorf("output item %d: %w", i, err)
		}
		switch it.Type {
		case "message":
			var parts []struct {
				Text    looseString `json:"text"`
				Refusal looseString `json:"refusal"`
			}
			if json.Unmarshal(it.Content, &parts) != nil {
				// Not a list of parts: a string, as in a request.
				var c contentText
				_ = json.Unmarshal(it.Content, &c) // it never fails
				text.WriteString(string(c))
			}
			for _, c := range parts {
				text.WriteString(string(c.Text))
				text.WriteString(string(c.Refusal))
				refused = refused || c.Refusal != ""
			}
		case "function_call":
			if len(out.Message.ToolCalls) == transport.MaxToolCalls {
				return agent.Response{}, transport.TooManyCalls
			}
			out.Message.ToolCalls = append(out.Message.ToolCalls, agent.ToolCall{ID: string(it.CallID), Name: string(it.Name), Arguments: string(it.Arguments)})
		}
		cut = it.Type == "function_call"
	}
	if n := len(out.Message.ToolCalls); cut && out.Finish != agent.FinishComplete {
		out.Message.ToolCalls[n-1].Cut = true
	}
	if refused {
		out.Finish = agent.FinishRefused
	}
	out.Message.Content = text.String()
	items, err := json.Marshal(r.Output)
	if err != nil {
		return agent.Response{}, err
	}
	out.Message.Native = &agent.Native{API: NativeResponses, Data: items}
	return out, nil
}

// params translates a request: the system message as instructions, the
// conversation as input items (replies of this API as they came), the
// offered tools as functions, and the deferred groups as namespaces.
func (c *Responses) params(req agent.Request) (responsesRequest, error) {
	p := responsesRequest{
		Model:           c.opts.Model,
		Include:         []string{"reasoning.encrypted_content"},
		Temperature:     c.opts.Temperature,
		MaxOutputTokens: c.opts.MaxTokens,
	}
	if c.opts.Reasoning != "" {
		p.Reasoning = &reasoning{Effort: c.opts.Reasoning}
	}
	// The API refuses a call_id sent twice in a conversation.
	for i, m := range agent.DistinctCallIDs(req.Messages) {
		switch m.Role {
		case agent.RoleSystem:
			if i != 0 {
				return p, fmt.Errorf("openai: responses: message %d: a system message after the first", i)
			}
			p.Instructions = &m.Content
		case agent.RoleUser:
			p.Input = append(p.Input, inputMessage{Type: "message", Role: "user", Content: m.Content})
		case agent.RoleTool:
			p.Input = append(p.Input, functionCallOutput{Type: "function_call_output", CallID: m.ToolCallID, Output: m.Content})
		case agent.RoleAssistant:
			if m.Native != nil && m.Native.API == NativeResponses {
				var items []json.RawMessage
				if err := json.Unmarshal(m.Native.Data, &items); err != nil {
					return p, fmt.Errorf("openai: responses: message %d: native output items: %w", i, err)
				}
				for _, it := range items {
					p.Input = append(p.Input, sentItem(it))
				}
				continue
			}
			if m.Content != "" {
				p.Input = append(p.Input, inputMessage{Type: "message", Role: "assistant", Content: m.Content})
			}
			for _, tc := range m.ToolCalls {
				p.Input = append(p.Input, functionCall{Type: "function_call", CallID: tc.ID, Name: tc.Name, Arguments: sentArguments(tc.Arguments)})
			}
		default:
			return p, fmt.Errorf("openai: responses: message %d: unknown role %q", i, m.Role)
		}
	}
	tools, err := responsesTools(req)
	if err != nil {
		return p, err
	}
	p.Tools = tools
	return p, nil
}

// responsesRequest is a Responses API request: what unfold sends of it.
// Nothing is stored on the server.
type responsesRequest struct {
	Model           string     `json:"model"`
	Instructions    *string    `json:"instructions,omitempty"`
	Input           []any      `json:"input"`
	Tools           []any      `json:"tools,omitempty"`
	Include         []string   `json:"include"`
	Store           bool       `json:"store"`
	Temperature     *float64   `json:"temperature,omitempty"`
	Reasoning       *reasoning `json:"reasoning,omitempty"`
	MaxOutputTokens int64      `json:"max_output_tokens,omitempty"`
	Stream          bool       `json:"stream,omitempty"`
}

type reasoning struct {
	Effort string `json:"effort"`
}

// inputMessage, functionCall and functionCallOutput are input items.
type inputMessage struct {
	Type    string `json:"type"`
	Role    string `json:"role"`
	Content string `json:"content"`
}

type functionCall struct {
	Type      string `json:"type"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type functionCallOutput struct {
	Type   string `json:"type"`
	CallID string `json:"call_id"`
	Output string `json:"output"`
}

// functionTool is a tool offered; one without parameters has none.
type functionTool struct {
	Type        string         `json:"type"`
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters,omitzero"`
	Strict      bool           `json:"strict"`
}

// namespaceTool is a group of deferred tools, loaded by tool_search.
type namespaceTool struct {
	Type        string         `json:"type"`
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Tools       []deferredTool `json:"tools"`
}

// deferredTool is a tool of a namespace: its parameters are sent, null
// when it has none.
type deferredTool struct {
	Type         string         `json:"type"`
	Name         string         `json:"name"`
	Description  string         `json:"description"`
	Parameters   map[string]any `json:"parameters"`
	DeferLoading bool           `json:"defer_loading"`
}

// sentItem is an output item as it goes back in the input: as it came,
// but for a function call whose arguments are not a JSON string (the API
// takes "a JSON string"). Arguments that came as an object go back as its
// text. Arguments that are not JSON (a call cut by the output limit) go
// back as {} and the call as completed, as sentArguments sends such
// calls to chat completions: the call was answered as not run; the
// transcript keeps what came.
func sentItem(it json.RawMessage) json.RawMessage {
	var fields map[string]json.RawMessage
	if json.Unmarshal(it, &fields) != nil || string(fields["type"]) != `"function_call"` {
		return it
	}
	var args string
	if json.Unmarshal(fields["arguments"], &args) == nil && json.Valid([]byte(args)) {
		return it
	}
	var came argumentsText
	if json.Unmarshal(fields["arguments"], &came) == nil && came != "" && json.Valid([]byte(came)) {
		text, err := json.Marshal(string(came))
		if err != nil {
			return it
		}
		fields["arguments"] = text
	} else {
		fields["arguments"] = json.RawMessage(`"{}"`)
		if _, ok := fields["status"]; ok {
			fields["status"] = json.RawMessage(`"completed"`)
		}
	}
	out, err := json.Marshal(fields)
	if err != nil {
		return it
	}
	return out
}

// responsesTools returns the offered tools outside the deferred groups as
// functions, then, when there are groups, tool_search and one namespace
// per group with its tools defer_loading.
func responsesTools(req agent.Request) ([]any, error) {
	inGroup := map[string]bool{}
	for _, g := range req.Deferred {
		for _, t := range g.Tools {
			inGroup[t.Name] = true
		}
	}
	var out []any
	for _, t := range req.Tools {
		if inGroup[t.Name] {
			continue
		}
		schema, err := schemaOf(t)
		if err != nil {
			return nil, err
		}
		out = append(out, functionTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: schema})
	}
	if len(req.Deferred) == 0 {
		return out, nil
	}
	out = append(out, struct {
		Type string `json:"type"`
	}{"tool_search"})
	used := map[string]bool{}
	for _, g := range req.Deferred {
		ns := namespaceTool{Type: "namespace", Name: namespaceName(g.Section, used), Description: namespaceDescription(g), Tools: []deferredTool{}}
		for _, t := range g.Tools {
			schema, err := schemaOf(t)
			if err != nil {
				return nil, err
			}
			ns.Tools = append(ns.Tools, deferredTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: schema, DeferLoading: true})
		}
		out = append(out, ns)
	}
	return out, nil
}

// namespaceName makes a section path a namespace name (letters, digits,
// _ and -): dots become "__"; a name taken gets a number.
func namespaceName(path string, used map[string]bool) string {
	base := strings.ReplaceAll(path, ".", "__")
	name := base
	for n := 2; used[name]; n++ {
		name = fmt.Sprintf("%s_%d", base, n)
	}
	used[name] = true
	return name
}

// namespaceDescription tells the model what a section's tools are for and
// that they come with the section.
func namespaceDescription(g agent.ToolGroup) string {
	d := fmt.Sprintf("Tools of the section %q (%s)", g.Section, g.Title)
	if g.Summary != "" {
		d += ": " + strings.TrimRight(strings.TrimSpace(g.Summary), ".")
	}
	return d + ". Open the section with open_sections to read it; calling one of these tools opens it too."
}
