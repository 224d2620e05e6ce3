package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/agent/anthropic"
	"github.com/unfold-dev/unfold/agent/internal/scripted"
	"github.com/unfold-dev/unfold/agent/openai"
	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/tools"
	"github.com/unfold-dev/unfold/visibility"
)

// The scripted task: ten steps, three sections opened (guide and style
// hold content only; deploy carries the deploy and status tools), run with
// every adapter in both disclosure modes.

const deployBody = "Deploy with the deploy tool, one target at a time; check each with status."

// longText is reference text of about n tokens, the size of the
// instructions a real agent carries.
func longText(topic string, n int) string {
	var b strings.Builder
	for i := 0; b.Len() < 4*n; i++ {
		fmt.Fprintf(&b, "Rule %d of %s: keep changes small, say what you did, and check the result before going on.\n", i+1, topic)
	}
	return strings.TrimSpace(b.String())
}

func taskPrompt(t testing.TB) *prompt.Prompt {
	t.Helper()
	type none = section.None
	deploy := tools.MustNew("deploy", "Deploy the service to a target.", func(_ context.Context, _ tools.Context, in struct {
		Target string `json:"target" jsonschema:"the target: staging or production"`
	}) (string, error) {
		return "deployed to " + in.Target, nil
	})
	status := tools.MustNew("status", "Show what runs where.", func(context.Context, tools.Context, struct{}) (string, error) {
		return "staging: v2, production: v1", nil
	})
	summary := visibility.Const(visibility.Summary)
	return prompt.MustNew("test/agent", "deploy",
		section.New(section.Spec[none]{Key: "role", Title: "Role", Body: longText("the role", 6000)}),
		section.New(section.Spec[none]{Key: "guide", Title: "Guide", Body: longText("the guide", 400), Summary: "How this team works.", Visibility: summary}),
		section.New(section.Spec[none]{Key: "style", Title: "Style", Body: longText("style", 200), Summary: "How to write notes.", Visibility: summary}),
		section.New(section.Spec[none]{Key: "deploy", Title: "Deployment", Body: deployBody, Summary: "Deploying the service.", Visibility: summary, Tools: []*tools.Tool{deploy, status}}),
	).MustBind()
}

func readTool() *tools.Tool {
	return tools.MustNew("read", "Read a file of the project.", func(_ context.Context, tc tools.Context, in struct {
		Path string `json:"path"`
	}) (string, error) {
		b, err := afero.ReadFile(tc.FS, in.Path)
		return string(b), err
	})
}

// taskReplies are the model's ten replies. search names the section whose
// tools the provider's own tool search loads before they are first
// called, for an API that defers them.
func taskReplies(reasoning bool, search string) []scripted.Reply {
	c := func(id, name, args string) scripted.Reply {
		return scripted.Reply{Reasoning: reasoning, ToolCalls: []scripted.Call{{ID: id, Name: name, Args: args}}}
	}
	rs := []scripted.Reply{
		c("c1", "open_sections", `{"section_keys":["guide"],"reason":"learn the rules"}`),
		c("c2", "read", `{"path":"context/guide.md"}`),
		c("c3", "open_sections", `{"section_keys":["style"],"reason":"write notes"}`),
		c("c4", "read", `{"path":"context/style.md"}`),
		c("c5", "open_sections", `{"section_keys":["deploy"],"reason":"deploy"}`),
		c("c6", "status", `{}`),
		c("c7", "deploy", `{"target":"staging"}`),
		c("c8", "status", `{}`),
		c("c9", "deploy", `{"target":"production"}`),
		{Reasoning: reasoning, Content: "Deployed to staging and production."},
	}
	if search != "" {
		rs[5].Search = []string{search}
	}
	return rs
}

// bridgedReplies are replies whose calls of the deploy section's tools go
// through use_tool, as a model sees them with DisclosureAppend on an API
// without deferred tools.
func bridgedReplies(rs []scripted.Reply) []scripted.Reply {
	for i, r := range rs {
		for j, c := range r.ToolCalls {
			if c.Name == "deploy" || c.Name == "status" {
				rs[i].ToolCalls[j] = scripted.Call{ID: c.ID, Name: agent.UseToolName, Args: `{"name":"` + c.Name + `","input":` + c.Args + `}`}
			}
		}
	}
	return rs
}

// textReplies are taskReplies as text actions.
func textReplies() []scripted.Reply {
	rs := taskReplies(false, "")
	for i, r := range rs {
		if len(r.ToolCalls) == 0 {
			rs[i] = scripted.Text(`{"final": ` + strconv.Quote(r.Content) + `}`)
			continue
		}
		c := r.ToolCalls[0]
		rs[i] = scripted.Text(`{"tool": ` + strconv.Quote(c.Name) + `, "input": ` + c.Args + `}`)
	}
	return rs
}

