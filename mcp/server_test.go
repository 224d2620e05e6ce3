package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/afero"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/mcp"
	"github.com/unfold-dev/unfold/orchestrator"
	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/prompttest"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/visibility"
)

// counter is a declarative environment: add and show have examples (long
// help until used), wait blocks until its command is cancelled.
type counter struct {
	mu    sync.Mutex // guards total
	total int
}

func newCounter(t *testing.T, name string, sess *session.Session) *envs.Declarative {
	t.Helper()
	c := &counter{}
	d, err := envs.NewDeclarative(name, sess, envs.DeclarativeSpec{
		Description: "A counter to add numbers to",
		Commands: []envs.Command{
			{Signature: "add <n>", Description: "Add n to the total.\nn may be negative.", Example: "add 5", Handler: c.add},
			{Signature: "show", Description: "Show the total.", Example: "show", Handler: c.show},
			{Signature: "wait", Description: "Wait until interrupted.", Handler: func(ctx context.Context, _ string) (string, error) {
				<-ctx.Done()
				return "interrupted", nil
			}},
		},
		State: func() string {
			c.mu.Lock()
			defer c.mu.Unlock()
			return "Total: " + strconv.Itoa(c.total)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func (c *counter) add(_ context.Context, args string) (string, error) {
	n, err := strconv.Atoi(args)
	if err != nil {
		return "", fmt.Errorf("not a number: %q", args)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total += n
	return "Total: " + strconv.Itoa(c.total), nil
}

func (c *counter) show(context.Context, string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strconv.Itoa(c.total), nil
}

// client is a connected SDK client and the tool-list notifications it got.
type client struct {
	*sdk.ClientSession
	toolsChanged     chan struct{}
	resourcesChanged chan struct{}
}

// setup builds an orchestrator with the environments register adds, a
// server with opts, and connects a client over the in-memory transport.
func setup(t *testing.T, opts mcp.Options, register func(o *orchestrator.Orchestrator, sess *session.Session)) (*mcp.Server, *client) {
	t.Helper()
	sess := session.New()
	o, err := orchestrator.New(orchestrator.WithSession(sess))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	register(o, sess)
	s, err := mcp.New(only(o), opts)
	if err != nil {
		t.Fatal(err)
	}
	st, ct := sdk.NewInMemoryTransports()
	ss, err := s.Connect(t.Context(), st)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	return s, connect(t, ct)
}

func connect(t *testing.T, transport sdk.Transport) *client {
	t.Helper()
	c := &client{toolsChanged: make(chan struct{}, 16), resourcesChanged: make(chan struct{}, 16)}
	cl := sdk.NewClient(&sdk.Implementation{Name: "test"}, &sdk.ClientOptions{
		ToolListChangedHandler:     func(context.Context, *sdk.ToolListChangedRequest) { c.toolsChanged <- struct{}{} },
		ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) { c.resourcesChanged <- struct{}{} },
	})
	cs, err := cl.Connect(t.Context(), transport, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	c.ClientSession = cs
	return c
}

func withCounter(t *testing.T) func(*orchestrator.Orchestrator, *session.Session) {
	return func(o *orchestrator.Orchestrator, sess *session.Session) {
		if err := o.Register("counter", newCounter(t, "counter", sess)); err != nil {
			t.Fatal(err)
		}
	}
}

// wait blocks until ch receives, failing the test if nothing comes: a
// guard against hanging, not a timing assertion.
func wait(t *testing.T, ch chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("no %s notification", what)
	}
}

func listTools(t *testing.T, c *client) map[string]*sdk.Tool {
	t.Helper()
	res, err := c.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]*sdk.Tool)
	for _, tool := range res.Tools {
		out[tool.Name] = tool
	}
	return out
}

func toolNames(m map[string]*sdk.Tool) []string {
	var names []string
	for n := range m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func call(t *testing.T, c *client, name string, args any) *sdk.CallToolResult {
	t.Helper()
	res, err := c.CallTool(t.Context(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}

func texts(res *sdk.CallToolResult) []string {
	var out []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			out = append(out, tc.Text)
		}
	}
	return out
}

func structured(t *testing.T, res *sdk.CallToolResult) orchestrator.CommandOutput {
	t.Helper()
	data, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var out orchestrator.CommandOutput
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("structured content %s: %v", data, err)
	}
	return out
}

// TestDescriptionsFollowUsage checks that an environment's tool description
// is its help, long before a command is used and short after, and that the
// change reaches the client as notifications/tools/list_changed.
func TestDescriptionsFollowUsage(t *testing.T) {
	_, c := setup(t, mcp.Options{}, withCounter(t))
	tools := listTools(t, c)
	if got, want := toolNames(tools), []string{"counter", "help"}; !slices.Equal(got, want) {
		t.Fatalf("got tools %v, want %v", got, want)
	}
	prompttest.Golden(t, "description/before.txt", tools["counter"].Description)

	res := call(t, c, "counter", map[string]any{"command": "add 2"})
	wait(t, c.toolsChanged, "tools/list_changed")
	if res.IsError {
		t.Fatalf("got error result %v", texts(res))
	}
	tools = listTools(t, c)
	prompttest.Golden(t, "description/after-add.txt", tools["counter"].Description)

	// A command that changes the state but not the help leaves the
	// description alone.
	call(t, c, "counter", map[string]any{"command": "add 3"})
	if got := listTools(t, c)["counter"].Description; got != tools["counter"].Description {
		t.Errorf("got description\n%s\nwant it unchanged:\n%s", got, tools["counter"].Description)
	}
}

func TestEnvironmentTool(t *testing.T) {
	_, c := setup(t, mcp.Options{}, withCounter(t))
	tests := []struct {
		name        string
		args        any
		wantError   bool
		wantText    string // the first text block contains it
		wantOutput  *orchestrator.CommandOutput
		wantNoStruc bool
	}{
		{
			name:       "success",
			args:       map[string]any{"command": "add 4"},
			wantText:   "Total: 4",
			wantOutput: &orchestrator.CommandOutput{Output: "Total: 4", Success: true},
		},
		{
			name:       "failed command",
			args:       map[string]any{"command": "add x"},
			wantError:  true,
			wantText:   `Error: not a number: "x"`,
			wantOutput: &orchestrator.CommandOutput{Output: `Error: not a number: "x"`, Success: false},
		},
		{
			name:       "timeout gives control back",
			args:       map[string]any{"command": "wait", "timeout": 0.05},
			wantText:   "[Still running (the time limit passed).",
			wantOutput: &orchestrator.CommandOutput{Output: envs.RunningNote("the time limit passed"), Running: true},
		},
		{
			name:       "C-c interrupts",
			args:       map[string]any{"command": "C-c"},
			wantText:   "interrupted",
			wantOutput: &orchestrator.CommandOutput{Output: "interrupted", Success: true},
		},
		{
			name:       "hard timeout interrupts",
			args:       map[string]any{"command": "wait", "timeout": 0.05, "hard": true},
			wantText:   "interrupted",
			wantOutput: &orchestrator.CommandOutput{Output: "interrupted", Success: true},
		},
		{
			name:        "missing command",
			args:        map[string]any{},
			wantError:   true,
			wantText:    "command",
			wantNoStruc: true,
		},
		{
			name:        "negative timeout",
			args:        map[string]any{"command": "show", "timeout": -1},
			wantError:   true,
			wantText:    "timeout must be more than 0 and at most 86400 seconds, got -1",
			wantNoStruc: true,
		},
		{
			name:        "unknown field",
			args:        map[string]any{"command": "show", "cmd": "x"},
			wantError:   true,
			wantText:    "cmd",
			wantNoStruc: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, c, "counter", tt.args)
			if res.IsError != tt.wantError {
				t.Errorf("got isError %v, want %v (%v)", res.IsError, tt.wantError, texts(res))
			}
			got := texts(res)
			if len(got) == 0 || !strings.Contains(got[0], tt.wantText) {
				t.Errorf("got text %q, want it to contain %q", got, tt.wantText)
			}
			if tt.wantNoStruc {
				if res.StructuredContent != nil {
					t.Errorf("got structured content %v, want none", res.StructuredContent)
				}
				return
			}
			out := structured(t, res)
			if out.Output != tt.wantOutput.Output || out.Success != tt.wantOutput.Success || out.Running != tt.wantOutput.Running {
				t.Errorf("got output %q success %v running %v, want %q %v %v", out.Output, out.Success, out.Running, tt.wantOutput.Output, tt.wantOutput.Success, tt.wantOutput.Running)
			}
			if !strings.HasPrefix(out.Screen, "Total: ") {
				t.Errorf("got screen %q, want the counter's screen", out.Screen)
			}
			if len(got) != 2 || got[1] != "Screen of counter after the command:\n\n"+out.Screen {
				t.Errorf("got text blocks %q, want the output and the screen", got)
			}
		})
	}
}

