package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/agent/anthropic"
	"github.com/unfold-dev/unfold/agent/internal/scripted"
	"github.com/unfold-dev/unfold/agent/openai"
)

// idsOf lists the call and result IDs of msgs in order.
func idsOf(msgs []agent.Message) []string {
	var ids []string
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			ids = append(ids, "call "+c.ID)
		}
		if m.Role == agent.RoleTool {
			ids = append(ids, "result "+m.ToolCallID)
		}
	}
	return ids
}

// TestDistinctCallIDs: a call that repeats the ID of an earlier reply's
// call, or of its own reply's, gets a new one and its result follows it;
// a native reply keeps its IDs; the messages given are not changed; the
// IDs of a prefix are the same when the conversation grows.
func TestDistinctCallIDs(t *testing.T) {
	reply := func(ids ...string) agent.Message {
		m := agent.Message{Role: agent.RoleAssistant}
		for _, id := range ids {
			m.ToolCalls = append(m.ToolCalls, agent.ToolCall{ID: id, Name: "help", Arguments: "{}"})
		}
		return m
	}
	result := func(id string) agent.Message {
		return agent.Message{Role: agent.RoleTool, ToolCallID: id, Content: "ok"}
	}
	native := reply("toolu_1")
	native.Native = &agent.Native{API: "test", Data: json.RawMessage(`[]`)}
	msgs := []agent.Message{
		{Role: agent.RoleSystem}, {Role: agent.RoleUser, Content: "go"},
		reply("call_1"), result("call_1"),
		reply("call_1"), result("call_1"),
		reply("functions.help:0", "functions.help:0"), result("functions.help:0"), result("functions.help:0"),
		reply("functions.help:0"), result("functions.help:0"),
		native, result("toolu_1"),
		{Role: agent.RoleAssistant, Content: "done"},
	}
	before := idsOf(msgs)
	got := idsOf(agent.DistinctCallIDs(msgs))
	want := []string{
		"call call_1", "result call_1",
		"call call_1_1", "result call_1_1",
		"call functions.help:0", "call functions.help:0_2", "result functions.help:0", "result functions.help:0_2",
		"call functions.help:0_1", "result functions.help:0_1",
		"call toolu_1", "result toolu_1",
	}
	if !slices.Equal(got, want) {
		t.Errorf("IDs: got %q, want %q", got, want)
	}
	if after := idsOf(msgs); !slices.Equal(after, before) {
		t.Errorf("the messages given changed: %q, were %q", after, before)
	}
	for n := 3; n < len(msgs); n++ {
		if prefix := idsOf(agent.DistinctCallIDs(msgs[:n])); !slices.Equal(prefix, want[:len(prefix)]) {
			t.Errorf("first %d messages: got %q, want %q", n, prefix, want[:len(prefix)])
		}
	}
	distinct := []agent.Message{{Role: agent.RoleUser, Content: "go"}, reply("a", "b"), result("a"), result("b")}
	if out := agent.DistinctCallIDs(distinct); &out[0] != &distinct[0] {
		t.Error("a conversation without repeats was copied, want it returned as it is")
	}
}

