package editor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCreateThroughFile creates a file below a path that is a file: the
// refusal names the file in the way, on disk and in memory.
func TestCreateThroughFile(t *testing.T) {
	_, disk := diskProject(t, map[string]string{"a.txt": "a\n"})
	mem, _ := newMem(t, map[string]string{"a.txt": "a\n"})
	for name, e := range map[string]*Editor{"disk": disk, "memory": mem} {
		for _, p := range []string{"a.txt/b.txt", "a.txt/c/d.txt"} {
			t.Run(name+" "+p, func(t *testing.T) {
				got := fail(t, e, "create "+p+"\nx")
				want := "a.txt is a file, not a directory, so " + p + " cannot be created in it; nothing was created"
				if !strings.Contains(got, want) {
					t.Errorf("got %q, want %q", got, want)
				}
			})
		}
	}
}

// TestCreateDanglingLink creates a file where a symbolic link to nothing
// is: the refusal says it is such a link, and nothing is created.
func TestCreateDanglingLink(t *testing.T) {
	dir, e := diskProject(t, nil)
	symlink(t, "missing.txt", filepath.Join(dir, "dangling"))
	got := fail(t, e, "create dangling\nx")
	if want := "dangling is a symbolic link (to missing.txt) to a file that does not exist"; !strings.Contains(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if _, err := os.Lstat(filepath.Join(dir, "missing.txt")); err == nil {
		t.Error("the link's target was created")
	}
}
