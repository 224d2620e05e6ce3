package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/agent/anthropic"
	"github.com/unfold-dev/unfold/agent/internal/scripted"
	"github.com/unfold-dev/unfold/agent/openai"
	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/tools"
)

// scriptedAPI starts a scripted server of one API answering with replies,
// and a client of it; violations lists what the requests broke of the
// API's documented shape.
type scriptedAPI struct {
	name string
	// truncated is the API's word for a reply cut at the output limit.
	truncated string
	start     func(t *testing.T, replies ...scripted.Reply) (m agent.Model, violations func() []string)
}

var scriptedAPIs = []scriptedAPI{
	{"chat completions", "length", func(t *testing.T, replies ...scripted.Reply) (agent.Model, func() []string) {
		return newModel(t, scripted.New(t, replies...)), func() []string { return nil }
	}},
	{"responses", "max_output_tokens", func(t *testing.T, replies ...scripted.Reply) (agent.Model, func() []string) {
		srv := scripted.NewResponses(t, replies...)
		m, err := openai.NewResponses(srv.URL, "gpt-5", openai.WithAPIKey("k"))
		if err != nil {
			t.Fatal(err)
		}
		return m, srv.Violations
	}},
	{"messages", "max_tokens", func(t *testing.T, replies ...scripted.Reply) (agent.Model, func() []string) {
		srv := scripted.NewMessages(t, replies...)
		m, err := anthropic.New(srv.URL, "claude-sonnet-4-5", anthropic.WithAPIKey("k"))
		if err != nil {
			t.Fatal(err)
		}
		return m, srv.Violations
	}},
}

type deployIn struct {
	Target string `json:"target,omitempty"`
}

// deployPrompt is a prompt whose deploy tool deploys to production when
// no target is given, as a careless tool would; deployed lists the
// targets it deployed to.
func deployPrompt() (p *prompt.Prompt, deployed func() []string) {
	var mu sync.Mutex
	var got []string
	deploy := tools.MustNew("deploy", "Deploy the service to target (default: production).", func(_ context.Context, _ tools.Context, in deployIn) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, in.Target)
		return "deployed to " + in.Target, nil
	})
	p = prompt.MustNew("test/deploy", "task",
		section.New(section.Spec[section.None]{Key: "task", Title: "Task", Body: "Deploy carefully.", Tools: []*tools.Tool{deploy}}),
	).MustBind()
	return p, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}
}

