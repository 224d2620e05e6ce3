package rootfs_test

import (
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

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
	a, err := rootfs.SaveNew(fsys, "context/output", "bash", strings.NewReader("first"), 0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := rootfs.SaveNew(fsys, "context/output", "bash", strings.NewReader("second"), 0)
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
	if name, err := rootfs.SaveNew(fsys, "out", "bash", strings.NewReader("x"), 0); err == nil {
		t.Errorf("saved %s through a link out of the directory", name)
	}
	if entries, _ := os.ReadDir(outside); len(entries) > 0 {
		t.Errorf("files written outside: %v", entries)
	}
}

// TestSaveNewTotal: saving past the bound on the total removes the oldest
// files SaveNew saved, not the new one, and never other files: one not
// named as it names them or of another mode, a directory, a link.
func TestSaveNewTotal(t *testing.T) {
	dir := t.TempDir()
	fsys, err := rootfs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fsys.Close() })
	out := filepath.Join(dir, "context", "output")
	if err := os.MkdirAll(filepath.Join(out, "keep-0000000001.txt"), 0o755); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	for i, name := range []string{"bash-0000000003.txt", "python-0000000001.txt", "notes.txt", "bash-0000000002.txt", "mine-0000000004.txt", "results-2024.txt"} {
		path := filepath.Join(out, name)
		if err := os.WriteFile(path, []byte(strings.Repeat("x", 100)), 0o600); err != nil {
			t.Fatal(err)
		}
		if name == "mine-0000000004.txt" {
			// Named as SaveNew names files, but not made by it.
			if err := os.Chmod(path, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chtimes(path, old, old.Add(time.Duration(i)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(out, "notes.txt"), filepath.Join(out, "link-0000000005.txt")); err != nil {
		t.Fatal(err)
	}
	// 300 saved bytes are there; 150 more leave room for the newest old
	// file only.
	name, err := rootfs.SaveNew(fsys, "context/output", "bash", strings.NewReader(strings.Repeat("y", 150)), 250)
	if err != nil {
		t.Fatal(err)
	}
	got := entries(t, out)
	want := []string{"bash-0000000002.txt", path.Base(name), "keep-0000000001.txt", "link-0000000005.txt", "mine-0000000004.txt", "notes.txt", "results-2024.txt"}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	// A new file that alone takes more than the bound is kept.
	name, err = rootfs.SaveNew(fsys, "context/output", "bash", strings.NewReader(strings.Repeat("z", 300)), 250)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
		t.Errorf("the new file: %v, want it kept", err)
	}
	if n := len(entries(t, out)); n != 6 {
		t.Errorf("got %d entries, want the new file and the five others", n)
	}
}

func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}
