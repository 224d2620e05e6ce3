package editor

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/afero"
	"github.com/unfold-dev/unfold/rootfs"
)

// diskProject writes files under a new directory and returns it with an
// editor on it.
func diskProject(t *testing.T, files map[string]string, opts ...Option) (string, *Editor) {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e, err := New(dir, nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return dir, e
}

// symlink makes name a symbolic link to target, or skips the test.
func symlink(t *testing.T, target, name string) {
	t.Helper()
	if err := os.Symlink(target, name); err != nil {
		t.Skipf("symbolic links unavailable: %v", err)
	}
}

// TestSymlinkChain views and edits a file through a chain of links (a
// link to a link, through a linked directory): the edit changes the file
// at the end of the chain, and every link stays a link. A chain whose end
// is outside the project is refused for view and edit.
func TestSymlinkChain(t *testing.T) {
	dir, e := diskProject(t, map[string]string{"real/target.txt": "one\ntwo\n"})
	outside := filepath.Join(filepath.Dir(dir), "outside-"+filepath.Base(dir)+".txt")
	if err := os.WriteFile(outside, []byte("secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Remove(outside) })
	symlink(t, "real", filepath.Join(dir, "dirlink"))
	symlink(t, "dirlink/target.txt", filepath.Join(dir, "l2"))
	symlink(t, "l2", filepath.Join(dir, "l1"))
	symlink(t, "../"+filepath.Base(outside), filepath.Join(dir, "out2"))
	symlink(t, "out2", filepath.Join(dir, "out1"))

	ok(t, e, "view l1")
	if got, want := views(t, e), "Views:\n  [1] l1 (whole file)\n      1  one\n      2  two"; got != want {
		t.Errorf("screen: got %q, want %q", got, want)
	}
	ok(t, e, "edit l1 2\nTWO")
	if b, _ := os.ReadFile(filepath.Join(dir, "real", "target.txt")); string(b) != "one\nTWO\n" {
		t.Errorf("target: got %q, want the edit", b)
	}
	for _, name := range []string{"l1", "l2", "dirlink"} {
		if fi, err := os.Lstat(filepath.Join(dir, name)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s: got mode %v (err %v), want a symbolic link still", name, fi.Mode(), err)
		}
	}
	ok(t, e, "undo l1")
	if b, _ := os.ReadFile(filepath.Join(dir, "real", "target.txt")); string(b) != "one\ntwo\n" {
		t.Errorf("target after undo: got %q", b)
	}

	for _, cmd := range []string{"view out1", "view out1 /secret/ /x/", "create out1\nx"} {
		got := fail(t, e, cmd)
		if !strings.Contains(got, "outside the project root") && !strings.Contains(got, "out1 already exists") {
			t.Errorf("%q: got %q, want a refusal", strings.Split(cmd, "\n")[0], got)
		}
	}
	// The chain of a viewed file is turned outside before the edit: the
	// edit follows it anew and refuses.
	views(t, e)
	if err := os.Remove(filepath.Join(dir, "l2")); err != nil {
		t.Fatal(err)
	}
	symlink(t, "out2", filepath.Join(dir, "l2"))
	if got, want := fail(t, e, "edit l1 1\nx"), "leads outside the project root (through a symbolic link)"; !strings.Contains(got, want) {
		t.Errorf("edit through a chain turned outside: got %q, want it to contain %q", got, want)
	}
	if b, _ := os.ReadFile(outside); string(b) != "secret\n" {
		t.Errorf("outside file: got %q, want it untouched", b)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "out1")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("out1 is no longer a link (mode %v, err %v)", fi.Mode(), err)
	}
}

// TestEditKeepsLinksOwnerMode edits a file with a second hard link (both
// names then hold the edit: it was written in place), and, as root, a file
// owned by another user with odd permissions.
func TestEditKeepsLinksOwnerMode(t *testing.T) {
	dir, e := diskProject(t, map[string]string{"a.txt": "one\ntwo\n", "owned.txt": "x\ny\n"})
	if err := os.Link(filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt")); err != nil {
		t.Skipf("hard links unavailable: %v", err)
	}
	before, _ := os.Stat(filepath.Join(dir, "a.txt"))
	ok(t, e, "view a.txt")
	ok(t, e, "edit a.txt 2\nTWO, longer than before")
	for _, name := range []string{"a.txt", "b.txt"} {
		if b, _ := os.ReadFile(filepath.Join(dir, name)); string(b) != "one\nTWO, longer than before\n" {
			t.Errorf("%s: got %q, want the edit", name, b)
		}
	}
	after, _ := os.Stat(filepath.Join(dir, "a.txt"))
	if !os.SameFile(before, after) {
		t.Errorf("a.txt is a new file after the edit; want the same inode, linked twice")
	}
	ok(t, e, "edit a.txt 2\nt")
	if b, _ := os.ReadFile(filepath.Join(dir, "b.txt")); string(b) != "one\nt\n" {
		t.Errorf("b.txt after a shorter edit: got %q", b)
	}

	if os.Geteuid() != 0 {
		t.Skip("not root: cannot give a file to another user")
	}
	owned := filepath.Join(dir, "owned.txt")
	if err := os.Chown(owned, 1234, 5678); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(owned, 0o640|os.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	ok(t, e, "view owned.txt")
	ok(t, e, "edit owned.txt 1\nX")
	fi, err := os.Stat(owned)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if st.Uid != 1234 || st.Gid != 5678 || fi.Mode() != 0o640|os.ModeSetgid {
		t.Errorf("owned.txt: got owner %d:%d mode %v, want 1234:5678 %v", st.Uid, st.Gid, fi.Mode(), 0o640|os.ModeSetgid)
	}
}

// within runs f and fails the test if it has not returned after a
// minute: a read of a FIFO that blocks would never return.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("%s did not return: it blocked on a special file", what)
	}
}

// TestSpecialFiles refuses a FIFO, a socket and a device in view, search,
// edit and create, without blocking on them.
func TestSpecialFiles(t *testing.T) {
	dir, e := diskProject(t, map[string]string{"plain.txt": "x\n"})
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	specials := map[string]string{"fifo": "a named pipe (FIFO)"}
	if l, err := net.Listen("unix", filepath.Join(dir, "sock")); err == nil {
		defer l.Close()
		specials["sock"] = "a socket"
	}
	if err := syscall.Mknod(filepath.Join(dir, "null"), syscall.S_IFCHR|0o666, 1<<8|3); err == nil {
		specials["null"] = "a character device"
	}
	for name, kind := range specials {
		for _, cmd := range []string{"view " + name, "view " + name + " /x/ /y/", "view " + name + " 1-2", "edit " + name + " 1\nx", "create " + name + "\nx"} {
			within(t, cmd, func() {
				r, err := e.Execute(context.Background(), cmd)
				if err != nil || r.Success {
					t.Errorf("%q: got %+v, %v; want a refusal", cmd, r, err)
					return
				}
				want := name + " is " + kind + ", not a regular file"
				if strings.HasPrefix(cmd, "create") {
					want = name + " already exists and is " + kind
				}
				if strings.HasPrefix(cmd, "edit") {
					want = "Cannot edit - no view contains line 1"
				}
				if !strings.Contains(r.Output, want) {
					t.Errorf("%q: got %q, want it to contain %q", cmd, r.Output, want)
				}
			})
		}
	}
	within(t, "search", func() {
		got := ok(t, e, `search "x" **`)
		want := "Matches:\n  plain.txt:1: x\nSearched 1 file; skipped " + plural(len(specials), "special file") + " (FIFO, socket or device)"
		if got != want {
			t.Errorf("search: got %q, want %q", got, want)
		}
	})
	// A view whose file is replaced by a FIFO is marked, not read.
	ok(t, e, "view plain.txt")
	if err := os.Remove(filepath.Join(dir, "plain.txt")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "plain.txt"), 0o644); err != nil {
		t.Fatal(err)
	}
	within(t, "screen", func() {
		if got, want := views(t, e), "Views:\n  [1] plain.txt [ERROR: not a regular file]"; got != want {
			t.Errorf("screen: got %q, want %q", got, want)
		}
	})
}

