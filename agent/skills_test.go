package agent_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/agent/internal/scripted"
	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/skills"
)

// skillDir finds the directory a skill's section names.
var skillDir = regexp.MustCompile("Skill directory: `([^`]+)`")

// TestSkillLevels runs the agent loop over a prompt holding skills: the
// model sees the catalog, opens a skill and reads its context file with
// bash, opens the skill's script on its own, and runs it from the
// directory the skill's section names, so that the script's relative path
// to its asset works.
func TestSkillLevels(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not installed")
	}
	set, err := skills.Load("../skills/testdata/valid")
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := prompt.New("test/agent", "skills",
		section.New(section.Spec[section.None]{Key: "task", Title: "Task", Body: "You are a careful test agent."}),
		set.Section(),
	)
	if err != nil {
		t.Fatal(err)
	}
	project := t.TempDir()
	o, sess := bashOrchestrator(t, project)

	var dir string // the skill's directory, as the model reads it
	srv := scripted.NewFunc(t, func(n int, req scripted.Request) scripted.Reply {
		switch n {
		case 0:
			return scripted.Calls(call("c1", "open_sections", `{"section_keys":["skills.greet"],"reason":"the user wants a greeting"}`))
		case 1:
			return scripted.Calls(call("c2", "bash", `{"command":"cat context/skills.greet.md"}`))
		case 2:
			out, _ := req.ToolResult("c2")
			if m := skillDir.FindStringSubmatch(out); m != nil {
				dir = m[1]
			}
			return scripted.Calls(call("c3", "open_sections", `{"section_keys":["skills.greet.scripts-hello-sh"],"reason":"see what it runs"}`))
		case 3:
			return scripted.Calls(call("c4", "bash", `{"command":"cd '`+dir+`' && bash scripts/hello.sh Ada"}`))
		case 4:
			return scripted.Text("Greeted Ada.")
		}
		return scripted.Reply{Status: 500, Error: "the script has no more replies"}
	})
	a, err := agent.New(newModel(t, srv), tmpl.MustBind(), agent.WithSession(sess), agent.WithOrchestrator(o),
		agent.WithFS(afero.NewBasePathFs(afero.NewOsFs(), project)))
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Run(context.Background(), "Greet Ada the house way.")
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 5 {
		t.Fatalf("requests: got %d, want 5", len(reqs))
	}
	sys, _ := reqs[0].Messages[0]["content"].(string)
	if !strings.Contains(sys, "Greets someone by name with the house greeting.") || strings.Contains(sys, "hello.sh NAME") {
		t.Errorf("system message: want the catalog (descriptions) and no instructions; got:\n%s", sys)
	}
	if got, _ := reqs[1].ToolResult("c1"); got != "Section content written to: context/skills.greet.md" {
		t.Errorf("open the skill: got %q", got)
	}
	if got, _ := reqs[2].ToolResult("c2"); !strings.Contains(got, "Run `bash scripts/hello.sh NAME`") || !strings.Contains(got, "`scripts/hello.sh`, 167 bytes") {
		t.Errorf("the skill's context file: got %q, want its instructions and its files' summaries", got)
	}
	if want, _ := filepath.Abs("../skills/testdata/valid/greet"); dir != want {
		t.Errorf("the skill's directory: got %q, want %q", dir, want)
	}
	if got, _ := reqs[3].ToolResult("c3"); got != "Section content written to: context/skills.greet.scripts-hello-sh.md" {
		t.Errorf("open the script: got %q", got)
	}
	if got, _ := reqs[4].ToolResult("c4"); !strings.Contains(got, "Ahoy, Ada!") {
		t.Errorf("run the script from its skill's directory: got %q, want the greeting read from assets/greeting.txt", got)
	}
	if res.Answer != "Greeted Ada." {
		t.Errorf("answer: got %q", res.Answer)
	}
}
