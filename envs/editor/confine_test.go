package editor

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/spf13/afero"
)

// project makes dir/root with a.txt, a sibling dir/root-evil/x and a file
// dir/secret outside the root, and returns dir and an editor on dir/root.
func project(t *testing.T) (string, *Editor) {
	t.Helper()
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("root/a.txt", "start\nend\n")
	write("root/sub/b.txt", "start\nend\n")
	write("root-evil/x", "start\nend\n")
	write("secret", "start\nsecret\nend\n")
	link := func(target, name string) {
		t.Helper()
		if err := os.Symlink(target, filepath.Join(dir, "root", name)); err != nil {
			t.Skipf("symbolic links unavailable: %v", err)
		}
	}
	link("../secret", "rel-out")
	link(filepath.Join(dir, "secret"), "abs-out")
	link("..", "dir-out")
	link("sub/b.txt", "inside")
	e, err := New(filepath.Join(dir, "root"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return dir, e
}

func TestConfinement(t *testing.T) {
	dir, e := project(t)
	root := filepath.Join(dir, "root")
	tests := []struct {
		name, command, want string
	}{
		{"dot-dot", "view ../secret /start/ /end/", "path ../secret leads outside the project root"},
		{"dot-dot inside a path", "view sub/../../secret /start/ /end/", "leads outside the project root"},
		{"sibling prefix", "view ../root-evil/x /start/ /end/", "path ../root-evil/x leads outside the project root"},
		{"absolute sibling prefix", "view " + filepath.Join(dir, "root-evil", "x") + " /start/ /end/", "is outside the project root"},
		{"absolute outside", "view " + filepath.Join(dir, "secret") + " /start/ /end/", "is outside the project root"},
		{"relative symlink out", "view rel-out /start/ /end/", "rel-out leads outside the project root (through a symbolic link)"},
		{"absolute symlink out", "view abs-out /start/ /end/", "abs-out leads outside the project root (through a symbolic link)"},
		{"directory symlink out", "view dir-out/secret /start/ /end/", "leads outside the project root (through a symbolic link)"},
		{"create through a symlink", "create dir-out/new.txt\nx", "leads outside the project root (through a symbolic link)"},
		{"create outside", "create ../new.txt\nx", "leads outside the project root"},
		{"edit outside", "edit ../secret 1-1\nx", "leads outside the project root"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fail(t, e, tt.command); !strings.Contains(got, tt.want) {
				t.Errorf("got %q, want it to contain %q", got, tt.want)
			}
		})
	}
	for _, name := range []string{"new.txt", "root-evil/new.txt"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists outside the root (err %v)", name, err)
		}
	}
	t.Run("absolute inside", func(t *testing.T) {
		if got, want := ok(t, e, "view "+filepath.Join(root, "a.txt")+" /start/ /end/"), "Added view [1] a.txt /start/ to /end/"; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	})
	t.Run("symlink inside", func(t *testing.T) {
		ok(t, e, "view inside /start/ /end/")
		screen(t, e)
		ok(t, e, "edit inside 2-2\nEND")
		fi, err := os.Lstat(filepath.Join(root, "inside"))
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("inside: got mode %v (err %v), want it still a symbolic link", fi.Mode(), err)
		}
		b, _ := os.ReadFile(filepath.Join(root, "sub", "b.txt"))
		if got, want := string(b), "start\nEND\n"; got != want {
			t.Errorf("link target: got %q, want %q", got, want)
		}
	})
	t.Run("search skips links out", func(t *testing.T) {
		got := ok(t, e, `search "secret" **`)
		if strings.Contains(got, "secret\n") || !strings.HasPrefix(got, "No matches") {
			t.Errorf("search reached outside the root: %q", got)
		}
	})
	if b, _ := os.ReadFile(filepath.Join(dir, "secret")); string(b) != "start\nsecret\nend\n" {
		t.Errorf("secret changed: %q", b)
	}
}

func TestConfinementMemory(t *testing.T) {
	e, _ := newMem(t, map[string]string{"a.txt": "a\n"})
	for _, p := range []string{"../a.txt", "/a.txt", "x/../../a.txt"} {
		t.Run(p, func(t *testing.T) {
			got := fail(t, e, "view "+p+" /a/ /a/")
			if !strings.Contains(got, "outside the project root") {
				t.Errorf("got %q, want a refusal naming the project root", got)
			}
		})
	}
}

// failingFs fails one operation, after the others went through.
type failingFs struct {
	afero.Fs
	failRename, failWrite bool
}

var errInjected = errors.New("injected failure")

func (f failingFs) Rename(oldname, newname string) error {
	if f.failRename {
		return errInjected
	}
	return f.Fs.Rename(oldname, newname)
}

func (f failingFs) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	file, err := f.Fs.OpenFile(name, flag, perm)
	if err != nil || !f.failWrite {
		return file, err
	}
	return failingFile{file}, nil
}

// failingFile writes half of what it is given, then fails.
type failingFile struct{ afero.File }