// TestSizeLimits refuses content past the size limit in edit and create,
// and files past it in view.
func TestSizeLimits(t *testing.T) {
	e, fsys := newMem(t, map[string]string{"a.txt": "a\nb\n"}, WithMaxFileSize(64))
	big := strings.Repeat("x", 80)
	ok(t, e, "view a.txt")
	tests := []struct{ command, want string }{
		{"edit a.txt 1\n" + big, "the new text is 80 bytes, more than 64 bytes, the editor's limit for one file; nothing was written"},
		{"edit a.txt 1\n" + big[:31] + "\n" + big[:31], "the edit would make a.txt 66 bytes, more than 64 bytes"},
		{"create b.txt\n" + big, "the content is 81 bytes, more than 64 bytes, the editor's limit for one file; nothing was created"},
	}
	for _, tt := range tests {
		t.Run(strings.Fields(tt.command)[0], func(t *testing.T) {
			if got := fail(t, e, tt.command); !strings.Contains(got, tt.want) {
				t.Errorf("got %q, want it to contain %q", got, tt.want)
			}
		})
	}
	if got := readFile(t, fsys, "a.txt"); got != "a\nb\n" {
		t.Errorf("a.txt: got %q, want it untouched", got)
	}
	if _, err := fsys.Stat("b.txt"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("b.txt: got %v, want it not created", err)
	}
}

