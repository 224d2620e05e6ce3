package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// editorCall runs an editor command over MCP and returns whether it
// failed and its output.
func editorCall(ctx context.Context, t *testing.T, cs *sdk.ClientSession, tool, command string) (bool, string) {
	t.Helper()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: map[string]any{"command": command}})
	if err != nil {
		t.Fatalf("%s %q: %v", tool, command, err)
	}
	return res.IsError, res.Content[0].(*sdk.TextContent).Text
}

// TestMCPStaleEditRefused drives `unfold mcp` with the Go SDK's client:
// after the model viewed a file and someone else changed a line of it,
// the screens the server draws for itself (another environment's command,
// the tool list's descriptions, a read of the editor's screen resource,
// the poller of a client subscribed to it, the prompt's sections) do not
// count as shown, so the model's edit based on the old line is refused
// and the other change is kept. The refusal's own screen shows the
// current lines, and an edit after it goes through.
func TestMCPStaleEditRefused(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed; the test runs the bash environment")
	}
	cases := []struct {
		name     string
		builtins string
		prompt   bool
		// between runs what a client does between the view and the edit,
		// after the file changed.
		between func(ctx context.Context, t *testing.T, cs *sdk.ClientSession, updated <-chan string)
	}{
		{"another environment's command", "editor,bash", false, func(ctx context.Context, t *testing.T, cs *sdk.ClientSession, _ <-chan string) {
			if failed, out := editorCall(ctx, t, cs, "bash", "echo hi"); failed || !strings.HasPrefix(out, "hi") {
				t.Fatalf("bash: got failed %v, output %q", failed, out)
			}
		}},
		{"tool list and resource read", "editor", false, func(ctx context.Context, t *testing.T, cs *sdk.ClientSession, _ <-chan string) {
			if _, err := cs.ListTools(ctx, nil); err != nil {
				t.Fatal(err)
			}
			res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "unfold://screen/editor"})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Contents[0].Text; !strings.Contains(got, "USER CHANGE") {
				t.Fatalf("the screen resource does not show the new line:\n%s", got)
			}
		}},
		{"subscription", "editor", false, func(ctx context.Context, t *testing.T, cs *sdk.ClientSession, updated <-chan string) {
			// The poller drew the screen to see that it changed.
			select {
			case uri := <-updated:
				if uri != "unfold://screen/editor" {
					t.Fatalf("got an update of %s, want the editor's screen", uri)
				}
			case <-ctx.Done():
				t.Fatal("no notifications/resources/updated after the file changed")
			}
		}},
		{"prompt", "editor,bash", true, func(ctx context.Context, t *testing.T, cs *sdk.ClientSession, _ <-chan string) {
			// Every call renders the prompt, the editor's section too.
			if failed, out := editorCall(ctx, t, cs, "bash", "true"); failed {
				t.Fatalf("bash: failed: %q", out)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			project := writeProject(t, map[string]string{"a.txt": "one\ntwo\nthree\n", "prompt.md": "# Assistant\n\nYou edit files.\n"})
			client, updated, acked := watchingClient()
			args := []string{"--builtins", tc.builtins, "--project", project}
			if tc.prompt {
				args = append(args, "--prompt", filepath.Join(project, "prompt.md"))
			}
			ctx, cs := connectMCP(t, client, args...)
			if failed, out := editorCall(ctx, t, cs, "editor", "view a.txt 1-3"); failed {
				t.Fatalf("view: %s", out)
			}
			if tc.name == "subscription" {
				subscribe(ctx, t, cs, acked, "unfold://screen/editor")
			}
			file := filepath.Join(project, "a.txt")
			if err := os.WriteFile(file, []byte("one\nUSER CHANGE\nthree\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			tc.between(ctx, t, cs, updated)

			failed, out := editorCall(ctx, t, cs, "editor", "edit a.txt 2-2\nmodel line")
			if !failed || !strings.Contains(out, "The file changed since view [1] showed it") {
				t.Errorf("edit of a line changed since the model saw it: got failed %v, output %q; want it refused", failed, out)
			}
			if got, _ := os.ReadFile(file); string(got) != "one\nUSER CHANGE\nthree\n" {
				t.Fatalf("got file %q, want the other change kept", got)
			}
			// The refusal's screen showed the current line.
			if failed, out := editorCall(ctx, t, cs, "editor", "edit a.txt 2-2\nmodel line"); failed {
				t.Errorf("edit after the refusal showed the current lines: %q", out)
			}
			if got, _ := os.ReadFile(file); string(got) != "one\nmodel line\nthree\n" {
				t.Errorf("got file %q after the second edit", got)
			}
		})
	}
}

// TestServeScreensCountAsShown drives `unfold serve`, which sends every
// environment's screen with every response: a file changed by a bash
// command is on the editor's screen the response carries, so an edit
// based on it goes through, and one based on the lines before is refused.
func TestServeScreensCountAsShown(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed; the test runs the bash environment")
	}
	project := writeProject(t, map[string]string{"a.txt": "one\ntwo\nthree\n"})
	d := serveIn(t, project, "--builtins", "editor,bash", "--project", project)
	send := func(env, command string) serveMessage {
		t.Helper()
		return d.do(map[string]any{"environment": env, "command": command})
	}
	if m := send("editor", "view a.txt 1-3"); !m.Response.Success {
		t.Fatalf("view: %+v", m.Response)
	}
	m := send("bash", "printf 'one\\nTWO\\nthree\\n' > a.txt")
	if !strings.Contains(m.Screen["editor"].Content, "2  TWO") {
		t.Fatalf("the editor's screen after the bash command does not show the new line:\n%s", m.Screen["editor"].Content)
	}
	if m := send("editor", "edit a.txt 2-2\nmodel line"); !m.Response.Success {
		t.Errorf("edit of lines the last response showed: got %+v, want it done", m.Response)
	}
	if got, _ := os.ReadFile(filepath.Join(project, "a.txt")); string(got) != "one\nmodel line\nthree\n" {
		t.Errorf("got file %q", got)
	}
}