// server is what the comparison reads of a scripted endpoint.
type server interface {
	Bodies() [][]byte
	Violations() []string
}

type chatServer struct{ *scripted.Server }

func (chatServer) Violations() []string { return nil }

type responsesServer struct{ *scripted.ResponsesServer }

func (s responsesServer) Bodies() [][]byte { return raws(s.ResponsesServer.Bodies()) }

type messagesServer struct{ *scripted.MessagesServer }

func (s messagesServer) Bodies() [][]byte { return raws(s.MessagesServer.Bodies()) }

func raws(rs []json.RawMessage) [][]byte {
	out := make([][]byte, len(rs))
	for i, r := range rs {
		out[i] = r
	}
	return out
}

// adapter starts a scripted endpoint for the task and a model on it.
type adapter struct {
	name    string
	price   string // the model whose default price bills the run
	start   func(t testing.TB, mode agent.Disclosure) (agent.Model, server)
	actions agent.ActionMode
}

var adapters = []adapter{
	{"chat completions", "gpt-5", func(t testing.TB, mode agent.Disclosure) (agent.Model, server) {
		replies := taskReplies(false, "")
		if mode == agent.DisclosureAppend {
			replies = bridgedReplies(replies)
		}
		srv := scripted.New(t, replies...)
		srv.SimulateCache()
		m, err := openai.New(srv.URL, "gpt-5", openai.WithAPIKey("k"))
		if err != nil {
			t.Fatal(err)
		}
		return m, chatServer{srv}
	}, agent.ActionsNative},
	{"chat completions, text actions", "gpt-5", func(t testing.TB, _ agent.Disclosure) (agent.Model, server) {
		srv := scripted.New(t, textReplies()...)
		srv.SimulateCache()
		m, err := openai.New(srv.URL, "gpt-5", openai.WithAPIKey("k"))
		if err != nil {
			t.Fatal(err)
		}
		return m, chatServer{srv}
	}, agent.ActionsText},
	{"responses", "gpt-5", func(t testing.TB, mode agent.Disclosure) (agent.Model, server) {
		search := ""
		if mode == agent.DisclosureAppend {
			search = "deploy"
		}
		srv := scripted.NewResponses(t, taskReplies(true, search)...)
		srv.SimulateCache()
		m, err := openai.NewResponses(srv.URL, "gpt-5", openai.WithAPIKey("k"))
		if err != nil {
			t.Fatal(err)
		}
		return m, responsesServer{srv}
	}, agent.ActionsNative},
	{"messages", "claude-sonnet-4-5", func(t testing.TB, _ agent.Disclosure) (agent.Model, server) {
		srv := scripted.NewMessages(t, taskReplies(true, "")...)
		srv.SimulateCache()
		m, err := anthropic.New(srv.URL, "claude-sonnet-4-5", anthropic.WithAPIKey("k"))
		if err != nil {
			t.Fatal(err)
		}
		return m, messagesServer{srv}
	}, agent.ActionsNative},
	{"messages, no tool search", "claude-sonnet-4", func(t testing.TB, mode agent.Disclosure) (agent.Model, server) {
		replies := taskReplies(true, "")
		if mode == agent.DisclosureAppend {
			replies = bridgedReplies(replies)
		}
		srv := scripted.NewMessages(t, replies...)
		srv.SimulateCache()
		m, err := anthropic.New(srv.URL, "claude-sonnet-4-20250514", anthropic.WithAPIKey("k"))
		if err != nil {
			t.Fatal(err)
		}
		return m, messagesServer{srv}
	}, agent.ActionsNative},
}

// taskRun is one run of the task.
type taskRun struct {
	res    *agent.Result
	tr     *agent.Transcript
	bodies [][]byte
	events []string // the session's events, type and payload
	steps  []agent.Usage
}

