package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/internal/golden"
)

// sentRequest is a request as an endpoint got it: what the API reads of
// it.
type sentRequest struct {
	Method string            `json:"method"`
	Path   string            `json:"path"`
	Header map[string]string `json:"header"`
	Body   json.RawMessage   `json:"body"`
}

// unread are headers the APIs do not read: the HTTP client's own, and
// the SDK's telemetry.
func unread(name string) bool {
	switch name {
	case "Content-Length", "Accept-Encoding", "User-Agent":
		return true
	}
	return strings.HasPrefix(name, "X-Stainless-")
}

// capture is an endpoint that keeps every request and refuses it: a
// streaming one as a server that does not stream would, so that the
// client asks again without streaming, the other with a plain 400.
type capture struct {
	mu   sync.Mutex // guards got
	got  []sentRequest
	errs []string
}

func (c *capture) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	sent := sentRequest{Method: r.Method, Path: r.URL.RequestURI(), Header: map[string]string{}, Body: body}
	for name, values := range r.Header {
		if !unread(name) {
			sent.Header[name] = strings.Join(values, ", ")
		}
	}
	var fields struct {
		Stream bool `json:"stream"`
	}
	c.mu.Lock()
	if err == nil {
		err = json.Unmarshal(body, &fields)
	}
	if err != nil {
		c.errs = append(c.errs, err.Error())
	}
	c.got = append(c.got, sent)
	c.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	if fields.Stream {
		io.WriteString(w, `{"error":{"message":"'stream' does not support true with this model","type":"invalid_request_error","param":"stream","code":"unsupported_value"}}`)
		return
	}
	io.WriteString(w, `{"error":{"message":"stop here","type":"invalid_request_error","param":null,"code":null}}`)
}

// requestCase is a request and the settings of the client that sends it.
type requestCase struct {
	name string
	opts []Option
	env  map[string]string // the environment the client is made in
	// noKey: the client is given no key.
	noKey bool
	req   agent.Request
}

// readTool and the others are tools as the loop offers them.
var (
	readTool = agent.ToolDef{Name: "read", Description: "Read a file.", Parameters: json.RawMessage(
		`{"type":"object","properties":{"path":{"type":"string","description":"The file."},"lines":{"type":"array","items":{"type":"integer"}},"mode":{"enum":["text","bytes"]}},"required":["path"],"additionalProperties":false}`)}
	statusTool = agent.ToolDef{Name: "status", Description: "Say what runs."}   // no parameters
	bareTool   = agent.ToolDef{Name: "bare", Parameters: json.RawMessage(`{}`)} // no description
)

// nativeItems are a Responses reply's output items as they are kept: a
// reasoning item, a tool search, text and a function call cut by the
// output limit, its arguments not JSON.
const nativeItems = `[
	{"id":"rs_1","type":"reasoning","summary":[],"encrypted_content":"gAAAAB-opaque"},
	{"id":"tsc_1","type":"tool_search_call","status":"completed","arguments":{"query":"deploy"},"execution":"server","call_id":null},
	{"id":"tso_1","type":"tool_search_output","status":"completed","tools":[{"type":"namespace","name":"ops__deploy","tools":[]}],"execution":"server","call_id":null},
	{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Deploying.","annotations":[],"logprobs":[]}]},
	{"id":"fc_1","type":"function_call","status":"incomplete","call_id":"call_cut","name":"deploy","namespace":"ops__deploy","arguments":"{\"target\": \"pro"}
]`

