package agent_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/spf13/afero"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/agent/internal/scripted"
	"github.com/unfold-dev/unfold/agent/openai"
	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/envs/bash"
	"github.com/unfold-dev/unfold/envs/editor"
	"github.com/unfold-dev/unfold/orchestrator"
	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tools"
	"github.com/unfold-dev/unfold/visibility"
)

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

// fixture is a prompt with a summarized section that carries the add tool
// and a summarized content-only reference section.
type fixture struct {
	prompt *prompt.Prompt
	adds   *atomic.Int32
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	var adds atomic.Int32
	add := tools.MustNew("add", "Add two integers.", func(_ context.Context, _ tools.Context, in addIn) (int, error) {
		adds.Add(1)
		return in.A + in.B, nil
	})
	tmpl := prompt.MustNew("test/agent", "task",
		section.New(section.Spec[section.None]{Key: "task", Title: "Task", Body: "You are a careful test agent."}),
		section.New(section.Spec[section.None]{
			Key: "calc", Title: "Calculator", Body: "Use add to add numbers.",
			Summary: "A calculator is available.", Visibility: visibility.Const(visibility.Summary),
			Tools: []*tools.Tool{add},
		}),
		section.New(section.Spec[section.None]{
			Key: "reference", Title: "Reference", Body: "The secret word is PAPAYA.",
			Summary: "Reference notes are available.", Visibility: visibility.Const(visibility.Summary),
		}),
	)
	return fixture{prompt: tmpl.MustBind(), adds: &adds}
}

