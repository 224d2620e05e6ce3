//go:build unix

package skills_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/unfold-dev/unfold/skills"
)

// pipeNote is part of what a read of a named pipe says.
const pipeNote = "not a regular file: it is a named pipe (FIFO)"

// TestNamedPipe loads a folder where one skill's SKILL.md is a named pipe
// that nothing writes to: the load ends, that skill is reported as a
// pipe and the other loads.
func TestNamedPipe(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"pipe", "fine"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := unix.Mkfifo(filepath.Join(dir, "pipe", skills.FileName), 0o644); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "fine", skills.FileName), []byte("---\nname: fine\ndescription: d\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	type loaded struct {
		set *skills.Set
		err error
	}
	done := make(chan loaded, 1)
	go func() {
		set, err := skills.Load(dir)
		done <- loaded{set, err}
	}()
	select {
	case l := <-done:
		if l.err != nil {
			t.Fatal(l.err)
		}
		ps := l.set.Problems()
		if l.set.Len() != 1 || len(ps) != 1 || ps[0].Rule != skills.RuleSkillFile || ps[0].File != filepath.Join(dir, "pipe", skills.FileName) || !strings.Contains(ps[0].Message, pipeNote) {
			t.Errorf("got %d skills and problems %v, want fine loaded and the pipe reported as one", l.set.Len(), ps)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the load waits for the named pipe")
	}
}

// heldPipe makes a named pipe at path, in place of what is there, and
// holds it open for writing (and reading, so that opening it does not
// wait), writing nothing: a read of it waits until the pipe is closed.
func heldPipe(t *testing.T, path string) *os.File {
	t.Helper()
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(path, 0o644); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	w, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// unblocked runs f and returns what it returns. Should f still wait after
// ten seconds, it waits on a pipe (none of its work takes a second): the
// test fails, and release is called, which ends the wait (closing the
// pipes' writers ends a read, with nothing read; opening a pipe ends an
// open waiting for a writer), so that the test also reports what f made
// of that instead of hanging.
func unblocked[T any](t *testing.T, f func() T, release func()) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v
	case <-time.After(10 * time.Second):
	}
	t.Error("waits on a named pipe")
	release()
	select {
	case v := <-done:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("still waiting on a named pipe after it was released")
		panic("unreachable")
	}
}

// closing returns a release for [unblocked] that closes writers.
func closing(writers ...*os.File) func() {
	return func() {
		for _, w := range writers {
			w.Close()
		}
	}
}

