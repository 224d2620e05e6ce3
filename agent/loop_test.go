package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/spf13/afero"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/agent/anthropic"
	"github.com/unfold-dev/unfold/agent/internal/scripted"
	"github.com/unfold-dev/unfold/agent/openai"
	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/gateway"
	"github.com/unfold-dev/unfold/orchestrator"
	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tokens"
	"github.com/unfold-dev/unfold/tools"
)

// catSpec is a process spec file; its program never starts in these
// tests.
const catSpec = `{"kind":"process","executable":"cat","description":"x"}`

// writeSpec is a bash command writing the spec file env/name.json.
func writeSpec(name string) string {
	cmd, _ := json.Marshal(map[string]string{"command": fmt.Sprintf("printf '%%s' '%s' > env/%s.json", catSpec, name)})
	return string(cmd)
}

// specProject is a bash orchestrator in a project directory whose spec
// files are followed.
func specProject(t *testing.T) (string, *orchestrator.Orchestrator, []agent.Option) {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "env"), 0o755); err != nil {
		t.Fatal(err)
	}
	o, sess := bashOrchestrator(t, dir)
	if err := o.LoadSpecs(dir); err != nil {
		t.Fatal(err)
	}
	return dir, o, []agent.Option{agent.WithSession(sess), agent.WithOrchestrator(o), agent.WithDisclosure(agent.DisclosureRerender)}
}

// TestReservedSpecFilesSkipped: spec files the model writes named for the
// tools the front ends offer (find_tools, call_tool, use_tool, help,
// open_sections) or like an MCP tool (SERVER__TOOL) are skipped, the
// model told why; the run, and the next, go on.
func TestReservedSpecFilesSkipped(t *testing.T) {
	names := []string{gateway.FindToolsName, gateway.CallToolName, agent.UseToolName, tools.HelpName, prompt.OpenSectionsName, "up" + gateway.Separator + "echo"}
	for _, name := range names[:5] {
		if !slices.Contains(orchestrator.ReservedNames(), name) {
			t.Errorf("orchestrator.ReservedNames() = %v, want %s among them", orchestrator.ReservedNames(), name)
		}
	}
	f := newFixture(t)
	_, o, opts := specProject(t)
	var replies []scripted.Reply
	for i, name := range names {
		replies = append(replies, scripted.Calls(call(fmt.Sprint("c", i), "bash", writeSpec(name))))
	}
	replies = append(replies, scripted.Text("done"))
	srv := scripted.New(t, replies...)
	a, err := agent.New(newModel(t, srv), f.prompt, append(opts, agent.WithHelp())...)
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Run(context.Background(), "go")
	if err != nil || res.Answer != "done" {
		t.Fatalf("run: got %q, %v, want done, nil", res.Answer, err)
	}
	last := srv.Requests()[len(names)]
	body, _ := json.Marshal(last.Messages)
	for _, name := range names {
		if !strings.Contains(string(body), "env/"+name+".json: the name "+name) {
			t.Errorf("the last request does not say env/%s.json was skipped: %s", name, body)
		}
	}
	if got := o.Names(); !slices.Equal(got, []string{"bash"}) {
		t.Errorf("environments: got %v, want bash alone", got)
	}
	srv2 := scripted.New(t, scripted.Text("again"))
	a2, err := agent.New(newModel(t, srv2), f.prompt, append(opts[:0:0], agent.WithOrchestrator(o), agent.WithSession(o.Session()), agent.WithHelp())...)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := a2.Run(context.Background(), "go on"); err != nil || res.Answer != "again" {
		t.Errorf("the next run: got %q, %v, want again, nil", res.Answer, err)
	}
}