func runRecorded(t *testing.T, m agent.Model, p *prompt.Prompt, task string) (*agent.Result, error, *agent.Transcript) {
	t.Helper()
	var buf bytes.Buffer
	a, err := agent.New(m, p, agent.WithTranscript(&buf))
	if err != nil {
		t.Fatal(err)
	}
	res, runErr := a.Run(context.Background(), task)
	tr, err := agent.ReadTranscript(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return res, runErr, tr
}

// toolRecords returns the transcript's tool records, in order.
func toolRecords(tr *agent.Transcript) []agent.ToolRecord {
	var out []agent.ToolRecord
	for _, rec := range tr.Records {
		if rec.Kind == agent.KindTool {
			out = append(out, *rec.Tool)
		}
	}
	return out
}

// TestCutToolCallNotRun: a reply that reached the output token limit
// while writing deploy {"target": "sta does not deploy anywhere (the
// Messages block of such a call holds {} as its input, which this tool would
// take as production): the call is answered as cut, the model makes it
// again, and the conversation stays valid for the API.
func TestCutToolCallNotRun(t *testing.T) {
	for _, api := range scriptedAPIs {
		t.Run(api.name, func(t *testing.T) {
			m, violations := api.start(t,
				scripted.Reply{Content: "Deploying.", ToolCalls: []scripted.Call{{ID: "c1", Name: "deploy", Args: `{"target": "sta`}}, Stop: api.truncated},
				scripted.Calls(call("c2", "deploy", `{"target":"staging"}`)),
				scripted.Text("Done."),
			)
			p, deployed := deployPrompt()
			res, err, tr := runRecorded(t, m, p, "deploy to staging")
			if err != nil || res.Answer != "Done." {
				t.Fatalf("run: %v, answer %q; violations %q", err, res.Answer, violations())
			}
			if got := deployed(); len(got) != 1 || got[0] != "staging" {
				t.Errorf("deployed to %q, want only staging", got)
			}
			recs := toolRecords(tr)
			if len(recs) != 2 || recs[0].Success || recs[0].Arguments != `{"target": "sta` || !strings.Contains(recs[0].Result, "your reply was cut short") {
				t.Errorf("tool records: got %+v, want the cut call failed with what the model wrote", recs)
			}
			var answer string
			for _, msg := range res.Messages {
				if msg.Role == agent.RoleTool && msg.ToolCallID == "c1" {
					answer = msg.Content
				}
			}
			if !strings.HasPrefix(answer, "Error: This call did not run: your reply was cut short") {
				t.Errorf("the cut call's answer: got %q", answer)
			}
			if v := violations(); len(v) > 0 {
				t.Errorf("requests broke the API: %q", v)
			}
		})
	}
}

// TestCutTwiceEndsRun: replies cut twice in a row in a tool call end the
// run with a *agent.StopError naming the call; nothing runs and every
// call is answered.
func TestCutTwiceEndsRun(t *testing.T) {
	api := scriptedAPIs[0]
	cut := scripted.Reply{ToolCalls: []scripted.Call{{ID: "c1", Name: "deploy", Args: `{"target": "sta`}}, Stop: api.truncated}
	m, _ := api.start(t, cut, cut, scripted.Text("Done."))
	p, deployed := deployPrompt()
	res, err, _ := runRecorded(t, m, p, "deploy to staging")
	var se *agent.StopError
	if !errors.As(err, &se) || se.Finish != agent.FinishTruncated || se.Reason != "length" || se.Call != "deploy" {
		t.Fatalf("run: %v, want a *StopError for deploy cut twice", err)
	}
	if !strings.Contains(err.Error(), "cut short (length) twice in a row while it was writing a call of deploy") {
		t.Errorf("error: got %q", err)
	}
	if got := deployed(); len(got) != 0 || res.Steps != 2 {
		t.Errorf("deployed %q in %d steps, want nothing in 2", got, res.Steps)
	}
	if last := res.Messages[len(res.Messages)-1]; last.Role != agent.RoleTool {
		t.Errorf("last message: got %+v, want the cut call answered", last)
	}
}

// TestUnfinishedReplyEndsRun: a reply cut at a token limit, refused or
// filtered, without tool calls, ends the run with a *agent.StopError
// naming the reason; its text is the answer and is in the transcript.
func TestUnfinishedReplyEndsRun(t *testing.T) {
	tests := []struct {
		api    int // of scriptedAPIs
		name   string
		reply  scripted.Reply
		finish agent.Finish
		reason string
		answer string
		msg    string
	}{
		{0, "length", scripted.Reply{Content: "The three steps are: 1. back up the datab", Stop: "length"}, agent.FinishTruncated, "length",
			"The three steps are: 1. back up the datab", "the reply was cut short (length): the model reached its output token limit"},
		{0, "refusal", scripted.Reply{Refusal: "I can't help with deploying that."}, agent.FinishRefused, "stop",
			"I can't help with deploying that.", "the model refused to answer"},
		{0, "content filter", scripted.Reply{Content: "Run rm", Stop: "content_filter"}, agent.FinishFiltered, "content_filter",
			"Run rm", "the provider's content filter stopped the reply (content_filter)"},
		{1, "max_output_tokens", scripted.Reply{Content: "Run rm -rf ./bu", Stop: "max_output_tokens"}, agent.FinishTruncated, "max_output_tokens",
			"Run rm -rf ./bu", "the reply was cut short (max_output_tokens)"},
		{1, "refusal", scripted.Reply{Refusal: "I can't help with deploying that."}, agent.FinishRefused, "completed",
			"I can't help with deploying that.", "the model refused to answer"},
		{1, "content filter", scripted.Reply{Content: "Run", Stop: "content_filter"}, agent.FinishFiltered, "content_filter",
			"Run", "content filter stopped the reply (content_filter)"},
		{2, "max_tokens", scripted.Reply{Content: "Step 1: back up the datab", Stop: "max_tokens"}, agent.FinishTruncated, "max_tokens",
			"Step 1: back up the datab", "the reply was cut short (max_tokens)"},
		{2, "context window", scripted.Reply{Content: "Step 1", Stop: "model_context_window_exceeded"}, agent.FinishTruncated, "model_context_window_exceeded",
			"Step 1", "the conversation filled the model's context window"},
		{2, "refusal", scripted.Reply{Stop: "refusal"}, agent.FinishRefused, "refusal", "", "the model refused to answer"},
	}
	for _, tt := range tests {
		api := scriptedAPIs[tt.api]
		t.Run(api.name+"/"+tt.name, func(t *testing.T) {
			m, violations := api.start(t, tt.reply, scripted.Text("Not asked for."))
			p, _ := deployPrompt()
			res, err, tr := runRecorded(t, m, p, "how do I migrate?")
			var se *agent.StopError
			if !errors.As(err, &se) || se.Finish != tt.finish || se.Reason != tt.reason || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("run: %v, want a *StopError %s (%s) saying %q; violations %q", err, tt.finish, tt.reason, tt.msg, violations())
			}
			if res.Answer != tt.answer || res.Steps != 1 {
				t.Errorf("answer, steps: got %q, %d, want %q, 1", res.Answer, res.Steps, tt.answer)
			}
			end := tr.Records[len(tr.Records)-1]
			if end.Kind != agent.KindEnd || end.Answer != tt.answer || end.Error != err.Error() {
				t.Errorf("end record: got %+v", end)
			}
		})
	}
}

