package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// specScript is a process environment in sh that counts its commands and
// shows its VERSION variable on its screen.
const specScript = `n=0
while IFS= read -r line; do
  case "$line" in
    *'"type":"screen"'*) printf '{"type":"screen","content":"count %s"}\n' "$VERSION" ;;
    *'"type":"execute"'*) n=$((n+1)); printf '{"type":"response","output":"ran %d","success":true}\n' "$n" ;;
    *'"type":"shutdown"'*) exit 0 ;;
  esac
done
`

// specOf is a spec file of the counting environment at version v.
func specOf(v string) string {
	return `{"kind":"process","executable":"sh","args":["env/count.sh"],"description":"A count, version ` + v + `","env":{"VERSION":"` + v + `"}}`
}

// bashWrite is a bash command that writes text, which ends in a newline,
// to the file path: a here-document, on lines of its own.
func bashWrite(path, text string) string {
	return "cat > " + path + " <<'UNFOLD_EOF'\n" + text + "UNFOLD_EOF\n"
}

// TestMCPBinarySpecFiles: spec files added, changed and removed while
// `unfold mcp` runs are followed: the client is told the tool list
// changed, lists the environment's tool (gone once the file is), and
// calls it. The file is first written by a bash command through the
// server itself, and its tool offered right after that command.
func TestMCPBinarySpecFiles(t *testing.T) {
	needSh(t)
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed; the client writes the spec file with a bash command")
	}
	dir := t.TempDir()
	changed := make(chan struct{}, 16)
	client := sdk.NewClient(&sdk.Implementation{Name: "test"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} },
	})
	ctx, cs := connectMCP(t, client, "--builtins", "bash", "--project", dir)
	tools := func() map[string]*sdk.Tool {
		t.Helper()
		list, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]*sdk.Tool{}
		for _, tool := range list.Tools {
			out[tool.Name] = tool
		}
		return out
	}
	names := func() []string {
		t.Helper()
		return slices.Sorted(func(yield func(string) bool) {
			for name := range tools() {
				if !yield(name) {
					return
				}
			}
		})
	}
	call := func(name, command string) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: map[string]any{"command": command}})
		if err != nil {
			return err.Error(), false
		}
		data, _ := json.Marshal(res.StructuredContent)
		var out struct {
			Output string `json:"output"`
			Screen string `json:"screen"`
		}
		_ = json.Unmarshal(data, &out)
		return out.Output + "|" + out.Screen, !res.IsError
	}
	// told waits for notifications/tools/list_changed, draining the
	// others; it guards against a hang, it times nothing.
	told := func(what string) {
		t.Helper()
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("%s: no notifications/tools/list_changed", what)
		}
		for {
			select {
			case <-changed:
			default:
				return
			}
		}
	}
	if got := names(); !slices.Equal(got, []string{"bash", "help"}) {
		t.Fatalf("at start: got tools %v, want [bash help]", got)
	}

	if out, ok := call("bash", "mkdir env\n"+bashWrite("env/count.sh", specScript)+bashWrite("env/count.json", specOf("1")+"\n")); !ok {
		t.Fatalf("writing the spec file: got %q", out)
	}
	told("added by a command")
	if got := names(); !slices.Equal(got, []string{"bash", "count", "help"}) {
		t.Fatalf("added: got tools %v, want [bash count help]", got)
	}
	if d := tools()["count"].Description; !strings.Contains(d, "A count, version 1") {
		t.Errorf("added: got description %q, want the file's description", d)
	}
	if out, ok := call("count", "one"); !ok || out != "ran 1|count 1" {
		t.Errorf("added: got %q, want ran 1|count 1", out)
	}

	if err := os.WriteFile(filepath.Join(dir, "env", "count.json"), []byte(specOf("2")), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, ok := call("count", "two"); !ok || out != "[count was stopped because env/count.json changed; its state from before was lost.]\nran 1|count 2" {
		t.Errorf("changed: got %q, want a new environment's ran 1|count 2", out)
	}
	told("changed")
	if d := tools()["count"].Description; !strings.Contains(d, "A count, version 2") {
		t.Errorf("changed: got description %q, want the new description", d)
	}

	if out, ok := call("bash", "rm env/count.json"); !ok {
		t.Fatalf("removing the spec file: got %q", out)
	}
	told("removed by a command")
	if got := names(); !slices.Equal(got, []string{"bash", "help"}) {
		t.Errorf("removed: got tools %v, want [bash help]", got)
	}
	if out, ok := call("count", "three"); ok {
		t.Errorf("removed: calling count got %q, want an error", out)
	}
}