// TestEnvironmentGivesWayToTool: a spec file the model writes named like
// a tool of a section not open yet (env/add.json, the calculator's add)
// does not end the run when the section opens: the environment's tool is
// not offered, the section's is, and the transcript names the file.
func TestEnvironmentGivesWayToTool(t *testing.T) {
	for _, mode := range []agent.ActionMode{agent.ActionsNative, agent.ActionsText} {
		t.Run(mode.String(), func(t *testing.T) {
			f := newFixture(t)
			_, _, opts := specProject(t)
			var replies []scripted.Reply
			if mode == agent.ActionsNative {
				replies = []scripted.Reply{
					scripted.Calls(call("c1", "bash", writeSpec("add"))),
					scripted.Calls(call("c2", prompt.OpenSectionsName, `{"section_keys":["calc"],"reason":"sums"}`)),
					scripted.Calls(call("c3", "add", `{"a":1,"b":2}`)),
					scripted.Text("done"),
				}
			} else {
				var cmd struct{ Command string }
				_ = json.Unmarshal([]byte(writeSpec("add")), &cmd)
				replies = []scripted.Reply{
					scripted.Text("```bash\n" + cmd.Command + "\n```"),
					scripted.Text(`{"tool": "open_sections", "input": {"section_keys": ["calc"], "reason": "sums"}}`),
					scripted.Text(`{"tool": "add", "input": {"a": 1, "b": 2}}`),
					scripted.Text(`{"final": "done"}`),
				}
			}
			srv := scripted.New(t, replies...)
			var tr bytes.Buffer
			a, err := agent.New(newModel(t, srv), f.prompt, append(opts, agent.WithActions(mode), agent.WithTranscript(&tr))...)
			if err != nil {
				t.Fatal(err)
			}
			res, err := a.Run(context.Background(), "add")
			if err != nil || res.Answer != "done" {
				t.Fatalf("run: got %q, %v, want done, nil", res.Answer, err)
			}
			if n := f.adds.Load(); n != 1 {
				t.Errorf("the section's add ran %d times, want 1", n)
			}
			if !strings.Contains(tr.String(), "the environment add (env/add.json) is not offered: another tool is named add") {
				t.Errorf("the transcript does not name env/add.json:\n%s", tr.String())
			}
		})
	}
}

// TestRefusedOpeningsDoNotCount: openings refused for the budget change
// nothing and do not count against MaxExpansions.
func TestRefusedOpeningsDoNotCount(t *testing.T) {
	n := 0
	m := agent.ModelFunc(func(context.Context, agent.Request) (agent.Response, error) {
		n++
		if n <= agent.MaxExpansions+2 {
			return agent.Response{Message: agent.Message{ToolCalls: []agent.ToolCall{
				{ID: fmt.Sprint("c", n), Name: prompt.OpenSectionsName, Arguments: `{"section_keys":["big"],"reason":"r"}`}}}}, nil
		}
		return agent.Response{Message: agent.Message{Content: "done"}}, nil
	})
	a, err := agent.New(m, bigPrompt(), agent.WithBudget(200, tokens.Estimate), agent.WithMaxSteps(30))
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Run(context.Background(), "go")
	if err != nil || res.Answer != "done" || res.Expansions != 0 {
		t.Errorf("got answer %q, expansions %d, error %v; want done, 0, nil", res.Answer, res.Expansions, err)
	}
}

// TestTextStepsBoundModelCalls: in text mode every model call is a step,
// the reply after a correction too.
func TestTextStepsBoundModelCalls(t *testing.T) {
	srv := scripted.NewFunc(t, func(int, scripted.Request) scripted.Reply { return scripted.Text("thinking...") })
	a, err := agent.New(newModel(t, srv), newFixture(t).prompt, agent.WithActions(agent.ActionsText), agent.WithMaxSteps(3))
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Run(context.Background(), "compute")
	if err == nil || res.Steps != 3 || len(srv.Requests()) != 3 {
		t.Errorf("got %d steps, %d model calls, error %v; want 3, 3 and the step limit", res.Steps, len(srv.Requests()), err)
	}
}

