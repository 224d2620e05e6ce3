package mcp_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/unfold-dev/unfold/mcp"
	"github.com/unfold-dev/unfold/orchestrator"
	"github.com/unfold-dev/unfold/session"
)

// countScript is a process environment in sh that counts its commands. Its
// screen stays the same, and so does its tool's description.
const countScript = `n=0
while IFS= read -r line; do
  case "$line" in
    *'"type":"screen"'*) printf '{"type":"screen","content":"Any word counts one."}\n' ;;
    *'"type":"execute"'*) n=$((n+1)); printf '{"type":"response","output":"ran %d","success":true}\n' "$n" ;;
    *'"type":"shutdown"'*) exit 0 ;;
  esac
done
`

// countSpec is a spec file of the counting environment.
func countSpec(desc string, onDemand bool) string {
	s := `{"kind":"process","executable":"sh","args":["env/count.sh"],"description":"` + desc + `"`
	if onDemand {
		s += `,"on_demand":true`
	}
	return s + "}"
}

// TestSpecFilesFollowed: spec files added, changed and removed while a
// session runs are followed without a restart. After the next call the
// client is told the tool and resource lists changed, and the lists have
// the environments there are now: a new environment's tool is called, a
// changed one's description says its new summary, a removed one's tool
// and screen are gone. A file written while the client is idle shows in
// the next tools/list. With a prompt, the sections follow too, and an
// on-demand environment stays summarized until opened.
func TestSpecFilesFollowed(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("sh is not installed; the spec file's environment is a sh script")
	}
	for _, withPrompt := range []bool{false, true} {
		name := "no prompt"
		if withPrompt {
			name = "prompt"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, "env"), 0o755); err != nil {
				t.Fatal(err)
			}
			write := func(file, data string) {
				t.Helper()
				if err := os.WriteFile(filepath.Join(dir, "env", file), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write("count.sh", countScript)
			var opts mcp.Options
			if withPrompt {
				opts = mcp.Options{Prompt: promptTemplate(t), Params: []any{task{"count"}}}
			}
			_, c := setup(t, opts, func(o *orchestrator.Orchestrator, sess *session.Session) {
				withCounter(t)(o, sess)
				if err := o.LoadSpecs(dir); err != nil {
					t.Fatal(err)
				}
			})
			base := []string{"counter", "help"}
			if withPrompt {
				base = append(base, "open_sections")
			}
			with := func(names ...string) []string {
				return slices.Sorted(slices.Values(append(slices.Clone(base), names...)))
			}
			if got := toolNames(listTools(t, c)); !slices.Equal(got, base) {
				t.Fatalf("at start: got tools %v, want %v", got, base)
			}
			// The first use of counter's show changes its tool's
			// description (its help): from now on only the spec files
			// change the tool list. Every change is waited for, so that
			// no notification is left for the next.
			call(t, c, "counter", map[string]any{"command": "show"})
			wait(t, c.toolsChanged, "counter used: tools/list_changed")
			// afterCall makes a call to another environment, as the next
			// command, and waits to be told the lists changed (the tool
			// list only when tools says so).
			afterCall := func(what string, tools bool) {
				t.Helper()
				drain(c.toolsChanged)
				drain(c.resourcesChanged)
				call(t, c, "counter", map[string]any{"command": "show"})
				if tools {
					wait(t, c.toolsChanged, what+": tools/list_changed")
				}
				wait(t, c.resourcesChanged, what+": resources/list_changed")
			}
			screens := func() []string {
				t.Helper()
				list, err := c.ListResources(t.Context(), nil)
				if err != nil {
					t.Fatal(err)
				}
				var out []string
				for _, r := range list.Resources {
					if name, ok := strings.CutPrefix(r.URI, mcp.ScreenURIPrefix); ok {
						out = append(out, name)
					}
				}
				return out
			}
			promptText := func() string {
				t.Helper()
				if !withPrompt {
					return ""
				}
				text, err := readResource(t, c, mcp.PromptURI)
				if err != nil {
					t.Fatal(err)
				}
				return text
			}

			write("count.json", countSpec("first", false))
			afterCall("added", true)
			tools := listTools(t, c)
			if got := toolNames(tools); !slices.Equal(got, with("count")) {
				t.Fatalf("added: got tools %v, want %v", got, with("count"))
			}
			if d := tools["count"].Description; !strings.Contains(d, "(first)") {
				t.Errorf("added: got description %q, want the summary (first)", d)
			}
			if out := run(t, c, "count", map[string]any{"command": "one"}); out.Output != "ran 1" || out.Screen != "Any word counts one." {
				t.Errorf("added: got %+v, want the new environment's answer", out)
			}
			if got := screens(); !slices.Equal(got, []string{"count", "counter"}) {
				t.Errorf("added: got screens %v, want [count counter]", got)
			}
			if withPrompt && !strings.Contains(promptText(), "(count)\n\nAny word counts one.") {
				t.Errorf("added: got prompt\n%s\nwant the count section", promptText())
			}

			write("count.json", countSpec("second", false))
			afterCall("changed", true)
			if d := listTools(t, c)["count"].Description; !strings.Contains(d, "(second)") {
				t.Errorf("changed: got description %q, want the new summary (second)", d)
			}
			if out := run(t, c, "count", map[string]any{"command": "two"}); out.Output != "[count was stopped because env/count.json changed; its state from before was lost.]\nran 1" {
				t.Errorf("changed: got %+v, want a new environment's first answer", out)
			}

			if err := os.Remove(filepath.Join(dir, "env", "count.json")); err != nil {
				t.Fatal(err)
			}
			afterCall("removed", true)
			if got := toolNames(listTools(t, c)); !slices.Equal(got, base) {
				t.Errorf("removed: got tools %v, want %v", got, base)
			}
			if got := screens(); !slices.Equal(got, []string{"counter"}) {
				t.Errorf("removed: got screens %v, want [counter]", got)
			}
			res, err := c.CallTool(t.Context(), &sdk.CallToolParams{Name: "count", Arguments: map[string]any{"command": "three"}})
			if err == nil && !res.IsError {
				t.Errorf("removed: calling its tool got %v, want an error", texts(res))
			}
			if withPrompt && strings.Contains(promptText(), "(count)") {
				t.Errorf("removed: got prompt\n%s\nwant no count section", promptText())
			}

			write("late.json", countSpec("late", false))
			if got := toolNames(listTools(t, c)); !slices.Equal(got, with("late")) {
				t.Errorf("written while idle: got tools %v, want %v", got, with("late"))
			}
			wait(t, c.toolsChanged, "written while idle: tools/list_changed")
			wait(t, c.resourcesChanged, "written while idle: resources/list_changed")

			if !withPrompt {
				return
			}
			write("lazy.json", countSpec("on demand", true))
			afterCall("on demand", false)
			if got := toolNames(listTools(t, c)); !slices.Equal(got, with("late")) {
				t.Errorf("on demand: got tools %v, want %v, lazy summarized", got, with("late"))
			}
			if text := promptText(); !strings.Contains(text, "(lazy)\n\non demand") {
				t.Errorf("on demand: got prompt\n%s\nwant lazy's summary", text)
			}
			drain(c.toolsChanged)
			if res := call(t, c, "open_sections", map[string]any{"section_keys": []string{"lazy"}, "reason": "count"}); res.IsError {
				t.Fatalf("open lazy: got %v", texts(res))
			}
			wait(t, c.toolsChanged, "opened: tools/list_changed")
			if out := run(t, c, "lazy", map[string]any{"command": "one"}); out.Output != "ran 1" {
				t.Errorf("opened: got %+v, want lazy's answer", out)
			}
		})
	}
}
