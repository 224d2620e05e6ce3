package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tools"
)

type (
	unnamedNote struct{ Note string }    // no name registered
	metric      struct{ V float64 }      // named; NaN cannot be encoded
	otherEnvUse struct{ Command string } // named by another program only
)

// noteModel calls the note tool calls times, one call a step, then
// answers.
func noteModel(calls int) agent.Model {
	n := 0
	return agent.ModelFunc(func(context.Context, agent.Request) (agent.Response, error) {
		n++
		if n > calls {
			return agent.Response{Message: agent.Message{Role: agent.RoleAssistant, Content: "done"}}, nil
		}
		return agent.Response{Message: agent.Message{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{
			{ID: fmt.Sprintf("c%d", n), Name: "note", Arguments: "{}"},
		}}}, nil
	})
}

// notePrompt offers a note tool that dispatches event(n) at its nth call.
func notePrompt(event func(n int) any) *prompt.Prompt {
	n := 0
	note := tools.MustNew("note", "Take a note.", func(_ context.Context, tc tools.Context, _ struct{}) (string, error) {
		n++
		return "noted", tc.Session.Dispatch(event(n))
	})
	return prompt.MustNew("test/notes", "task",
		section.New(section.Spec[section.None]{Key: "task", Title: "Task", Body: "Take notes.", Tools: []*tools.Tool{note}}),
	).MustBind()
}

// recordsOf returns the transcript's records of kind.
func recordsOf(t *testing.T, transcript []byte, kind string) []agent.Record {
	t.Helper()
	var out []agent.Record
	for _, l := range bytes.Split(transcript, []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		var r agent.Record
		if err := json.Unmarshal(l, &r); err != nil {
			t.Fatalf("transcript line %q: %v", l, err)
		}
		if r.Kind == kind {
			out = append(out, r)
		}
	}
	return out
}

// TestSessionEventNotSaved: an event the transcript cannot hold (its type
// has no name, or JSON cannot encode it) is recorded as an error in the
// run that dispatched it, once, and the events after it are not saved
// either: the saved log has no gap, and the transcript resumes.
func TestSessionEventNotSaved(t *testing.T) {
	tests := []struct {
		name    string
		event   func(n int) any
		wantErr string
	}{
		{"type with no name", func(n int) any {
			if n == 2 {
				return unnamedNote{"x"}
			}
			return metric{float64(n)}
		}, "session event 2 cannot be saved yet, so neither can those after it, which wait for it: a resume from the transcript as it is replays the events before it only: session: log lines: event 2 has type agent_test.unnamedNote, which is not registered; call session.RegisterEvent for it"},
		{"value JSON cannot encode", func(n int) any {
			if n == 2 {
				return metric{math.NaN()}
			}
			return metric{float64(n)}
		}, "session event 2 cannot be saved yet, so neither can those after it, which wait for it: a resume from the transcript as it is replays the events before it only: session: log lines: event 2 (test.metric): json: unsupported value: NaN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			newAgent := func(model agent.Model, transcript *bytes.Buffer) *agent.Agent {
				sess := session.New()
				if err := session.RegisterEvent[metric](sess, "test.metric"); err != nil {
					t.Fatal(err)
				}
				a, err := agent.New(model, notePrompt(tt.event), agent.WithSession(sess), agent.WithTranscript(transcript))
				if err != nil {
					t.Fatal(err)
				}
				return a
			}
			var transcript bytes.Buffer
			if _, err := newAgent(noteModel(3), &transcript).Run(context.Background(), "go"); err != nil {
				t.Fatalf("run: %v", err)
			}
			errs := recordsOf(t, transcript.Bytes(), agent.KindError)
			if len(errs) != 1 || errs[0].Error != tt.wantErr {
				t.Errorf("error records: got %+v, want one: %s", errs, tt.wantErr)
			}
			tr, err := agent.ReadTranscript(bytes.NewReader(transcript.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			if log := tr.SessionLog(); strings.Count(log, "\n") != 1 || !strings.Contains(log, `"seq":1,`) {
				t.Errorf("saved session log: got\n%s\nwant event 1 alone", log)
			}
			if _, err := newAgent(noteModel(0), &transcript).Resume(context.Background(), tr, "go on"); err != nil {
				t.Errorf("resume: %v", err)
			}
		})
	}
}

// TestResumeKeepsUnknownEvents: a transcript whose session holds events
// of a type this agent does not name (an environment the saving run had
// loaded and this one has not) resumes; the events are kept as saved, and
// the next resume, with the environment back, has them.
func TestResumeKeepsUnknownEvents(t *testing.T) {
	newAgent := func(model agent.Model, transcript *bytes.Buffer, named bool) *agent.Agent {
		sess := session.New()
		if named {
			if err := session.RegisterEvent[otherEnvUse](sess, "other.used"); err != nil {
				t.Fatal(err)
			}
		}
		a, err := agent.New(model, notePrompt(func(int) any { return otherEnvUse{"view"} }), agent.WithSession(sess), agent.WithTranscript(transcript))
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	var transcript bytes.Buffer
	if _, err := newAgent(noteModel(2), &transcript, true).Run(context.Background(), "go"); err != nil {
		t.Fatalf("run: %v", err)
	}
	read := func() *agent.Transcript {
		tr, err := agent.ReadTranscript(bytes.NewReader(transcript.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	saved := read().SessionLog()
	if strings.Count(saved, `"type":"other.used"`) != 2 {
		t.Fatalf("saved session log: got\n%s\nwant two other.used events", saved)
	}

	without := newAgent(noteModel(0), &transcript, false)
	if _, err := without.Resume(context.Background(), read(), "go on"); err != nil {
		t.Fatalf("resume without the event's name: %v", err)
	}
	if evs := without.Session().Events(); len(evs) != 2 || evs[1].Type != "other.used" {
		t.Errorf("events after the resume: got %+v, want the two saved", evs)
	}
	if _, ok := without.Session().Events()[0].Event.(session.UnknownEvent); !ok {
		t.Errorf("event 1: got %T, want session.UnknownEvent", without.Session().Events()[0].Event)
	}

	with := newAgent(noteModel(1), &transcript, true)
	if _, err := with.Resume(context.Background(), read(), "once more"); err != nil {
		t.Fatalf("resume with the event's name: %v", err)
	}
	if log := read().SessionLog(); strings.Count(log, `"type":"other.used","event":{"Command":"view"}`) != 3 {
		t.Errorf("session log after the resumes: got\n%s\nwant the two saved events and the new one", log)
	}
}