func runTask(t testing.TB, ad adapter, mode agent.Disclosure) taskRun {
	t.Helper()
	m, srv := ad.start(t, mode)
	var transcript bytes.Buffer
	price, _ := agent.DefaultPrices().Lookup(ad.price)
	a, err := agent.New(m, taskPrompt(t), agent.WithDisclosure(mode), agent.WithFS(afero.NewMemMapFs()),
		agent.WithTools(readTool()), agent.WithTranscript(&transcript), agent.WithPrice(price), agent.WithActions(ad.actions))
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Run(context.Background(), "Deploy the service to staging, then to production.")
	if err != nil {
		t.Fatalf("%s, %s: %v (violations: %v)", ad.name, mode, err, srv.Violations())
	}
	if v := srv.Violations(); len(v) > 0 {
		t.Fatalf("%s, %s: requests broke the documented shape: %v", ad.name, mode, v)
	}
	tr, err := agent.ReadTranscript(&transcript)
	if err != nil {
		t.Fatal(err)
	}
	run := taskRun{res: res, tr: tr, bodies: srv.Bodies()}
	for _, e := range a.Session().Events() {
		b, _ := json.Marshal(e.Event)
		run.events = append(run.events, e.Type+" "+string(b))
	}
	for _, r := range tr.Records {
		if r.Kind == agent.KindModel {
			run.steps = append(run.steps, *r.Usage)
		}
	}
	return run
}

// share is the part of the request tokens of steps 2 to 10 in a prefix
// identical to the previous request, and the part the provider served
// from its cache.
func (r taskRun) share() (prefix, cached float64) {
	var p, n, c, in int
	for _, u := range r.steps[1:] {
		p += u.PrefixTokens
		n += u.RequestTokens
		c += u.CachedTokens
		in += u.PromptTokens
	}
	return float64(p) / float64(n), float64(c) / float64(in)
}

func kinds(tr *agent.Transcript) []string {
	var out []string
	for _, r := range tr.Records {
		out = append(out, r.Kind)
	}
	return out
}

// systemOf returns the system message of a request body.
func systemOf(ad adapter, body []byte) string {
	switch {
	case ad.name == "responses":
		return field(body, "instructions")
	case strings.HasPrefix(ad.name, "messages"):
		return field(body, "system")
	}
	var req struct{ Messages []json.RawMessage }
	_ = json.Unmarshal(body, &req)
	return string(req.Messages[0])
}

// field reads a top-level field of a request body as JSON text.
func field(body []byte, name string) string {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(body, &m)
	return string(m[name])
}

