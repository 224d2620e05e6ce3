package rootfs_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/rootfs"
)

// TestSaveNew saves two outputs under one prefix: two files, each whole;
// a dir that links out of the directory fails and writes nothing there.
func TestSaveNew(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	fsys, err := rootfs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fsys.Close() })
	a, err := rootfs.SaveNew(fsys, "context/output", "bash", strings.NewReader("first"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := rootfs.SaveNew(fsys, "context/output", "bash", strings.NewReader("second"))
	if err != nil {
		t.Fatal(err)
	}
	if a == b || !strings.HasPrefix(a, "context/output/bash-") || !strings.HasSuffix(a, ".txt") {
		t.Errorf("got names %q and %q, want two under context/output/bash-", a, b)
	}
	for name, want := range map[string]string{a: "first", b: "second"} {
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(got) != want {
			t.Errorf("%s: got %q, %v; want %q", name, got, err, want)
		}
	}
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	if name, err := rootfs.SaveNew(fsys, "out", "bash", strings.NewReader("x")); err == nil {
		t.Errorf("saved %s through a link out of the directory", name)
	}
	if entries, _ := os.ReadDir(outside); len(entries) > 0 {
		t.Errorf("files written outside: %v", entries)
	}
}
