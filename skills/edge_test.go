package skills_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/skills"
)

// TestSectionOptions sets the skills section's key, title and priority.
func TestSectionOptions(t *testing.T) {
	sec := loadValid(t).Section(skills.Key("tools"), skills.Title("Tools"), skills.Priority(-3))
	r, err := prompt.MustNew("test", "options", sec).MustBind().Render(session.New(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.Text(), "## 1. Tools (tools)") || !strings.Contains(r.Text(), "(tools.pdf)") {
		t.Errorf("got:\n%s", r.Text())
	}
	for _, s := range r.Report() {
		if s.Priority != -3 {
			t.Errorf("%s: priority %d, want -3", s.Path, s.Priority)
		}
	}
	empty, err := skills.LoadFolders(skills.Folder{FS: fstest.MapFS{}})
	if err != nil || empty.Section() != nil {
		t.Errorf("no skill: got section %v, %v, want none", empty.Section(), err)
	}
}

// TestFileKeys makes a key for every file, unique among its siblings, from
// paths a key cannot hold as they are.
func TestFileKeys(t *testing.T) {
	long := "references/" + strings.Repeat("very-long-name-", 8) + ".md"
	fsys := fstest.MapFS{
		"demo/SKILL.md":          {Data: []byte("---\nname: demo\ndescription: d\n---\n")},
		"demo/scripts/a.b":       {Data: []byte("one")},
		"demo/scripts/a-b":       {Data: []byte("two")},
		"demo/scripts/Fill Form": {Data: []byte("three")},
		"demo/" + long:           {Data: []byte("four")},
	}
	set, err := skills.LoadFolders(skills.Folder{FS: fsys})
	if err != nil || set.Len() != 1 {
		t.Fatal(err, set.Problems())
	}
	k := set.Skills()[0]
	sec := k.Section()
	if !sec.Folded() || len(sec.Children()) != 0 {
		t.Fatalf("a skill's section before it opens: got folded %v and %d children, want folded and none", sec.Folded(), len(sec.Children()))
	}
	if err := sec.Unfold(nil); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, c := range sec.Children() {
		keys = append(keys, c.Key())
		if len(c.Key()) > 64 {
			t.Errorf("key %q: over 64 characters", c.Key())
		}
	}
	if keys[0] != "scripts-fill-form" || keys[1] != "scripts-a-b" || keys[2] != "scripts-a-b-2" || !strings.HasPrefix(keys[3], "references-very-long-name-") {
		t.Errorf("keys: got %v", keys)
	}
	// A prompt accepts them all once the skill unfolds.
	tmpl, err := prompt.New("test", "keys", set.Section())
	if err != nil {
		t.Fatal(err)
	}
	p, err := tmpl.Bind()
	if err == nil {
		p, err = p.Unfold("skills.demo")
	}
	if err != nil {
		t.Fatalf("prompt: %v", err)
	}
	if _, ok := p.Template().Section("skills.demo." + keys[0]); !ok {
		t.Errorf("unfolded prompt: got paths %v, want skills.demo.%s among them", p.Template().Paths(), keys[0])
	}
}

// TestBrokenContent opens a skill whose instructions leave a code fence
// open, whose file is larger than a section shows, and whose files are
// gone: the prompt still renders, and says what happened.
func TestBrokenContent(t *testing.T) {
	dir := t.TempDir()
	big := strings.Repeat("line of text\n", 6000)
	files := map[string]string{
		"demo/SKILL.md":           "---\nname: demo\ndescription: Breaks things. Use in tests.\n---\nRun:\n\n```bash\nrun it\n",
		"demo/references/big.txt": big,
		"demo/scripts/gone.sh":    "echo gone\n",
		"demo/references/doc.md":  "# Doc\n\n~~~\nnever closed\n",
	}
	writeTree(t, dir, files, 0o644)
	set, err := skills.Load(dir)
	if err != nil || set.Len() != 1 {
		t.Fatal(err, set.Problems())
	}
	// The files are listed when first asked for, and the list is kept.
	if k, _ := set.Skill("demo"); len(k.Files()) != 3 {
		t.Fatalf("got files %v, want 3", k.Files())
	}
	if err := os.Remove(filepath.Join(dir, "demo", "scripts", "gone.sh")); err != nil {
		t.Fatal(err)
	}
	p := skillsPrompt(t, set)
	text := openAndRender(t, p, "skills.demo", "skills.demo.references-big-txt", "skills.demo.references-doc-md")
	for _, w := range []string{
		"```bash\nrun it\n```",                  // the open fence closed
		"~~~\nnever closed\n~~~",                // in a markdown file too
		"`scripts/gone.sh`: cannot be read now", // a file gone since listing
		"[The file goes on past 65.5 KB: read the rest from `" + filepath.Join(dir, "demo", "references", "big.txt") + "`.]",
	} {
		if !strings.Contains(text, w) {
			t.Errorf("got no %q in:\n%s", w, text[:min(len(text), 3000)])
		}
	}
	if strings.Count(text, "line of text") > 6000 {
		t.Errorf("the big file is shown whole")
	}
	if err := os.Remove(filepath.Join(dir, "demo", "SKILL.md")); err != nil {
		t.Fatal(err)
	}
	text = openAndRender(t, skillsPrompt(t, set), "skills.demo")
	if !strings.Contains(text, "The instructions could not be read: skills: demo: open demo/SKILL.md: no such file or directory.") {
		t.Errorf("a SKILL.md gone since loading: got\n%s", text)
	}
}