func TestDisclosureModes(t *testing.T) {
	for _, ad := range adapters {
		t.Run(ad.name, func(t *testing.T) {
			app := runTask(t, ad, agent.DisclosureAppend)
			rer := runTask(t, ad, agent.DisclosureRerender)
			for name, r := range map[string]taskRun{"append": app, "rerender": rer} {
				if r.res.Answer != "Deployed to staging and production." || r.res.Steps != 10 || r.res.Expansions != 1 || len(r.bodies) != 10 {
					t.Errorf("%s: got answer %q, %d steps, %d expansions, %d requests; want the answer, 10, 1, 10", name, r.res.Answer, r.res.Steps, r.res.Expansions, len(r.bodies))
				}
			}
			for name, r := range map[string]taskRun{"append": app, "rerender": rer} {
				end := r.tr.Records[len(r.tr.Records)-1]
				if end.Kind != agent.KindEnd || end.CostUSD <= 0 || end.CostUSD != r.res.Cost || *end.Usage != r.res.Usage {
					t.Errorf("%s: end record %+v, want the run's usage and cost %v", name, end, r.res.Cost)
				}
				if len(r.steps) != 10 || r.steps[1].RequestTokens == 0 || r.steps[1].PrefixTokens == 0 {
					t.Errorf("%s: model records %+v, want ten with request and prefix tokens", name, r.steps)
				}
			}
			if !slices.Equal(app.events, rer.events) {
				t.Errorf("session events differ:\nappend   %v\nrerender %v", app.events, rer.events)
			}
			if a, r := kinds(app.tr), kinds(rer.tr); !slices.Equal(a, r) {
				t.Errorf("transcript records differ:\nappend   %v\nrerender %v", a, r)
			}
			// Where each mode puts the deploy section: the system message
			// after the opening, or the opening's answer.
			sys, tls := "messages", "tools"
			if ad.name == "responses" {
				sys = "instructions"
			}
			if strings.HasPrefix(ad.name, "messages") {
				sys = "system"
			}
			first := app.bodies[0]
			for i, b := range app.bodies {
				if strings.HasPrefix(ad.name, "chat completions") {
					var req, first struct {
						Messages []json.RawMessage `json:"messages"`
						Tools    json.RawMessage   `json:"tools"`
					}
					_ = json.Unmarshal(b, &req)
					_ = json.Unmarshal(app.bodies[0], &first)
					if string(req.Messages[0]) != string(first.Messages[0]) || string(req.Tools) != string(first.Tools) {
						t.Errorf("append, request %d: the system message or the tool list changed", i+1)
					}
					continue
				}
				if field(b, sys) != field(first, sys) || field(b, tls) != field(first, tls) {
					t.Errorf("append, request %d: the %s or the tools changed", i+1, sys)
				}
			}
			if systemOf(ad, rer.bodies[5]) == systemOf(ad, rer.bodies[0]) {
				t.Errorf("rerender: the system message did not change after the opening")
			}
			if !strings.Contains(string(rer.bodies[5]), deployBody) || strings.Contains(string(rer.bodies[4]), deployBody) {
				t.Errorf("rerender: the deploy section should show from request 6 on")
			}
			if !strings.Contains(string(app.bodies[5]), deployBody) || strings.Contains(systemOf(ad, app.bodies[5]), deployBody) {
				t.Errorf("append: the deploy section should come as the opening's answer, not in the system message")
			}
			if ad.name == "messages" && !strings.Contains(string(app.bodies[5]), `{"tool_name":"deploy","type":"tool_reference"}`) {
				t.Errorf("messages, append: the opening's result should load deploy by tool_reference:\n%s", app.bodies[5])
			}
			if ad.name == "responses" && !strings.Contains(field(app.bodies[0], tls), `"defer_loading":true`) {
				t.Errorf("responses, append: the deploy tools should be deferred from the start")
			}
			if (ad.name == "chat completions" || ad.name == "messages, no tool search") && (!strings.Contains(field(app.bodies[0], tls), `"name":"use_tool"`) || strings.Contains(field(app.bodies[9], tls), `"name":"deploy"`)) {
				t.Errorf("%s, append: use_tool should be offered from the start and deploy never listed:\n%s", ad.name, field(app.bodies[9], tls))
			}
			if ad.name == "messages, no tool search" {
				// Claude Sonnet 4 has no tool search: the API refuses
				// the tool and deferred tools.
				for i, b := range app.bodies {
					if strings.Contains(string(b), "tool_search") || strings.Contains(string(b), "defer_loading") || strings.Contains(string(b), "tool_reference") {
						t.Errorf("messages, no tool search, request %d: tool search or deferred tools sent to a model without them:\n%s", i+1, b)
					}
				}
			}
			// In append mode every request starts with the whole previous
			// one.
			for i, u := range app.steps[1:] {
				step := i + 2
				if u.PrefixTokens != app.steps[i].RequestTokens {
					t.Errorf("append, step %d: prefix %d tokens of %d, previous request %d", step, u.PrefixTokens, u.RequestTokens, app.steps[i].RequestTokens)
				}
			}
			if u := rer.steps[5]; u.PrefixTokens >= rer.steps[4].RequestTokens {
				t.Errorf("rerender, step 6: prefix %d tokens, want less than the previous request's %d", u.PrefixTokens, rer.steps[4].RequestTokens)
			}
			ap, _ := app.share()
			rp, _ := rer.share()
			if ap <= rp || ap < 0.95 {
				t.Errorf("prefix share of steps 2-10: append %.3f, rerender %.3f; want append above rerender, and >= 0.95", ap, rp)
			}
		})
	}
}

// BenchmarkDisclosure runs the scripted task with every adapter in both
// modes, side by side, and reports the share of the request tokens of
// steps 2 to 10 in a prefix identical to the previous request, the share
// the simulated provider cache served, and the run's bill at the model's
// list price.
func BenchmarkDisclosure(b *testing.B) {
	for _, ad := range adapters {
		for _, mode := range []agent.Disclosure{agent.DisclosureAppend, agent.DisclosureRerender} {
			name := strings.NewReplacer(",", "", " ", "-").Replace(ad.name)
			b.Run(name+"/"+mode.String(), func(b *testing.B) {
				var r taskRun
				for b.Loop() {
					r = runTask(b, ad, mode)
				}
				p, c := r.share()
				b.ReportMetric(100*p, "prefix%")
				b.ReportMetric(100*c, "cached%")
				b.ReportMetric(r.res.Cost*1000, "mUSD/run")
				b.ReportMetric(float64(r.res.Usage.PromptTokens), "input-tokens/run")
			})
		}
	}
}