// TestSearchIgnores leaves out .git, node_modules and what .gitignore
// files name (nested ones too) unless the glob names the folder, and
// gives the same answer on disk (directory handles) and in memory.
func TestSearchIgnores(t *testing.T) {
	files := map[string]string{
		".gitignore":                "build/\n*.tmp\n!keep.tmp\n",
		"src/a.go":                  "hit\n",
		"src/x.tmp":                 "hit\n",
		"src/keep.tmp":              "hit\n",
		"src/gen/.gitignore":        "*.pb.go\n",
		"src/gen/a.pb.go":           "hit\n",
		"src/gen/b.go":              "hit\n",
		"build/out.go":              "hit\n",
		"node_modules/m/index.js":   "hit\n",
		".git/HEAD":                 "hit\n",
		"docs/readme.md":            "hit\n",
		"docs/sub/deeper/notes.txt": "hit\n",
		"bin/tool":                  "hit\x00\n",
	}
	_, disk := diskProject(t, files)
	mem, _ := newMem(t, files)
	tests := []struct{ command, want string }{
		{`search "hit" **`, "Matches:\n  docs/readme.md:1: hit\n  docs/sub/deeper/notes.txt:1: hit\n  src/a.go:1: hit\n  src/gen/b.go:1: hit\n  src/keep.tmp:1: hit\n" +
			"Searched 7 files; skipped 1 binary file; left out 4 ignored paths (node_modules, .gitignore)"},
		{`search "hit" node_modules/**`, "Matches:\n  node_modules/m/index.js:1: hit\nSearched 1 file"},
		{`search "hit" build/*.go`, "Matches:\n  build/out.go:1: hit\nSearched 1 file"},
		{`search "hit" docs/**/*.txt`, "Matches:\n  docs/sub/deeper/notes.txt:1: hit\nSearched 1 file"},
	}
	for _, tt := range tests {
		t.Run(tt.command, func(t *testing.T) {
			for name, e := range map[string]*Editor{"disk": disk, "memory": mem} {
				if got := ok(t, e, tt.command); got != tt.want {
					t.Errorf("%s: got\n%s\nwant\n%s", name, got, tt.want)
				}
			}
		})
	}
}

// TestSearchWalksAgree searches the same tree through directory handles
// and through afero over the same root, and wants the same answers.
func TestSearchWalksAgree(t *testing.T) {
	files := map[string]string{"a-b.go": "x\n", "a.go": "x\n", "a/b.go": "x\nx\n", "z/y/x.go": "x\n", "a b/c.go": "x\n"}
	dir, disk := diskProject(t, files)
	symlink(t, "a.go", filepath.Join(dir, "link.go"))
	symlink(t, "../..", filepath.Join(dir, "z/out"))
	rfs, err := rootfs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer rfs.Close()
	plain, err := NewFs(struct{ afero.Fs }{rfs}, nil) // hides *rootfs.FS: no walk by handles
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`search "x" **`, `search "x" a*`, `search "x" {a,z}/**/*.go`} {
		want := ok(t, plain, q)
		if got := ok(t, disk, q); got != want {
			t.Errorf("%s: by handles got\n%s\nthrough afero got\n%s", q, got, want)
		}
	}
}