func newModel(t *testing.T, srv *scripted.Server) *openai.Client {
	t.Helper()
	m, err := openai.New(srv.URL, "scripted", openai.WithAPIKey("test-key"), openai.WithBackoff(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func call(id, name, args string) scripted.Call { return scripted.Call{ID: id, Name: name, Args: args} }

func TestOpenToolSectionThenCallIt(t *testing.T) {
	f := newFixture(t)
	srv := scripted.New(t,
		scripted.Calls(call("c1", "open_sections", `{"section_keys":["calc"],"reason":"need to add"}`)),
		scripted.Calls(call("c2", "add", `{"a":2,"b":40}`)),
		scripted.Text("The sum is 42."),
	)
	var transcript bytes.Buffer
	a, err := agent.New(newModel(t, srv), f.prompt, agent.WithTranscript(&transcript), agent.WithDisclosure(agent.DisclosureRerender))
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Run(context.Background(), "What is 2+40?")
	if err != nil {
		t.Fatal(err)
	}
	if res.Answer != "The sum is 42." {
		t.Errorf("answer: got %q, want %q", res.Answer, "The sum is 42.")
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("requests: got %d, want 3", len(reqs))
	}
	if got := reqs[0].ToolNames(); strings.Join(got, ",") != "open_sections" {
		t.Errorf("first request tools: got %v, want [open_sections]", got)
	}
	if got := reqs[1].ToolNames(); !contains(got, "add") {
		t.Errorf("second request tools: got %v, want add among them", got)
	}
	out, ok := reqs[1].ToolResult("c1")
	if !ok || !strings.Contains(out, "Opened sections: calc") || !strings.Contains(out, "add") {
		t.Errorf("result of the open call: got %q (present %v), want it to name calc and add", out, ok)
	}
	sys, _ := reqs[1].Messages[0]["content"].(string)
	if !strings.Contains(sys, "Use add to add numbers.") {
		t.Errorf("second system message: got %q, want the calculator section in full", sys)
	}
	if got, _ := reqs[2].ToolResult("c2"); got != "42" {
		t.Errorf("add result: got %q, want %q", got, "42")
	}
	if f.adds.Load() != 1 {
		t.Errorf("add ran %d times, want 1", f.adds.Load())
	}
	if res.Expansions != 1 || res.Steps != 3 {
		t.Errorf("expansions, steps: got %d, %d, want 1, 3", res.Expansions, res.Steps)
	}
	if res.Usage.PromptTokens != 300 || res.Usage.CachedTokens != 120 {
		t.Errorf("usage: got %+v, want 300 prompt tokens, 120 cached", res.Usage)
	}
	tr, err := agent.ReadTranscript(&transcript)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, r := range tr.Records {
		kinds[r.Kind]++
	}
	for kind, want := range map[string]int{agent.KindRun: 1, agent.KindExpansion: 1, agent.KindModel: 3, agent.KindTool: 2, agent.KindEnd: 1, agent.KindRender: 2, agent.KindSession: 1} {
		if kinds[kind] != want {
			t.Errorf("transcript %s records: got %d, want %d", kind, kinds[kind], want)
		}
	}
	if tr.Answer() != "The sum is 42." {
		t.Errorf("transcript answer: got %q", tr.Answer())
	}
}

func TestSystemMessageStableAcrossSteps(t *testing.T) {
	f := newFixture(t)
	srv := scripted.New(t,
		scripted.Calls(call("c1", "nope", `{}`)),
		scripted.Calls(call("c2", "nope", `{}`)),
		scripted.Text("done"),
	)
	a, err := agent.New(newModel(t, srv), f.prompt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	for i := 1; i < len(reqs); i++ {
		// Every earlier message is sent again unchanged: the cached prefix.
		for j, m := range reqs[i-1].Messages {
			if fmt.Sprint(reqs[i].Messages[j]) != fmt.Sprint(m) {
				t.Errorf("request %d message %d changed: got %v, want %v", i+1, j, reqs[i].Messages[j], m)
			}
		}
	}
}

// bashOrchestrator is an orchestrator with a real bash in dir, on a fresh
// session.
func bashOrchestrator(t *testing.T, dir string) (*orchestrator.Orchestrator, *session.Session) {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not installed")
	}
	sess := session.New()
	o, err := orchestrator.New(orchestrator.WithSession(sess))
	if err != nil {
		t.Fatal(err)
	}
	sh, err := bash.New(bash.WithDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Register("bash", sh); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = o.Close() })
	return o, sess
}

func TestContentOnlyOpenThenReadWithBash(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	o, sess := bashOrchestrator(t, dir)
	srv := scripted.New(t,
		scripted.Calls(call("c1", "open_sections", `{"section_keys":["reference"],"reason":"need the word"}`)),
		scripted.Calls(call("c2", "bash", `{"command":"cat context/reference.md"}`)),
		scripted.Text("PAPAYA"),
	)
	a, err := agent.New(newModel(t, srv), f.prompt, agent.WithSession(sess), agent.WithOrchestrator(o), agent.WithFS(afero.NewBasePathFs(afero.NewOsFs(), dir)))
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Run(context.Background(), "Find the secret word.")
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("requests: got %d, want 3", len(reqs))
	}
	if got, _ := reqs[1].ToolResult("c1"); got != "Section content written to: context/reference.md" {
		t.Errorf("open result: got %q", got)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "context", "reference.md")); err != nil || !strings.Contains(string(b), "PAPAYA") {
		t.Errorf("context file: got %q, %v, want the reference text", b, err)
	}
	if got, _ := reqs[2].ToolResult("c2"); !strings.Contains(got, "The secret word is PAPAYA.") {
		t.Errorf("bash result: got %q, want the reference text", got)
	}
	if first := reqs[0].Messages[1]["content"].(string); !strings.Contains(first, "(bash)") {
		t.Errorf("first user message: got %q, want the bash screen", first)
	}
	if !contains(reqs[0].ToolNames(), "bash") {
		t.Errorf("tools: got %v, want bash among them", reqs[0].ToolNames())
	}
	if res.Answer != "PAPAYA" {
		t.Errorf("answer: got %q", res.Answer)
	}
	if sys, _ := reqs[2].Messages[0]["content"].(string); strings.Contains(sys, "(bash)") {
		t.Errorf("system message: got the bash screen in it, want it only in user messages")
	}
}

func TestExpansionCap(t *testing.T) {
	var secs []*section.Section
	for i := range agent.MaxExpansions + 1 {
		tool := tools.MustNew(fmt.Sprintf("t%d", i), "A tool.", func(context.Context, tools.Context, struct{}) (string, error) { return "ok", nil })
		secs = append(secs, section.New(section.Spec[section.None]{
			Key: fmt.Sprintf("s%d", i), Title: "S", Body: "body",
			Summary: "summary", Visibility: visibility.Const(visibility.Summary), Tools: []*tools.Tool{tool},
		}))
	}
	p := prompt.MustNew("test/agent", "cap", secs...).MustBind()
	srv := scripted.NewFunc(t, func(n int, _ scripted.Request) scripted.Reply {
		return scripted.Calls(call(fmt.Sprintf("c%d", n), "open_sections", fmt.Sprintf(`{"section_keys":["s%d"],"reason":"r"}`, n)))
	})
	a, err := agent.New(newModel(t, srv), p, agent.WithMaxSteps(50))
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Run(context.Background(), "open everything")
	if !errors.Is(err, agent.ErrExpansionLimit) {
		t.Fatalf("error: got %v, want ErrExpansionLimit", err)
	}
	if err.Error() != "Visibility expansion retries exceeded (10)" {
		t.Errorf("error text: got %q", err.Error())
	}
	// The last request's opening was refused: it did not happen.
	if res.Expansions != agent.MaxExpansions || len(srv.Requests()) != agent.MaxExpansions+1 {
		t.Errorf("expansions, requests: got %d, %d, want %d, %d", res.Expansions, len(srv.Requests()), agent.MaxExpansions, agent.MaxExpansions+1)
	}
}

