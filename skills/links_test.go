package skills_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/skills"
)

// linkedSkill writes a skill "demo" to a new folder whose references/
// holds a file, a link to it (relative and absolute), a link to a secret outside the skills
// folder, and a link to a folder outside. It returns the skills folder
// and the secret's path.
func linkedSkill(t *testing.T) (folder, secret string) {
	t.Helper()
	base := t.TempDir()
	folder = filepath.Join(base, "skills")
	outside := filepath.Join(base, "outside")
	refs := filepath.Join(folder, "demo", "references")
	for _, d := range []string{refs, outside, filepath.Join(outside, "dir")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	secret = filepath.Join(outside, "secret.txt")
	files := map[string]string{
		filepath.Join(folder, "demo", skills.FileName): "---\nname: demo\ndescription: A demo.\n---\nSee references/.\n",
		filepath.Join(refs, "real.md"):                 "# Real notes\n",
		secret:                                         "TOP SECRET outside the project\n",
		filepath.Join(outside, "dir", "more.txt"):      "TOP SECRET too\n",
	}
	for name, data := range files {
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		filepath.Join(refs, "inside.md"):         "real.md",
		filepath.Join(refs, "absolute.md"):       filepath.Join(refs, "real.md"),
		filepath.Join(refs, "notes.md"):          secret,
		filepath.Join(refs, "relative.md"):       "../../../outside/secret.txt",
		filepath.Join(folder, "demo", "assets"):  filepath.Join(outside, "dir"),
		filepath.Join(folder, "demo", "scripts"): "references",
	}
	for name, target := range links {
		if err := os.Symlink(target, name); err != nil {
			t.Skipf("no symbolic links here: %v", err)
		}
	}
	return folder, secret
}

// TestLinksOutside loads a skill whose files include links leading out of
// its directory: they are neither listed nor read, its section says why,
// and links inside the directory still work.
func TestLinksOutside(t *testing.T) {
	folder, _ := linkedSkill(t)
	set, err := skills.Load(folder)
	if err != nil {
		t.Fatal(err)
	}
	k, ok := set.Skill("demo")
	if !ok {
		t.Fatalf("demo not loaded: %v", set.Problems())
	}
	// scripts/ leads to references/: its files are listed once, under
	// their own path.
	wantFiles := []string{"references/absolute.md", "references/inside.md", "references/real.md"}
	if got := k.Files(); !slices.Equal(got, wantFiles) {
		t.Errorf("got files %v, want %v", got, wantFiles)
	}
	wantOut := []string{"assets", "references/notes.md", "references/relative.md"}
	if got := k.LinksOutside(); !slices.Equal(got, wantOut) {
		t.Errorf("got links outside %v, want %v", got, wantOut)
	}
	for _, p := range []string{"references/notes.md", "references/relative.md", "assets/more.txt"} {
		if data, err := k.ReadFile(p); err == nil {
			t.Errorf("ReadFile(%s) read %q, want an error", p, data)
		}
	}
	for _, p := range []string{"references/inside.md", "references/absolute.md", "scripts/absolute.md"} {
		if data, err := k.ReadFile(p); err != nil || string(data) != "# Real notes\n" {
			t.Errorf("ReadFile(%s) = %q, %v; want the linked file", p, data, err)
		}
	}
	text := k.Text()
	if !strings.Contains(text, "references/notes.md") || !strings.Contains(text, "outside the skill's directory") {
		t.Errorf("the skill's text does not say which links are left out and why:\n%s", text)
	}

	if shown := openAndRender(t, skillsPrompt(t, set), "skills.demo"); strings.Contains(shown, "TOP SECRET") {
		t.Errorf("the opened skill shows a file outside its directory:\n%s", shown)
	}
}

// TestLinkSwappedOut replaces a listed file by a link leading out of the
// skill's directory after the listing: reading it is refused.
func TestLinkSwappedOut(t *testing.T) {
	folder, secret := linkedSkill(t)
	set, err := skills.Load(folder)
	if err != nil {
		t.Fatal(err)
	}
	k, _ := set.Skill("demo")
	if !slices.Contains(k.Files(), "references/real.md") {
		t.Fatalf("references/real.md not listed: %v", k.Files())
	}
	real := filepath.Join(folder, "demo", "references", "real.md")
	if err := os.Remove(real); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, real); err != nil {
		t.Fatal(err)
	}
	data, err := k.ReadFile("references/real.md")
	if err == nil || !strings.Contains(err.Error(), "outside the skill's directory") {
		t.Errorf("ReadFile = %q, %v; want an error saying the file leads outside the skill's directory", data, err)
	}
	if f, err := k.Inspect("references/real.md"); err == nil {
		t.Errorf("Inspect = %+v, want an error", f)
	}
}