// TestRepeatedCallIDsAcrossSteps: an endpoint that leaves call IDs empty
// gets call_1 in the first reply and a new ID in the next: the third
// request carries distinct IDs, each result answering its call.
func TestRepeatedCallIDsAcrossSteps(t *testing.T) {
	srv := scripted.New(t, scripted.Calls(call("", "help", `{}`)), scripted.Calls(call("", "help", `{}`)), scripted.Text("done"))
	a, err := agent.New(newModel(t, srv), taskPrompt(t), agent.WithFS(afero.NewMemMapFs()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range srv.Requests()[2].Messages {
		tcs, _ := m["tool_calls"].([]any)
		for _, tc := range tcs {
			id, _ := tc.(map[string]any)["id"].(string)
			ids = append(ids, "call "+id)
		}
		if m["role"] == "tool" {
			id, _ := m["tool_call_id"].(string)
			ids = append(ids, "result "+id)
		}
	}
	if want := []string{"call call_1", "result call_1", "call call_1_2", "result call_1_2"}; !slices.Equal(ids, want) {
		t.Errorf("IDs of the third request: got %q, want %q", ids, want)
	}
}

// TestResumeRepeatedCallIDs: a transcript whose replies repeat a call ID
// (written before IDs were made distinct across the conversation, by an
// endpoint that leaves them empty or counts per reply) resumes on the
// Messages and Responses APIs, which refuse an ID sent twice.
func TestResumeRepeatedCallIDs(t *testing.T) {
	rec := func(r agent.Record) string {
		b, _ := json.Marshal(r)
		return string(b) + "\n"
	}
	var text strings.Builder
	text.WriteString(rec(agent.Record{Kind: agent.KindRun, Task: "go"}))
	text.WriteString(rec(agent.Record{Kind: agent.KindMessage, Message: &agent.Message{Role: agent.RoleUser, Content: "go"}}))
	for _, id := range []string{"call_1", "call_1", "functions.help:0", "functions.help:0"} {
		calls := []agent.ToolCall{{ID: id, Name: "help", Arguments: `{}`}}
		text.WriteString(rec(agent.Record{Kind: agent.KindMessage, Message: &agent.Message{Role: agent.RoleAssistant, ToolCalls: calls}}))
		text.WriteString(rec(agent.Record{Kind: agent.KindMessage, Message: &agent.Message{Role: agent.RoleTool, ToolCallID: id, Content: "help for " + id}}))
	}
	text.WriteString(rec(agent.Record{Kind: agent.KindMessage, Message: &agent.Message{Role: agent.RoleAssistant, Content: "done"}}))
	type server interface {
		Violations() []string
		Bodies() []json.RawMessage
	}
	for _, tc := range []struct {
		name  string
		ids   []string // the new IDs of the repeated calls, as sent
		model func(t *testing.T) (agent.Model, server)
	}{
		{"messages", []string{`"call_1_1"`, `"functions_help_0_1_`}, func(t *testing.T) (agent.Model, server) {
			srv := scripted.NewMessages(t, scripted.Text("fine"))
			m, err := anthropic.New(srv.URL, "claude-sonnet-4-5", anthropic.WithAPIKey("k"))
			if err != nil {
				t.Fatal(err)
			}
			return m, srv
		}},
		{"responses", []string{`"call_1_1"`, `"functions.help:0_1"`}, func(t *testing.T) (agent.Model, server) {
			srv := scripted.NewResponses(t, scripted.Text("fine"))
			m, err := openai.NewResponses(srv.URL, "gpt-5", openai.WithAPIKey("k"))
			if err != nil {
				t.Fatal(err)
			}
			return m, srv
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := agent.ReadForResume(strings.NewReader(text.String()))
			if err != nil {
				t.Fatal(err)
			}
			m, srv := tc.model(t)
			a, err := agent.New(m, taskPrompt(t), agent.WithFS(afero.NewMemMapFs()))
			if err != nil {
				t.Fatal(err)
			}
			res, err := a.Resume(context.Background(), tr, "and now?")
			if v := srv.Violations(); len(v) > 0 {
				t.Fatalf("violations: %v", v)
			}
			if err != nil || res.Answer != "fine" {
				t.Fatalf("resume: got %+v, %v", res, err)
			}
			body := srv.Bodies()[0]
			for _, id := range tc.ids {
				if n := bytes.Count(body, []byte(id)); n != 2 {
					t.Errorf("%s: %d times in the request, want 2 (a call and its result)", id, n)
				}
			}
		})
	}
}

// TestDistinctCallIDsLinear renames a transcript of 2,000 replies that
// each call call_1 (as a server leaving IDs empty got them before IDs
// were made distinct): each reply finds its new ID from where the last
// left off, so the work, counted in allocations, grows with the replies,
// not with their square (two million before).
func TestDistinctCallIDsLinear(t *testing.T) {
	const replies = 2000
	var msgs []agent.Message
	for range replies {
		msgs = append(msgs,
			agent.Message{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "call_1", Name: "bash", Arguments: "{}"}}},
			agent.Message{Role: agent.RoleTool, ToolCallID: "call_1", Content: "ok"})
	}
	var out []agent.Message
	allocs := testing.AllocsPerRun(1, func() { out = agent.DistinctCallIDs(msgs) })
	seen := map[string]bool{}
	for i := 0; i < len(out); i += 2 {
		id := out[i].ToolCalls[0].ID
		if seen[id] || out[i+1].ToolCallID != id {
			t.Fatalf("reply %d: call %q answered by %q, or the ID repeats", i/2, id, out[i+1].ToolCallID)
		}
		seen[id] = true
	}
	if allocs > 30*replies {
		t.Errorf("renaming took %.0f allocations, want under %d: linear in the replies", allocs, 30*replies)
	}
}