// TestPipeHeldOpen puts named pipes held open by a writer where a skill's
// files are, before the load and after: every read refuses the pipe,
// saying what it is, instead of waiting for the writer.
func TestPipeHeldOpen(t *testing.T) {
	files := map[string]string{
		"x/SKILL.md":      "---\nname: x\ndescription: Does x.\n---\nRun scripts/a.py\n",
		"x/scripts/a.py":  "print(1)\n",
		"y/SKILL.md":      "---\nname: y\ndescription: Does y.\n---\nY.\n",
		"y/scripts/b.py":  "print(2)\n",
		"z/real/SKILL.md": "---\nname: z\ndescription: Does z.\n---\nZ.\n",
	}
	t.Run("after the load", func(t *testing.T) {
		dir := t.TempDir()
		writeTree(t, dir, files, 0o644)
		set, err := skills.Load(dir)
		if err != nil || set.Len() != 2 {
			t.Fatal(err, set.Problems())
		}
		x, _ := set.Skill("x")
		if got := x.Files(); len(got) != 1 || got[0] != "scripts/a.py" {
			t.Fatalf("files: got %v, want [scripts/a.py]", got)
		}
		w := heldPipe(t, filepath.Join(dir, "x", "scripts", "a.py"))
		p := skillsPrompt(t, set)
		text := unblocked(t, func() string { return openAndRender(t, p, "skills.x", "skills.x.scripts-a-py") }, closing(w))
		if want := "The file could not be read: skills: x: x/scripts/a.py: " + pipeNote; !strings.Contains(text, want) {
			t.Errorf("the file's section: got no %q in\n%s", want, text)
		}
		if err := unblocked(t, func() error { _, err := x.Inspect("scripts/a.py"); return err }, closing(w)); !errors.Is(err, skills.ErrNotRegular) {
			t.Errorf("Inspect: got %v, want %v", err, skills.ErrNotRegular)
		}
		if err := unblocked(t, func() error { _, err := x.ReadFile("scripts/a.py"); return err }, closing(w)); !errors.Is(err, skills.ErrNotRegular) || !strings.Contains(err.Error(), pipeNote) {
			t.Errorf("ReadFile: got %v, want %q", err, pipeNote)
		}
		y, _ := set.Skill("y")
		w = heldPipe(t, filepath.Join(dir, "y", skills.FileName))
		if err := unblocked(t, func() error { _, err := y.Instructions(); return err }, closing(w)); !errors.Is(err, skills.ErrNotRegular) {
			t.Errorf("Instructions: got %v, want %v", err, skills.ErrNotRegular)
		}
	})
	// pipes writes the files with x's SKILL.md a pipe, y's a link to one,
	// z's a link to a file.
	pipes := func(t *testing.T) (dir string, writers []*os.File) {
		dir = t.TempDir()
		writeTree(t, dir, files, 0o644)
		writers = append(writers, heldPipe(t, filepath.Join(dir, "x", skills.FileName)))
		if err := os.Remove(filepath.Join(dir, "y", skills.FileName)); err != nil {
			t.Fatal(err)
		}
		writers = append(writers, heldPipe(t, filepath.Join(dir, "y", "pipe")))
		for _, l := range [][2]string{{"pipe", "y"}, {"real/SKILL.md", "z"}} {
			if err := os.Symlink(l[0], filepath.Join(dir, l[1], skills.FileName)); err != nil {
				t.Fatal(err)
			}
		}
		return dir, writers
	}
	type loaded struct {
		set *skills.Set
		err error
	}
	check := func(t *testing.T, dir string, l loaded) {
		t.Helper()
		if l.err != nil {
			t.Fatal(l.err)
		}
		if l.set.Len() != 1 {
			t.Errorf("got %d skills, want z alone", l.set.Len())
		}
		ps := l.set.Problems()
		if len(ps) != 2 {
			t.Fatalf("got problems %v, want x and y", ps)
		}
		for i, d := range []string{"x", "y"} {
			if p := ps[i]; p.Rule != skills.RuleSkillFile || !strings.HasSuffix(p.File, filepath.Join(d, skills.FileName)) || !strings.Contains(p.Message, pipeNote) {
				t.Errorf("got %s, want %s/%s reported as a pipe (%s)", p, d, skills.FileName, skills.RuleSkillFile)
			}
		}
	}
	t.Run("at the load", func(t *testing.T) {
		dir, writers := pipes(t)
		check(t, dir, unblocked(t, func() loaded { set, err := skills.Load(dir); return loaded{set, err} }, closing(writers...)))
	})
	t.Run("at the load through os.DirFS", func(t *testing.T) {
		// An fs.FS that opens files waiting, as os.DirFS does: the
		// pipe is looked at before it is opened.
		dir, writers := pipes(t)
		folder := skills.Folder{FS: os.DirFS(dir), Dir: dir}
		check(t, dir, unblocked(t, func() loaded { set, err := skills.LoadFolders(folder); return loaded{set, err} }, closing(writers...)))
	})
	t.Run("no writer through os.DirFS", func(t *testing.T) {
		// os.DirFS opens a named pipe waiting for a writer.
		dir := t.TempDir()
		writeTree(t, dir, map[string]string{"z/SKILL.md": files["z/real/SKILL.md"]}, 0o644)
		pipe := filepath.Join(dir, "x", skills.FileName)
		if err := os.Mkdir(filepath.Dir(pipe), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := unix.Mkfifo(pipe, 0o644); err != nil {
			t.Skipf("no named pipes here: %v", err)
		}
		folder := skills.Folder{FS: os.DirFS(dir), Dir: dir}
		l := unblocked(t, func() loaded { set, err := skills.LoadFolders(folder); return loaded{set, err} }, func() {
			if w, err := os.OpenFile(pipe, os.O_RDWR, 0); err == nil {
				w.Close()
			}
		})
		if l.err != nil {
			t.Fatal(l.err)
		}
		if ps := l.set.Problems(); l.set.Len() != 1 || len(ps) != 1 || !strings.Contains(ps[0].Message, pipeNote) {
			t.Errorf("got %d skills, problems %v, want z loaded and x reported as a pipe", l.set.Len(), ps)
		}
	})
}