// TestAgentSpecFiles: spec files the model adds, changes and removes with
// bash commands while `unfold agent` runs reach it on the very next
// request: the added environment's tool and screen, which it then calls;
// the changed one's new screen, whose new environment runs the next
// command; and the removed one's tool taken away, said to be gone.
func TestAgentSpecFiles(t *testing.T) {
	needSh(t)
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed; the model writes the spec file with a bash command")
	}
	command := func(tool, text string) string {
		args, _ := json.Marshal(map[string]string{"command": text})
		return "call " + tool + " " + string(args)
	}
	url, reqs := fakeEndpoint(t,
		command("bash", "mkdir env\n"+bashWrite("env/count.sh", specScript)+bashWrite("env/count.json", specOf("1")+"\n")),
		command("count", "one"),
		command("bash", bashWrite("env/count.json", specOf("2")+"\n")),
		command("count", "two"),
		command("bash", "rm env/count.json"),
		"All done.",
	)
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run([]string{"agent", "count", "--project", dir, "--base-url", url, "--model", "m", "--builtins", "bash"}, strings.NewReader(""), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit: got %d, want 0; stderr:\n%s", code, stderr.String())
	}
	if len(*reqs) != 6 {
		t.Fatalf("requests: got %d, want 6", len(*reqs))
	}
	tools := func(i int) []string {
		var out []string
		list, _ := (*reqs)[i]["tools"].([]any)
		for _, x := range list {
			fn, _ := x.(map[string]any)["function"].(map[string]any)
			name, _ := fn["name"].(string)
			out = append(out, name)
		}
		return out
	}
	// messages returns the content of request i's messages from the one
	// answering the last call on.
	messages := func(i int) string {
		msgs, _ := (*reqs)[i]["messages"].([]any)
		var b strings.Builder
		for j := len(msgs) - 1; j >= 0; j-- {
			m, _ := msgs[j].(map[string]any)
			content, _ := m["content"].(string)
			b.WriteString(content + "\n")
			if m["role"] == "tool" {
				break
			}
		}
		return b.String()
	}
	if slices.Contains(tools(0), "count") {
		t.Errorf("request 1: got tools %v, want no count before its file", tools(0))
	}
	// A screen starts no program: the new environment's screen is its
	// description until its first command.
	if got := messages(1); !slices.Contains(tools(1), "count") || !strings.Contains(got, "(count)\n\nA count, version 1\n[not started; it starts with the first command]") {
		t.Errorf("request 2, added: got tools %v and\n%s\nwant count offered and its screen, not started", tools(1), got)
	}
	if got := messages(2); !strings.Contains(got, "ran 1") {
		t.Errorf("request 3: got\n%s\nwant count's answer", got)
	}
	if got := messages(3); !strings.Contains(got, "(count)\n\nA count, version 2\n[not started; it starts with the first command]") {
		t.Errorf("request 4, changed: got\n%s\nwant the new environment's screen", got)
	}
	if got := messages(4); !strings.Contains(got, "ran 1") {
		t.Errorf("request 5: got\n%s\nwant the new environment's first answer", got)
	}
	if got := messages(5); slices.Contains(tools(5), "count") || !strings.Contains(got, "Environments gone, their spec files removed: count.") {
		t.Errorf("request 6, removed: got tools %v and\n%s\nwant count gone and said to be", tools(5), got)
	}
	if got := stdout.String(); got != "All done.\n" {
		t.Errorf("stdout: got %q", got)
	}
}

// TestMCPEditorAddsNoProgram: with the editor but neither bash nor python,
// a spec file the model writes with the editor declares no environment:
// the tool list stays as it started, and the orchestrator's screen says
// the file was not loaded and why. With bash on as well, the same file
// is loaded, as the model could run its program anyway.
func TestMCPEditorAddsNoProgram(t *testing.T) {
	needSh(t)
	pwn := `{"kind":"process","executable":"sh","args":["env/count.sh"],"description":"A count the model declared"}`
	for _, tc := range []struct {
		builtins string
		want     []string // the tools after the editor wrote env/pwn.json
	}{
		{"editor", []string{"count", "editor", "help"}},
		{"bash,editor", []string{"bash", "count", "editor", "help", "pwn"}},
	} {
		t.Run(tc.builtins, func(t *testing.T) {
			if strings.Contains(tc.builtins, "bash") {
				if _, err := exec.LookPath("bash"); err != nil {
					t.Skip("bash is not installed")
				}
			}
			dir := t.TempDir()
			for name, data := range map[string]string{"env/count.sh": specScript, "env/count.json": specOf("1")} {
				if err := os.MkdirAll(filepath.Join(dir, "env"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cs := connectMCP(t, sdk.NewClient(&sdk.Implementation{Name: "test"}, nil), "--builtins", tc.builtins, "--project", dir)
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "editor", Arguments: map[string]any{"command": "create env/pwn.json\n" + pwn}})
			if err != nil || res.IsError {
				t.Fatalf("the editor's create: %v %+v", err, res)
			}
			if _, err := os.Stat(filepath.Join(dir, "env", "pwn.json")); err != nil {
				t.Fatalf("the editor did not write the file: %v", err)
			}
			list, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range list.Tools {
				names = append(names, tool.Name)
			}
			slices.Sort(names)
			if !slices.Equal(names, tc.want) {
				t.Fatalf("tools after the editor wrote env/pwn.json: got %v, want %v", names, tc.want)
			}
			if tc.builtins != "editor" {
				return
			}
			if res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "pwn", Arguments: map[string]any{"command": "x"}}); err == nil && !res.IsError {
				t.Errorf("calling pwn: got %+v, want an error", res)
			}
			scr, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "unfold://screen/orchestrator"})
			if err != nil {
				t.Fatalf("the orchestrator's screen: %v", err)
			}
			want := "env/pwn.json: added after the environments were loaded; not loaded, because no environment of this run runs programs (bash, python)"
			if got := scr.Contents[0].Text; !strings.Contains(got, want) {
				t.Errorf("the orchestrator's screen:\n%s\nwant it to say %q", got, want)
			}
		})
	}
}
