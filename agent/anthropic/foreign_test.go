package anthropic

import (
	"context"
	"encoding/json"
	"regexp"
	"testing"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/agent/internal/scripted"
)

// TestForeignConversation: a conversation another API wrote (resumed with
// this one) is sent in a shape the API takes: an assistant's text of white
// space alone is left out, a user's text and a tool result of white space
// get a placeholder, and tool call IDs outside ^[a-zA-Z0-9_-]+$ are mapped
// to IDs inside it, the same for a tool_use and its tool_result, distinct
// from each other and from the IDs already fine.
func TestForeignConversation(t *testing.T) {
	help := agent.ToolDef{Name: "help", Description: "Help.", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}
	// An ID already fine that is what the first is mapped to: it comes
	// later, so it is the one changed.
	taken := (&toolIDs{of: map[string]string{}, sent: map[string]bool{}}).id("functions.help:0")
	msgs := []agent.Message{
		{Role: agent.RoleSystem, Content: "You help."},
		{Role: agent.RoleUser, Content: "help"},
		{Role: agent.RoleAssistant, Content: "\n\n", ToolCalls: []agent.ToolCall{{ID: "functions.help:0", Name: "help", Arguments: "{}"}, {ID: "functions.help:1", Name: "help", Arguments: "{}"}}},
		{Role: agent.RoleTool, ToolCallID: "functions.help:0", Content: " \n"},
		{Role: agent.RoleTool, ToolCallID: "functions.help:1", Content: "ok"},
		{Role: agent.RoleAssistant, Content: " ", ToolCalls: []agent.ToolCall{{ID: taken, Name: "help", Arguments: "{}"}}},
		{Role: agent.RoleTool, ToolCallID: taken, Content: "ok again"},
		{Role: agent.RoleUser, Content: "\t"},
	}
	srv := scripted.NewMessages(t, scripted.Text("Done."))
	if _, err := newClient(t, srv.URL).Complete(context.Background(), agent.Request{Messages: msgs, Tools: []agent.ToolDef{help}}); err != nil {
		t.Fatalf("%v (violations %v)", err, srv.Violations())
	}
	if v := srv.Violations(); len(v) > 0 {
		t.Fatalf("the request broke the documented shape: %v", v)
	}
	var body struct {
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type      string          `json:"type"`
				Text      string          `json:"text"`
				ID        string          `json:"id"`
				ToolUseID string          `json:"tool_use_id"`
				Content   json.RawMessage `json:"content"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(srv.Bodies()[0], &body); err != nil {
		t.Fatal(err)
	}
	m := body.Messages
	if len(m) != 5 {
		t.Fatalf("got %d turns, want 5: %s", len(m), srv.Bodies()[0])
	}
	pattern := regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)
	var uses []string
	for _, turn := range []int{1, 3} {
		for _, b := range m[turn].Content {
			if b.Type != "tool_use" {
				t.Errorf("messages[%d]: a %s block, want only the tool calls (the text was white space)", turn, b.Type)
				continue
			}
			uses = append(uses, b.ID)
		}
	}
	if len(uses) != 3 || uses[0] == uses[1] || uses[0] == uses[2] || uses[1] == uses[2] {
		t.Fatalf("tool_use IDs: got %q, want three distinct", uses)
	}
	for _, id := range uses {
		if !pattern.MatchString(id) {
			t.Errorf("tool_use ID %q outside the pattern", id)
		}
	}
	results := []string{m[2].Content[0].ToolUseID, m[2].Content[1].ToolUseID, m[4].Content[0].ToolUseID}
	for i := range results {
		if results[i] != uses[i] {
			t.Errorf("tool_result %d answers %q, want %q", i+1, results[i], uses[i])
		}
	}
	if got := compact(m[2].Content[0].Content); got != `[{"text":"(no output)","type":"text"}]` {
		t.Errorf("a result of white space: got %s", got)
	}
	if last := m[4].Content[len(m[4].Content)-1]; last.Type != "text" || last.Text != "(no text)" {
		t.Errorf("a user's text of white space: got %+v", last)
	}
}