func TestFailedCallsGoBackToTheModel(t *testing.T) {
	tests := []struct {
		name string
		call scripted.Call
		want string
	}{
		{"invalid arguments", call("c1", "echo", `{"text": 5}`), "Error: Invalid arguments"},
		{"arguments not JSON", call("c1", "echo", `{"text": `), "Error: Invalid arguments"},
		{"unknown tool", call("c1", "nope", `{}`), "Error: Unknown tool: nope. Available tools: echo."},
		{"handler error", call("c1", "echo", `{"text": "fail"}`), "Error: asked to fail"},
	}
	echo := tools.MustNew("echo", "Echo text.", func(_ context.Context, _ tools.Context, in struct {
		Text string `json:"text"`
	}) (string, error) {
		if in.Text == "fail" {
			return "", errors.New("asked to fail")
		}
		return in.Text, nil
	})
	p := prompt.MustNew("test/agent", "echo", section.New(section.Spec[section.None]{Key: "task", Title: "Task", Body: "Echo."})).MustBind()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := scripted.New(t, scripted.Calls(tt.call), scripted.Text("recovered"))
			a, err := agent.New(newModel(t, srv), p, agent.WithTools(echo))
			if err != nil {
				t.Fatal(err)
			}
			res, err := a.Run(context.Background(), "echo something")
			if err != nil {
				t.Fatal(err)
			}
			got, _ := srv.Requests()[1].ToolResult("c1")
			if !strings.HasPrefix(got, tt.want) {
				t.Errorf("result: got %q, want it to start with %q", got, tt.want)
			}
			if res.Answer != "recovered" {
				t.Errorf("answer: got %q, want %q", res.Answer, "recovered")
			}
		})
	}
}

func TestRetries(t *testing.T) {
	p := prompt.MustNew("test/agent", "r", section.New(section.Spec[section.None]{Key: "task", Title: "Task", Body: "Answer."})).MustBind()
	t.Run("429 then success", func(t *testing.T) {
		srv := scripted.New(t,
			scripted.Reply{Status: 429, RetryAfter: "0", Error: "slow down"},
			scripted.Text("hello"),
		)
		a, err := agent.New(newModel(t, srv), p)
		if err != nil {
			t.Fatal(err)
		}
		res, err := a.Run(context.Background(), "say hello")
		if err != nil {
			t.Fatal(err)
		}
		if res.Answer != "hello" || len(srv.Requests()) != 2 {
			t.Errorf("answer, requests: got %q, %d, want %q, 2", res.Answer, len(srv.Requests()), "hello")
		}
	})
	t.Run("500 forever", func(t *testing.T) {
		srv := scripted.NewFunc(t, func(int, scripted.Request) scripted.Reply {
			return scripted.Reply{Status: 500, Error: "the backend is down"}
		})
		a, err := agent.New(newModel(t, srv), p)
		if err != nil {
			t.Fatal(err)
		}
		_, err = a.Run(context.Background(), "say hello")
		var se *openai.StatusError
		if !errors.As(err, &se) {
			t.Fatalf("error: got %v, want a *openai.StatusError", err)
		}
		want := openai.DefaultMaxRetries + 1
		if se.StatusCode != 500 || se.Attempts != want || len(srv.Requests()) != want {
			t.Errorf("status, attempts, requests: got %d, %d, %d, want 500, %d, %d", se.StatusCode, se.Attempts, len(srv.Requests()), want, want)
		}
		if !strings.Contains(err.Error(), "500 Internal Server Error: the backend is down") {
			t.Errorf("error text: got %q, want the status and the server's message", err)
		}
	})
}

