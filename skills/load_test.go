package skills_test

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/unfold-dev/unfold/skills"
)

// TestBrokenSkills loads a folder with one skill per rule broken, each
// broken once, and one that is fine: each broken skill is reported with
// its file, line and rule and left out; the fine one loads.
func TestBrokenSkills(t *testing.T) {
	set, err := skills.Load("testdata/broken")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, k := range set.Skills() {
		names = append(names, k.Name)
	}
	if !slices.Equal(names, []string{"fine"}) {
		t.Errorf("loaded: got %v, want [fine] alone", names)
	}
	abs, _ := filepath.Abs("testdata/broken")
	long := strings.Repeat("a", 65)
	want := map[skills.Rule]struct {
		file string // relative to the folder
		line int
	}{
		skills.RuleSkillFile:           {"wrong-case/skill.md", 0},
		skills.RuleFrontMatter:         {"no-front-matter/SKILL.md", 1},
		skills.RuleYAML:                {"bad-yaml/SKILL.md", 3},
		skills.RuleKnownFields:         {"extra-field/SKILL.md", 4},
		skills.RuleNameRequired:        {"no-name/SKILL.md", 1},
		skills.RuleNameLength:          {long + "/SKILL.md", 2},
		skills.RuleNameCharacters:      {"Upper-Case/SKILL.md", 2},
		skills.RuleNameHyphens:         {"double--hyphen/SKILL.md", 2},
		skills.RuleNameDirectory:       {"mismatch/SKILL.md", 2},
		skills.RuleDescriptionRequired: {"no-description/SKILL.md", 1},
		skills.RuleDescriptionLength:   {"long-description/SKILL.md", 3},
		skills.RuleLicense:             {"license-list/SKILL.md", 4},
		skills.RuleCompatibility:       {"long-compatibility/SKILL.md", 4},
		skills.RuleMetadata:            {"nested-metadata/SKILL.md", 6},
		skills.RuleAllowedTools:        {"tools-mapping/SKILL.md", 4},
	}
	got := map[skills.Rule]int{}
	for _, p := range set.Problems() {
		got[p.Rule]++
		w, ok := want[p.Rule]
		if !ok {
			t.Errorf("unexpected problem %s", p)
			continue
		}
		if wantFile := filepath.Join(abs, filepath.FromSlash(w.file)); p.File != wantFile || p.Line != w.line {
			t.Errorf("rule %s: got %s:%d, want %s:%d", p.Rule, p.File, p.Line, wantFile, w.line)
		}
		if p.Message == "" || !strings.HasSuffix(p.String(), "("+string(p.Rule)+")") {
			t.Errorf("rule %s: got %q, want a message and the rule", p.Rule, p)
		}
	}
	for rule := range want {
		if got[rule] != 1 {
			t.Errorf("rule %s: reported %d times, want once", rule, got[rule])
		}
	}
}