// TestDeferredToolOpensItsSection: a model that finds a deferred tool with
// the provider's own tool search and calls it opens its section, as
// open_sections would, and gets the section with the result.
func TestDeferredToolOpensItsSection(t *testing.T) {
	srv := scripted.NewResponses(t,
		scripted.Reply{Search: []string{"deploy"}, ToolCalls: []scripted.Call{{ID: "c1", Name: "status", Args: `{}`}}},
		scripted.Reply{Content: "Staging runs v2."},
	)
	m, err := openai.NewResponses(srv.URL, "gpt-5", openai.WithAPIKey("k"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(m, taskPrompt(t), agent.WithFS(afero.NewMemMapFs()))
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Run(context.Background(), "What runs on staging?")
	if err != nil || res.Answer != "Staging runs v2." || res.Expansions != 1 {
		t.Fatalf("got %+v, %v (violations %v)", res, err, srv.Violations())
	}
	var out string
	for _, msg := range res.Messages {
		if msg.ToolCallID == "c1" {
			out = msg.Content
		}
	}
	if !strings.HasPrefix(out, "Opened sections: deploy. New tools: deploy, status.") || !strings.Contains(out, deployBody) || !strings.HasSuffix(out, "staging: v2, production: v1") {
		t.Errorf("result: got %q, want the opening, the section and the status", out)
	}
	if got := visibility.Get(a.Session()).Paths(); !slices.Equal(got, []string{"deploy"}) {
		t.Errorf("overrides: got %v, want [deploy]", got)
	}
}

// TestUseTool checks the bridge of an API without deferred tools: a tool
// of a section not yet open opens it, bad calls are answered with what to
// do, and without the bridge an opening's tools join the end of the list.
func TestUseTool(t *testing.T) {
	call := func(id, name, args string) scripted.Reply {
		return scripted.Reply{ToolCalls: []scripted.Call{{ID: id, Name: name, Args: args}}}
	}
	srv := scripted.New(t,
		call("c1", agent.UseToolName, `{"name":"status"}`),
		call("c2", agent.UseToolName, `{"input":{}}`),
		call("c3", agent.UseToolName, `{"name":"launch","input":{}}`),
		call("c4", agent.UseToolName, `{"name":"deploy","input":{"target":"staging"}}`),
		scripted.Reply{Content: "Done."},
	)
	m, err := openai.New(srv.URL, "gpt-5", openai.WithAPIKey("k"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(m, taskPrompt(t), agent.WithFS(afero.NewMemMapFs()), agent.WithDisclosure(agent.DisclosureAppend))
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Run(context.Background(), "Deploy to staging.")
	if err != nil || res.Answer != "Done." || res.Expansions != 1 {
		t.Fatalf("got %+v, %v", res, err)
	}
	out := map[string]string{}
	for _, msg := range res.Messages {
		out[msg.ToolCallID] = msg.Content
	}
	for id, want := range map[string][]string{
		"c1": {"Opened sections: deploy.", deployBody, "New tools and their input schemas, called through use_tool:", "- deploy: Deploy the service to a target. Input schema:", "staging: v2, production: v1"},
		"c2": {"Error: use_tool takes {\"name\": \"TOOL\", \"input\": {...}} (name is missing)."},
		"c3": {"Error: Unknown tool: launch.", "Through use_tool: deploy, status."},
	} {
		for _, w := range want {
			if !strings.Contains(out[id], w) {
				t.Errorf("%s: got %q, want it to contain %q", id, out[id], w)
			}
		}
	}
	if out["c4"] != "deployed to staging" {
		t.Errorf("c4: got %q, want the deploy tool's own result", out["c4"])
	}
	for i, b := range srv.Bodies() {
		if tls := field(b, "tools"); !strings.Contains(tls, `"name":"use_tool"`) || strings.Contains(tls, `"name":"deploy"`) {
			t.Errorf("request %d: tools %s, want use_tool and not deploy", i+1, tls)
		}
	}

	// Without the bridge the opened section's tools are called by name,
	// added at the end of the tool list.
	srv = scripted.New(t, taskReplies(false, "")...)
	m, err = openai.New(srv.URL, "gpt-5", openai.WithAPIKey("k"))
	if err != nil {
		t.Fatal(err)
	}
	a, err = agent.New(m, taskPrompt(t), agent.WithFS(afero.NewMemMapFs()), agent.WithTools(readTool()),
		agent.WithDisclosure(agent.DisclosureAppend), agent.WithToolBridge(false))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(context.Background(), "Deploy."); err != nil {
		t.Fatal(err)
	}
	bodies := srv.Bodies()
	first, last := field(bodies[0], "tools"), field(bodies[9], "tools")
	if strings.Contains(first, "use_tool") || !strings.HasPrefix(last, strings.TrimSuffix(first, "]")) || !strings.Contains(last, `"name":"deploy"`) {
		t.Errorf("without the bridge: tools went from %s to %s, want deploy and status added at the end", first, last)
	}
}
