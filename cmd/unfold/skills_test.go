package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// skillsProject has a skill in each project folder, one of them broken,
// and one in extra/ for --skills.
var skillsProject = map[string]string{
	".claude/skills/claude-one/SKILL.md": "---\nname: claude-one\ndescription: Found in .claude/skills.\n---\nFirst instructions.\n",
	".agents/skills/agents-one/SKILL.md": "---\nname: agents-one\ndescription: Found in .agents/skills.\n---\nSecond instructions.\n",
	"skills/plain-one/SKILL.md":          "---\nname: plain-one\ndescription: Found in skills.\n---\nThird instructions.\n",
	"skills/broken/SKILL.md":             "---\nname: Broken\ndescription: Left out.\n---\n",
	"extra/extra-one/SKILL.md":           "---\nname: extra-one\ndescription: Given with --skills.\n---\nExtra instructions.\n",
	"extra/extra-one/scripts/go.sh":      "#!/bin/sh\necho extra script\n",
	"prompt.md":                          "# Assistant\n\nYou help.\n",
}

func TestSkillsValidate(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout []string // lines or parts of lines, in order
		stderr string
	}{
		{"valid folder", []string{"../../skills/testdata/valid"}, 0, []string{"../../skills/testdata/valid: 3 skills checked, 3 valid"}, ""},
		{"one skill", []string{"../../skills/testdata/valid/pdf"}, 0, []string{"pdf: 1 skill checked, 1 valid"}, ""},
		{"its SKILL.md", []string{"../../skills/testdata/valid/pdf/SKILL.md"}, 0, []string{"1 skill checked, 1 valid"}, ""},
		{"broken folder", []string{"../../skills/testdata/broken"}, 1, []string{
			"Upper-Case/SKILL.md:2: name \"Upper-Case\" must be lowercase", "(name-characters)",
			"bad-yaml/SKILL.md:3: invalid YAML in the front matter", "(yaml)",
			"wrong-case/skill.md: the skill file is named skill.md", "(skill-file)",
			"16 skills checked, 1 valid"}, ""},
		{"one broken skill", []string{"../../skills/testdata/broken/mismatch"}, 1, []string{"mismatch/SKILL.md:2: name \"other-name\" must be the name of the skill's directory", "1 skill checked, 0 valid"}, ""},
		{"no skill", []string{"../../skills/testdata/broken/not-a-skill"}, 1, nil, "no skill found"},
		{"missing", []string{"no-such-dir"}, 1, nil, "no-such-dir: no such file or directory"},
		{"no dir", nil, 2, nil, "want at least one DIR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"skills", "validate"}, tt.args...), strings.NewReader(""), &stdout, &stderr)
			if code != tt.code || !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("got exit %d, stderr %q; want %d and %q", code, stderr.String(), tt.code, tt.stderr)
			}
			out := stdout.String()
			for _, w := range tt.stdout {
				i := strings.Index(out, w)
				if i < 0 {
					t.Errorf("stdout: got no %q (in order) in:\n%s", w, stdout.String())
					break
				}
				out = out[i+len(w):]
			}
		})
	}
	long := filepath.Join(t.TempDir(), "long")
	if err := os.MkdirAll(long, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(long, "SKILL.md"), []byte("---\nname: long\ndescription: Long.\n---\n"+strings.Repeat("Step.\n", 600)), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"skills", "validate", long}, strings.NewReader(""), &stdout, &stderr); code != 0 ||
		!strings.Contains(stdout.String(), filepath.Join(long, "SKILL.md")+": warning: the instructions are 600 lines") ||
		!strings.Contains(stdout.String(), "(instructions-size)\n"+long+": 1 skill checked, 1 valid, 1 warning\n") {
		t.Errorf("long instructions: got %d, %q, %q; want 0 and a warning", code, stdout.String(), stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	other := filepath.Join(t.TempDir(), "other")
	if err := os.MkdirAll(filepath.Join(other, "pdf"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "pdf", "SKILL.md"), []byte("---\nname: pdf\ndescription: Another.\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	first, _ := filepath.Abs("../../skills/testdata/valid/pdf/SKILL.md")
	if code := run([]string{"skills", "validate", "../../skills/testdata/valid", other}, strings.NewReader(""), &stdout, &stderr); code != 1 ||
		!strings.Contains(stdout.String(), "valid: 3 skills checked, 3 valid\n"+filepath.Join(other, "pdf", "SKILL.md")+": a skill named \"pdf\" is at "+first+" already") ||
		!strings.Contains(stdout.String(), "(name-unique)\n"+other+": 1 skill checked, 0 valid\n") {
		t.Errorf("a name in two DIRs: got %d, %q, %q; want 1 and the second reported as left out", code, stdout.String(), stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"skills", "check"}, strings.NewReader(""), &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "unknown subcommand \"check\"") {
		t.Errorf("unknown subcommand: got %d, %q", code, stderr.String())
	}
}

func TestRenderSkills(t *testing.T) {
	project := writeProject(t, skillsProject)
	var stdout, stderr bytes.Buffer
	code := run([]string{"render", filepath.Join(project, "prompt.md"), "--project", project, "--skills", filepath.Join(project, "extra"),
		"--open", "skills.extra-one"}, strings.NewReader(""), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr.String())
	}
	out := stdout.String()
	for _, w := range []string{"## 1. Assistant (assistant)", "## 2. Skills (skills)",
		"### 2.1. agents-one (skills.agents-one)\n\nFound in .agents/skills.", "(skills.claude-one)", "(skills.plain-one)",
		"### 2.2. claude-one", "### 2.3. extra-one (skills.extra-one)\n\nSkill directory: `" + filepath.Join(project, "extra", "extra-one") + "`", "Extra instructions."} {
		if !strings.Contains(out, w) {
			t.Errorf("stdout: got no %q in:\n%s", w, out)
		}
	}
	if strings.Contains(out, "First instructions.") || strings.Contains(out, "Broken") {
		t.Errorf("stdout: got an unopened skill's instructions or a broken skill:\n%s", out)
	}
	if want := "unfold render: skill left out: " + filepath.Join(project, "skills", "broken", "SKILL.md") + ":2: name \"Broken\" must be lowercase"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr: got %q, want %q", stderr.String(), want)
	}

	// A skill's file opens by its key, though the catalog did not name it:
	// the skill's files are found when it opens.
	stdout.Reset()
	stderr.Reset()
	code = run([]string{"render", filepath.Join(project, "prompt.md"), "--skills", filepath.Join(project, "extra"),
		"--open", "skills.extra-one.scripts-go-sh"}, strings.NewReader(""), &stdout, &stderr)
	if code != 0 || !strings.Contains(stdout.String(), "(skills.extra-one.scripts-go-sh)\n\nPath: `"+filepath.Join(project, "extra", "extra-one", "scripts", "go.sh")+"`.") ||
		!strings.Contains(stdout.String(), "echo extra script") {
		t.Errorf("--open a skill's file: got exit %d, stderr %q and:\n%s", code, stderr.String(), stdout.String())
	}

	// Without --project or --skills, render shows the file alone.
	stdout.Reset()
	if code := run([]string{"render", filepath.Join(project, "prompt.md")}, strings.NewReader(""), &stdout, &stderr); code != 0 || strings.Contains(stdout.String(), "Skills") {
		t.Errorf("no skills asked for: got exit %d and:\n%s", code, stdout.String())
	}
	if code := run([]string{"render", filepath.Join(project, "prompt.md"), "--skills", filepath.Join(project, "none")}, strings.NewReader(""), &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "none: no such file") {
		t.Errorf("a missing --skills folder: got exit %d, stderr %q", code, stderr.String())
	}
}

func TestAgentSkills(t *testing.T) {
	project := writeProject(t, skillsProject)
	url, reqs := fakeEndpoint(t, "Nothing to do.")
	var stdout, stderr bytes.Buffer
	code := run([]string{"agent", "look around", "--project", project, "--skills", filepath.Join(project, "extra"),
		"--base-url", url, "--model", "m", "--builtins", "none"}, strings.NewReader(""), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr.String())
	}
	msgs := (*reqs)[0]["messages"].([]any)
	sys := msgs[0].(map[string]any)["content"].(string)
	for _, w := range []string{"## 1. Instructions (instructions)", "## 2. Skills (skills)", "(skills.agents-one)", "(skills.extra-one)\n\nGiven with --skills."} {
		if !strings.Contains(sys, w) {
			t.Errorf("system message: got no %q in:\n%s", w, sys)
		}
	}
	if !strings.Contains(stderr.String(), "unfold agent: skill left out:") {
		t.Errorf("stderr: got %q, want the broken skill reported", stderr.String())
	}
}