// TestTextEnvNameCase: a fenced block named after an environment whose
// name has capitals, as the instructions show it, runs there; the
// correction names the environments there are, and no other.
func TestTextEnvNameCase(t *testing.T) {
	sess := session.New()
	o, err := orchestrator.New(orchestrator.WithSession(sess))
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	var runs atomic.Int32
	if err := o.Register("Tally", countEnv{&runs}); err != nil {
		t.Fatal(err)
	}
	srv := scripted.New(t,
		scripted.Text("nothing to do"),
		scripted.Text("```Tally\n1+1\n```"),
		scripted.Text("```tally\n2+2\n```"),
		scripted.Text(`{"final": "ok"}`))
	a, err := agent.New(newModel(t, srv), newFixture(t).prompt, agent.WithSession(sess), agent.WithOrchestrator(o), agent.WithActions(agent.ActionsText))
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Run(context.Background(), "compute")
	if err != nil || res.Answer != "ok" {
		t.Fatalf("run: got %q, %v", res.Answer, err)
	}
	if n := runs.Load(); n != 2 {
		t.Errorf("Tally ran %d commands, want 2", n)
	}
	corr := srv.Requests()[1].Last()
	if !strings.Contains(corr, "```Tally ... ```; environments: Tally") || strings.Contains(corr, "bash") {
		t.Errorf("correction: got %q, want it to name Tally and not bash", corr)
	}
	srv2 := scripted.New(t, scripted.Text("nothing"), scripted.Text(`{"final": "ok"}`))
	b, err := agent.New(newModel(t, srv2), newFixture(t).prompt, agent.WithActions(agent.ActionsText))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Run(context.Background(), "compute"); err != nil {
		t.Fatal(err)
	}
	if corr := srv2.Requests()[1].Last(); strings.Contains(corr, "fenced code block") {
		t.Errorf("correction without environments: got %q, want no fenced block offered", corr)
	}
}

// countEnv counts its commands.
type countEnv struct{ n *atomic.Int32 }

func (c countEnv) Execute(_ context.Context, cmd string) (envs.Response, error) {
	c.n.Add(1)
	return envs.Response{Output: "ran " + cmd, Success: true}, nil
}

func (countEnv) Screen() (envs.Screen, error) { return envs.Screen{Content: "A calculator."}, nil }

// TestTextObservationKeptWhenRefreshFails: an action that ran keeps its
// observation in the conversation when the refresh after it fails.
func TestTextObservationKeptWhenRefreshFails(t *testing.T) {
	dir := t.TempDir()
	dup := tools.MustNew("dup", "A tool.", func(context.Context, tools.Context, struct{}) (string, error) { return "ok", nil })
	changes := atomic.Uint64{}
	rebuilt := prompt.MustNew("test", "rebuilt", section.New(section.Spec[section.None]{Key: "task", Title: "Task", Body: "Work.", Tools: []*tools.Tool{dup}})).MustBind()
	srv := scripted.NewFunc(t, func(int, scripted.Request) scripted.Reply {
		changes.Store(1) // the prompt changes while the action runs
		return scripted.Text("```bash\necho KEPT-OUTPUT\n```")
	})
	a, _ := bashAgent(t, dir, newModel(t, srv), agent.WithActions(agent.ActionsText), agent.WithTools(dup),
		agent.WithPromptChanges(0, changes.Load, func() (*prompt.Prompt, error) { return rebuilt, nil }))
	res, err := a.Run(context.Background(), "go")
	if err == nil || !strings.Contains(err.Error(), `two tools are named "dup"`) {
		t.Fatalf("error: got %v, want the clash of dup", err)
	}
	last := res.Messages[len(res.Messages)-1]
	if last.Role != agent.RoleUser || !strings.Contains(last.Content, "KEPT-OUTPUT") {
		t.Errorf("last message: got %+v, want the observation of echo", last)
	}
}