// TestFrontMatter checks the front matter rules one case at a time, on
// SKILL.md files in memory.
func TestFrontMatter(t *testing.T) {
	cases := []struct {
		name string
		dir  string // the skill's directory; "" means demo
		src  string // its SKILL.md
		rule skills.Rule
		line int
		msg  string // part of the message of the first problem
		more int    // problems after the first
	}{
		{"unclosed", "", "---\nname: demo\ndescription: d\n", skills.RuleFrontMatter, 1, "never closed", 0},
		{"not a mapping", "", "---\n- name\n- demo\n---\n", skills.RuleFrontMatter, 2, "must be a YAML mapping", 0},
		{"a scalar", "", "---\njust text\n---\n", skills.RuleFrontMatter, 2, "must be a YAML mapping", 0},
		{"empty", "", "---\n---\nbody\n", skills.RuleNameRequired, 1, "name is missing", 1},
		{"duplicate key", "", "---\nname: demo\nname: demo\ndescription: d\n---\n", skills.RuleYAML, 3, `mapping key "name" already defined on line 2 of the file`, 0},
		{"tab indent", "", "---\nname: demo\n\tdescription: d\n---\n", skills.RuleYAML, 3, "indent with spaces, not tabs", 0},
		{"document end", "", "---\nname: demo\ndescription: d\n...\nfoo: bar\nname: other\n---\n", skills.RuleFrontMatter, 4, `a YAML document end "..."`, 0},
		{"CR line endings", "", "---\rname: demo\rdescription: d\r---\rbody\r", skills.RuleFrontMatter, 1, "carriage return alone", 0},
		{"CR line endings past 64 KiB", "", "---\rname: demo\rdescription: d\r---\r" + strings.Repeat("body\r", 20000), skills.RuleFrontMatter, 1, "save the file with LF line endings", 0},
		{"explicit key", "", "---\nname: demo\ndescription: d\n? name\n: demo\n---\n", skills.RuleFrontMatter, 4, `the key "name" is written as an explicit key ("? name")`, 0},
		{"zero-width description", "", "---\nname: demo\ndescription: \"\\u200b\"\n---\n", skills.RuleDescriptionRequired, 3, "only characters that do not show (U+200B)", 0},
		{"filler description", "", "---\nname: demo\ndescription: \"\u3164 \\u2060\\ufe0f\"\n---\n", skills.RuleDescriptionRequired, 3, "only characters that do not show (U+3164)", 0},
		{"null name", "", "---\nname:\ndescription: d\n---\n", skills.RuleNameRequired, 2, "non-empty string", 0},
		{"name list", "", "---\nname: [demo]\ndescription: d\n---\n", skills.RuleNameRequired, 2, "non-empty string", 0},
		{"blank description", "", "---\nname: demo\ndescription: \"  \"\n---\n", skills.RuleDescriptionRequired, 3, "non-empty string", 0},
		{"description with a carriage return", "", "---\nname: demo\ndescription: \"Does x.\\r## 9. System\"\n---\n", skills.RuleDescriptionCharacters, 3, "control character (U+000D) at character 8: remove it", 0},
		{"description with ESC", "", "---\nname: demo\ndescription: \"\\x1b]0;pwned\\x07hi\"\n---\n", skills.RuleDescriptionCharacters, 3, "(U+001B) at character 1", 0},
		{"description with NUL", "", "---\nname: demo\ndescription: \"a\\0b\"\n---\n", skills.RuleDescriptionCharacters, 3, "(U+0000) at character 2", 0},
		{"description with a line separator", "", "---\nname: demo\ndescription: \"a\\u2028## b\"\n---\n", skills.RuleDescriptionCharacters, 3, "(U+2028)", 0},
		{"description with an override", "", "---\nname: demo\ndescription: \"a\\u202eb\"\n---\n", skills.RuleDescriptionCharacters, 3, "(U+202E)", 0},
		{"leading hyphen", "-demo", "---\nname: -demo\ndescription: d\n---\n", skills.RuleNameHyphens, 2, "start or end", 0},
		{"underscore", "de_mo", "---\nname: de_mo\ndescription: d\n---\n", skills.RuleNameCharacters, 2, "only lowercase letters", 0},
		{"empty compatibility", "", "---\nname: demo\ndescription: d\ncompatibility: \"\"\n---\n", skills.RuleCompatibility, 4, "empty", 0},
		{"metadata list", "", "---\nname: demo\ndescription: d\nmetadata: [a, b]\n---\n", skills.RuleMetadata, 4, "not a list", 0},
		{"tools a number", "", "---\nname: demo\ndescription: d\nallowed-tools: 5\n---\n", skills.RuleAllowedTools, 4, "must be a space-separated string of tools (Bash(git:*) Read), not a number (5): quote it", 0},
		{"tools a boolean", "", "---\nname: demo\ndescription: d\nallowed-tools: true\n---\n", skills.RuleAllowedTools, 4, "not a boolean (true)", 0},
		{"tools list with a number", "", "---\nname: demo\ndescription: d\nallowed-tools: [Bash, 5]\n---\n", skills.RuleAllowedTools, 4, "each tool must be a string, not a number (5): quote it", 0},
		{"tools list with a null", "", "---\nname: demo\ndescription: d\nallowed-tools:\n  - Bash\n  -\n---\n", skills.RuleAllowedTools, 6, "each tool must be a string, not an empty item: remove it", 0},
		{"tools list of maps", "", "---\nname: demo\ndescription: d\nallowed-tools:\n  - a: b\n---\n", skills.RuleAllowedTools, 5, "each tool must be a string", 0},
		{"too large", "", "---\nname: demo\ndescription: d\n" + strings.Repeat("# padding\n", 7000) + "---\n", skills.RuleFrontMatter, 1, "not closed within 64 KiB", 0},
		{"no closing within one long line", "", "---\nname: demo\ndescription: " + strings.Repeat("x", 70000) + "\n---\n", skills.RuleFrontMatter, 1, "not closed within 64 KiB", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := cmp.Or(c.dir, "demo")
			set, err := skills.LoadFolders(skills.Folder{FS: fstest.MapFS{dir + "/SKILL.md": {Data: []byte(c.src)}}})
			if err != nil {
				t.Fatal(err)
			}
			ps := set.Problems()
			if set.Len() != 0 || len(ps) != 1+c.more {
				t.Fatalf("got %d skills and problems %v, want %d problems", set.Len(), ps, 1+c.more)
			}
			p := ps[0]
			if p.Rule != c.rule || p.Line != c.line || p.File != dir+"/SKILL.md" || !strings.Contains(p.Message, c.msg) {
				t.Errorf("got %s, want %s/SKILL.md:%d: ...%s... (%s)", p, dir, c.line, c.msg, c.rule)
			}
		})
	}
}

