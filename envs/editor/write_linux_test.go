package editor

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/spf13/afero"
	"github.com/unfold-dev/unfold/rootfs"
	"golang.org/x/sys/unix"
)

// aclAccess encodes a POSIX access ACL as Linux stores it in
// system.posix_acl_access: owner rw, user 65534 rw, owning group r,
// mask rw, other r (ls shows -rw-rw-r--+).
func aclAccess() []byte {
	const undefined = 0xffffffff
	entries := [][3]uint32{
		{0x01, 6, undefined}, // ACL_USER_OBJ
		{0x02, 6, 65534},     // ACL_USER
		{0x04, 4, undefined}, // ACL_GROUP_OBJ
		{0x10, 6, undefined}, // ACL_MASK
		{0x20, 4, undefined}, // ACL_OTHER
	}
	b := binary.LittleEndian.AppendUint32(nil, 2)
	for _, e := range entries {
		b = binary.LittleEndian.AppendUint16(b, uint16(e[0]))
		b = binary.LittleEndian.AppendUint16(b, uint16(e[1]))
		b = binary.LittleEndian.AppendUint32(b, e[2])
	}
	return b
}

// attrsOf returns the extended attributes of the file name, sorted by
// name.
func attrsOf(t *testing.T, name string) []xattr {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	attrs, err := readAttrs(int(f.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(attrs, func(a, b xattr) int { return strings.Compare(a.name, b.name) })
	return attrs
}

func sameAttrs(a, b []xattr) bool {
	return slices.EqualFunc(a, b, func(x, y xattr) bool { return x.name == y.name && bytes.Equal(x.value, y.value) })
}

// TestEditKeepsAttrs edits a file with user.* attributes, and one with a
// POSIX ACL: each keeps them, and its mode (whose group bits are the
// ACL's mask), through the rename. An attribute the directory's default
// ACL would give the new file is not added.
func TestEditKeepsAttrs(t *testing.T) {
	dir, e := diskProject(t, map[string]string{"a.txt": "one\ntwo\n", "acl.txt": "one\ntwo\n", "d/plain.txt": "one\ntwo\n"})
	a := filepath.Join(dir, "a.txt")
	if err := unix.Setxattr(a, "user.tag", []byte("keep"), 0); err != nil {
		t.Skipf("the filesystem under %s takes no user.* attributes: %v", dir, err)
	}
	if err := unix.Setxattr(a, "user.empty", nil, 0); err != nil {
		t.Fatal(err)
	}
	want := attrsOf(t, a)
	before, _ := os.Stat(a)
	ok(t, e, "view a.txt")
	ok(t, e, "edit a.txt 2\nTWO")
	after, _ := os.Stat(a)
	if os.SameFile(before, after) {
		t.Errorf("a.txt was written in place; want it renamed with its attributes")
	}
	if got := attrsOf(t, a); !sameAttrs(got, want) {
		t.Errorf("a.txt attributes: got %v, want %v", got, want)
	}

	acl := filepath.Join(dir, "acl.txt")
	if err := unix.Setxattr(acl, "system.posix_acl_access", aclAccess(), 0); err != nil {
		t.Skipf("the filesystem under %s takes no POSIX ACLs: %v", dir, err)
	}
	want = attrsOf(t, acl)
	mode, _ := os.Stat(acl)
	ok(t, e, "view acl.txt")
	ok(t, e, "edit acl.txt 2\nTWO")
	if got := attrsOf(t, acl); !sameAttrs(got, want) {
		t.Errorf("acl.txt attributes: got %v, want %v", got, want)
	}
	if fi, _ := os.Stat(acl); fi.Mode() != mode.Mode() {
		t.Errorf("acl.txt mode: got %v, want %v", fi.Mode(), mode.Mode())
	}

	// A default ACL on the directory gives new files an access ACL; the
	// file had none, and has none after the edit.
	d := filepath.Join(dir, "d")
	if err := unix.Setxattr(d, "system.posix_acl_default", aclAccess(), 0); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(d, "plain.txt")
	mode, _ = os.Stat(plain)
	ok(t, e, "view d/plain.txt")
	ok(t, e, "edit d/plain.txt 2\nTWO")
	if got := attrsOf(t, plain); len(got) != 0 {
		t.Errorf("d/plain.txt attributes: got %v, want none", got)
	}
	if fi, _ := os.Stat(plain); fi.Mode() != mode.Mode() {
		t.Errorf("d/plain.txt mode: got %v, want %v", fi.Mode(), mode.Mode())
	}
	if b, _ := os.ReadFile(plain); string(b) != "one\nTWO\n" {
		t.Errorf("d/plain.txt: got %q", b)
	}
}

// attrHelperEnv names the directory TestAttrsNotCopied's child process
// edits in.
const attrHelperEnv = "UNFOLD_EDITOR_ATTR_HELPER"

// TestAttrsNotCopied edits, as a user who is not root, a file with a
// security.* attribute that only root may set: the new file could not
// have it, so the file is written in place and keeps it.
func TestAttrsNotCopied(t *testing.T) {
	if dir := os.Getenv(attrHelperEnv); dir != "" {
		e, err := New(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		ok(t, e, "view s.txt")
		ok(t, e, "edit s.txt 2\nTWO")
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("not root: cannot set a security.* attribute for a user who cannot copy it")
	}
	dir, err := os.MkdirTemp("", "attrs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	s := filepath.Join(dir, "s.txt")
	if err := os.WriteFile(s, []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := unix.Setxattr(s, "security.unfoldtest", []byte("label"), 0); err != nil {
		t.Skipf("the filesystem under %s takes no security.* attributes: %v", dir, err)
	}
	// The child runs a copy of this test binary a user who is not root
	// can read.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "editor.test")
	copyFile(t, self, bin)
	for _, p := range []string{dir, s, bin} {
		if err := os.Chown(p, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(s)
	cmd := exec.Command(bin, "-test.run=^TestAttrsNotCopied$", "-test.count=1")
	cmd.Env = append(os.Environ(), attrHelperEnv+"="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the edit as user 65534: %v\n%s", err, out)
	}
	after, _ := os.Stat(s)
	if !os.SameFile(before, after) {
		t.Errorf("s.txt is a new file; want it written in place")
	}
	if v, err := unix.Getxattr(s, "security.unfoldtest", make([]byte, 64)); err != nil || v != len("label") {
		t.Errorf("s.txt security.unfoldtest: got %d bytes, %v, want it kept", v, err)
	}
	if b, _ := os.ReadFile(s); string(b) != "one\nTWO\n" {
		t.Errorf("s.txt: got %q", b)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestEditLongName edits a file whose name has 244 bytes, under the 255
// a name may have: the temporary file's name is kept within them, and
// the file is renamed. On a filesystem whose names are shorter still,
// the file is written in place.
func TestEditLongName(t *testing.T) {
	name := strings.Repeat("n", 240) + ".txt"
	dir, e := diskProject(t, map[string]string{name: "one\ntwo\n"})
	p := filepath.Join(dir, name)
	before, _ := os.Stat(p)
	ok(t, e, "view "+name)
	ok(t, e, "edit "+name+" 2\nTWO")
	after, _ := os.Stat(p)
	if b, _ := os.ReadFile(p); string(b) != "one\nTWO\n" || os.SameFile(before, after) {
		t.Errorf("got %q, same file %v; want the edit, renamed", b, os.SameFile(before, after))
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Errorf("the directory holds %d entries, want the file only", len(es))
	}

	fsys, err := rootfs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fsys.Close() })
	short, err := NewFs(shortNames{fsys}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ok(t, short, "view "+name)
	ok(t, short, "edit "+name+" 1\nONE")
	last, _ := os.Stat(p)
	if b, _ := os.ReadFile(p); string(b) != "ONE\nTWO\n" || !os.SameFile(after, last) {
		t.Errorf("got %q, same file %v; want the edit, written in place", b, os.SameFile(after, last))
	}
}

// shortNames is a filesystem that takes no name as long as a temporary
// file's.
type shortNames struct{ afero.Fs }

func (s shortNames) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	if strings.Contains(name, ".unfold-") {
		return nil, &os.PathError{Op: "open", Path: name, Err: syscall.ENAMETOOLONG}
	}
	return s.Fs.OpenFile(name, flag, perm)
}

// renameRefused is a filesystem whose renames fail with err, as the
// system refuses a rename over a mount point.
type renameRefused struct {
	afero.Fs
	err error
}

func (r renameRefused) Rename(oldname, newname string) error {
	return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: r.err}
}

// TestEditUnreplaceable edits a file a rename cannot replace (a mount
// point gives EBUSY, another filesystem EXDEV, a directory that forbids
// it EPERM): it is written in place. As root, a real bind mount of one
// file over another is edited too.
func TestEditUnreplaceable(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.EBUSY, syscall.EXDEV, syscall.EPERM} {
		t.Run(errno.Error(), func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "a.txt")
			if err := os.WriteFile(p, []byte("one\ntwo\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			fsys, err := rootfs.New(dir)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = fsys.Close() })
			e, err := NewFs(renameRefused{fsys, errno}, nil)
			if err != nil {
				t.Fatal(err)
			}
			before, _ := os.Stat(p)
			ok(t, e, "view a.txt")
			ok(t, e, "edit a.txt 2\nTWO")
			after, _ := os.Stat(p)
			if b, _ := os.ReadFile(p); string(b) != "one\nTWO\n" || !os.SameFile(before, after) {
				t.Errorf("got %q, same file %v; want the edit, written in place", b, os.SameFile(before, after))
			}
			if es, _ := os.ReadDir(dir); len(es) != 1 {
				t.Errorf("the directory holds %d entries, want the file only", len(es))
			}
		})
	}

	t.Run("bind mount", func(t *testing.T) {
		dir, e := diskProject(t, map[string]string{"src.txt": "one\ntwo\n", "mnt.txt": "x\n"})
		src, mnt := filepath.Join(dir, "src.txt"), filepath.Join(dir, "mnt.txt")
		if err := unix.Mount(src, mnt, "", unix.MS_BIND, ""); err != nil {
			t.Skipf("cannot bind-mount a file here (mount needs root in a namespace that allows it): %v", err)
		}
		t.Cleanup(func() { _ = unix.Unmount(mnt, 0) })
		ok(t, e, "view mnt.txt")
		ok(t, e, "edit mnt.txt 2\nTWO")
		if b, _ := os.ReadFile(src); string(b) != "one\nTWO\n" {
			t.Errorf("src.txt through the mount: got %q", b)
		}
	})
}

// TestCreateThroughLinkedDir asks the write check about the file a new
// path leads to once a linked directory on it is followed: the alias of
// a refused file is refused too, and nothing is written.
func TestCreateThroughLinkedDir(t *testing.T) {
	dir, e := diskProject(t, map[string]string{"tools/keep.txt": ""})
	symlink(t, "tools", filepath.Join(dir, "t2"))
	var asked []string
	e.SetWriteCheck(func(p string) error {
		asked = append(asked, p)
		if strings.HasPrefix(p, filepath.Join(dir, "tools")+"/") && strings.HasSuffix(p, "run.py") {
			return errors.New(filepath.Base(p) + " is kept")
		}
		return nil
	})
	for _, c := range []string{"create t2/run.py\nprint(1)", "create t2/sub/run.py\nprint(1)"} {
		if out := fail(t, e, c); !strings.Contains(out, "run.py is kept; nothing was written") {
			t.Errorf("%q: got %q, want the write check's refusal", c, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "tools", "run.py")); err == nil {
		t.Error("tools/run.py was created")
	}
	if _, err := os.Stat(filepath.Join(dir, "tools", "sub")); err == nil {
		t.Error("tools/sub was created")
	}
	ok(t, e, "create t2/sub/other.py\nprint(2)")
	if b, _ := os.ReadFile(filepath.Join(dir, "tools", "sub", "other.py")); string(b) != "print(2)\n" {
		t.Errorf("tools/sub/other.py: got %q", b)
	}
	if want := filepath.Join(dir, "tools", "sub", "other.py"); asked[len(asked)-1] != want {
		t.Errorf("the check was asked about %q, want %q", asked[len(asked)-1], want)
	}
}

// TestCreateThroughDanglingDirLink explains a create through a link to a
// directory that does not exist: the message names the link and where it
// leads, and nothing is written.
func TestCreateThroughDanglingDirLink(t *testing.T) {
	dir, e := diskProject(t, map[string]string{"tools/keep.txt": ""})
	symlink(t, "tools/sub", filepath.Join(dir, "s"))
	for _, c := range []string{"create s/x.py\nx", "create s/deep/x.py\nx"} {
		out := fail(t, e, c)
		if !strings.Contains(out, "s is a symbolic link (to tools/sub), or leads through one, to a directory that does not exist") {
			t.Errorf("%q: got %q, want the dangling link named", c, out)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "tools", "sub")); err == nil {
		t.Error("tools/sub was created")
	}
}

// TestTempNameUTF8 cuts a long name for its temporary file on a
// character's boundary.
func TestTempNameUTF8(t *testing.T) {
	name := strings.Repeat("漢", 67) + ".txt" // 201 bytes before the suffix
	tmp := tempName("d/" + name)
	if !utf8.ValidString(tmp) || !strings.HasPrefix(tmp, "d/."+strings.Repeat("漢", 66)+".unfold-") {
		t.Errorf("got %q, want the name cut after 66 characters, valid UTF-8", tmp)
	}
}

// appendOnly refuses the rename with EPERM and the removal of a
// temporary file with EPERM, as a directory with the append-only
// attribute does.
type appendOnly struct{ renameRefused }

func (a appendOnly) Remove(name string) error {
	if strings.Contains(name, ".unfold-") {
		return &fs.PathError{Op: "remove", Path: name, Err: syscall.EPERM}
	}
	return a.renameRefused.Remove(name)
}

// TestEditAppendOnlyDir edits a file in a directory that lets no entry be
// removed or renamed: the edit is written in place, the temporary file
// that cannot be removed is emptied, and the response names it. A real
// append-only directory (chattr +a, which needs the right to set it)
// behaves the same.
func TestEditAppendOnlyDir(t *testing.T) {
	check := func(t *testing.T, dir string, e *Editor) {
		t.Helper()
		ok(t, e, "view a.txt")
		out := ok(t, e, "edit a.txt 2\nTWO")
		if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "one\nTWO\n" {
			t.Errorf("a.txt: got %q, want the edit", b)
		}
		es, _ := os.ReadDir(dir)
		var tmp string
		for _, en := range es {
			if strings.Contains(en.Name(), ".unfold-") {
				tmp = en.Name()
			}
		}
		if tmp == "" {
			t.Fatalf("no temporary file left, so the test does not test the leftover; got %q", out)
		}
		if fi, err := os.Stat(filepath.Join(dir, tmp)); err != nil || fi.Size() != 0 {
			t.Errorf("%s: got %v, %v, want it emptied", tmp, fi.Size(), err)
		}
		want := "Edited a.txt lines 2-2\nThe editor's temporary file " + tmp + " could not be removed (operation not permitted); it was emptied."
		if !strings.HasPrefix(out, want) {
			t.Errorf("got %q, want it to start with %q", out, want)
		}
	}
	t.Run("wrapped", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		fsys, err := rootfs.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = fsys.Close() })
		e, err := NewFs(appendOnly{renameRefused{fsys, syscall.EPERM}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		check(t, dir, e)
	})
	t.Run("chattr", func(t *testing.T) {
		dir, e := diskProject(t, map[string]string{"a.txt": "one\ntwo\n"})
		if out, err := exec.Command("chattr", "+a", dir).CombinedOutput(); err != nil {
			t.Skipf("cannot make the directory append-only here (chattr +a needs CAP_LINUX_IMMUTABLE and a filesystem that has it): %v: %s", err, out)
		}
		t.Cleanup(func() { _ = exec.Command("chattr", "-a", dir).Run() })
		check(t, dir, e)
	})
}