func TestMCPSkills(t *testing.T) {
	project := writeProject(t, skillsProject)
	cs, stop := startStdio(t, "--builtins", "none", "--project", project, "--skills", filepath.Join(project, "extra"))
	res, err := cs.ListPrompts(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range res.Prompts {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	if want := []string{"agents-one", "claude-one", "extra-one", "plain-one", "workbench"}; !slices.Equal(names, want) {
		t.Errorf("prompts: got %v, want %v", names, want)
	}
	pr, err := cs.GetPrompt(t.Context(), &sdk.GetPromptParams{Name: "extra-one"})
	if err != nil || !strings.Contains(pr.Messages[0].Content.(*sdk.TextContent).Text, "Extra instructions.") {
		t.Errorf("prompt extra-one: got %v, %v", pr, err)
	}
	code, stderr := stop()
	if code != 0 || !strings.Contains(stderr, "unfold mcp: skill left out:") {
		t.Errorf("got exit %d, stderr %q; want 0 and the broken skill reported", code, stderr)
	}
	var help, helpErr bytes.Buffer
	if code := run([]string{"mcp", "--help"}, strings.NewReader(""), &help, &helpErr); code != 0 ||
		!strings.Contains(strings.Join(strings.Fields(help.String()), " "), "Skills are read when the server starts") {
		t.Errorf("mcp --help: got %d, %q; want it to say when skills are read", code, help.String())
	}
}

// TestSkillLinksOutsideBinary runs the real binary on a project whose
// skill links to a file outside the project, and another skill whose
// SKILL.md is over the size limit: render leaves the link out and shows
// nothing of the file, and validate reports both skills.
func TestSkillLinksOutsideBinary(t *testing.T) {
	project := writeProject(t, map[string]string{
		"skills/demo/SKILL.md":           "---\nname: demo\ndescription: A demo.\n---\nRead references/.\n",
		"skills/demo/references/real.md": "# Real notes\n",
		"skills/huge/SKILL.md":           "---\nname: huge\ndescription: Too long to read.\n---\n" + strings.Repeat("Do this.\n", 130_000),
		"prompt.md":                      "# Assistant\n\nYou help.\n",
	})
	secret := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(secret, []byte("TOP SECRET outside the project\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(project, "skills", "demo", "references", "notes.md")
	if err := os.Symlink(secret, link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}

	out, err := exec.Command(binary, "render", filepath.Join(project, "prompt.md"), "--project", project, "--open", "skills.demo").CombinedOutput()
	if err != nil {
		t.Fatalf("render: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "TOP SECRET") || strings.Contains(string(out), "references-notes-md") ||
		!strings.Contains(string(out), "- Left out: `references/notes.md`: symbolic links leading outside the skill's directory") {
		t.Errorf("render: got the link listed or read, or not said to be left out:\n%s", out)
	}

	cmd := exec.Command(binary, "skills", "validate", filepath.Join(project, "skills"))
	out, err = cmd.Output()
	if cmd.ProcessState.ExitCode() != 1 {
		t.Errorf("validate: got exit %v, want 1", err)
	}
	for _, w := range []string{
		link + ": a symbolic link leading outside the skill's directory",
		"(links-inside)",
		filepath.Join(project, "skills", "huge", "SKILL.md") + ": SKILL.md is 1170050 bytes, over the limit of 1 MiB",
		"(skill-size)",
		": 2 skills checked, 0 valid",
	} {
		if !strings.Contains(string(out), w) {
			t.Errorf("validate: got no %q in:\n%s", w, out)
		}
	}
}

// TestSkillsHeadingClash runs the real binary on a prompt file with a
// heading "# Skills" and skills to add: render and mcp refuse it, naming
// the heading's line and what to do.
func TestSkillsHeadingClash(t *testing.T) {
	project := writeProject(t, map[string]string{
		"skills/demo/SKILL.md": "---\nname: demo\ndescription: A demo.\n---\nDo it.\n",
		"prompt.md":            "# Intro\n\nHello.\n\n# Skills\n\nMine.\n",
		"renamed.md":           "# Intro\n\nHello.\n\n# Skills {#my-skills}\n\nMine.\n",
	})
	file := filepath.Join(project, "prompt.md")
	want := file + `:5: the heading's key is "skills", which the skills section takes: give the heading another key, as in "# Skills {#my-skills}"`
	for _, args := range [][]string{
		{"render", file, "--project", project},
		{"mcp", "--prompt", file, "--project", project},
	} {
		cmd := exec.Command(binary, args...)
		cmd.Stdin = strings.NewReader("")
		out, _ := cmd.CombinedOutput()
		if cmd.ProcessState.ExitCode() != 1 || !strings.Contains(string(out), want) {
			t.Errorf("%s: got exit %d and %q, want 1 and %q", args[0], cmd.ProcessState.ExitCode(), out, want)
		}
	}
	out, err := exec.Command(binary, "render", filepath.Join(project, "renamed.md"), "--project", project).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "(my-skills)") || !strings.Contains(string(out), "(skills.demo)") {
		t.Errorf("the heading given another key: got %v and:\n%s", err, out)
	}
}