func TestCancelMidStream(t *testing.T) {
	p := prompt.MustNew("test/agent", "c", section.New(section.Spec[section.None]{Key: "task", Title: "Task", Body: "Answer."})).MustBind()
	srv := scripted.New(t, scripted.Reply{Hang: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got strings.Builder
	a, err := agent.New(newModel(t, srv), p, agent.WithOnDelta(func(d agent.Delta) {
		got.WriteString(d.Content)
		cancel()
	}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.Run(ctx, "think")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error: got %v, want context.Canceled", err)
	}
	if got.String() != "thinking" {
		t.Errorf("streamed: got %q, want %q", got.String(), "thinking")
	}
}

// counter is an environment that counts the commands it runs.
type counter struct{ runs atomic.Int32 }

func (c *counter) Execute(_ context.Context, cmd string) (envs.Response, error) {
	c.runs.Add(1)
	return envs.Response{Output: "ran " + cmd, Success: true}, nil
}

func (c *counter) Screen() (envs.Screen, error) {
	return envs.Screen{Content: fmt.Sprintf("%d commands run", c.runs.Load())}, nil
}

func TestDryRunRunsNothing(t *testing.T) {
	f := newFixture(t)
	sess := session.New()
	o, err := orchestrator.New(orchestrator.WithSession(sess))
	if err != nil {
		t.Fatal(err)
	}
	env := &counter{}
	if err := o.Register("box", env); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	srv := scripted.New(t,
		scripted.Calls(call("c1", "open_sections", `{"section_keys":["calc","reference"],"reason":"r"}`)),
		scripted.Calls(call("c2", "add", `{"a":1,"b":2}`), call("c3", "box", `{"command":"touch x"}`)),
		scripted.Text("done"),
	)
	a, err := agent.New(newModel(t, srv), f.prompt, agent.WithSession(sess), agent.WithOrchestrator(o), agent.WithDryRun(), agent.WithFS(afero.NewBasePathFs(afero.NewOsFs(), dir)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(context.Background(), "do things"); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	for _, id := range []string{"c2", "c3"} {
		if got, _ := reqs[2].ToolResult(id); !strings.HasPrefix(got, "Dry run: would call") {
			t.Errorf("result of %s: got %q, want a dry-run report", id, got)
		}
	}
	if f.adds.Load() != 0 || env.runs.Load() != 0 {
		t.Errorf("runs: add %d, box %d, want 0 and 0", f.adds.Load(), env.runs.Load())
	}
	if _, err := os.Stat(filepath.Join(dir, "context")); !os.IsNotExist(err) {
		t.Errorf("context dir on disk: got %v, want it not to exist", err)
	}
}

func TestTextActions(t *testing.T) {
	tests := []struct {
		name    string
		replies []scripted.Reply
		check   func(t *testing.T, dir string, reqs []scripted.Request, res *agent.Result)
	}{
		{
			name: "editor block",
			replies: []scripted.Reply{
				scripted.Text("I will create the file.\n\n```editor\ncreate notes.md\nhello from the editor\n```\n"),
				scripted.Text(`{"final": "created"}`),
			},
			check: func(t *testing.T, dir string, reqs []scripted.Request, res *agent.Result) {
				b, err := os.ReadFile(filepath.Join(dir, "notes.md"))
				if err != nil || string(b) != "hello from the editor\n" {
					t.Errorf("notes.md: got %q, %v, want %q", b, err, "hello from the editor\n")
				}
				if obs := reqs[1].Last(); !strings.HasPrefix(obs, "Observation:\n") || !strings.Contains(obs, "Created notes.md") {
					t.Errorf("observation: got %q", obs)
				}
				if res.Answer != "created" {
					t.Errorf("answer: got %q", res.Answer)
				}
			},
		},
		{
			name: "editor block holding a code fence",
			replies: []scripted.Reply{
				scripted.Text("I'll write the usage section.\n\n```editor\ncreate README.md\n## Usage\n\n```sh\nunfold serve\n```\n\nThen open the browser.\n```\n"),
				scripted.Text("````editor\ncreate INSTALL.md\n```\ngo install ./cmd/unfold\n```\n````\n"),
				scripted.Text(`{"final": "written"}`),
			},
			check: func(t *testing.T, dir string, reqs []scripted.Request, _ *agent.Result) {
				for name, want := range map[string]string{
					"README.md":  "## Usage\n\n```sh\nunfold serve\n```\n\nThen open the browser.\n",
					"INSTALL.md": "```\ngo install ./cmd/unfold\n```\n",
				} {
					if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != want {
						t.Errorf("%s: got %q, %v, want %q", name, b, err, want)
					}
				}
				sys, _ := reqs[0].Messages[0]["content"].(string)
				for _, want := range []string{"fence the block with more backticks than any line inside it", "when a later such line, outside the examples, would do too, the block is ambiguous: it is not run"} {
					if !strings.Contains(sys, want) {
						t.Errorf("action instructions: got %q, want them to contain %q", sys, want)
					}
				}
			},
		},
		{
			name: "ambiguous editor block refused",
			replies: []scripted.Reply{
				// Two closers leave the rest paired: the one before "ok"
				// (the README cut at "Output:") and the block's own.
				scripted.Text("I'll write the README.\n```editor\ncreate README.md\n# Demo\n```sh\nmake run\n```\nOutput:\n```\nok\n```\n```\nDone."),
				scripted.Text("````editor\ncreate README.md\n# Demo\n```sh\nmake run\n```\nOutput:\n```\nok\n```\n````\nDone."),
				scripted.Text(`{"final": "written"}`),
			},
			check: func(t *testing.T, dir string, reqs []scripted.Request, _ *agent.Result) {
				want := "Your ```editor block was not run: it holds a fenced example (a fence with a language), and more than one line of only ``` could end it, so where it ends is ambiguous. Fence the block with four backticks (````editor ... ````)"
				if got := reqs[1].Last(); !strings.HasPrefix(got, want) {
					t.Errorf("reply to the ambiguous block: got %q, want it to start %q", got, want)
				}
				want = "# Demo\n```sh\nmake run\n```\nOutput:\n```\nok\n```\n"
				if b, err := os.ReadFile(filepath.Join(dir, "README.md")); err != nil || string(b) != want {
					t.Errorf("README.md: got %q, %v, want %q (written whole, once)", b, err, want)
				}
			},
		},
		{
			name: "editor block deleting a line",
			replies: []scripted.Reply{
				scripted.Text("```editor\ncreate a.txt\none\ntwo\nthree\n```\n"),
				scripted.Text("```editor\nview a.txt\n```\n"),
				// The command line, then an empty line before the closing
				// fence, as the editor's help and refusal say.
				scripted.Text("```editor\nedit a.txt 2-2\n\n```\n"),
				scripted.Text(`{"final": "deleted"}`),
			},
			check: func(t *testing.T, dir string, reqs []scripted.Request, _ *agent.Result) {
				if b, err := os.ReadFile(filepath.Join(dir, "a.txt")); err != nil || string(b) != "one\nthree\n" {
					t.Errorf("a.txt: got %q, %v, want %q", b, err, "one\nthree\n")
				}
			},
		},
		{
			name: "JSON actions",
			replies: []scripted.Reply{
				scripted.Text(`{"tool": "open_sections", "input": {"section_keys": ["calc"], "reason": "math"}}`),
				scripted.Text("```json\n{\"tool\": \"add\", \"input\": {\"a\": 20, \"b\": 22}}\n```"),
				scripted.Text(`{"final": "42"}`),
			},
			check: func(t *testing.T, _ string, reqs []scripted.Request, res *agent.Result) {
				if sys, _ := reqs[1].Messages[0]["content"].(string); !strings.Contains(sys, "- add: Add two integers.") {
					t.Errorf("system message after opening: got %q, want add described", sys)
				}
				if obs := reqs[2].Last(); !strings.Contains(obs, `"tool":"add","success":true,"output":"42"`) {
					t.Errorf("observation: got %q", obs)
				}
				if res.Answer != "42" {
					t.Errorf("answer: got %q", res.Answer)
				}
			},
		},
		{
			name: "one correction",
			replies: []scripted.Reply{
				scripted.Text("Let me think about it."),
				scripted.Text(`{"final": "fine"}`),
			},
			check: func(t *testing.T, _ string, reqs []scripted.Request, res *agent.Result) {
				if !strings.HasPrefix(reqs[1].Last(), "I could not find an action") {
					t.Errorf("correction: got %q", reqs[1].Last())
				}
				if res.Answer != "fine" || res.Steps != 2 {
					t.Errorf("answer, steps: got %q, %d, want fine, 2 (a step per model call)", res.Answer, res.Steps)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			dir := t.TempDir()
			sess := session.New()
			o, err := orchestrator.New(orchestrator.WithSession(sess))
			if err != nil {
				t.Fatal(err)
			}
			ed, err := editor.New(dir, sess)
			if err != nil {
				t.Fatal(err)
			}
			if err := o.Register("editor", ed); err != nil {
				t.Fatal(err)
			}
			srv := scripted.New(t, tt.replies...)
			a, err := agent.New(newModel(t, srv), f.prompt, agent.WithSession(sess), agent.WithOrchestrator(o), agent.WithActions(agent.ActionsText), agent.WithFS(afero.NewBasePathFs(afero.NewOsFs(), dir)), agent.WithDisclosure(agent.DisclosureRerender))
			if err != nil {
				t.Fatal(err)
			}
			res, err := a.Run(context.Background(), "work")
			if err != nil {
				t.Fatal(err)
			}
			reqs := srv.Requests()
			if len(reqs) != len(tt.replies) {
				t.Fatalf("requests: got %d, want %d", len(reqs), len(tt.replies))
			}
			for i, r := range reqs {
				if len(r.Tools) != 0 {
					t.Errorf("request %d: got %d tools, want none in text mode", i+1, len(r.Tools))
				}
			}
			tt.check(t, dir, reqs, res)
		})
	}
}

func TestTextModeFailedStep(t *testing.T) {
	p := prompt.MustNew("test/agent", "f", section.New(section.Spec[section.None]{Key: "task", Title: "Task", Body: "Answer."})).MustBind()
	srv := scripted.NewFunc(t, func(int, scripted.Request) scripted.Reply { return scripted.Text("no action here") })
	a, err := agent.New(newModel(t, srv), p, agent.WithActions(agent.ActionsText), agent.WithMaxSteps(2))
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Run(context.Background(), "work")
	if !errors.Is(err, agent.ErrStepLimit) {
		t.Fatalf("error: got %v, want ErrStepLimit", err)
	}
	if res.Steps != 2 || len(srv.Requests()) != 2 {
		t.Errorf("steps, requests: got %d, %d, want 2, 2 (each model call a step, the reply after a correction too)", res.Steps, len(srv.Requests()))
	}
}

func TestResume(t *testing.T) {
	f := newFixture(t)
	srv := scripted.New(t,
		scripted.Calls(call("c1", "open_sections", `{"section_keys":["calc"],"reason":"need to add"}`)),
		scripted.Calls(call("c2", "add", `{"a":1,"b":1}`)), // first request of the resumed run
		scripted.Text("2"),
	)
	var transcript bytes.Buffer
	a, err := agent.New(newModel(t, srv), f.prompt, agent.WithTranscript(&transcript), agent.WithMaxSteps(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(context.Background(), "What is 1+1?"); !errors.Is(err, agent.ErrStepLimit) {
		t.Fatalf("first run: got %v, want ErrStepLimit", err)
	}
	tr, err := agent.ReadTranscript(bytes.NewReader(transcript.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	b, err := agent.New(newModel(t, srv), f.prompt, agent.WithSession(session.New()), agent.WithTranscript(&transcript))
	if err != nil {
		t.Fatal(err)
	}
	res, err := b.Resume(context.Background(), tr, "")
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if !contains(reqs[1].ToolNames(), "add") {
		t.Errorf("resumed request tools: got %v, want add (the session was replayed)", reqs[1].ToolNames())
	}
	if got, _ := reqs[1].ToolResult("c1"); !strings.Contains(got, "Opened sections: calc") {
		t.Errorf("resumed request: got open result %q, want the restored conversation", got)
	}
	if first := reqs[1].Messages[1]["content"]; first != "What is 1+1?" {
		t.Errorf("resumed request task: got %v", first)
	}
	if res.Answer != "2" || f.adds.Load() != 1 {
		t.Errorf("answer, adds: got %q, %d, want 2, 1", res.Answer, f.adds.Load())
	}
}

func TestHelpTool(t *testing.T) {
	f := newFixture(t)
	srv := scripted.New(t, scripted.Calls(call("c1", "help", `{"query":"calculator"}`)), scripted.Text("ok"))
	a, err := agent.New(newModel(t, srv), f.prompt, agent.WithHelp())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(context.Background(), "what can you do?"); err != nil {
		t.Fatal(err)
	}
	got, _ := srv.Requests()[1].ToolResult("c1")
	if !strings.Contains(got, `Call open_sections with key "calc" to get its tools`) {
		t.Errorf("help: got %q, want a recommendation to open calc", got)
	}
}

func TestNewErrors(t *testing.T) {
	f := newFixture(t)
	m := agent.ModelFunc(func(context.Context, agent.Request) (agent.Response, error) { return agent.Response{}, nil })
	tests := []struct {
		name  string
		model agent.Model
		p     *prompt.Prompt
		opts  []agent.Option
		want  string
	}{
		{"no model", nil, f.prompt, nil, "agent: new: no model"},
		{"no prompt", m, nil, nil, "agent: new: no prompt"},
		{"budget without counter", m, f.prompt, []agent.Option{agent.WithBudget(10, nil)}, "agent: new: a budget needs"},
		{"negative steps", m, f.prompt, []agent.Option{agent.WithMaxSteps(-1)}, "agent: new: max steps -1"},
		{"nil tool", m, f.prompt, []agent.Option{agent.WithTools(nil)}, "agent: nil tool given with WithTools"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := agent.New(tt.model, tt.p, tt.opts...)
			if err == nil && a != nil {
				_, err = a.Run(context.Background(), "go")
			}
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("got %v, want an error starting %q", err, tt.want)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestOnDemandEnvironmentOpens: an environment declared on demand is a
// summarized section without its tool until the model opens it; opening it
// offers its command tool, which runs.
func TestOnDemandEnvironmentOpens(t *testing.T) {
	for _, mode := range []agent.ActionMode{agent.ActionsNative, agent.ActionsText} {
		t.Run(mode.String(), func(t *testing.T) {
			f := newFixture(t)
			sess := session.New()
			o, err := orchestrator.New(orchestrator.WithSession(sess))
			if err != nil {
				t.Fatal(err)
			}
			env := &counter{}
			if err := o.Register("box", env, orchestrator.OnDemand(), orchestrator.Description("A box that counts commands.")); err != nil {
				t.Fatal(err)
			}
			replies := []scripted.Reply{
				scripted.Calls(call("c1", "open_sections", `{"section_keys":["box"],"reason":"run a command"}`)),
				scripted.Calls(call("c2", "box", `{"command":"count"}`)),
				scripted.Text("done"),
			}
			if mode == agent.ActionsText {
				replies = []scripted.Reply{
					scripted.Text(`{"tool": "open_sections", "input": {"section_keys": ["box"], "reason": "run a command"}}`),
					scripted.Text("```box\ncount\n```"),
					scripted.Text(`{"final": "done"}`),
				}
			}
			srv := scripted.New(t, replies...)
			a, err := agent.New(newModel(t, srv), f.prompt, agent.WithSession(sess), agent.WithOrchestrator(o), agent.WithActions(mode), agent.WithDisclosure(agent.DisclosureRerender))
			if err != nil {
				t.Fatal(err)
			}
			res, err := a.Run(context.Background(), "count once")
			if err != nil {
				t.Fatal(err)
			}
			if res.Answer != "done" || env.runs.Load() != 1 || res.Expansions != 1 {
				t.Errorf("got answer %q, %d runs, %d expansions; want done, 1, 1", res.Answer, env.runs.Load(), res.Expansions)
			}
			reqs := srv.Requests()
			if mode == agent.ActionsNative {
				if got := reqs[0].ToolNames(); contains(got, "box") {
					t.Errorf("first request offers %v: want box only once its section is open", got)
				}
				if got := reqs[1].ToolNames(); !contains(got, "box") {
					t.Errorf("second request offers %v: want box", got)
				}
				if got, _ := reqs[1].ToolResult("c1"); got != "Opened sections: box. New tools: box." {
					t.Errorf("open result: got %q", got)
				}
				return
			}
			if got := reqs[1].Last(); !strings.Contains(got, "Opened sections: box. New tools: box.") || !strings.Contains(got, "0 commands run") {
				t.Errorf("text mode: the observation should report the opening and show the box's screen, got\n%s", got)
			}
		})
	}
}

// TestAppendDisclosure: with DisclosureAppend the system message and the
// tool list of the start stay; the opening's answer carries the section
// and describes its tool, which native calls reach through use_tool and
// text mode by name.
func TestAppendDisclosure(t *testing.T) {
	t.Run("native", func(t *testing.T) {
		f := newFixture(t)
		srv := scripted.New(t,
			scripted.Calls(call("c1", "open_sections", `{"section_keys":["calc"],"reason":"need to add"}`)),
			scripted.Calls(call("c2", "use_tool", `{"name":"add","input":{"a":2,"b":40}}`)),
			scripted.Text("The sum is 42."),
		)
		a, err := agent.New(newModel(t, srv), f.prompt)
		if err != nil {
			t.Fatal(err)
		}
		if a.Disclosure() != agent.DisclosureAppend {
			t.Errorf("default disclosure for a chat completions endpoint: got %v, want append", a.Disclosure())
		}
		res, err := a.Run(context.Background(), "What is 2+40?")
		if err != nil || res.Answer != "The sum is 42." {
			t.Fatalf("got %+v, %v", res, err)
		}
		reqs := srv.Requests()
		sys0, _ := reqs[0].Messages[0]["content"].(string)
		for i, r := range reqs {
			if sys, _ := r.Messages[0]["content"].(string); sys != sys0 {
				t.Errorf("request %d: the system message changed:\n%s", i, sys)
			}
		}
		for i, r := range reqs {
			if got := strings.Join(r.ToolNames(), ","); got != "open_sections,use_tool" {
				t.Errorf("request %d: tools %s, want open_sections,use_tool throughout", i, got)
			}
		}
		if out, _ := reqs[1].ToolResult("c1"); !strings.Contains(out, "Opened sections: calc. New tools: add.") || !strings.Contains(out, "Use add to add numbers.") || !strings.Contains(out, "- add: Add two integers.") {
			t.Errorf("open result: got %q, want the opening and the section's content", out)
		}
		if got, _ := reqs[2].ToolResult("c2"); got != "42" {
			t.Errorf("add result: got %q", got)
		}
	})
	t.Run("text", func(t *testing.T) {
		f := newFixture(t)
		srv := scripted.New(t,
			scripted.Text(`{"tool": "open_sections", "input": {"section_keys": ["calc"], "reason": "math"}}`),
			scripted.Text(`{"tool": "add", "input": {"a": 20, "b": 22}}`),
			scripted.Text(`{"final": "42"}`),
		)
		a, err := agent.New(newModel(t, srv), f.prompt, agent.WithActions(agent.ActionsText), agent.WithDisclosure(agent.DisclosureAppend))
		if err != nil {
			t.Fatal(err)
		}
		res, err := a.Run(context.Background(), "What is 20+22?")
		if err != nil || res.Answer != "42" {
			t.Fatalf("got %+v, %v", res, err)
		}
		reqs := srv.Requests()
		if a, b := reqs[0].Messages[0]["content"], reqs[2].Messages[0]["content"]; a != b {
			t.Errorf("the system message changed")
		}
		if obs := reqs[1].Last(); !strings.Contains(obs, "- add: Add two integers.") {
			t.Errorf("observation of the opening: got %q, want the new tool described", obs)
		}
		if obs := reqs[2].Last(); !strings.Contains(obs, `"output":"42"`) {
			t.Errorf("observation: got %q", obs)
		}
	})
}

// TestEditAfterScreenUpdate: bash changes a file the editor shows; the
// next request carries the editor's new screen, and the model's edit of
// the lines it now sees is taken, not refused as stale.
func TestEditAfterScreenUpdate(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o, sess := bashOrchestrator(t, dir)
	ed, err := editor.New(dir, sess)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Register("editor", ed); err != nil {
		t.Fatal(err)
	}
	srv := scripted.New(t,
		scripted.Calls(call("c1", "editor", `{"command":"view a.txt 1-1"}`)),
		scripted.Calls(call("c2", "bash", `{"command":"printf 'changed\\n' > a.txt"}`)),
		scripted.Calls(call("c3", "editor", `{"command":"edit a.txt 1-1\nfinal"}`)),
		scripted.Text("done"),
	)
	a, err := agent.New(newModel(t, srv), f.prompt, agent.WithSession(sess), agent.WithOrchestrator(o), agent.WithFS(afero.NewBasePathFs(afero.NewOsFs(), dir)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(context.Background(), "Edit a.txt."); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("requests: got %d, want 4", len(reqs))
	}
	if last := reqs[2].Last(); !strings.Contains(last, "changed") {
		t.Errorf("the request after bash does not show the changed line: %q", last)
	}
	if got, _ := reqs[3].ToolResult("c3"); !strings.Contains(got, "Edited a.txt") {
		t.Errorf("edit: got %q, want it taken", got)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "final\n" {
		t.Errorf("a.txt holds %q", b)
	}
}
