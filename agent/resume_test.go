package agent_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tools"
)

// TestResumeAnswersEveryCall: a run stopped at the first of two calls
// leaves no call unanswered, in the run or after a resume; a conversation
// with an unanswered tool call is rejected by the model APIs.
func TestResumeAnswersEveryCall(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := tools.MustNew("stop", "Stops the run.", func(context.Context, tools.Context, struct{}) (string, error) {
		cancel()
		return "", errors.New("interrupted")
	})
	noop := tools.MustNew("noop", "Does nothing.", func(context.Context, tools.Context, struct{}) (string, error) { return "ok", nil })
	p := prompt.MustNew("test", "resume", section.New(section.Spec[section.None]{Key: "task", Title: "Task", Body: "Work."})).MustBind()
	unanswered := func(msgs []agent.Message) []string {
		open := map[string]bool{}
		for _, m := range msgs {
			for _, c := range m.ToolCalls {
				open[c.ID] = true
			}
			if m.Role == agent.RoleTool {
				delete(open, m.ToolCallID)
			}
		}
		var ids []string
		for id := range open {
			ids = append(ids, id)
		}
		return ids
	}
	first := agent.ModelFunc(func(context.Context, agent.Request) (agent.Response, error) {
		return agent.Response{Message: agent.Message{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{
			{ID: "c1", Name: "stop", Arguments: "{}"}, {ID: "c2", Name: "noop", Arguments: "{}"},
		}}}, nil
	})
	var tr bytes.Buffer
	a, err := agent.New(first, p, agent.WithTools(stop, noop), agent.WithTranscript(&tr))
	if err != nil {
		t.Fatal(err)
	}
	res, _ := a.Run(ctx, "go")
	if res != nil {
		if ids := unanswered(res.Messages); len(ids) != 0 {
			t.Errorf("the stopped run left calls %v unanswered", ids)
		}
	}
	rt, err := agent.ReadTranscript(bytes.NewReader(tr.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var sent []string
	second := agent.ModelFunc(func(_ context.Context, req agent.Request) (agent.Response, error) {
		sent = unanswered(req.Messages)
		return agent.Response{Message: agent.Message{Role: agent.RoleAssistant, Content: "done"}}, nil
	})
	b, err := agent.New(second, p, agent.WithTools(stop, noop), agent.WithSession(session.New()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Resume(context.Background(), rt, ""); err != nil {
		t.Fatal(err)
	}
	if len(sent) != 0 {
		t.Errorf("the resumed request has calls %v without a result", sent)
	}
}

// TestTextActionScanBounded: a long malformed reply is searched for a JSON
// action in bounded time.
func TestTextActionScanBounded(t *testing.T) {
	p := prompt.MustNew("test", "text", section.New(section.Spec[section.None]{Key: "task", Title: "Task", Body: "Work."})).MustBind()
	junk := strings.Repeat(`{"a":`, 200_000) // 1 MB
	calls := 0
	model := agent.ModelFunc(func(context.Context, agent.Request) (agent.Response, error) {
		calls++
		if calls <= 2 {
			return agent.Response{Message: agent.Message{Role: agent.RoleAssistant, Content: junk}}, nil
		}
		return agent.Response{Message: agent.Message{Role: agent.RoleAssistant, Content: `{"final": "done"}`}}, nil
	})
	a, err := agent.New(model, p, agent.WithActions(agent.ActionsText), agent.WithMaxSteps(5))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := a.Run(ctx, "go"); err != nil && ctx.Err() != nil {
		t.Fatalf("parsing a 1 MB malformed reply did not finish: %v", err)
	}
}

// TestTextActionNestedInputFirst: a JSON action whose "tool" key follows its
// nested input is found.
func TestTextActionNestedInputFirst(t *testing.T) {
	echo := tools.MustNew("echo", "Echoes.", func(_ context.Context, _ tools.Context, in struct {
		Text string `json:"text"`
	}) (string, error) {
		return in.Text, nil
	})
	p := prompt.MustNew("test", "nested", section.New(section.Spec[section.None]{Key: "task", Title: "Task", Body: "Work."})).MustBind()
	calls, got := 0, ""
	model := agent.ModelFunc(func(_ context.Context, req agent.Request) (agent.Response, error) {
		calls++
		if calls == 1 {
			return agent.Response{Message: agent.Message{Role: agent.RoleAssistant, Content: `I will echo. {"input": {"text": "hello"}, "tool": "echo"}`}}, nil
		}
		got = req.Messages[len(req.Messages)-1].Content
		return agent.Response{Message: agent.Message{Role: agent.RoleAssistant, Content: `{"final": "done"}`}}, nil
	})
	a, err := agent.New(model, p, agent.WithTools(echo), agent.WithActions(agent.ActionsText), agent.WithMaxSteps(4))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "hello") {
		t.Errorf("the echo action did not run; the observation was %q", got)
	}
}

// TestResumeRefusesNoConversation: Resume refuses a transcript read whole
// (ReadTranscript does not check it) that holds no run, or whose first run
// is a resume, before the model is called.
func TestResumeRefusesNoConversation(t *testing.T) {
	p := prompt.MustNew("test", "resume", section.New(section.Spec[section.None]{Key: "task", Title: "Task", Body: "Work."})).MustBind()
	for _, tt := range []struct{ name, data, want string }{
		{"no run", `{"kind":"future_thing"}` + "\n", `agent: resume: transcript: it holds no run to resume, only records of kinds not understood ("future_thing")`},
		{"a resume first", `{"kind":"run","resumed":true}` + "\n" + `{"kind":"message","message":{"role":"user","content":"more"}}` + "\n",
			"agent: resume: transcript: its first run resumes a conversation that is not in it"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rt, err := agent.ReadTranscript(strings.NewReader(tt.data))
			if err != nil {
				t.Fatal(err)
			}
			calls := 0
			m := agent.ModelFunc(func(context.Context, agent.Request) (agent.Response, error) {
				calls++
				return agent.Response{Message: agent.Message{Role: agent.RoleAssistant, Content: "done"}}, nil
			})
			a, err := agent.New(m, p, agent.WithSession(session.New()))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.Resume(context.Background(), rt, "go on"); err == nil || !strings.Contains(err.Error(), tt.want) || calls != 0 {
				t.Errorf("got %v after %d model calls, want %q before any", err, calls, tt.want)
			}
		})
	}
}