// TestPauseTurnContinues: a Messages reply that stops with pause_turn is
// sent back as it is, and the model's next reply continues the turn.
func TestPauseTurnContinues(t *testing.T) {
	srv := scripted.NewMessages(t,
		scripted.Reply{Content: "Let me look for the deploy tools.", Stop: "pause_turn"},
		scripted.Text("Found them; nothing to deploy."),
	)
	m, err := anthropic.New(srv.URL, "claude-sonnet-4-5", anthropic.WithAPIKey("k"))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := deployPrompt()
	res, err, _ := runRecorded(t, m, p, "deploy to staging")
	if err != nil || res.Answer != "Found them; nothing to deploy." || res.Steps != 2 {
		t.Fatalf("run: %v, answer %q in %d steps; violations %q", err, res.Answer, res.Steps, srv.Violations())
	}
	bodies := srv.Bodies()
	var second struct {
		Messages []struct {
			Role    string
			Content []struct{ Type, Text string }
		}
	}
	if len(bodies) != 2 || json.Unmarshal(bodies[1], &second) != nil {
		t.Fatalf("got %d requests, want 2", len(bodies))
	}
	last := second.Messages[len(second.Messages)-1]
	if last.Role != "assistant" || len(last.Content) != 1 || last.Content[0].Text != "Let me look for the deploy tools." {
		t.Errorf("the second request ends with %+v, want the paused reply as it came", last)
	}
	if v := srv.Violations(); len(v) > 0 {
		t.Errorf("requests broke the API: %q", v)
	}
}

