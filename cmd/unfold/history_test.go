package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHistorySaveRefuses saves lines typed to history files it must not
// replace: a link to a missing file and a directory. Each is an error
// that says why, and nothing is written.
func TestHistorySaveRefuses(t *testing.T) {
	dir := t.TempDir()
	dangling := filepath.Join(dir, "dangling")
	if err := os.Symlink("missing.txt", dangling); err != nil {
		t.Fatal(err)
	}
	folder := filepath.Join(dir, "folder")
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{dangling, "a symbolic link to a file that does not exist"},
		{folder, "is not a regular file"},
	} {
		h := &historyFile{path: c.path}
		h.add("echo typed")
		if err := h.save(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("save to %s: got %v, want an error saying %q", c.path, err, c.want)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "missing.txt")); err == nil {
		t.Errorf("the link's target was made")
	}
	if fi, err := os.Lstat(dangling); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced")
	}

	// A new file is made, mode 0600.
	h := &historyFile{path: filepath.Join(dir, "new")}
	h.add("echo typed")
	if err := h.save(); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(h.path); err != nil || string(data) != "echo typed\n" {
		t.Errorf("a new history file: got %q, %v", data, err)
	}
	if fi, err := os.Stat(h.path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("a new history file: got mode %v, %v; want 0600", fi.Mode(), err)
	}
}