// TestSkillFileOutside loads a skill whose SKILL.md is a link out of its
// directory: the skill is a problem that says so.
func TestSkillFileOutside(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "skills", "demo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	elsewhere := filepath.Join(base, "SKILL.md")
	if err := os.WriteFile(elsewhere, []byte("---\nname: demo\ndescription: A demo.\n---\nTOP SECRET\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(dir, skills.FileName)); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	set, err := skills.Load(filepath.Join(base, "skills"))
	if err != nil {
		t.Fatal(err)
	}
	ps := set.Problems()
	if set.Len() != 0 || len(ps) != 1 || !strings.Contains(ps[0].Message, "outside the skill's directory") {
		t.Errorf("got %d skills and problems %v, want the skill left out as leading outside its directory", set.Len(), ps)
	}
}

// TestValidateLinksOutside validates a skill with links leading out of its
// directory: each is reported.
func TestValidateLinksOutside(t *testing.T) {
	folder, _ := linkedSkill(t)
	r, err := skills.Validate(filepath.Join(folder, "demo"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range r.Problems {
		if p.Rule == skills.RuleLinks {
			got = append(got, strings.TrimPrefix(p.File, filepath.Join(folder, "demo")+string(filepath.Separator)))
		}
	}
	var want []string
	for _, p := range []string{"assets", "references/notes.md", "references/relative.md"} {
		want = append(want, filepath.FromSlash(p))
	}
	if !slices.Equal(got, want) {
		t.Errorf("got link problems for %v, want %v (all: %v)", got, want, r.Problems)
	}
	if len(r.Valid) != 0 || r.Checked() != 1 {
		t.Errorf("got %d checked, valid %v; want 1 checked, none valid", r.Checked(), r.Valid)
	}
}

// loopSkill writes a skill "lp" whose folders at its top lead back to
// its own directory (self -> ., up -> ../lp), with a link to its SKILL.md
// and links to nothing. It returns the skill's directory.
func loopSkill(t *testing.T) string {
	t.Helper()
	folder := filepath.Join(t.TempDir(), "skills")
	writeTree(t, folder, map[string]string{
		"lp/SKILL.md":     "---\nname: lp\ndescription: Loops.\n---\nRun scripts/a.py.\n",
		"lp/scripts/a.py": "print(1)\n",
	}, 0o644)
	dir := filepath.Join(folder, "lp")
	links := map[string]string{
		"self":             ".",
		"up":               "../lp",
		"instructions.md":  skills.FileName,
		"scripts/instr.md": "../" + skills.FileName,
		"dangling":         "nowhere",
		"scripts/dang2":    "../nowhere2",
		"gone.md":          filepath.Join(dir, "missing.md"),
	}
	linkTree(t, dir, links)
	return dir
}

// TestLinksLoop lists a skill whose folders lead back to its directory:
// each file is listed once, and SKILL.md is read under no other path.
func TestLinksLoop(t *testing.T) {
	set, err := skills.Load(filepath.Dir(loopSkill(t)))
	if err != nil {
		t.Fatal(err)
	}
	k, ok := set.Skill("lp")
	if !ok {
		t.Fatalf("lp not loaded: %v", set.Problems())
	}
	if got, want := k.Files(), []string{"scripts/a.py"}; !slices.Equal(got, want) {
		t.Errorf("got files %v, want %v", got, want)
	}
	if got := k.LinksOutside(); len(got) != 0 {
		t.Errorf("got links outside %v, want none", got)
	}
	for _, p := range []string{"self/SKILL.md", "up/SKILL.md", "self/self/SKILL.md", "instructions.md", "scripts/instr.md"} {
		data, err := k.ReadFile(p)
		if err == nil || !strings.Contains(err.Error(), "the skill's SKILL.md") {
			t.Errorf("ReadFile(%s) = %q, %v; want an error saying it is the skill's SKILL.md", p, data, err)
		}
		if f, err := k.Inspect(p); err == nil {
			t.Errorf("Inspect(%s) = %+v, want an error", p, f)
		}
	}
	if data, err := k.ReadFile("self/scripts/a.py"); err != nil || string(data) != "print(1)\n" {
		t.Errorf("ReadFile(self/scripts/a.py) = %q, %v; want the file", data, err)
	}
}

// TestValidateLinksDangling validates the skill: its links to nothing are
// reported as such, wherever they are, and none as leading outside.
func TestValidateLinksDangling(t *testing.T) {
	dir := loopSkill(t)
	r, err := skills.Validate(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range r.Problems {
		rel, _ := filepath.Rel(dir, p.File)
		got = append(got, filepath.ToSlash(rel)+" "+string(p.Rule))
		if !strings.Contains(p.Message, "which does not exist") || strings.Contains(p.Message, "outside") {
			t.Errorf("%s: got %q, want it to say the link leads to nothing", rel, p.Message)
		}
	}
	slices.Sort(got)
	if want := []string{"dangling links-inside", "gone.md links-inside", "scripts/dang2 links-inside"}; !slices.Equal(got, want) {
		t.Errorf("got problems %v, want %v", got, want)
	}
}

// TestValidateLinksLooping validates a skill whose links lead back to
// themselves (through their own name, an absolute path, a path out and in
// again, or each other): each is reported as a loop, none as leading
// outside, and none is listed.
func TestValidateLinksLooping(t *testing.T) {
	folder := filepath.Join(t.TempDir(), "skills")
	writeTree(t, folder, map[string]string{
		"lp/SKILL.md":     "---\nname: lp\ndescription: Loops.\n---\nRun scripts/a.py.\n",
		"lp/scripts/a.py": "print(1)\n",
	}, 0o644)
	dir := filepath.Join(folder, "lp")
	links := map[string]string{
		"me":         "me",
		"abs":        filepath.Join(dir, "abs"),
		"round":      "../lp/round",
		"scripts/b1": "b2",
		"scripts/b2": "b1",
	}
	linkTree(t, dir, links)
	r, err := skills.Validate(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range r.Problems {
		rel, _ := filepath.Rel(dir, p.File)
		got = append(got, filepath.ToSlash(rel)+" "+string(p.Rule))
		if !strings.Contains(p.Message, "which leads back to the link itself (a loop of links)") || strings.Contains(p.Message, "outside") {
			t.Errorf("%s: got %q, want it to say the link loops", rel, p.Message)
		}
	}
	slices.Sort(got)
	if want := []string{"abs links-inside", "me links-inside", "round links-inside", "scripts/b1 links-inside", "scripts/b2 links-inside"}; !slices.Equal(got, want) {
		t.Errorf("got problems %v, want %v", got, want)
	}
	set, err := skills.Load(folder)
	if err != nil {
		t.Fatal(err)
	}
	k, ok := set.Skill("lp")
	if !ok {
		t.Fatalf("lp not loaded: %v", set.Problems())
	}
	if got, want := k.Files(), []string{"scripts/a.py"}; !slices.Equal(got, want) {
		t.Errorf("got files %v, want %v", got, want)
	}
	if got := k.LinksOutside(); len(got) != 0 {
		t.Errorf("got links outside %v, want none", got)
	}
}
