package skills_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/skills"
)

// anywhereSkill writes a skill "forms" whose instructions point to files
// outside scripts/, references/ and assets/: files at its top, a
// reference/ folder (singular), nested examples, beside hidden files, a
// link inside, and links at its top leading out (to a file and to a
// folder). It returns the skills folder.
func anywhereSkill(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	folder := filepath.Join(base, "skills")
	writeTree(t, folder, map[string]string{
		"forms/SKILL.md":                  "---\nname: forms\ndescription: Fills forms.\n---\nRead forms.md and follow its instructions.\n",
		"forms/forms.md":                  "# Filling forms\n\nRun scripts/fill.py.\n",
		"forms/LICENSE.txt":               "Apache-2.0\n",
		"forms/scripts/fill.py":           "print('filled')\n",
		"forms/reference/fields.md":       "# Field kinds\n",
		"forms/examples/nested/sample.py": "# A sample.\n",
		"forms/.env":                      "TOKEN=hidden\n",
		"forms/.git/config":               "[core]\n",
		"forms/examples/.cache/x":         "hidden too\n",
		"outside/secret.txt":              "TOP SECRET outside the skill\n",
		"outside/dir/more.md":             "TOP SECRET too\n",
	}, 0o644)
	links := map[string]string{
		"forms/guide.md":  "forms.md",
		"forms/leak.md":   filepath.Join(folder, "outside", "secret.txt"),
		"forms/shared":    filepath.Join(folder, "outside", "dir"),
		"forms/templates": "reference",
	}
	linkTree(t, folder, links)
	return folder
}

// TestFilesAnywhere lists and reads every file of a skill, wherever it is
// in the skill's directory, as the format lets instructions point to any
// of them; hidden files, SKILL.md and links leading out are left out.
func TestFilesAnywhere(t *testing.T) {
	set, err := skills.Load(anywhereSkill(t))
	if err != nil {
		t.Fatal(err)
	}
	k, ok := set.Skill("forms")
	if !ok {
		t.Fatalf("forms not loaded: %v", set.Problems())
	}
	// templates/ leads to reference/, listed already: its files are listed
	// once, under their own path, and read under both.
	want := []string{"LICENSE.txt", "forms.md", "guide.md", "scripts/fill.py", "reference/fields.md", "examples/nested/sample.py"}
	if got := k.Files(); !slices.Equal(got, want) {
		t.Errorf("got files %v, want %v", got, want)
	}
	if got, want := k.LinksOutside(), []string{"leak.md", "shared"}; !slices.Equal(got, want) {
		t.Errorf("got links outside %v, want %v", got, want)
	}
	if data, err := k.ReadFile("forms.md"); err != nil || !strings.HasPrefix(string(data), "# Filling forms") {
		t.Errorf("ReadFile(forms.md) = %q, %v; want the file", data, err)
	}
	for _, p := range []string{"reference/fields.md", "templates/fields.md"} {
		if f, err := k.Inspect(p); err != nil || f.First != "Field kinds" {
			t.Errorf("Inspect(%s) = %+v, %v; want its heading", p, f, err)
		}
	}
	for _, p := range []string{".env", ".git/config", "examples/.cache/x", "leak.md", "shared/more.md", skills.FileName} {
		if data, err := k.ReadFile(p); err == nil {
			t.Errorf("ReadFile(%s) read %q, want an error", p, data)
		}
	}

	p := skillsPrompt(t, set)
	opened := openAndRender(t, p, "skills.forms")
	for _, s := range []string{"`forms.md`", "Filling forms", "`reference/fields.md`", "`leak.md`, `shared`"} {
		if !strings.Contains(opened, s) {
			t.Errorf("the opened skill lacks %q:\n%s", s, opened)
		}
	}
	shown := openAndRender(t, p, "skills.forms.forms-md")
	if !strings.Contains(shown, "Run scripts/fill.py.") {
		t.Errorf("the opened forms.md does not show its content:\n%s", shown)
	}
	if strings.Contains(opened+shown, "TOP SECRET") || strings.Contains(opened+shown, "TOKEN=hidden") {
		t.Errorf("a file outside the skill or hidden is shown:\n%s\n%s", opened, shown)
	}
}

// TestValidateLinksAnywhere validates the skill: its links leading out,
// at its top too, are reported.
func TestValidateLinksAnywhere(t *testing.T) {
	r, err := skills.Validate(filepath.Join(anywhereSkill(t), "forms"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range r.Problems {
		got = append(got, filepath.Base(p.File)+" "+string(p.Rule))
	}
	if want := []string{"leak.md links-inside", "shared links-inside"}; !slices.Equal(got, want) {
		t.Errorf("got problems %v, want %v", got, want)
	}
}
