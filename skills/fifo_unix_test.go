//go:build unix

package skills_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/unfold-dev/unfold/skills"
)

// TestNamedPipe loads a folder where one skill's SKILL.md is a named pipe
// that nothing writes to: the load ends, that skill is reported and the
// other loads.
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
		if l.set.Len() != 1 || len(ps) != 1 || ps[0].Rule != skills.RuleFrontMatter || ps[0].File != filepath.Join(dir, "pipe", skills.FileName) {
			t.Errorf("got %d skills and problems %v, want fine loaded and the pipe reported", l.set.Len(), ps)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the load waits for the named pipe")
	}
}