// TestUnfinishedReplyTextActions: with text actions a reply cut short
// ends the run before its action is read, and a paused one is sent back
// and continued.
func TestUnfinishedReplyTextActions(t *testing.T) {
	t.Run("cut", func(t *testing.T) {
		m, _ := scriptedAPIs[0].start(t, scripted.Reply{Content: "```json\n{\"tool\": \"deploy\", \"input\": {}}\n```\nand then", Stop: "length"})
		p, deployed := deployPrompt()
		a, err := agent.New(m, p, agent.WithActions(agent.ActionsText))
		if err != nil {
			t.Fatal(err)
		}
		_, err = a.Run(context.Background(), "deploy to staging")
		var se *agent.StopError
		if !errors.As(err, &se) || se.Finish != agent.FinishTruncated || len(deployed()) != 0 {
			t.Errorf("run: %v, deployed %q; want a *StopError and nothing run", err, deployed())
		}
	})
	t.Run("paused", func(t *testing.T) {
		srv := scripted.NewMessages(t,
			scripted.Reply{Content: "Let me think.", Stop: "pause_turn"},
			scripted.Text(`{"final": "Nothing to deploy."}`),
		)
		m, err := anthropic.New(srv.URL, "claude-sonnet-4-5", anthropic.WithAPIKey("k"))
		if err != nil {
			t.Fatal(err)
		}
		p, _ := deployPrompt()
		a, err := agent.New(m, p, agent.WithActions(agent.ActionsText))
		if err != nil {
			t.Fatal(err)
		}
		res, err := a.Run(context.Background(), "deploy to staging")
		if err != nil || res.Answer != "Nothing to deploy." || res.Steps != 2 || len(srv.Bodies()) != 2 {
			t.Errorf("run: %v, answer %q in %d steps and %d requests; violations %q", err, res.Answer, res.Steps, len(srv.Bodies()), srv.Violations())
		}
	})
}

// TestEmptyReplyNotAnAnswer: a finished reply with no text and no tool
// calls (as providers send after tool results) is not the answer: the
// model is told its reply was empty, in a request the API accepts, and
// a second empty reply in a row ends the run with ErrEmptyReply.
func TestEmptyReplyNotAnAnswer(t *testing.T) {
	for _, api := range scriptedAPIs {
		// No content at all, and a text block of only white space as
		// Claude sends it, which the Messages API refuses to get back.
		for _, empty := range []string{"", "\n\n", " "} {
			t.Run(fmt.Sprintf("%s/told once/%q", api.name, empty), func(t *testing.T) {
				p, deployed := deployPrompt()
				m, violations := api.start(t, scripted.Calls(scripted.Call{ID: "c1", Name: "deploy", Args: `{"target":"staging"}`}),
					scripted.Text(empty), scripted.Text("deployed to staging"))
				res, err, _ := runRecorded(t, m, p, "deploy to staging")
				if v := violations(); len(v) > 0 {
					t.Fatalf("violations: %v", v)
				}
				if err != nil || res.Answer != "deployed to staging" || res.Steps != 3 || len(deployed()) != 1 {
					t.Fatalf("got %+v, %v, deployed %v, want the answer after 3 steps, one deploy", res, err, deployed())
				}
				told := res.Messages[len(res.Messages)-2]
				if told.Role != agent.RoleUser || !strings.HasPrefix(told.Content, "Your reply was empty") {
					t.Errorf("after the empty reply: got %+v, want the model told", told)
				}
			})
		}
		t.Run(api.name+"/twice in a row", func(t *testing.T) {
			p, _ := deployPrompt()
			m, violations := api.start(t, scripted.Text(""), scripted.Text(" \n"), scripted.Text("not asked for"))
			res, err, tr := runRecorded(t, m, p, "deploy to staging")
			if v := violations(); len(v) > 0 {
				t.Fatalf("violations: %v", v)
			}
			if !errors.Is(err, agent.ErrEmptyReply) || res.Steps != 2 || res.Answer != "" {
				t.Fatalf("got %+v, %v, want ErrEmptyReply after 2 steps", res, err)
			}
			if end := tr.Records[len(tr.Records)-1]; end.Kind != agent.KindEnd || end.Error != err.Error() {
				t.Errorf("transcript's end: got %+v, want the error", end)
			}
		})
	}
}
