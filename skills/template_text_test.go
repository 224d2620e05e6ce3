package skills_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/skills"
)

// TestDescriptionWithBraces: a description is text, shown as written, even
// where it reads like a template.
func TestDescriptionWithBraces(t *testing.T) {
	const desc = "Fill Jinja templates such as {{ name }} and {{.Field}}; use it for reports."
	fsys := fstest.MapFS{"jinja/SKILL.md": {Data: []byte("---\nname: jinja\ndescription: \"" + desc + "\"\n---\nRender with care.\n")}}
	set, err := skills.LoadFolders(skills.Folder{FS: fsys, Dir: "/opt/skills"})
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := prompt.New("test", "skills",
		section.New(section.Spec[section.None]{Key: "task", Title: "Task", Body: "Answer."}),
		set.Section(),
	)
	if err != nil {
		t.Fatal(err)
	}
	r, err := tmpl.MustBind().Render(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Text(), desc) {
		t.Errorf("the description is not shown as written:\n%s", r.Text())
	}
}
