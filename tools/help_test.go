package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/tools"
)

var helpIndex = tools.HelpIndex{
	Environments: []tools.HelpEntry{
		{Name: "bash", Description: "Bash shell (ready)", Usage: "call the bash tool with the command"},
		{Name: "editor", Description: "File editor: view, edit, search and create files", Usage: "call the editor tool with the command"},
	},
	Tools: []tools.HelpEntry{
		{Name: "add", Description: "Add two integers."},
		{Name: "open_sections", Description: "Open summarized sections of this prompt."},
	},
	Sections: []tools.HelpSection{
		{Key: "reference", Title: "Reference", Summary: "API documentation is available on request."},
		{Key: "verification", Title: "Verification", Summary: "Verification tools.", HasTools: true},
	},
}

func TestHelp(t *testing.T) {
	tests := []struct {
		name  string
		query string
	}{
		{"everything", ""},
		{"edit a file", "how do I edit a file?"},
		{"docs", "api documentation"},
		{"verify", "verification"},
		{"no match", "quantum teleport"},
	}
	h, err := tools.NewHelp(func() tools.HelpIndex { return helpIndex })
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args, _ := json.Marshal(tools.HelpInput{Query: tt.query})
			res, err := h.Call(context.Background(), tools.Context{}, args)
			if err != nil || !res.Success {
				t.Fatalf("got %v, %+v, want success", err, res)
			}
			golden := filepath.Join("testdata", "help", strings.ReplaceAll(tt.name, " ", "_")+".golden")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(res.Message), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if res.Message != string(want) {
				t.Errorf("got:\n%s\nwant:\n%s", res.Message, want)
			}
		})
	}
}

func TestHelpRecommends(t *testing.T) {
	h, _ := tools.NewHelp(func() tools.HelpIndex { return helpIndex })
	tests := []struct {
		query, first string
	}{
		{"edit a file", "Use the editor environment"},
		{"run a command", "Use the bash environment"},
		{"add numbers", "Call the add tool"},
		{"verification tools", `Call open_sections with key "verification" to get its tools`},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			args, _ := json.Marshal(tools.HelpInput{Query: tt.query})
			res, _ := h.Call(context.Background(), tools.Context{}, args)
			out := res.Value.(tools.HelpOutput)
			if len(out.Recommendations) == 0 || !strings.HasPrefix(out.Recommendations[0], tt.first) {
				t.Errorf("got %q, want the first to start with %q", out.Recommendations, tt.first)
			}
		})
	}
	if _, err := tools.NewHelp(nil); err == nil {
		t.Error("NewHelp(nil): got nil error, want one")
	}
}

func TestHelpAboutAndEnvironmentHelp(t *testing.T) {
	idx := tools.HelpIndex{
		About: "Screens are also resources.",
		Environments: []tools.HelpEntry{
			{Name: "counter", Description: "A counter", Usage: "call the counter tool", Help: "Commands:\n  add <n> - Add n to the total."},
		},
	}
	h, _ := tools.NewHelp(func() tools.HelpIndex { return idx })
	res, _ := h.Call(context.Background(), tools.Context{}, nil)
	want := "Screens are also resources.\n\nEnvironments:\n- counter: A counter (call the counter tool)\n\n## counter\n\nCommands:\n  add <n> - Add n to the total."
	if res.Message != want {
		t.Errorf("got\n%s\nwant\n%s", res.Message, want)
	}
	// A word found only in an environment's help finds the environment.
	args, _ := json.Marshal(tools.HelpInput{Query: "total"})
	res, _ = h.Call(context.Background(), tools.Context{}, args)
	if out := res.Value.(tools.HelpOutput); len(out.Environments) != 1 || out.About != "" {
		t.Errorf("query total: got %+v, want the counter and no about", out)
	}
}

// A query that carries a long text is answered at once from its first
// words; the answer says what was left out and quotes at most 200 bytes
// of it.
func TestHelpLongQuery(t *testing.T) {
	h, _ := tools.NewHelp(func() tools.HelpIndex { return helpIndex })
	var b strings.Builder
	for i := range 100000 {
		fmt.Fprintf(&b, "w%x ", i)
	}
	long := b.String()
	for _, tt := range []struct{ name, query, match string }{
		{"nothing matches", long, ""},
		{"a word matches", "editor " + long, "editor"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args, _ := json.Marshal(tools.HelpInput{Query: tt.query})
			res, err := h.Call(context.Background(), tools.Context{}, args)
			if err != nil || !res.Success {
				t.Fatalf("got %v, %+v, want success", err, res.Message)
			}
			out := res.Value.(tools.HelpOutput)
			if len(out.Query) > 200 {
				t.Errorf("query: got %d bytes back, want at most 200", len(out.Query))
			}
			if !strings.Contains(out.Note, "Only the first 64 different words of the query were used") {
				t.Errorf("note: got %q, want it to say which words were used", out.Note)
			}
			if len(res.Message) > 4096 {
				t.Errorf("message: got %d bytes, want at most 4096: %.300s...", len(res.Message), res.Message)
			}
			if tt.match == "" && !strings.Contains(out.Note, "only its first 200 are shown") {
				t.Errorf("note: got %q, want it to say the query is cut", out.Note)
			}
			if tt.match != "" && (len(out.Environments) != 1 || out.Environments[0].Name != tt.match) {
				t.Errorf("environments: got %+v, want %s alone", out.Environments, tt.match)
			}
		})
	}
}

// A call whose context is done stops with the context's error.
func TestHelpCancelled(t *testing.T) {
	h, _ := tools.NewHelp(func() tools.HelpIndex { return helpIndex })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	args, _ := json.Marshal(tools.HelpInput{Query: "edit a file"})
	if _, err := h.Call(ctx, tools.Context{}, args); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}