func (f failingFile) Write(p []byte) (int, error) {
	n, _ := f.File.Write(p[:len(p)/2])
	return n, errInjected
}

func TestWriteFailureLeavesFile(t *testing.T) {
	const content = "a\nb\nc\n"
	tests := []struct {
		name string
		wrap func(afero.Fs) afero.Fs
	}{
		{"read-only filesystem", func(fs afero.Fs) afero.Fs { return afero.NewReadOnlyFs(fs) }},
		{"rename fails", func(fs afero.Fs) afero.Fs { return failingFs{Fs: fs, failRename: true} }},
		{"write fails halfway", func(fs afero.Fs) afero.Fs { return failingFs{Fs: fs, failWrite: true} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := afero.NewMemMapFs()
			if err := afero.WriteFile(base, "d/f.txt", []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			e, err := NewFs(tt.wrap(base), nil)
			if err != nil {
				t.Fatal(err)
			}
			ok(t, e, "view d/f.txt /a/ /c/")
			got := fail(t, e, "edit d/f.txt 2-2\nB")
			if want := "could not write d/f.txt"; !strings.Contains(got, want) || !strings.Contains(got, "the file was left as it was") {
				t.Errorf("got %q, want it to contain %q and say the file was left as it was", got, want)
			}
			if got := readFile(t, base, "d/f.txt"); got != content {
				t.Errorf("file: got %q, want %q", got, content)
			}
			names, _ := afero.ReadDir(base, "d")
			if len(names) != 1 {
				t.Errorf("d holds %d entries, want 1 (no temporary file left)", len(names))
			}
		})
	}
}

// TestEditInReadOnlyDir edits a writable file in a directory the editor
// may not make files in: it is written in place, and no message names a
// temporary file. Root may make files anywhere, so there the directory
// refusing the temporary file is injected.
func TestEditInReadOnlyDir(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "ro", "f.txt")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var e *Editor
	var err error
	if os.Geteuid() == 0 {
		e, err = NewFs(hookFs{Fs: afero.NewBasePathFs(afero.NewOsFs(), dir), denyTemp: true}, nil)
	} else {
		if err := os.Chmod(filepath.Dir(file), 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Chmod(filepath.Dir(file), 0o755) })
		e, err = New(dir, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ok(t, e, "view ro/f.txt /a/ /b/")
	if got := ok(t, e, "edit ro/f.txt 1-1\nA"); strings.Contains(got, ".unfold-") {
		t.Errorf("got %q, naming a temporary file", got)
	}
	if b, _ := os.ReadFile(file); string(b) != "A\nb\n" {
		t.Errorf("file: got %q, want the edit written in place", b)
	}
	ok(t, e, "undo ro/f.txt")
	if b, _ := os.ReadFile(file); string(b) != "a\nb\n" {
		t.Errorf("file: got %q after undo, want it as it was", b)
	}
}

// hookFs runs a hook when the editor makes its temporary file, which is
// refused with denyTemp.
type hookFs struct {
	afero.Fs
	hook     func()
	denyTemp bool
}

func (h hookFs) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	if flag&os.O_EXCL != 0 && strings.Contains(name, ".unfold-") {
		if h.hook != nil {
			h.hook()
		}
		if h.denyTemp {
			return nil, &os.PathError{Op: "open", Path: name, Err: syscall.EACCES}
		}
	}
	return h.Fs.OpenFile(name, flag, perm)
}

// TestWriterMeanwhile has another program write to the file while an edit
// or an undo writes it (after the editor read it, before the new content
// takes its place): the edit is refused, nothing is written, and what the
// other program wrote is kept, whether the file is replaced by a rename
// or written in place.
func TestWriterMeanwhile(t *testing.T) {
	const content = "header\nbody\n"
	tests := []struct {
		name     string
		denyTemp bool // written in place
		write    func(path string) error
		want     string
	}{
		{"append", false, func(p string) error { return appendTo(p, "APPENDED\n") }, content + "APPENDED\n"},
		{"append, in place", true, func(p string) error { return appendTo(p, "APPENDED\n") }, content + "APPENDED\n"},
		{"same size", false, func(p string) error { return os.WriteFile(p, []byte("HEADER\nbody\n"), 0o644) }, "HEADER\nbody\n"},
		{"same size, time put back", false, func(p string) error {
			fi, err := os.Stat(p)
			if err != nil {
				return err
			}
			if err := os.WriteFile(p, []byte("HEADER\nbody\n"), 0o644); err != nil {
				return err
			}
			return os.Chtimes(p, fi.ModTime(), fi.ModTime())
		}, "HEADER\nbody\n"},
	}
	for _, tt := range tests {
		for _, cmd := range []string{"edit", "undo"} {
			t.Run(tt.name+", "+cmd, func(t *testing.T) {
				dir := t.TempDir()
				file := filepath.Join(dir, "log.txt")
				if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
				fsys := &hookFs{Fs: afero.NewBasePathFs(afero.NewOsFs(), dir), denyTemp: tt.denyTemp}
				e, err := NewFs(fsys, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer e.Close()
				ok(t, e, "view log.txt 1-2")
				if cmd == "undo" {
					ok(t, e, "edit log.txt 2-2\nbody")
				}
				var hookErr error
				fsys.hook = func() { hookErr = tt.write(file) }
				var got string
				if cmd == "undo" {
					got = fail(t, e, "undo log.txt")
				} else {
					got = fail(t, e, "edit log.txt 1-1\nEDITED")
				}
				if hookErr != nil {
					t.Fatal(hookErr)
				}
				if !strings.Contains(got, "log.txt changed while") || !strings.Contains(got, "another program wrote to it") {
					t.Errorf("got %q, want a refusal saying another program wrote to the file", got)
				}
				if b, _ := os.ReadFile(file); string(b) != tt.want {
					t.Errorf("file: got %q, want %q: the other program's change kept", b, tt.want)
				}
				if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) > 0 {
					t.Errorf("temporary files left: %v", left)
				}
			})
		}
	}
}

