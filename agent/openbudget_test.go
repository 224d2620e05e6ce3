package agent_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tokens"
	"github.com/unfold-dev/unfold/tools"
	"github.com/unfold-dev/unfold/visibility"
)

// bigBody is the body of the section that does not fit a 200-token budget.
var bigBody = strings.Repeat("lorem ipsum dolor sit amet ", 400)

// bigPrompt has a small task and a summarized section of about 2,000
// tokens with a tool.
func bigPrompt() *prompt.Prompt {
	big := tools.MustNew("bigtool", "Big.", func(context.Context, tools.Context, struct{}) (string, error) { return "ok", nil })
	return prompt.MustNew("test", "budget",
		section.New(section.Spec[section.None]{Key: "task", Title: "Task", Body: "Do it."}),
		section.New(section.Spec[section.None]{Key: "big", Title: "Big", Body: bigBody,
			Summary: "Big notes.", Visibility: visibility.Const(visibility.Summary), Tools: []*tools.Tool{big}}),
	).MustBind()
}

// openThenAnswer is a model that opens big at its first step and answers
// "done" after, keeping every request.
func openThenAnswer(reqs *[]agent.Request) agent.Model {
	return agent.ModelFunc(func(_ context.Context, req agent.Request) (agent.Response, error) {
		*reqs = append(*reqs, req)
		if len(*reqs) == 1 {
			return agent.Response{Message: agent.Message{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{
				{ID: "c1", Name: prompt.OpenSectionsName, Arguments: `{"section_keys":["big"],"reason":"the task needs it"}`}}}}, nil
		}
		return agent.Response{Message: agent.Message{Role: agent.RoleAssistant, Content: "done"}}, nil
	})
}

// overrideEvents lists the visibility events of sess.
func overrideEvents(sess *session.Session) []string {
	var out []string
	for _, e := range sess.Events() {
		if strings.HasPrefix(e.Type, "visibility.") {
			out = append(out, fmt.Sprintf("%s %+v", e.Type, e.Event))
		}
	}
	return out
}

var refusedRe = regexp.MustCompile(`^Error: Section big \((\d+) tokens\) does not fit the token budget of 200 tokens: with it open the prompt would take at least (\d+) tokens\. Nothing was opened\. Open fewer or smaller sections, or go on without it\.$`)

