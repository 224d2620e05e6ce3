package skills

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// TestReadDir lists directories with system calls alone and compares the
// result with os.ReadDir's: files, folders, hidden entries, links, a named
// pipe, and a folder whose entries take many reads.
func TestReadDir(t *testing.T) {
	dir := t.TempDir()
	write := func(p string) {
		t.Helper()
		path := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"mixed/b.txt", "mixed/.hidden", "mixed/sub/c.txt", "mixed/a.py", "empty/.keep"} {
		write(p)
	}
	if err := os.Remove(filepath.Join(dir, "empty", ".keep")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("b.txt", filepath.Join(dir, "mixed", "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub", filepath.Join(dir, "mixed", "dirlink")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "mixed", "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	// 400 names of 200 bytes are about 88 KB of entries: 11 reads or more.
	for i := range 400 {
		write(fmt.Sprintf("many/%03d-%s", i, strings.Repeat("n", 196)))
	}
	d := newDiskFS(dir).(diskFS)
	var buf []byte
	for _, name := range []string{"mixed", "empty", "many", "mixed/sub"} {
		t.Run(name, func(t *testing.T) {
			got, err := d.readDir(name, &buf)
			if err != nil {
				t.Fatal(err)
			}
			want, err := readDirFS(os.DirFS(dir), name)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("got %d entries %v, want %d %v", len(got), head(got), len(want), head(want))
			}
		})
	}
	if _, err := d.readDir("missing", &buf); !errorsIsNotExist(err) {
		t.Errorf("a missing folder: got %v, want a not-exist error", err)
	}
	if _, err := d.readDir("mixed/a.py", &buf); err == nil {
		t.Errorf("a file: got no error")
	}
}

// TestUnknownDirentType reads entries whose type the filesystem does not
// report (DT_UNKNOWN, as some filesystems give): each is looked up.
func TestUnknownDirentType(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "file"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "folder"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("file", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	var b []byte
	for _, e := range []struct {
		ino  uint64
		name string
	}{{1, "."}, {1, ".."}, {7, "file"}, {0, "deleted"}, {8, "folder"}, {9, "link"}, {10, "gone"}, {11, "pipe"}} {
		b = appendRecord(b, e.ino, e.name, syscall.DT_UNKNOWN)
	}
	got, err := appendDirents(nil, fd, b)
	if err != nil {
		t.Fatal(err)
	}
	want := []dirEntry{{"file", 0}, {"folder", fs.ModeDir}, {"link", fs.ModeSymlink}, {"pipe", fs.ModeNamedPipe}}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v (the deleted entry, the dots and the one gone since left out)", got, want)
	}
	// A record cut short ends the reading, without a panic.
	if got, _ := appendDirents(nil, fd, b[:len(b)-3]); !slices.Equal(got, want[:len(want)-1]) {
		t.Errorf("the last record cut: got %v, want %v, the whole records before it", got, want[:len(want)-1])
	}
	// A lookup that fails for another reason than the entry being gone is
	// the listing's error, as os.ReadDir has it.
	if _, err := appendDirents(nil, fd, appendRecord(nil, 12, "file/x", syscall.DT_UNKNOWN)); !errors.Is(err, syscall.ENOTDIR) {
		t.Errorf("a lookup that fails: got %v, want ENOTDIR", err)
	}
}

// TestReadDirSignals lists a folder of 3,000 entries while signals keep
// arriving, as they do in a program whose children exit: a directory read
// stops early when a signal is pending, with room left in the buffer, so
// only an empty read may end a listing.
func TestReadDirSignals(t *testing.T) {
	const n = 3000
	dir := t.TempDir()
	for i := range n {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%04d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d := newDiskFS(dir).(diskFS)
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-stop:
				return
			default:
				syscall.Kill(os.Getpid(), syscall.SIGCHLD) // ignored, but pending
			}
		}
	}()
	defer func() { close(stop); <-stopped }()
	var buf []byte
	for i := range 50 {
		got, err := d.readDir(".", &buf)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != n {
			t.Fatalf("listing %d: got %d entries, want %d", i, len(got), n)
		}
	}
}

// appendRecord appends a linux_dirent64 record to b.
func appendRecord(b []byte, ino uint64, name string, typ byte) []byte {
	n := (19 + len(name) + 1 + 7) &^ 7
	rec := make([]byte, n)
	binary.NativeEndian.PutUint64(rec[0:], ino)
	binary.NativeEndian.PutUint16(rec[16:], uint16(n))
	rec[18] = typ
	copy(rec[19:], name)
	return append(b, rec...)
}

func head(es []dirEntry) []dirEntry { return es[:min(len(es), 4)] }

func errorsIsNotExist(err error) bool { return err != nil && os.IsNotExist(err) }