// appendTo appends text to the file at p.
func appendTo(p, text string) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// TestReadOnlyFileRefused refuses to edit, or undo an edit of, a file
// whose mode has no write bit, even where the system would let the
// editor write it (as root): the refusal names the mode and asks that
// the user make the file writable, without saying how (the protection is
// the user's, not the model's to lift); the file is left as it was, and a
// refused undo keeps the history.
func TestReadOnlyFileRefused(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "r.txt")
	if err := os.WriteFile(file, []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := New(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ok(t, e, "view r.txt")
	ok(t, e, "edit r.txt 1-1\nONE")
	if err := os.Chmod(file, 0o444); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ command, nothing string }{
		{"edit r.txt 2-2\nTWO", "nothing was written"},
		{"undo r.txt", "nothing was restored"},
	} {
		got := fail(t, e, tt.command)
		contains(t, tt.command, got, "r.txt is read-only (mode 0444, -r--r--r--), and the editor does not write over a read-only file; "+tt.nothing+". The protection is the user's: if the file must change, ask the user to make it writable, then try again")
		for _, bad := range []string{"chmod", "no one may"} {
			if strings.Contains(got, bad) {
				t.Errorf("%s: got %q, want no %q", tt.command, got, bad)
			}
		}
		if b, _ := os.ReadFile(file); string(b) != "ONE\ntwo\n" {
			t.Errorf("%s: file %q, want it left as it was", tt.command, b)
		}
	}
	if err := os.Chmod(file, 0o644); err != nil {
		t.Fatal(err)
	}
	ok(t, e, "undo r.txt")
	if b, _ := os.ReadFile(file); string(b) != "one\ntwo\n" {
		t.Errorf("undo after chmod: file %q, want the edit undone (the refused undo kept it)", b)
	}
	ok(t, e, "edit r.txt 2-2\nTWO")
	if b, _ := os.ReadFile(file); string(b) != "one\nTWO\n" {
		t.Errorf("after chmod: file %q, want the edit written", b)
	}
}

// deniedFs refuses, as the system does without permission, to open a
// file for writing or to make a directory.
type deniedFs struct{ afero.Fs }

func (f deniedFs) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE) != 0 {
		return nil, &fs.PathError{Op: "openat", Path: name, Err: syscall.EACCES}
	}
	return f.Fs.OpenFile(name, flag, perm)
}

func (f deniedFs) MkdirAll(name string, perm os.FileMode) error {
	if fi, err := f.Stat(name); err == nil && fi.IsDir() {
		return nil
	}
	return &fs.PathError{Op: "mkdirat", Path: name, Err: syscall.EACCES}
}

// TestPermissionDeniedSaysWhatToDo names the file or directory a denied
// write or create concerns, says that nothing was written or created, and
// what to check.
func TestPermissionDeniedSaysWhatToDo(t *testing.T) {
	base := afero.NewMemMapFs()
	if err := afero.WriteFile(base, "d/f.txt", []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := NewFs(deniedFs{base}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ok(t, e, "view d/f.txt")
	for _, tt := range []struct{ command, want string }{
		{"edit d/f.txt 1-1\nA", "could not write d/f.txt: the system denied permission to open it for writing (its owner and mode, an ACL, or an attribute such as immutable); nothing was written and the file was left as it was. Check its permissions (ls -l d/f.txt)"},
		{"create d/new.txt\nx", "cannot create d/new.txt: the system denied permission: the directory d does not let files be made in it; nothing was created. Check its permissions (ls -ld d)"},
		{"create new.txt\nx", "cannot create new.txt: the system denied permission: the project's top directory does not let files be made in it; nothing was created"},
		{"create e/new.txt\nx", "cannot create e/new.txt: the system denied permission: the directory e does not let files be made in it; nothing was created"},
	} {
		if got := fail(t, e, tt.command); !strings.Contains(got, tt.want) {
			t.Errorf("%s: got %q, want it to contain %q", tt.command, got, tt.want)
		}
	}
	if got := readFile(t, base, "d/f.txt"); got != "a\n" {
		t.Errorf("file: got %q, want it left as it was", got)
	}
}
