package editor_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/envs/editor"
	"github.com/unfold-dev/unfold/internal/faultfs"
)

// TestDiskFull edits and creates files while the disk is full. Each command
// fails with a message that names the problem, the file on disk keeps its
// old bytes, no temporary file is left behind, the view still shows the
// old lines; once there is room, the same edit succeeds.
func TestDiskFull(t *testing.T) {
	const original = "package main\n\n// start\nfunc a() {}\nfunc b() {}\n// end\n"
	mem := afero.NewMemMapFs()
	if err := afero.WriteFile(mem, "main.go", []byte(original), 0o640); err != nil {
		t.Fatal(err)
	}
	fsys := faultfs.NewFull(mem)
	e, err := editor.NewFs(fsys, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	if r, err := e.Execute(ctx, "view main.go /^\\/\\/ start$/ /^\\/\\/ end$/"); err != nil || !r.Success {
		t.Fatalf("view: got %+v, %v", r, err)
	}
	fsys.SetFull(true)
	tests := []struct {
		name    string
		command string
	}{
		{"edit", "edit main.go 4-4\nfunc a() { println(\"changed\") }"},
		{"create", "create other.go\npackage main\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := e.Execute(ctx, tt.command)
			if err != nil {
				t.Fatalf("got error %v, want a failed response", err)
			}
			if r.Success {
				t.Fatalf("got success %q, want a failure on a full disk", r.Output)
			}
			if !strings.Contains(r.Output, "no space left on device") {
				t.Errorf("got %q, want the cause (no space left on device) in the message", r.Output)
			}
			data, err := afero.ReadFile(mem, "main.go")
			if err != nil || string(data) != original {
				t.Errorf("main.go: got %q, %v, want the original bytes %q", data, err, original)
			}
			entries, err := afero.ReadDir(mem, ".")
			if err != nil {
				t.Fatal(err)
			}
			for _, en := range entries {
				if en.Name() != "main.go" && !(tt.name == "create" && en.Name() == "other.go") {
					t.Errorf("left behind: got %q in the directory, want only main.go", en.Name())
				}
			}
			if _, err := mem.Stat("other.go"); err == nil {
				if data, _ := afero.ReadFile(mem, "other.go"); len(data) > 0 && string(data) != "package main\n" {
					t.Errorf("other.go: got a half-written %q", data)
				}
			}
		})
	}
	s, err := e.Screen()
	if err != nil || !strings.Contains(s.Content, "func a() {}") {
		t.Errorf("screen after the failed edit: got %q, %v, want the old line", s.Content, err)
	}
	fsys.SetFull(false)
	r, err := e.Execute(ctx, tests[0].command)
	if err != nil || !r.Success {
		t.Fatalf("edit with room again: got %+v, %v, want success", r, err)
	}
	data, _ := afero.ReadFile(mem, "main.go")
	if want := strings.Replace(original, "func a() {}", "func a() { println(\"changed\") }", 1); string(data) != want {
		t.Errorf("main.go after the edit: got %q, want %q", data, want)
	}
	if fi, err := mem.Stat("main.go"); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("main.go mode: got %v, %v, want 0640 kept", fi.Mode(), err)
	}
}

// TestWriteCheck refuses, through SetWriteCheck, every write to one file:
// an edit, an undo and a create of it are refused with the check's
// reason and write nothing, and other files are written.
func TestWriteCheck(t *testing.T) {
	dir := t.TempDir()
	keep := filepath.Join(dir, "keep.py")
	if err := os.WriteFile(keep, []byte("print(1)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := editor.New(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	do := func(command string) envs.Response {
		t.Helper()
		r, err := e.Execute(ctx, command)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := do("view keep.py 1-1"); !r.Success {
		t.Fatal(r.Output)
	}
	if r := do("edit keep.py 1-1\nprint(2)"); !r.Success {
		t.Fatal(r.Output)
	}
	e.SetWriteCheck(func(path string) error {
		if path == keep || path == filepath.Join(dir, "new.py") {
			return errors.New(filepath.Base(path) + " is kept")
		}
		return nil
	})
	for _, c := range []string{"view keep.py 1-1", "edit keep.py 1-1\nprint(3)", "undo keep.py", "create new.py\nprint(4)"} {
		r := do(c)
		if c == "view keep.py 1-1" {
			continue
		}
		if r.Success || !strings.Contains(r.Output, " is kept; nothing was ") {
			t.Errorf("%q: got %+v, want it refused", c, r)
		}
	}
	if got, _ := os.ReadFile(keep); string(got) != "print(2)\n" {
		t.Errorf("keep.py holds %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "new.py")); err == nil {
		t.Error("new.py was created")
	}
	if r := do("create other.py\nprint(5)"); !r.Success {
		t.Errorf("create other.py: %+v", r)
	}
}