// TestFields checks what loads: every field, written in the ways YAML
// allows.
func TestFields(t *testing.T) {
	src := "\uFEFF---\r\n" +
		"name: demo\r\n" +
		"description: >\r\n  Folded over\r\n  two lines.\r\n" +
		"license: 'MIT'\r\n" +
		"compatibility: Requires git\r\n" +
		"metadata:\r\n  version: 1.0\r\n  stable: true\r\n  author: \"ex\"\r\n" +
		"allowed-tools:\r\n  - Bash(git:*) Read\r\n  - Write\r\n" +
		"---\r\n\r\n# Demo\r\n\r\nDo it.\r\n"
	set, err := skills.LoadFolders(skills.Folder{FS: fstest.MapFS{"demo/SKILL.md": {Data: []byte(src)}}})
	if err != nil {
		t.Fatal(err)
	}
	k, ok := set.Skill("demo")
	if !ok {
		t.Fatalf("demo did not load: %v", set.Problems())
	}
	if k.Description != "Folded over two lines." || k.License != "MIT" || k.Compatibility != "Requires git" {
		t.Errorf("got description %q, license %q, compatibility %q", k.Description, k.License, k.Compatibility)
	}
	if got := fmt.Sprint(k.Metadata); got != "map[author:ex stable:true version:1.0]" {
		t.Errorf("metadata: got %s, want the values as written", got)
	}
	if !slices.Equal(k.AllowedTools, []string{"Bash(git:*)", "Read", "Write"}) {
		t.Errorf("allowed tools: got %q", k.AllowedTools)
	}
	body, err := k.Instructions()
	if err != nil || body != "# Demo\r\n\r\nDo it." {
		t.Errorf("instructions: got %q, %v", body, err)
	}
	if k.Dir != "" {
		t.Errorf("dir: got %q, want none for a folder not on disk", k.Dir)
	}
}