// TestResumeTextActionThatRan: a text-mode run killed after its action
// ran, while the screens were gathered, resumes with the action's
// result, which its tool record holds.
func TestResumeTextActionThatRan(t *testing.T) {
	dir := t.TempDir()
	srv := scripted.New(t, scripted.Text("```bash\necho KEPT-OUTPUT\n```"), scripted.Text(`{"final": "done"}`))
	var tr bytes.Buffer
	a, _ := bashAgent(t, dir, newModel(t, srv), agent.WithActions(agent.ActionsText), agent.WithTranscript(&tr))
	if _, err := a.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	// Cut the transcript after the action's tool record: the run was
	// killed there.
	var cut []byte
	for line := range bytes.Lines(tr.Bytes()) {
		cut = append(cut, line...)
		if bytes.HasPrefix(line, []byte(`{"kind":"tool"`)) {
			break
		}
	}
	rt, err := agent.ReadForResume(bytes.NewReader(cut))
	if err != nil {
		t.Fatal(err)
	}
	srv2 := scripted.New(t, scripted.Text(`{"final": "done"}`))
	b, _ := bashAgent(t, dir, newModel(t, srv2), agent.WithActions(agent.ActionsText))
	if _, err := b.Resume(context.Background(), rt, ""); err != nil {
		t.Fatal(err)
	}
	msgs := srv2.Requests()[0].Messages
	got, _ := msgs[len(msgs)-2]["content"].(string)
	if !strings.HasPrefix(got, "Observation:") || !strings.Contains(got, "KEPT-OUTPUT") {
		t.Errorf("the observation after the action: got %q, want the output of echo", got)
	}
}

// TestDuplicateCallIDs: calls of one reply with the same ID, or none, get
// IDs of their own as they arrive, so each is answered, and a resume
// after a crash inside the second reports it as running and the third
// as not run.
func TestDuplicateCallIDs(t *testing.T) {
	calls, results := crashThenResume(t, scripted.Calls(
		call("x", "bash", `{"command":"echo one"}`),
		call("x", "crash", `{}`),
		call("", "bash", `{"command":"echo three"}`),
	))
	if len(calls) != 1 || len(calls[0]) != 3 || calls[0][0] != "x" || calls[0][1] == "x" || calls[0][2] == "" || calls[0][1] == calls[0][2] {
		t.Fatalf("call IDs: got %v, want x and two other IDs, all different", calls)
	}
	r := results[0]
	if !strings.Contains(r["x"], "one") || !strings.Contains(r[calls[0][1]], "may have taken effect") || !strings.Contains(r[calls[0][2]], "did not run") {
		t.Errorf("results: got %q", r)
	}
}

