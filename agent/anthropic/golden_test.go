package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/agent/internal/scripted"
	"github.com/unfold-dev/unfold/internal/golden"
)

// goldenHeaders are the headers of a request that matter to the API: its
// version, the key, the content it sends and takes, and those
// ANTHROPIC_CUSTOM_HEADERS names in the tests below. Telemetry
// (X-Stainless-*, User-Agent) and what net/http adds are left out.
var goldenHeaders = []string{"Accept", "Anthropic-Beta", "Anthropic-Version", "Authorization", "Content-Type", "X-Api-Key", "X-Team", "X-Cost-Center"}

// nativeBlocks is a reply of the API as parseMessage keeps it: thinking,
// text, a blank text block, a server-side tool search and its result, a
// tool call.
const nativeBlocks = `[
	{"type":"thinking","thinking":"Check the status first.","signature":"EqQBCgIYAhIM1gbcDa9G"},
	{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix"},
	{"type":"text","text":"Checking — état ✓."},
	{"type":"text","text":"\n\n"},
	{"type":"server_tool_use","id":"srvtoolu_01ABC","name":"tool_search_tool_regex","input":{"query":"deploy|status"},"caller":{"type":"direct"}},
	{"type":"tool_search_tool_result","tool_use_id":"srvtoolu_01ABC","content":{"type":"tool_search_tool_search_result","tool_references":[{"type":"tool_reference","tool_name":"status"}]}},
	{"type":"tool_use","id":"toolu_01A09q","name":"status","input":{},"caller":{"type":"direct"}}
]`

var goldenTools = []agent.ToolDef{
	{Name: "read", Description: "Read a file.", Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string","description":"The file."},"lines":{"type":"integer"}},"required":["path"],"additionalProperties":false}`)},
	{Name: "now", Description: "The time."},
	{Name: "bare", Description: "An object schema with nothing in it.", Parameters: []byte(`{"type":"object"}`)},
	{Name: "defs", Description: "A schema with definitions.", Parameters: []byte(`{"type":"object","properties":{"p":{"$ref":"#/$defs/p"}},"$defs":{"p":{"type":"string","enum":["a","ü"]}},"required":[]}`)},
}

var deployTools = []agent.ToolDef{
	{Name: "status", Description: "What runs where.", Parameters: []byte(`{"type":"object","properties":{}}`)},
	{Name: "deploy", Description: "Deploy a build.", Parameters: []byte(`{"type":"object","properties":{"build":{"type":"string"}},"required":["build"]}`)},
}

var logTools = []agent.ToolDef{{Name: "tail", Description: "The newest log lines."}}

// deferredRequest opens the deploy section (its tools loaded by the
// result of open_section) with the logs section still closed.
func deferredRequest() agent.Request {
	return agent.Request{
		Messages: []agent.Message{
			{Role: agent.RoleSystem, Content: "You deploy."},
			{Role: agent.RoleUser, Content: "deploy"},
			{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "toolu_1", Name: "open_section", Arguments: `{"section":"deploy"}`}}},
			{Role: agent.RoleTool, ToolCallID: "toolu_1", Content: "Opened deploy.", Loads: []string{"status", "deploy", "read"}},
		},
		Tools:    append(append([]agent.ToolDef{{Name: "open_section", Description: "Open a section.", Parameters: []byte(`{"type":"object","properties":{"section":{"type":"string"}},"required":["section"]}`)}, goldenTools[0]}, deployTools...), logTools...),
		Deferred: []agent.ToolGroup{{Section: "deploy", Summary: " Ship builds. ", Tools: deployTools}, {Section: "logs", Tools: logTools}},
	}
}