// TestOpeningOverBudgetFailsTheCall: an opening that would take the
// system message over its budget is a failed call that says what does not
// fit, by how much, and what to do; nothing opens, the run goes on, and
// the transcript resumes.
func TestOpeningOverBudgetFailsTheCall(t *testing.T) {
	for _, mode := range []agent.Disclosure{agent.DisclosureAppend, agent.DisclosureRerender} {
		t.Run(mode.String(), func(t *testing.T) {
			var reqs []agent.Request
			var tr bytes.Buffer
			sess := session.New()
			a, err := agent.New(openThenAnswer(&reqs), bigPrompt(), agent.WithBudget(200, tokens.Estimate),
				agent.WithDisclosure(mode), agent.WithTranscript(&tr), agent.WithSession(sess))
			if err != nil {
				t.Fatal(err)
			}
			res, err := a.Run(context.Background(), "go")
			if err != nil || res.Answer != "done" {
				t.Fatalf("got answer %q, error %v; want done, nil", res.Answer, err)
			}
			var result *agent.Message
			for i, m := range res.Messages {
				if m.Role == agent.RoleTool && m.ToolCallID == "c1" {
					result = &res.Messages[i]
				}
			}
			if result == nil {
				t.Fatal("the open_sections call has no result")
			}
			m := refusedRe.FindStringSubmatch(result.Content)
			if m == nil {
				t.Fatalf("got result %q, want it to match %s", result.Content, refusedRe)
			}
			size, _ := strconv.Atoi(m[1])
			least, _ := strconv.Atoi(m[2])
			if body := tokens.Estimate.Count(bigBody); size < body || least <= size {
				t.Errorf("got big at %d tokens and the prompt at %d, want big at least its body's %d and the prompt more", size, least, body)
			}
			if ev := overrideEvents(sess); len(ev) != 0 {
				t.Errorf("the refused opening left events %v in the session", ev)
			}
			second := reqs[1]
			if strings.Contains(second.Messages[0].Content, "lorem ipsum") {
				t.Error("the system message shows the refused section")
			}
			for _, d := range second.Tools {
				if d.Name == "bigtool" {
					t.Error("the refused section's tool is offered")
				}
			}
			rt, err := agent.ReadTranscript(bytes.NewReader(tr.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			reqs = reqs[:1] // answers from now on
			b, err := agent.New(openThenAnswer(&reqs), bigPrompt(), agent.WithBudget(200, tokens.Estimate),
				agent.WithDisclosure(mode), agent.WithSession(session.New()))
			if err != nil {
				t.Fatal(err)
			}
			if res, err := b.Resume(context.Background(), rt, "continue"); err != nil || res.Answer != "done" {
				t.Errorf("resume: got %v; want the answer done", err)
			}
		})
	}
}

// oldTranscript is a transcript whose session opened big, as one written
// by a run with a larger budget (or by a version that let an opening over
// the budget through) holds.
func oldTranscript(t *testing.T) *bytes.Buffer {
	t.Helper()
	var reqs []agent.Request
	var tr bytes.Buffer
	a, err := agent.New(openThenAnswer(&reqs), bigPrompt(), agent.WithBudget(5000, tokens.Estimate), agent.WithTranscript(&tr))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tr.String(), `"path":"big","mode":"full"`) {
		t.Fatalf("the transcript does not open big:\n%s", tr.String())
	}
	return &tr
}

// TestResumeClosesWhatNoLongerFits: a transcript whose session opened a
// section that does not fit the budget resumes with the section closed,
// the model told so, and the closing saved, so that the next resume needs
// no closing.
func TestResumeClosesWhatNoLongerFits(t *testing.T) {
	tr := oldTranscript(t)
	var reqs []agent.Request
	resume := func(tr *bytes.Buffer) (*agent.Result, *session.Session, error) {
		rt, err := agent.ReadTranscript(bytes.NewReader(tr.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		sess := session.New()
		reqs = []agent.Request{{}} // the model answers
		b, err := agent.New(openThenAnswer(&reqs), bigPrompt(), agent.WithBudget(200, tokens.Estimate),
			agent.WithSession(sess), agent.WithTranscript(tr))
		if err != nil {
			t.Fatal(err)
		}
		res, err := b.Resume(context.Background(), rt, "continue")
		return res, sess, err
	}
	res, sess, err := resume(tr)
	if err != nil || res.Answer != "done" {
		t.Fatalf("resume: got %v; want the answer done", err)
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1].Content
	want := "continue\n\nClosed big: with it open, the prompt did not fit its token budget of 200 tokens. Open a section again only when it is needed."
	if last != want {
		t.Errorf("got the last message\n%q\nwant\n%q", last, want)
	}
	if strings.Contains(reqs[1].Messages[0].Content, "lorem ipsum") {
		t.Error("the system message shows the closed section")
	}
	ev := overrideEvents(sess)
	if n := len(ev); n == 0 || ev[n-1] != "visibility.clear {Path:big}" {
		t.Errorf("got visibility events %v, want the last to close big", ev)
	}
	res, _, err = resume(tr)
	if err != nil || res.Answer != "done" {
		t.Fatalf("second resume: got %v; want the answer done", err)
	}
	if last := reqs[1].Messages[len(reqs[1].Messages)-1].Content; last != "continue" {
		t.Errorf("second resume: got the last message %q, want continue alone: the closing was saved", last)
	}
}

// TestResumeOverBudgetWithNothingToClose: when the prompt does not fit the
// budget even with every opened section closed, the resume fails with the
// budget's error, which says to raise it, and closes nothing.
func TestResumeOverBudgetWithNothingToClose(t *testing.T) {
	tr := oldTranscript(t)
	rt, err := agent.ReadTranscript(bytes.NewReader(tr.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var reqs []agent.Request
	sess := session.New()
	b, err := agent.New(openThenAnswer(&reqs), bigPrompt(), agent.WithBudget(3, tokens.Estimate), agent.WithSession(sess))
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Resume(context.Background(), rt, "continue")
	if !errors.Is(err, prompt.ErrOverBudget) || !strings.Contains(err.Error(), "raise the budget") {
		t.Errorf("got %v, want the budget's error", err)
	}
	if ev := overrideEvents(sess); len(ev) != 1 || !strings.HasPrefix(ev[0], "visibility.set") {
		t.Errorf("got visibility events %v, want only the saved opening", ev)
	}
	if len(reqs) != 0 {
		t.Errorf("the model was asked %d times", len(reqs))
	}
}
