package skills_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/skills"
	"github.com/unfold-dev/unfold/tokens"
)

// countingFS counts the opens of each file and the bytes read from it,
// and the opens of each directory, to list it.
type countingFS struct {
	fs.FS
	mu    sync.Mutex // guards opens, read and lists
	opens map[string]int
	read  map[string]int
	lists map[string]int
}

func newCountingFS(fsys fs.FS) *countingFS {
	return &countingFS{FS: fsys, opens: map[string]int{}, read: map[string]int{}, lists: map[string]int{}}
}

func (c *countingFS) Open(name string) (fs.File, error) {
	f, err := c.FS.Open(name)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		c.mu.Lock()
		c.lists[name]++
		c.mu.Unlock()
		return f, nil
	}
	c.mu.Lock()
	c.opens[name]++
	c.mu.Unlock()
	return &countingFile{File: f, name: name, fs: c}, nil
}

// Stat looks at a file without opening it, as os.DirFS does.
func (c *countingFS) Stat(name string) (fs.FileInfo, error) { return fs.Stat(c.FS, name) }

// counts returns the opens of and bytes read from name so far.
func (c *countingFS) counts(name string) (opens, read int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.opens[name], c.read[name]
}

// listed returns how many times the directory name was opened.
func (c *countingFS) listed(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lists[name]
}

type countingFile struct {
	fs.File
	name string
	fs   *countingFS
}

func (f *countingFile) Read(p []byte) (int, error) {
	n, err := f.File.Read(p)
	f.fs.mu.Lock()
	f.fs.read[f.name] += n
	f.fs.mu.Unlock()
	return n, err
}

// TestInstructionsReadOnOpen counts file reads: loading reads a skill's
// front matter and nothing else; rendering the catalog, with or without a
// budget, reads nothing; opening the skill lists its folders and reads
// its SKILL.md and the start of each of its files (their summaries), and
// opening a file reads that file.
func TestInstructionsReadOnOpen(t *testing.T) {
	body := "# Demo\n\n" + strings.Repeat("Step after step of instructions.\n", 1500) + "THE-LAST-LINE\n"
	skillMD := "---\nname: demo\ndescription: Shows when files are read. Use in tests.\n---\n" + body
	script := "#!/bin/sh\n# Says hello.\n" + strings.Repeat("echo hello\n", 1000) + "echo THE-END\n"
	cfs := newCountingFS(fstest.MapFS{
		"demo/SKILL.md":        {Data: []byte(skillMD)},
		"demo/scripts/run.sh":  {Data: []byte(script)},
		"other/SKILL.md":       {Data: []byte("---\nname: other\ndescription: Another skill.\n---\nOther instructions.\n")},
		"other/scripts/.cache": {Data: []byte("hidden")},
	})
	set, err := skills.LoadFolders(skills.Folder{FS: cfs, Dir: "/srv/skills"})
	if err != nil {
		t.Fatal(err)
	}
	if set.Len() != 2 {
		t.Fatalf("got %d skills, want 2: %v", set.Len(), set.Problems())
	}
	check := func(when, name string, wantOpens int, maxRead int) {
		t.Helper()
		opens, read := cfs.counts(name)
		if opens != wantOpens || read > maxRead {
			t.Errorf("%s: %s opened %d times, %d bytes read; want %d opens and at most %d bytes", when, name, opens, read, wantOpens, maxRead)
		}
	}
	check("after loading", "demo/SKILL.md", 1, 2048)
	check("after loading", "demo/scripts/run.sh", 0, 0)
	check("after loading", "other/scripts/.cache", 0, 0)
	listed := func(when string, want map[string]int) {
		t.Helper()
		for dir, n := range want {
			if got := cfs.listed(dir); got != n {
				t.Errorf("%s: %s listed %d times, want %d", when, dir, got, n)
			}
		}
	}
	listed("after loading", map[string]int{"demo/scripts": 0, "demo/references": 0, "other/scripts": 0})

	p := skillsPrompt(t, set)
	sess := session.New()
	r, err := p.Render(sess, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Render(session.New(), nil, prompt.WithBudget(150, tokens.Estimate)); err != nil {
		t.Fatal(err)
	}
	check("after rendering the catalog", "demo/SKILL.md", 1, 2048)
	check("after rendering the catalog", "other/SKILL.md", 1, 2048)
	listed("after rendering the catalog", map[string]int{"demo/scripts": 0, "other/scripts": 0})

	r = reopen(t, p, sess, r, "skills.demo")
	if !strings.Contains(r.Text(), "THE-LAST-LINE") || strings.Contains(r.Text(), "THE-END") {
		t.Errorf("the opened skill: want its whole instructions and not its script's content")
	}
	check("after opening the skill", "demo/SKILL.md", 2, 2048+len(skillMD))
	check("after opening the skill", "other/SKILL.md", 1, 2048)
	check("after opening the skill", "demo/scripts/run.sh", 1, 512)
	listed("after opening the skill", map[string]int{"demo/scripts": 1, "other/scripts": 0})

	r = reopen(t, p, sess, r, "skills.demo.scripts-run-sh")
	if !strings.Contains(r.Text(), "echo THE-END") {
		t.Errorf("the opened script: want its content")
	}
	check("after opening the script", "demo/scripts/run.sh", 2, 512+len(script))
	listed("after opening the script", map[string]int{"demo/scripts": 1, "other/scripts": 0})
}

// TestNothingRuns loads, renders and opens every level of a skill whose
// script would leave a mark, and whose instructions hold shell and
// template syntax: nothing runs, and the text shows as written.
func TestNothingRuns(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	files := map[string]string{
		"boom/SKILL.md":        "---\nname: boom\ndescription: Would leave a mark if anything ran.\n---\nRun !`touch " + marker + "` and $(touch " + marker + ") and {{.Nothing}}.\n",
		"boom/scripts/boom.sh": "#!/bin/sh\ntouch " + marker + "\n",
	}
	writeTree(t, dir, files, 0o755)
	set, err := skills.Load(dir)
	if err != nil || set.Len() != 1 {
		t.Fatalf("load: %v, %v", err, set.Problems())
	}
	text := openAndRender(t, skillsPrompt(t, set), "skills.boom", "skills.boom.scripts-boom-sh")
	if !strings.Contains(text, "$(touch "+marker+") and {{.Nothing}}.") || !strings.Contains(text, "```bash\n#!/bin/sh\ntouch "+marker) {
		t.Errorf("the opened skill: want its instructions and script as written, got:\n%s", text)
	}
	if _, err := os.Stat(marker); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s exists: something in the skill ran", marker)
	}
}