// TestUniqueNames loads the valid skills from two folders: the first
// folder's are kept and each of the other's is a problem.
func TestUniqueNames(t *testing.T) {
	set, err := skills.LoadFolders(
		skills.Folder{FS: os.DirFS("testdata/valid"), Dir: "/first"},
		skills.Folder{FS: fstest.MapFS{"pdf/SKILL.md": {Data: []byte("---\nname: pdf\ndescription: Another.\n---\n")}}, Dir: "/second"},
	)
	if err != nil {
		t.Fatal(err)
	}
	k, _ := set.Skill("pdf")
	if set.Len() != 3 || k.Dir != "/first/pdf" {
		t.Errorf("got %d skills, pdf from %q, want 3 and pdf from /first", set.Len(), k.Dir)
	}
	ps := set.Problems()
	if len(ps) != 1 || ps[0].Rule != skills.RuleUnique || ps[0].File != "/second/pdf/SKILL.md" || !strings.Contains(ps[0].Message, "/first/pdf/SKILL.md") {
		t.Errorf("problems: got %v, want the second pdf reported as a duplicate of the first", ps)
	}
}

// TestValidateUnique validates three folders in turn, the second with a
// skill named as one of the first's, the third with one named as the
// second's only skill, which has a problem only Validate checks: each
// later one is reported as loading would leave it out.
func TestValidateUnique(t *testing.T) {
	base := t.TempDir()
	writeTree(t, base, map[string]string{
		"second/pdf/SKILL.md":  "---\nname: pdf\ndescription: Another.\n---\n",
		"second/solo/SKILL.md": "---\nname: solo\ndescription: Solo.\n---\n",
		"third/solo/SKILL.md":  "---\nname: solo\ndescription: Solo again.\n---\n",
	}, 0o644)
	if err := os.Symlink("/nowhere", filepath.Join(base, "second", "solo", "gone")); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	loaded := map[string]string{}
	var reports []*skills.Report
	for _, dir := range []string{"testdata/valid", filepath.Join(base, "second"), filepath.Join(base, "third"), "testdata/valid"} {
		r, err := skills.Validate(dir)
		if err != nil {
			t.Fatal(err)
		}
		r.Unique(loaded)
		reports = append(reports, r)
	}
	first, _ := filepath.Abs("testdata/valid/pdf/SKILL.md")
	for i, want := range []struct {
		valid  []string
		unique []string // the files reported as name-unique
		clash  string   // in their message
	}{
		{[]string{"greet", "minimal", "pdf"}, nil, ""},
		{nil, []string{filepath.Join(base, "second", "pdf", "SKILL.md")}, first},
		{nil, []string{filepath.Join(base, "third", "solo", "SKILL.md")}, filepath.Join(base, "second", "solo", "SKILL.md")},
		{[]string{"greet", "minimal", "pdf"}, nil, ""}, // the same files again: no clash
	} {
		r := reports[i]
		var unique []string
		for _, p := range r.Problems {
			if p.Rule == skills.RuleUnique {
				unique = append(unique, p.File)
				if !strings.Contains(p.Message, want.clash) || !strings.Contains(p.Message, "would be left out") {
					t.Errorf("report %d: got %q, want it to name %s and say this one would be left out", i, p.Message, want.clash)
				}
			}
		}
		if !slices.Equal(r.Valid, want.valid) || !slices.Equal(unique, want.unique) {
			t.Errorf("report %d: got valid %v and name-unique problems for %v, want %v and %v", i, r.Valid, unique, want.valid, want.unique)
		}
	}
	if got := reports[1].Checked(); got != 2 {
		t.Errorf("second folder: %d checked, want 2", got)
	}
}