var goldenCases = []struct {
	name  string
	model string
	opts  []Option
	env   map[string]string
	req   agent.Request
}{
	{name: "hello", req: agent.Request{Messages: hello}},
	{name: "tools", req: agent.Request{Messages: hello, Tools: goldenTools}},
	{name: "conversation", req: agent.Request{Tools: goldenTools[:2], Messages: []agent.Message{
		{Role: agent.RoleSystem, Content: "You read files.\nBe brief."},
		{Role: agent.RoleUser, Content: "Read a.txt and b.txt — then tell me the time ⏰."},
		{Role: agent.RoleAssistant, Content: "Reading both.", ToolCalls: []agent.ToolCall{
			{ID: "toolu_a", Name: "read", Arguments: `{"path":"a.txt"}`},
			{ID: "functions.read:1", Name: "read", Arguments: `{"path": "b.txt"`},
			{ID: "toolu_n", Name: "now", Arguments: `[1,2]`},
		}},
		{Role: agent.RoleTool, ToolCallID: "toolu_a", Content: "alpha\n"},
		{Role: agent.RoleTool, ToolCallID: "functions.read:1", Content: "Error: the arguments are not JSON"},
		{Role: agent.RoleTool, ToolCallID: "toolu_n", Content: ""},
		{Role: agent.RoleUser, Content: "Screen: 日本語 <b>&amp;</b>"},
		{Role: agent.RoleAssistant, Content: "  \n"},
		{Role: agent.RoleUser, Content: ""},
		{Role: agent.RoleAssistant, Content: "It is noon.\x00"},
		{Role: agent.RoleUser, Content: "thanks"},
	}}},
	{name: "deferred", req: deferredRequest()},
	{name: "deferred_old_model", model: "claude-sonnet-4-20250514", req: deferredRequest()},
	{name: "native", req: agent.Request{Tools: append([]agent.ToolDef{goldenTools[0]}, deployTools...), Messages: []agent.Message{
		{Role: agent.RoleSystem, Content: "You deploy."},
		{Role: agent.RoleUser, Content: "status?"},
		{Role: agent.RoleAssistant, Content: "Checking — état ✓.\n\n", ToolCalls: []agent.ToolCall{{ID: "toolu_01A09q", Name: "status", Arguments: "{}"}},
			Native: &agent.Native{API: NativeMessages, Data: []byte(nativeBlocks)}},
		{Role: agent.RoleTool, ToolCallID: "toolu_01A09q", Content: "web: up"},
		{Role: agent.RoleAssistant, Content: "\n\n", Native: &agent.Native{API: NativeMessages, Data: []byte(`[{"type":"text","text":"\n\n"}]`)}},
		{Role: agent.RoleUser, Content: "and now?"},
		{Role: agent.RoleAssistant, Content: "other API", Native: &agent.Native{API: "openai.responses", Data: []byte(`[{"type":"message"}]`)}},
		{Role: agent.RoleUser, Content: "go on"},
	}}},
	{name: "max_tokens_headers", opts: []Option{WithMaxTokens(1000)},
		env: map[string]string{"ANTHROPIC_CUSTOM_HEADERS": "X-Team: blue\nX-Cost-Center:42", "ANTHROPIC_API_KEY": "env-key", "ANTHROPIC_AUTH_TOKEN": "env-token"},
		req: agent.Request{Messages: []agent.Message{{Role: agent.RoleSystem, Content: "  "}, {Role: agent.RoleUser, Content: "hi"}}}},
	{name: "no_key", opts: []Option{WithAPIKey("")}, req: agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: "hi"}}}},
}

// TestGoldenRequests pins the request the client sends for each case:
// method, path, the headers that matter to the API and the JSON body, in
// a form where key order does not count. Every request streams.
func TestGoldenRequests(t *testing.T) {
	for _, tt := range goldenCases {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			model := tt.model
			if model == "" {
				model = "claude-sonnet-4-5"
			}
			srv := scripted.Refuse(t, `{"type":"error","error":{"type":"invalid_request_error","message":"stop here"}}`)
			c, err := New(srv.URL, model, append([]Option{WithAPIKey("k")}, tt.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Complete(context.Background(), tt.req); err == nil {
				t.Fatal("got no error, want the server's refusal")
			}
			sent := srv.Sent()
			if len(sent) != 1 {
				t.Fatalf("got %d requests, want 1", len(sent))
			}
			golden.Check(t, "requests/"+tt.name+".json", canonicalRequest(t, sent[0]))
		})
	}
}

// canonicalRequest is s as indented JSON with its keys sorted.
func canonicalRequest(t *testing.T, s scripted.Sent) string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(s.Body))
	dec.UseNumber()
	var body any
	if err := dec.Decode(&body); err != nil {
		t.Fatalf("the body is not JSON: %v\n%s", err, s.Body)
	}
	header := map[string]string{}
	for _, k := range goldenHeaders {
		if v := s.Header.Values(k); len(v) > 0 {
			header[http.CanonicalHeaderKey(k)] = strings.Join(v, ", ")
		}
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(map[string]any{"method": s.Method, "path": s.Path, "header": header, "body": body}); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// TestToolsHaveInputSchema: every tool goes with an input_schema of type
// object, which the API requires, a tool without parameters or with an
// object schema and nothing more included.
func TestToolsHaveInputSchema(t *testing.T) {
	srv := scripted.Refuse(t, `{"type":"error","error":{"type":"invalid_request_error","message":"stop here"}}`)
	_, _ = newClient(t, srv.URL).Complete(context.Background(), deferredRequest())
	_, _ = newClient(t, srv.URL).Complete(context.Background(), agent.Request{Messages: hello, Tools: goldenTools})
	sent := srv.Sent()
	if len(sent) != 2 {
		t.Fatalf("got %d requests, want 2", len(sent))
	}
	for _, s := range sent {
		var body struct {
			Tools []struct {
				Type        string `json:"type"`
				Name        string `json:"name"`
				InputSchema *struct {
					Type string `json:"type"`
				} `json:"input_schema"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(s.Body, &body); err != nil {
			t.Fatal(err)
		}
		for _, tl := range body.Tools {
			if tl.Type == "" && (tl.InputSchema == nil || tl.InputSchema.Type != "object") {
				t.Errorf("tool %s: got input_schema %+v, want one of type object", tl.Name, tl.InputSchema)
			}
		}
	}
}
