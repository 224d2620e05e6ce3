package agent_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/agent/internal/scripted"
	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/orchestrator"
	"github.com/unfold-dev/unfold/session"
)

// echoEnv answers every command with its text.
type echoEnv struct{}

func (echoEnv) Execute(_ context.Context, cmd string) (envs.Response, error) {
	return envs.Response{Output: cmd, Success: true}, nil
}

func (echoEnv) Screen() (envs.Screen, error) { return envs.Screen{Content: "Echoes."}, nil }

// versionScript is a process environment in sh that counts its commands
// and shows its VERSION variable on its screen.
const versionScript = `n=0
while IFS= read -r line; do
  case "$line" in
    *'"type":"screen"'*) printf '{"type":"screen","content":"count %s"}\n' "$VERSION" ;;
    *'"type":"execute"'*) n=$((n+1)); printf '{"type":"response","output":"ran %d","success":true}\n' "$n" ;;
    *'"type":"shutdown"'*) exit 0 ;;
  esac
done
`

// versionSpec is a spec file of the counting environment at version v.
func versionSpec(v string, onDemand bool) string {
	return `{"kind":"process","executable":"sh","args":["env/count.sh"],"description":"Counts, version ` + v +
		`","env":{"VERSION":"` + v + `"},"on_demand":` + map[bool]string{true: "true", false: "false"}[onDemand] + `}`
}

// TestSpecFilesFollowed: spec files added, changed and removed while the
// agent runs reach the model on the next request, in every way the agent
// acts and discloses: an added file's environment is offered (its tool,
// its screen), a changed one's new environment runs the next command and
// shows its new screen, a removed one's is taken away and said to be gone,
// and one added on demand is summarized with open_sections offered.
func TestSpecFilesFollowed(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("sh is not installed; the spec file's environment is a sh script")
	}
	tests := []struct {
		name       string
		actions    agent.ActionMode
		disclosure agent.Disclosure
	}{
		{"native, rerender", agent.ActionsNative, agent.DisclosureRerender},
		{"native, append", agent.ActionsNative, agent.DisclosureAppend},
		{"text, rerender", agent.ActionsText, agent.DisclosureRerender},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, "env"), 0o755); err != nil {
				t.Fatal(err)
			}
			write := func(name, data string) {
				if err := os.WriteFile(filepath.Join(dir, "env", name), []byte(data), 0o644); err != nil {
					t.Error(err)
				}
			}
			write("count.sh", versionScript)
			sess := session.New()
			o, err := orchestrator.New(orchestrator.WithSession(sess))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = o.Close() })
			if err := o.Register("echo", echoEnv{}); err != nil {
				t.Fatal(err)
			}
			if err := o.LoadSpecs(dir); err != nil {
				t.Fatal(err)
			}
			// act is a reply that runs command in env.
			act := func(id, env, command string) scripted.Reply {
				if tt.actions == agent.ActionsText {
					return scripted.Text("```" + env + "\n" + command + "\n```")
				}
				return scripted.Calls(call(id, env, `{"command":"`+command+`"}`))
			}
			srv := scripted.NewFunc(t, func(n int, _ scripted.Request) scripted.Reply {
				// Each reply changes the files, as someone else would
				// while the model thinks, then acts.
				switch n {
				case 0:
					write("count.json", versionSpec("1", false))
					return act("c0", "echo", "hi")
				case 1:
					write("count.json", versionSpec("2", false))
					return act("c1", "count", "one")
				case 2:
					if err := os.Remove(filepath.Join(dir, "env", "count.json")); err != nil {
						t.Error(err)
					}
					return act("c2", "echo", "hi")
				case 3:
					write("lazy.json", versionSpec("3", true))
					return act("c3", "echo", "hi")
				}
				if tt.actions == agent.ActionsText {
					return scripted.Text(`{"final": "done"}`)
				}
				return scripted.Text("done")
			})
			a, err := agent.New(newModel(t, srv), newFixture(t).prompt, agent.WithSession(sess), agent.WithOrchestrator(o),
				agent.WithActions(tt.actions), agent.WithDisclosure(tt.disclosure))
			if err != nil {
				t.Fatal(err)
			}
			res, err := a.Run(context.Background(), "Count.")
			if err != nil {
				t.Fatal(err)
			}
			if res.Answer != "done" {
				t.Errorf("answer: got %q, want done", res.Answer)
			}
			reqs := srv.Requests()
			if len(reqs) != 5 {
				t.Fatalf("requests: got %d, want 5", len(reqs))
			}
			native := tt.actions == agent.ActionsNative
			// offers reports whether request i offers env's tool: in the
			// tool list, or in text mode the system message's list of
			// environments.
			offers := func(i int, env string) bool {
				if native {
					return contains(reqs[i].ToolNames(), env)
				}
				sys, _ := reqs[i].Messages[0]["content"].(string)
				_, list, _ := strings.Cut(sys, "\nEnvironments: ")
				list, _, _ = strings.Cut(list, ".")
				return contains(strings.Split(list, ", "), env)
			}
			if offers(0, "count") {
				t.Errorf("request 1: got count offered before its file")
			}
			// A screen starts no program: the new environment's screen
			// is its description until its first command.
			if !offers(1, "count") || !strings.Contains(reqs[1].Last(), "(count)\n\nCounts, version 1\n[not started; it starts with the first command]") {
				t.Errorf("request 2, added: got tools %v, last message %q; want count offered and its screen, not started", reqs[1].ToolNames(), reqs[1].Last())
			}
			result, _ := reqs[2].ToolResult("c1")
			if !native {
				result = reqs[2].Last()
			}
			if last := reqs[2].Last(); !strings.Contains(result, "ran 1") || !strings.Contains(last, "(count)\n\ncount 2") {
				t.Errorf("request 3, changed: got result %q, last message %q; want the new environment's ran 1 and its screen count 2", result, last)
			}
			if offers(3, "count") {
				t.Errorf("request 4, removed: got count offered, want it gone")
			}
			if last := reqs[3].Last(); !strings.Contains(last, "Environments gone, their spec files removed: count.") {
				t.Errorf("request 4, removed: got last message %q, want count said to be gone", last)
			}
			if native && (contains(reqs[4].ToolNames(), "lazy") || !contains(reqs[4].ToolNames(), "open_sections")) {
				t.Errorf("request 5, on demand: got tools %v, want lazy summarized and open_sections offered", reqs[4].ToolNames())
			}
			if last := reqs[4].Last(); !strings.Contains(last, "(lazy)\n\nCounts, version 3") {
				t.Errorf("request 5, on demand: got last message %q, want lazy's summary", last)
			}
		})
	}
}