// TestFolderSize bounds the directories read from one folder.
func TestFolderSize(t *testing.T) {
	fsys := fstest.MapFS{}
	for i := range skills.MaxSkills + 2 {
		name := fmt.Sprintf("s%05d", i)
		fsys[name+"/SKILL.md"] = &fstest.MapFile{Data: []byte("---\nname: " + name + "\ndescription: d\n---\n")}
	}
	set, err := skills.LoadFolders(skills.Folder{FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	ps := set.Problems()
	if set.Len() != skills.MaxSkills || len(ps) != 1 || ps[0].Rule != skills.RuleFolderSize {
		t.Errorf("got %d skills and %v, want %d and one folder-size problem", set.Len(), ps, skills.MaxSkills)
	}
}

// TestLoadErrors: a folder that cannot be read is an error, not a
// problem.
func TestLoadErrors(t *testing.T) {
	if _, err := skills.Load("testdata/no-such-folder"); err == nil || !strings.Contains(err.Error(), "no-such-folder") {
		t.Errorf("got %v, want an error naming the folder", err)
	}
}

// filesTree is a skill with files at its top, in its resource folders,
// hidden ones, nested ones, and more than MaxFiles.
func filesTree() fstest.MapFS {
	fsys := fstest.MapFS{
		"demo/SKILL.md":                {Data: []byte("---\nname: demo\ndescription: d\n---\n")},
		"demo/notes.txt":               {Data: []byte("at the top")},
		"demo/.env":                    {Data: []byte("hidden")},
		"demo/scripts/.hidden":         {Data: []byte("x")},
		"demo/scripts/.git/config":     {Data: []byte("x")},
		"demo/scripts/run.sh":          {Data: []byte("#!/bin/sh\n\n# Runs it.\necho hi\n")},
		"demo/references/guide/a.md":   {Data: []byte("Intro line\n\n## The heading\n")},
		"demo/references/plain.md":     {Data: []byte("\n\nFirst line, no heading.\n")},
		"demo/assets/latin1.txt":       {Data: []byte("caf\xe9\n")},
		"demo/assets/long-first-line":  {Data: []byte(strings.Repeat("word ", 40))},
		"demo/references/zz-multibyte": {Data: []byte(strings.Repeat("é", 300))},
	}
	for i := range skills.MaxFiles {
		fsys[fmt.Sprintf("demo/assets/many/%03d.txt", i)] = &fstest.MapFile{Data: []byte("n")}
	}
	return fsys
}

// TestFiles lists a skill's files: top-level files first, then the
// resource folders (breadth first), hidden files and SKILL.md left out, nested ones kept,
// at most MaxFiles.
func TestFiles(t *testing.T) {
	fsys := filesTree()
	set, err := skills.LoadFolders(skills.Folder{FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	k, ok := set.Skill("demo")
	if !ok {
		t.Fatal(set.Problems())
	}
	if len(k.Files()) != skills.MaxFiles || k.Omitted() != 7 {
		t.Errorf("got %d files listed and %d omitted, want %d and 7", len(k.Files()), k.Omitted(), skills.MaxFiles)
	}
	size := func(p string) int64 { return int64(len(fsys["demo/"+p].Data)) }
	want := []skills.File{
		{Path: "scripts/run.sh", Size: size("scripts/run.sh"), First: "# Runs it."},
		{Path: "references/guide/a.md", Size: size("references/guide/a.md"), First: "The heading"},
		{Path: "references/plain.md", Size: size("references/plain.md"), First: "First line, no heading."},
		{Path: "assets/latin1.txt", Size: 5, Binary: true},
		{Path: "assets/long-first-line", Size: 200, First: strings.TrimSpace(strings.Repeat("word ", 19)) + "…"},
	}
	if first := k.Files()[:4]; !slices.Equal(first, []string{"notes.txt", "scripts/run.sh", "references/plain.md", "references/zz-multibyte"}) {
		t.Errorf("files: got %v first, want the top, then scripts, then references, in path order, each folder's own files before its subfolders'", first)
	}
	for _, w := range want {
		if got, err := k.Inspect(w.Path); err != nil || got != w {
			t.Errorf("inspect %s: got %+v, %v, want %+v", w.Path, got, err, w)
		}
	}
	if f, err := k.Inspect("references/zz-multibyte"); err != nil || f.Binary {
		t.Errorf("a file whose first bytes end inside a character: got %+v, %v, want text", f, err)
	}
	for _, p := range []string{skills.FileName, ".env", "scripts/.hidden", "../demo/notes.txt", "/demo/notes.txt", "scripts/../notes.txt"} {
		if _, err := k.Inspect(p); err == nil {
			t.Errorf("inspect %s, which is not one of the skill's files: got no error", p)
		}
		if _, err := k.ReadFile(p); err == nil {
			t.Errorf("read %s, which is not one of the skill's files: got no error", p)
		}
	}
	// Past MaxFiles a file is not listed, and still read: the cap bounds
	// the list, not what the instructions may point to.
	if slices.Contains(k.Files(), "assets/many/255.txt") {
		t.Fatal("assets/many/255.txt should be past the list")
	}
	if data, err := k.ReadFile("assets/many/255.txt"); err != nil || string(data) != "n" {
		t.Errorf("read assets/many/255.txt, past the list: got %q, %v, want the file", data, err)
	}
	if data, err := k.ReadFile("notes.txt"); err != nil || string(data) != "at the top" {
		t.Errorf("read notes.txt: got %q, %v", data, err)
	}
	if _, err := k.ReadFile("../demo/SKILL.md"); err == nil {
		t.Errorf("read a path leaving the resources: got no error")
	}
	if data, err := k.ReadFile("scripts/run.sh"); err != nil || !strings.HasSuffix(string(data), "echo hi\n") {
		t.Errorf("read scripts/run.sh: got %q, %v", data, err)
	}
}

// TestFilesOnDisk lists the same skill written to disk, where folders are
// read with system calls alone: the same files, in the same order.
func TestFilesOnDisk(t *testing.T) {
	fsys := filesTree()
	dir := t.TempDir()
	files := map[string]string{}
	for p, f := range fsys {
		files[p] = string(f.Data)
	}
	writeTree(t, dir, files, 0o644)
	inMemory, err := skills.LoadFolders(skills.Folder{FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	onDisk, err := skills.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := inMemory.Skill("demo")
	got, ok := onDisk.Skill("demo")
	if !ok {
		t.Fatal(onDisk.Problems())
	}
	gotFiles, wantFiles := got.Files(), want.Files()
	if !slices.Equal(gotFiles, wantFiles) || got.Omitted() != want.Omitted() {
		t.Errorf("got %d files (%v ...) and %d omitted, want %d (%v ...) and %d",
			len(gotFiles), gotFiles[:min(4, len(gotFiles))], got.Omitted(), len(wantFiles), wantFiles[:min(4, len(wantFiles))], want.Omitted())
	}
}

// linkTree makes, under dir, the symbolic links of links (slash-separated
// names to targets), skipping the test where there are none.
func linkTree(t *testing.T, dir string, links map[string]string) {
	t.Helper()
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, filepath.FromSlash(name))); err != nil {
			t.Skipf("no symbolic links here: %v", err)
		}
	}
}

// writeTree writes files (slash-separated paths under dir) with the
// permissions perm, making their folders.
func writeTree(t *testing.T, dir string, files map[string]string, perm os.FileMode) {
	t.Helper()
	for name, data := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), perm); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDiscover finds a project's skills folders in order, and only those
// that exist.
func TestDiscover(t *testing.T) {
	project := t.TempDir()
	for _, d := range []string{".agents/skills", "skills"} {
		if err := os.MkdirAll(filepath.Join(project, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(project, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A file where a folder is looked for is not a folder.
	if err := os.WriteFile(filepath.Join(project, ".claude", "skills"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := skills.Discover(project)
	want := []string{filepath.Join(project, ".agents", "skills"), filepath.Join(project, "skills")}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("got %v, %v, want %v", got, err, want)
	}
}

// TestFilesWalkBounded lists a skill holding a folder tree of more
// entries than MaxWalk (a node_modules): the walk stops, the files past
// MaxFiles are counted as a lower bound, and the section says so.
func TestFilesWalkBounded(t *testing.T) {
	fsys := fstest.MapFS{"big/SKILL.md": {Data: []byte("---\nname: big\ndescription: d\n---\n")}}
	const dirs, per = 40, 1000 // 40,000 files, more than MaxWalk
	for d := range dirs {
		for f := range per {
			fsys[fmt.Sprintf("big/node_modules/p%02d/%04d.js", d, f)] = &fstest.MapFile{Data: []byte("x")}
		}
	}
	set, err := skills.LoadFolders(skills.Folder{FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	k, ok := set.Skill("big")
	if !ok {
		t.Fatal(set.Problems())
	}
	if len(k.Files()) != skills.MaxFiles || !k.Uncounted() {
		t.Fatalf("got %d files, uncounted %v; want %d and the walk stopped", len(k.Files()), k.Uncounted(), skills.MaxFiles)
	}
	if n := k.Omitted(); n <= 0 || n >= dirs*per-skills.MaxFiles || n > skills.MaxWalk+per {
		t.Errorf("got %d omitted, want a count below the %d there are, at most MaxWalk and one folder's entries", n, dirs*per-skills.MaxFiles)
	}
	opened := openAndRender(t, skillsPrompt(t, set), "skills.big")
	if want := fmt.Sprintf("or more besides the %d listed below (listing stopped after %d directory entries)", skills.MaxFiles, skills.MaxWalk); !strings.Contains(opened, want) {
		t.Errorf("the section does not say the count stopped (%q):\n%s", want, opened)
	}
}

// TestFilesDependenciesLast: a skill whose node_modules (and build
// output) holds more files than MaxFiles, and whose instructions point to
// files in folders named after it, and deeper: those files are listed,
// the shallow ones first, and the dependency folders fill what is left.
func TestFilesDependenciesLast(t *testing.T) {
	fsys := fstest.MapFS{
		"demo/SKILL.md":                     {Data: []byte("---\nname: demo\ndescription: d\n---\nRead reference/guide.md.\n")},
		"demo/reference/guide.md":           {Data: []byte("# Guide")},
		"demo/reference/deep/er/detail.md":  {Data: []byte("# Detail")},
		"demo/templates/form.txt":           {Data: []byte("form")},
		"demo/build/out.js":                 {Data: []byte("x")},
		"demo/lib/nested/a/b/c/leaf.txt":    {Data: []byte("leaf")},
		"demo/lib/top.txt":                  {Data: []byte("top")},
		"demo/examples/x/node_modules/m.js": {Data: []byte("m")},
	}
	for i := range skills.MaxFiles + 50 {
		fsys[fmt.Sprintf("demo/node_modules/pkg%03d/index.js", i)] = &fstest.MapFile{Data: []byte("x")}
	}
	set, err := skills.LoadFolders(skills.Folder{FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	k, ok := set.Skill("demo")
	if !ok {
		t.Fatal(set.Problems())
	}
	files := k.Files()
	want := []string{"lib/top.txt", "reference/guide.md", "templates/form.txt", "reference/deep/er/detail.md", "lib/nested/a/b/c/leaf.txt", "build/out.js"}
	if len(files) < len(want) || !slices.Equal(files[:len(want)], want) {
		t.Errorf("got %v first, want %v: each depth before the next, dependency folders last", files[:min(len(files), len(want))], want)
	}
	if !slices.Contains(files, "examples/x/node_modules/m.js") || slices.Index(files, "examples/x/node_modules/m.js") < slices.Index(files, "build/out.js") {
		t.Errorf("a node_modules below another folder should be listed with the dependency folders: %v", files[:min(len(files), 12)])
	}
	if len(files) != skills.MaxFiles || k.Omitted() != 57 {
		t.Errorf("got %d listed and %d omitted, want %d and 57", len(files), k.Omitted(), skills.MaxFiles)
	}
}