func TestHelpTool(t *testing.T) {
	_, c := setup(t, mcp.Options{}, withCounter(t))
	tests := []struct {
		name, query, golden string
	}{
		{"everything", "", "help/everything.txt"},
		{"environment", "counter", "help/counter.txt"},
		{"command", "negative", "help/counter.txt"},
		{"nothing", "frobnicate", "help/nothing.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, c, "help", map[string]any{"query": tt.query})
			if res.IsError {
				t.Fatalf("got error %v", texts(res))
			}
			prompttest.Golden(t, tt.golden, strings.Join(texts(res), "\n"))
		})
	}
}

func readResource(t *testing.T, c *client, uri string) (string, error) {
	t.Helper()
	res, err := c.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: uri})
	if err != nil {
		return "", err
	}
	if len(res.Contents) != 1 {
		t.Fatalf("got %d contents, want 1", len(res.Contents))
	}
	return res.Contents[0].Text, nil
}

func TestResources(t *testing.T) {
	fs := afero.NewMemMapFs()
	if err := afero.WriteFile(fs, "context/notes.md", []byte("## Notes (notes)\n\nhello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := afero.WriteFile(fs, "secret.md", []byte("no"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, c := setup(t, mcp.Options{FS: fs}, withCounter(t))
	res, err := c.ListResources(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range res.Resources {
		uris = append(uris, r.URI)
	}
	if want := []string{"unfold://screen/counter"}; !slices.Equal(uris, want) {
		t.Errorf("got resources %v, want %v", uris, want)
	}
	tmpls, err := c.ListResourceTemplates(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range tmpls.ResourceTemplates {
		got = append(got, r.URITemplate)
	}
	slices.Sort(got)
	if want := []string{mcp.OutputURITemplate, mcp.ContextURITemplate}; !slices.Equal(got, want) {
		t.Errorf("got templates %v, want %v", got, want)
	}
	tests := []struct {
		name, uri, want string
		wantErr         bool
	}{
		{name: "screen", uri: "unfold://screen/counter", want: "Total: 0\n"},
		{name: "unknown screen", uri: "unfold://screen/nope", wantErr: true},
		{name: "context file", uri: "unfold://context/notes.md", want: "## Notes (notes)\n\nhello"},
		{name: "missing context file", uri: "unfold://context/other.md", wantErr: true},
		{name: "escape", uri: "unfold://context/..%2Fsecret.md", wantErr: true},
		{name: "not markdown", uri: "unfold://context/notes.txt", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readResource(t, c, tt.uri)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("got %q, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(got, tt.want) {
				t.Errorf("got %q, want it to start with %q", got, tt.want)
			}
		})
	}
}

// task is the params of the test prompt's first section.
type task struct{ Goal string }

// promptTemplate has a content-only summarized section and a full one.
func promptTemplate(t *testing.T) *prompt.Template {
	t.Helper()
	tmpl, err := prompt.New("test", "assistant",
		section.New(section.Spec[task]{Key: "task", Title: "Task", Body: "Goal: {{.Goal}}"}),
		section.New(section.Spec[section.None]{
			Key: "reference", Title: "Reference", Body: "The full reference.",
			Summary: "Reference on request.", Visibility: visibility.Const(visibility.Summary),
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

// withOnDemand registers counter in full and tally on demand.
func withOnDemand(t *testing.T) func(*orchestrator.Orchestrator, *session.Session) {
	return func(o *orchestrator.Orchestrator, sess *session.Session) {
		withCounter(t)(o, sess)
		if err := o.Register("tally", newCounter(t, "tally", sess), orchestrator.OnDemand(), orchestrator.Description("A tally on demand")); err != nil {
			t.Fatal(err)
		}
	}
}

func TestPromptDisclosure(t *testing.T) {
	fs := afero.NewMemMapFs()
	_, c := setup(t, mcp.Options{Prompt: promptTemplate(t), Params: []any{task{"count"}}, FS: fs}, withOnDemand(t))

	tools := listTools(t, c)
	if got, want := toolNames(tools), []string{"counter", "help", "open_sections"}; !slices.Equal(got, want) {
		t.Fatalf("got tools %v, want %v", got, want)
	}
	text, err := readResource(t, c, mcp.PromptURI)
	if err != nil {
		t.Fatal(err)
	}
	prompttest.Golden(t, "prompt/before.md", text)
	res := call(t, c, "help", map[string]any{})
	prompttest.Golden(t, "prompt/help.txt", strings.Join(texts(res), "\n"))

	t.Run("content-only section", func(t *testing.T) {
		res := call(t, c, "open_sections", map[string]any{"section_keys": []string{"reference"}, "reason": "need it"})
		if res.IsError {
			t.Fatalf("got error %v", texts(res))
		}
		want := "Section content written to: context/reference.md\nAlso readable as resources: unfold://context/reference.md"
		if got := strings.Join(texts(res), "\n"); got != want {
			t.Errorf("got %q, want %q", got, want)
		}
		wait(t, c.resourcesChanged, "resources/list_changed")
		got, err := readResource(t, c, "unfold://context/reference.md")
		if err != nil {
			t.Fatal(err)
		}
		if want := "## Reference (reference)\n\nThe full reference."; !strings.HasPrefix(got, want) {
			t.Errorf("got %q, want %q", got, want)
		}
		list, err := c.ListResources(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(list.Resources, func(r *sdk.Resource) bool { return r.URI == "unfold://context/reference.md" }) {
			t.Errorf("got resources %v, want the context file listed", list.Resources)
		}
	})

	t.Run("section with tools", func(t *testing.T) {
		res := call(t, c, "open_sections", map[string]any{"section_keys": []string{"tally"}, "reason": "count more"})
		if res.IsError {
			t.Fatalf("got error %v", texts(res))
		}
		got := strings.Join(texts(res), "\n")
		if want := "Opened sections: tally. New tools: tally.\n\n## tally (tally)\n\nTotal: 0"; !strings.HasPrefix(got, want) {
			t.Errorf("got %q, want it to start with %q", got, want)
		}
		wait(t, c.toolsChanged, "tools/list_changed")
		tools := listTools(t, c)
		if got, want := toolNames(tools), []string{"counter", "help", "open_sections", "tally"}; !slices.Equal(got, want) {
			t.Errorf("got tools %v, want %v", got, want)
		}
		out := structured(t, call(t, c, "tally", map[string]any{"command": "add 1"}))
		if !out.Success || out.Output != "Total: 1" {
			t.Errorf("got %+v, want success with Total: 1", out)
		}
	})

	t.Run("failures are results", func(t *testing.T) {
		tests := []struct{ name, key, want string }{
			{"unknown", "nope", "Section 'nope' does not exist in this prompt."},
			{"already open", "task", "Section 'task' is already expanded."},
			{"control characters", "no\x00pe\u202e", `Section 'no\x00pe\u202e' does not exist in this prompt.`},
			{"long", "reference." + strings.Repeat("b", 1<<20), "Section 'reference." + strings.Repeat("b", 190) + "…' does not exist in this prompt. (The key is 1048586 bytes long; only its first 200 are shown.)"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				res := call(t, c, "open_sections", map[string]any{"section_keys": []string{tt.key}, "reason": "r"})
				if got := strings.Join(texts(res), "\n"); !res.IsError || got != tt.want {
					t.Errorf("got isError %v %q, want true %q", res.IsError, got, tt.want)
				}
			})
		}
	})
}

// TestOnDemandOpensByUse checks that without open_sections, the first
// command in an on-demand environment opens its section: its tool is
// offered from then on. The command comes through the orchestrator itself,
// as from another of its users.
func TestOnDemandOpensByUse(t *testing.T) {
	var orch *orchestrator.Orchestrator
	_, c := setup(t, mcp.Options{Prompt: promptTemplate(t), Params: []any{task{"g"}}}, func(o *orchestrator.Orchestrator, sess *session.Session) {
		orch = o
		withOnDemand(t)(o, sess)
	})
	if _, ok := listTools(t, c)["tally"]; ok {
		t.Fatal("got tally offered before use, want it summarized")
	}
	orch.Execute(t.Context(), "tally", "add 1")
	// Any call syncs the tool list.
	call(t, c, "counter", map[string]any{"command": "show"})
	wait(t, c.toolsChanged, "tools/list_changed")
	if _, ok := listTools(t, c)["tally"]; !ok {
		t.Error("got tally not offered after its first command, want it offered")
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name     string
		session  bool
		opts     func(t *testing.T) mcp.Options
		register func(t *testing.T, o *orchestrator.Orchestrator, sess *session.Session)
		want     string
	}{
		{
			name: "prompt without a session",
			opts: func(t *testing.T) mcp.Options { return mcp.Options{Prompt: promptTemplate(t)} },
			want: "mcp: new: a prompt or a gateway needs the orchestrator's session; create the orchestrator with orchestrator.WithSession",
		},
		{
			name:    "section key taken",
			session: true,
			opts: func(t *testing.T) mcp.Options {
				return mcp.Options{Prompt: promptTemplate(t), Params: []any{task{}}}
			},
			register: func(t *testing.T, o *orchestrator.Orchestrator, sess *session.Session) {
				if err := o.Register("reference", newCounter(t, "reference", sess)); err != nil {
					t.Fatal(err)
				}
			},
			want: "mcp: new: prompt with the environments' sections:",
		},
		{
			name:    "params missing",
			session: true,
			opts:    func(t *testing.T) mcp.Options { return mcp.Options{Prompt: promptTemplate(t)} },
			want:    "missing params of type mcp_test.task",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []orchestrator.Option
			sess := session.New()
			if tt.session {
				opts = append(opts, orchestrator.WithSession(sess))
			}
			o, err := orchestrator.New(opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			if tt.register != nil {
				tt.register(t, o, sess)
			}
			_, err = mcp.New(only(o), tt.opts(t))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got error %v, want one containing %q", err, tt.want)
			}
		})
	}
	// An environment named as one of the server's own tools: the
	// orchestrator refuses the name before mcp.New could.
	o, err := orchestrator.New()
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if err := o.Register("help", newCounter(t, "help", session.New())); err == nil || !strings.Contains(err.Error(), "its command tool would be named help, as is the front ends' own tool") {
		t.Errorf("Register help: got %v, want a refusal of the name", err)
	}
	if _, err := mcp.New(nil, mcp.Options{}); err == nil {
		t.Error("got no error for a nil factory, want one")
	}
	nilOrch := func(context.Context) (*orchestrator.Orchestrator, error) { return nil, nil }
	if _, err := mcp.New(nilOrch, mcp.Options{}); err == nil || !strings.Contains(err.Error(), "nil orchestrator") {
		t.Errorf("got error %v for a factory that returns nil, want one naming the nil orchestrator", err)
	}
}

// counters is a factory that builds an orchestrator with a counter per
// session.
func counters(t *testing.T) mcp.Factory {
	return func(context.Context) (*orchestrator.Orchestrator, error) {
		sess := session.New()
		o, err := orchestrator.New(orchestrator.WithSession(sess))
		if err != nil {
			return nil, err
		}
		withCounter(t)(o, sess)
		return o, nil
	}
}

// only is a factory that hands out o once: a test that serves one session.
func only(o *orchestrator.Orchestrator) mcp.Factory {
	var once sync.Once
	return func(context.Context) (*orchestrator.Orchestrator, error) {
		var got *orchestrator.Orchestrator
		once.Do(func() { got = o })
		if got == nil {
			return nil, errors.New("this test serves one session")
		}
		return got, nil
	}
}

func TestHelp(t *testing.T) {
	tests := []struct{ name, screen, want string }{
		{"empty", "", ""},
		{"commands", "Total: 1\n\nCommands:\n  add <n> - Add", "Commands:\n  add <n> - Add"},
		{"commands first", "Commands:\n  x - y", "Commands:\n  x - y"},
		{"last paragraph", "Working directory: /tmp\nLast exit code: 0\n\nAny bash command.", "Any bash command."},
		{"one paragraph", "Just text\non lines", "Just text\non lines"},
		{"crlf", "state\r\n\r\nusage\r\n", "usage"},
		{"cut by lines", "state\n\nline\n[... 3 more lines cut: this screen shows at most 50 lines]", ""},
		{"cut by bytes", "Views:\n  [1] big.txt\n      1  x\n[... 145561 more bytes cut: this screen shows at most 65536 bytes]", ""},
		{"cut commands kept", "Views:\n\nCommands:\n  view\n[... 3 more lines cut: this screen shows at most 50 lines]", "Commands:\n  view\n[... 3 more lines cut: this screen shows at most 50 lines]"},
		{"long last paragraph", "state\n\n" + strings.Repeat("x", 5000), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mcp.Help(tt.screen); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestStreamableHTTP serves the handler on a real 127.0.0.1 listener and
// drives it with the SDK's streamable client.
func TestStreamableHTTP(t *testing.T) {
	s, err := mcp.New(counters(t), mcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hs := httptest.NewServer(s.Handler(mcp.HTTPOptions{}))
	defer hs.Close()
	c := connect(t, &sdk.StreamableClientTransport{Endpoint: hs.URL})
	if got, want := toolNames(listTools(t, c)), []string{"counter", "help"}; !slices.Equal(got, want) {
		t.Fatalf("got tools %v, want %v", got, want)
	}
	out := structured(t, call(t, c, "counter", map[string]any{"command": "add 7"}))
	if !out.Success || out.Output != "Total: 7" {
		t.Errorf("got %+v, want success with Total: 7", out)
	}
	wait(t, c.toolsChanged, "tools/list_changed")
	if d := listTools(t, c)["counter"].Description; !strings.Contains(d, "add <n> - Add n to the total") {
		t.Errorf("got description %q, want add's short help", d)
	}
	got, err := readResource(t, c, "unfold://screen/counter")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got, "Total: 7") {
		t.Errorf("got screen %q, want Total: 7", got)
	}
	if err := c.Close(); err != nil && !errors.Is(err, context.Canceled) {
		t.Logf("close: %v", err)
	}
}