// TestResumeOldDuplicateIDs: a transcript whose reply used one ID for
// three calls (as versions that kept the IDs a server gave wrote them),
// cut inside the second, resumes with every call answered: the first
// with its result, the second as running, the third as not run.
func TestResumeOldDuplicateIDs(t *testing.T) {
	rec := func(r agent.Record) string {
		b, _ := json.Marshal(r)
		return string(b) + "\n"
	}
	calls := []agent.ToolCall{{ID: "x", Name: "bash", Arguments: "{}"}, {ID: "x", Name: "bash", Arguments: "{}"}, {ID: "x", Name: "bash", Arguments: "{}"}}
	text := rec(agent.Record{Kind: agent.KindRun, Task: "go"}) +
		rec(agent.Record{Kind: agent.KindMessage, Message: &agent.Message{Role: agent.RoleUser, Content: "go"}}) +
		rec(agent.Record{Kind: agent.KindMessage, Message: &agent.Message{Role: agent.RoleAssistant, ToolCalls: calls}}) +
		rec(agent.Record{Kind: agent.KindCall, Tool: &agent.ToolRecord{ID: "x", Name: "bash"}}) +
		rec(agent.Record{Kind: agent.KindTool, Tool: &agent.ToolRecord{ID: "x", Name: "bash", Success: true, Result: "first"}}) +
		rec(agent.Record{Kind: agent.KindMessage, Message: &agent.Message{Role: agent.RoleTool, ToolCallID: "x", Content: "first"}}) +
		rec(agent.Record{Kind: agent.KindCall, Tool: &agent.ToolRecord{ID: "x", Name: "bash"}})
	tr, err := agent.ReadForResume(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	m := agent.ModelFunc(func(_ context.Context, req agent.Request) (agent.Response, error) {
		for _, msg := range req.Messages {
			if msg.Role == agent.RoleTool {
				got = append(got, msg.Content)
			}
		}
		return agent.Response{Message: agent.Message{Content: "done"}}, nil
	})
	a, err := agent.New(m, newFixture(t).prompt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Resume(context.Background(), tr, ""); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0] != "first" || !strings.Contains(got[1], "may have taken effect") || !strings.Contains(got[2], "did not run") {
		t.Errorf("results: got %q, want first, running, not run", got)
	}
}

// resumeOnMessages runs the fixture on the scripted Messages API with an
// open_sections call of key, then resumes the transcript there with opts,
// the resumed model answering with answer. It returns the resumed run's
// answer and server.
func resumeOnMessages(t *testing.T, key, answer string, opts ...agent.Option) (string, *scripted.MessagesServer) {
	t.Helper()
	run := func(srv *scripted.MessagesServer, opts ...agent.Option) *agent.Agent {
		m, err := anthropic.New(srv.URL, "claude-sonnet-4-5", anthropic.WithAPIKey("k"))
		if err != nil {
			t.Fatal(err)
		}
		a, err := agent.New(m, newFixture(t).prompt, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	srv := scripted.NewMessages(t,
		scripted.Calls(call("toolu_1", prompt.OpenSectionsName, `{"section_keys":["`+key+`"],"reason":"need"}`)),
		scripted.Text("opened"))
	var tr bytes.Buffer
	if res, err := run(srv, agent.WithTranscript(&tr)).Run(context.Background(), "go"); err != nil || res.Answer != "opened" {
		t.Fatalf("run: got %+v, %v", res, err)
	}
	if v := srv.Violations(); len(v) > 0 {
		t.Fatalf("violations of the first run: %v", v)
	}
	rt, err := agent.ReadForResume(bytes.NewReader(tr.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	srv2 := scripted.NewMessages(t, scripted.Text(answer))
	res, err := run(srv2, opts...).Resume(context.Background(), rt, "and now?")
	if err != nil {
		t.Fatalf("resume: %v; violations: %v", err, srv2.Violations())
	}
	if v := srv2.Violations(); len(v) > 0 {
		t.Errorf("violations of the resume: %v", v)
	}
	return res.Answer, srv2
}

// TestResumeAnthropicAfterOpening: on the Messages API, a transcript whose
// opening loaded a deferred tool resumes: the section is open at the
// resumed start, so its tool is no longer deferred, and no tool_reference
// names it.
func TestResumeAnthropicAfterOpening(t *testing.T) {
	if got, _ := resumeOnMessages(t, "calc", "fine"); got != "fine" {
		t.Errorf("resumed answer: got %q, want fine", got)
	}
}

// TestResumeNativeAsText: a native-mode transcript with tool calls
// resumed in text mode on the Messages API sends its calls and results as
// text, since text mode sends no tools.
func TestResumeNativeAsText(t *testing.T) {
	got, srv := resumeOnMessages(t, "reference", `{"final": "fine"}`, agent.WithActions(agent.ActionsText))
	if got != "fine" {
		t.Errorf("resumed answer: got %q, want fine", got)
	}
	body := string(srv.Bodies()[0])
	if !strings.Contains(body, `{\"tool\":\"open_sections\",\"input\":{`) || !strings.Contains(body, `Observation:\n{\"tool\":\"open_sections\",`) {
		t.Errorf("the resumed request does not carry the call and its result as text: %s", body)
	}
}

// TestUseToolInputErrors: use_tool's answer to arguments of the wrong
// shape says what is wrong in the model's terms, not Go's.
func TestUseToolInputErrors(t *testing.T) {
	for _, tc := range []struct{ args, want string }{
		{`[1]`, "the arguments are not a JSON object"},
		{`{"name":3}`, "name must be a string"},
		{`{"name":"status","input":[1]}`, "input must be a JSON object"},
		{`{"input":{}}`, "name is missing"},
	} {
		srv := scripted.New(t, scripted.Calls(call("c1", agent.UseToolName, tc.args)), scripted.Text("ok"))
		m, err := openai.New(srv.URL, "gpt-5", openai.WithAPIKey("k"))
		if err != nil {
			t.Fatal(err)
		}
		a, err := agent.New(m, taskPrompt(t), agent.WithFS(afero.NewMemMapFs()), agent.WithDisclosure(agent.DisclosureAppend))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Run(context.Background(), "go"); err != nil {
			t.Fatal(err)
		}
		got, _ := srv.Requests()[1].ToolResult("c1")
		if !strings.Contains(got, tc.want) || strings.Contains(got, "Go value") || strings.Contains(got, "struct") {
			t.Errorf("%s: got %q, want it to say %q", tc.args, got, tc.want)
		}
	}
}

// TestNativeCallIDsKept: a reply kept in its API's own format goes back as
// it came, so its call IDs, repeated or not, are the ones the results
// answer; renaming them in the results only would make the API refuse the
// next request.
func TestNativeCallIDsKept(t *testing.T) {
	var second agent.Request
	n := 0
	m := agent.ModelFunc(func(_ context.Context, req agent.Request) (agent.Response, error) {
		n++
		if n == 1 {
			calls := []agent.ToolCall{
				{ID: "x", Name: "open_sections", Arguments: `{"section_keys":["reference"],"reason":"r"}`},
				{ID: "x", Name: "open_sections", Arguments: `{"section_keys":["calc"],"reason":"r"}`},
			}
			return agent.Response{Message: agent.Message{ToolCalls: calls, Native: &agent.Native{API: "test", Data: json.RawMessage(`{"ids":["x","x"]}`)}}}, nil
		}
		second = req
		return agent.Response{Message: agent.Message{Content: "done"}}, nil
	})
	a, err := agent.New(m, newFixture(t).prompt, agent.WithFS(afero.NewMemMapFs()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	if ids, want := idsOf(second.Messages), []string{"call x", "call x", "result x", "result x"}; !slices.Equal(ids, want) {
		t.Errorf("IDs in the next request: got %q, want %q, as the native reply has them", ids, want)
	}
}

// TestResumeAsTextTwice: calls a stopped native run left open are answered
// once: a resume in text mode records its answers as tool messages, so a
// second resume finds them answered; the model reads a call whose result
// was lost as one that did not succeed.
func TestResumeAsTextTwice(t *testing.T) {
	rec := func(r agent.Record) string {
		b, _ := json.Marshal(r)
		return string(b) + "\n"
	}
	calls := []agent.ToolCall{{ID: "x", Name: "add", Arguments: `{"a":1,"b":2}`}}
	text := rec(agent.Record{Kind: agent.KindRun, Task: "go"}) +
		rec(agent.Record{Kind: agent.KindMessage, Message: &agent.Message{Role: agent.RoleUser, Content: "go"}}) +
		rec(agent.Record{Kind: agent.KindMessage, Message: &agent.Message{Role: agent.RoleAssistant, ToolCalls: calls}}) +
		rec(agent.Record{Kind: agent.KindCall, Tool: &agent.ToolRecord{ID: "x", Name: "add"}})
	var lost [][]string
	m := agent.ModelFunc(func(_ context.Context, req agent.Request) (agent.Response, error) {
		var got []string
		for _, msg := range req.Messages {
			if strings.Contains(msg.Content, "may have taken effect") {
				got = append(got, msg.Content)
			}
		}
		lost = append(lost, got)
		return agent.Response{Message: agent.Message{Content: `{"final": "done"}`}}, nil
	})
	for range 2 {
		tr, err := agent.ReadForResume(strings.NewReader(text))
		if err != nil {
			t.Fatal(err)
		}
		var more bytes.Buffer
		a, err := agent.New(m, newFixture(t).prompt, agent.WithActions(agent.ActionsText), agent.WithTranscript(&more))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Resume(context.Background(), tr, "again"); err != nil {
			t.Fatal(err)
		}
		text += more.String()
	}
	if len(lost) != 2 || len(lost[0]) != 1 || len(lost[1]) != 1 {
		t.Fatalf("answers to the call whose result was lost, per request: got %q, want one in each", lost)
	}
	if !strings.Contains(lost[1][0], `"success":false`) {
		t.Errorf("the answer: got %q, want it not to succeed", lost[1][0])
	}
}