var requestCases = []requestCase{
	{name: "conversation", req: agent.Request{
		Messages: []agent.Message{
			{Role: agent.RoleSystem, Content: "You are terse."},
			{Role: agent.RoleUser, Content: "What is in a.txt and b.txt?"},
			{Role: agent.RoleAssistant, Content: "Reading both."},
			{Role: agent.RoleUser, Content: "Go on."},
			{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{
				{ID: "call_a", Name: "read", Arguments: `{"path":"a.txt"}`},
				{ID: "call_b", Name: "read", Arguments: `{"path":"b.txt","lines":[1,2]}`},
			}},
			{Role: agent.RoleTool, ToolCallID: "call_a", Content: "alpha"},
			{Role: agent.RoleTool, ToolCallID: "call_b", Content: "beta"},
			{Role: agent.RoleAssistant, Content: "Now the status.", ToolCalls: []agent.ToolCall{{ID: "call_c", Name: "status", Arguments: `{}`}}},
			{Role: agent.RoleTool, ToolCallID: "call_c", Content: "all up"},
		},
		Tools: []agent.ToolDef{readTool, statusTool},
	}},
	{name: "user only", req: agent.Request{
		Messages: []agent.Message{{Role: agent.RoleUser, Content: "hi"}},
	}},
	{name: "arguments not JSON", req: agent.Request{
		Messages: []agent.Message{
			{Role: agent.RoleUser, Content: "read it"},
			{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{
				{ID: "call_cut", Name: "read", Arguments: `{"path": "a.t`, Cut: true},
				{ID: "call_empty", Name: "status", Arguments: ``},
				{ID: "call_text", Name: "read", Arguments: `path=a.txt`},
			}},
			{Role: agent.RoleTool, ToolCallID: "call_cut", Content: "the call was cut"},
			{Role: agent.RoleTool, ToolCallID: "call_empty", Content: "no arguments"},
			{Role: agent.RoleTool, ToolCallID: "call_text", Content: "not JSON"},
		},
		Tools: []agent.ToolDef{readTool, statusTool},
	}},
	{name: "tools", req: agent.Request{
		Messages: []agent.Message{{Role: agent.RoleSystem, Content: "sys"}, {Role: agent.RoleUser, Content: "use them"}},
		Tools:    []agent.ToolDef{readTool, statusTool, bareTool},
	}},
	{name: "settings", opts: []Option{WithTemperature(0.7), WithMaxTokens(1000), WithReasoningEffort("high")}, req: agent.Request{
		Messages: []agent.Message{{Role: agent.RoleSystem, Content: "sys"}, {Role: agent.RoleUser, Content: "think"}},
	}},
	{name: "temperature zero", opts: []Option{WithTemperature(0), WithReasoningEffort("low")}, req: agent.Request{
		Messages: []agent.Message{{Role: agent.RoleUser, Content: "exactly"}},
	}},
	{name: "deferred", req: agent.Request{
		Messages: []agent.Message{
			{Role: agent.RoleSystem, Content: "sys"},
			{Role: agent.RoleUser, Content: "deploy"},
			{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "call_o", Name: "open_sections", Arguments: `{"paths":["ops.deploy"]}`}}},
			{Role: agent.RoleTool, ToolCallID: "call_o", Content: "opened", Loads: []string{"deploy"}},
		},
		Tools: []agent.ToolDef{readTool, {Name: "open_sections", Description: "Open sections.", Parameters: json.RawMessage(`{"type":"object","properties":{"paths":{"type":"array","items":{"type":"string"}}}}`)}, deployGroup.Tools[0]},
		Deferred: []agent.ToolGroup{
			deployGroup,
			{Section: "ops__deploy", Title: "Clash", Tools: []agent.ToolDef{statusTool}},
			{Section: "ops.deploy", Title: "Again", Summary: "  Same path.  ", Tools: []agent.ToolDef{bareTool}},
		},
	}},
	{name: "native", req: agent.Request{
		Messages: []agent.Message{
			{Role: agent.RoleSystem, Content: "sys"},
			{Role: agent.RoleUser, Content: "deploy"},
			{Role: agent.RoleAssistant, Content: "Deploying.", ToolCalls: []agent.ToolCall{{ID: "call_cut", Name: "deploy", Arguments: `{"target": "pro`, Cut: true}},
				Native: &agent.Native{API: NativeResponses, Data: json.RawMessage(nativeItems)}},
			{Role: agent.RoleTool, ToolCallID: "call_cut", Content: "the call was cut"},
			{Role: agent.RoleAssistant, Content: "From elsewhere.", Native: &agent.Native{API: "anthropic.messages", Data: json.RawMessage(`[{"type":"text","text":"From elsewhere."}]`)}},
			{Role: agent.RoleUser, Content: "again"},
		},
		Tools:    []agent.ToolDef{deployGroup.Tools[0]},
		Deferred: []agent.ToolGroup{deployGroup},
	}},
	{name: "call ids repeated", req: agent.Request{
		Messages: []agent.Message{
			{Role: agent.RoleUser, Content: "twice"},
			{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "call_1", Name: "status", Arguments: `{}`}}},
			{Role: agent.RoleTool, ToolCallID: "call_1", Content: "first"},
			{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "call_1", Name: "status", Arguments: `{}`}}},
			{Role: agent.RoleTool, ToolCallID: "call_1", Content: "second"},
		},
		Tools: []agent.ToolDef{statusTool},
	}},
	{name: "empty content", req: agent.Request{
		Messages: []agent.Message{
			{Role: agent.RoleSystem, Content: ""},
			{Role: agent.RoleUser, Content: ""},
			{Role: agent.RoleAssistant, Content: ""},
			{Role: agent.RoleUser, Content: "and now"},
			{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "call_e", Name: "status", Arguments: `{}`}}},
			{Role: agent.RoleTool, ToolCallID: "call_e", Content: ""},
		},
		Tools: []agent.ToolDef{statusTool},
	}},
	{name: "unicode", req: agent.Request{
		Messages: []agent.Message{
			{Role: agent.RoleSystem, Content: "Réponds en français. <b>&amp;</b>"},
			{Role: agent.RoleUser, Content: "héllo 世界 🙂 \u2028\u2029 \"quoted\" back\\slash\ttab\nnewline \x7f"},
			{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "call_ü", Name: "read", Arguments: `{"path":"dossier/été 🙂.txt"}`}}},
			{Role: agent.RoleTool, ToolCallID: "call_ü", Content: "ligne 1\r\nligne 2 \u00a0\ufeff"},
		},
		Tools: []agent.ToolDef{{Name: "read", Description: "Lire un fichier — « vite ».", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"Le chemin <relatif>"}}}`)}},
	}},
	{name: "environment", env: map[string]string{
		"OPENAI_API_KEY": "env-key", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_ADMIN_KEY": "env-admin",
		"OPENAI_ORG_ID": "org-env", "OPENAI_PROJECT_ID": "proj-env",
		"OPENAI_CUSTOM_HEADERS": "X-Team: blue\nnot a header line\nX-Trace:  a:b ",
	}, req: agent.Request{
		Messages: []agent.Message{{Role: agent.RoleUser, Content: "hi"}},
	}},
	{name: "custom authorization", env: map[string]string{
		"OPENAI_CUSTOM_HEADERS": "Authorization: Basic dXNlcg==\nApi-Key: azure",
	}, req: agent.Request{
		Messages: []agent.Message{{Role: agent.RoleUser, Content: "hi"}},
	}},
	{name: "custom authorization, no key", noKey: true, env: map[string]string{
		"OPENAI_CUSTOM_HEADERS": "Authorization: Basic dXNlcg==\nApi-Key: azure",
	}, req: agent.Request{
		Messages: []agent.Message{{Role: agent.RoleUser, Content: "hi"}},
	}},
	{name: "no key", noKey: true, req: agent.Request{
		Messages: []agent.Message{{Role: agent.RoleUser, Content: "hi"}},
	}},
	{name: "no key, environment", noKey: true, env: map[string]string{
		"OPENAI_API_KEY": "env-key", "OPENAI_ADMIN_KEY": "env-admin", "OPENAI_ORG_ID": "org-env",
	}, req: agent.Request{
		Messages: []agent.Message{{Role: agent.RoleUser, Content: "hi"}},
	}},
}

// openAIEnv are the environment variables the SDK read.
var openAIEnv = []string{"OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ADMIN_KEY", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "OPENAI_WEBHOOK_SECRET", "OPENAI_CUSTOM_HEADERS"}

// TestRequestsSent sends each case through each API, streaming and then
// (the endpoint refusing to stream) not, and compares what the endpoint
// got with testdata/requests/<api>/<case>.json: method, path, the headers
// the API reads and the body, the body as JSON (key order free).
func TestRequestsSent(t *testing.T) {
	apis := []struct {
		name string
		make func(url string, opts ...Option) (agent.Model, error)
	}{
		{"chat", func(url string, opts ...Option) (agent.Model, error) { return New(url, "gpt-test", opts...) }},
		{"responses", func(url string, opts ...Option) (agent.Model, error) { return NewResponses(url, "gpt-test", opts...) }},
	}
	for _, api := range apis {
		for _, tc := range requestCases {
			t.Run(api.name+"/"+tc.name, func(t *testing.T) {
				for _, k := range openAIEnv {
					unsetenv(t, k)
				}
				for k, v := range tc.env {
					t.Setenv(k, v)
				}
				c := &capture{}
				srv := httptest.NewServer(c)
				defer srv.Close()
				opts := []Option{WithMaxRetries(0)}
				if !tc.noKey {
					opts = append(opts, WithAPIKey("sk-test"))
				}
				m, err := api.make(srv.URL+"/v1", append(opts, tc.opts...)...)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := m.Complete(context.Background(), tc.req); err == nil || !strings.Contains(err.Error(), "stop here") {
					t.Fatalf("got %v, want the endpoint's refusal", err)
				}
				c.mu.Lock()
				got, errs := c.got, c.errs
				c.mu.Unlock()
				if len(errs) > 0 {
					t.Fatalf("the endpoint could not read a request: %v", errs)
				}
				if len(got) != 2 {
					t.Fatalf("got %d requests, want 2 (streaming, then not)", len(got))
				}
				checkRequests(t, filepath.ToSlash(filepath.Join("requests", api.name, strings.NewReplacer(" ", "_", ",", "").Replace(tc.name)+".json")),
					map[string]sentRequest{"stream": got[0], "plain": got[1]})
			})
		}
	}
}

// checkRequests compares got with the golden file name under testdata as
// JSON values, or writes it when the environment asks (golden.Update).
func checkRequests(t *testing.T, name string, got map[string]sentRequest) {
	t.Helper()
	gotJSON, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	gotText := indented(t, gotJSON)
	update, err := golden.Update()
	if err != nil {
		t.Fatal(err)
	}
	path, err := golden.Path(name)
	if err != nil {
		t.Fatal(err)
	}
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(gotText), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (set %s=1 to create it)", err, golden.EnvVar)
	}
	var gotValue, wantValue any
	if err := json.Unmarshal(gotJSON, &gotValue); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(want, &wantValue); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if !reflect.DeepEqual(gotValue, wantValue) {
		t.Errorf("%s differs from the requests sent (set %s=1 to accept them):\n%s", path, golden.EnvVar, golden.Diff(path, indented(t, want), gotText))
	}
}

// indented is the JSON value of raw, bodies included, indented with its
// object keys sorted.
func indented(t *testing.T, raw []byte) string {
	t.Helper()
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(out) + "\n"
}
