package rootfs_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/afero"

	"github.com/unfold-dev/unfold/rootfs"
)

// tree makes dir/project with a file, dir/outside with a secret, and links
// inside the project: one to a directory outside, one to a file outside,
// one to a file inside.
func tree(t *testing.T) (project, outside string, fsys *rootfs.FS) {
	t.Helper()
	dir := t.TempDir()
	project, outside = filepath.Join(dir, "project"), filepath.Join(dir, "outside")
	for _, d := range []string{filepath.Join(project, "docs"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, "docs", "a.md"), []byte("inside"), 0o644); err != nil {
		t.Fatal(err)
	}
	for target, name := range map[string]string{outside: "out", filepath.Join(outside, "secret"): "secret", "docs/a.md": "inside"} {
		if err := os.Symlink(target, filepath.Join(project, name)); err != nil {
			t.Skipf("symbolic links unavailable: %v", err)
		}
	}
	fsys, err := rootfs.New(project)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fsys.Close() })
	return project, outside, fsys
}

func TestConfined(t *testing.T) {
	_, outside, fsys := tree(t)
	tests := []struct {
		name string
		op   func() error
	}{
		{"read through a linked directory", func() error { _, err := afero.ReadFile(fsys, "out/secret"); return err }},
		{"read a linked file", func() error { _, err := afero.ReadFile(fsys, "secret"); return err }},
		{"read with dot-dot", func() error { _, err := afero.ReadFile(fsys, "../outside/secret"); return err }},
		{"read an absolute name", func() error { _, err := afero.ReadFile(fsys, filepath.Join(outside, "secret")); return err }},
		{"write through a linked directory", func() error { return afero.WriteFile(fsys, "out/new", []byte("x"), 0o644) }},
		{"make a directory through a link", func() error { return fsys.MkdirAll("out/sub", 0o755) }},
		{"temporary file through a link", func() error { _, err := afero.TempFile(fsys, "out", "x"); return err }},
		{"rename out through a link", func() error { return fsys.Rename("docs/a.md", "out/a.md") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.op(); err == nil {
				t.Errorf("got no error, want one: the name leads outside the directory")
			}
		})
	}
	entries, err := os.ReadDir(outside)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("outside holds %d entries, want only the secret: something was written there", len(entries))
	}
}

func TestInside(t *testing.T) {
	project, _, fsys := tree(t)
	data, err := afero.ReadFile(fsys, "inside")
	if err != nil || string(data) != "inside" {
		t.Errorf("read through a link inside: got %q, %v; want %q", data, err, "inside")
	}
	f, err := afero.TempFile(fsys, "docs", ".x*.tmp")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("new")); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := fsys.Rename(f.Name(), "docs/b.md"); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(project, "docs", "b.md")); err != nil || string(data) != "new" {
		t.Errorf("got %q, %v; want the renamed temporary file", data, err)
	}
	fi, ok, err := fsys.LstatIfPossible("inside")
	if !ok || err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("Lstat of a link: got %v, %v, %v; want a symbolic link", fi, ok, err)
	}
	if target, err := fsys.ReadlinkIfPossible("inside"); err != nil || target != "docs/a.md" {
		t.Errorf("Readlink: got %q, %v; want docs/a.md", target, err)
	}
	if err := fsys.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.Stat("docs"); !errors.Is(err, os.ErrClosed) {
		t.Errorf("after Close: got %v, want %v", err, os.ErrClosed)
	}
}

func TestNewNotADirectory(t *testing.T) {
	if _, err := rootfs.New(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("got no error for a missing directory")
	}
}

// TestOperations: the afero operations the editor uses work inside the
// root and relative names stay in it.
func TestOperations(t *testing.T) {
	dir := t.TempDir()
	r, err := rootfs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := afero.WriteFile(r, "x/y.txt", []byte("hi"), 0o644); err == nil {
		t.Errorf("WriteFile without the parent directory: got no error, want one")
	}
	if err := r.MkdirAll("x", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := afero.WriteFile(r, "x/y.txt", []byte("hi"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.Rename("x/y.txt", "x/z.txt"); err != nil {
		t.Fatal(err)
	}
	if b, err := afero.ReadFile(r, "x/z.txt"); err != nil || string(b) != "hi" {
		t.Errorf("ReadFile: got %q, %v; want \"hi\"", b, err)
	}
	if err := r.SymlinkIfPossible("z.txt", "x/l"); err != nil {
		t.Fatal(err)
	}
	if dest, err := r.ReadlinkIfPossible("x/l"); err != nil || dest != "z.txt" {
		t.Errorf("Readlink: got %q, %v; want z.txt", dest, err)
	}
	if _, err := r.Open("../outside"); err == nil {
		t.Errorf("Open(../outside): got no error, want one")
	}
	if got, want := r.Dir(), dir; got != want {
		t.Errorf("Dir(): got %q, want %q", got, want)
	}
	if f, err := r.Open("missing"); f != nil || err == nil {
		t.Errorf("Open(missing): got %v, %v; want a nil file and an error", f, err)
	}
}
