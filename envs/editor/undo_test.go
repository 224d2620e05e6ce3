package editor

import (
	"strings"
	"testing"

	"github.com/spf13/afero"
)

// TestUndo makes two edits and undoes them in order: each undo gives back
// the bytes the file had before the edit it takes back; a third has
// nothing to undo.
func TestUndo(t *testing.T) {
	const v0 = "a\r\nb\r\nc\r\nd\r\n"
	e, fsys := newMem(t, map[string]string{"f.txt": v0, "other.txt": "x\n"})
	ok(t, e, "view f.txt")
	views(t, e)
	ok(t, e, "edit f.txt 2-2\nB1\nB2")
	v1 := readFile(t, fsys, "f.txt")
	views(t, e)
	ok(t, e, "edit f.txt 5-5\n")
	if got, want := readFile(t, fsys, "f.txt"), "a\r\nB1\r\nB2\r\nc\r\n"; got != want {
		t.Fatalf("after two edits: got %q, want %q", got, want)
	}
	if got, want := ok(t, e, "undo f.txt"), "Undid the edit of f.txt lines 5-5: the file is as it was before it (1 earlier edit of it left to undo)"; got != want {
		t.Errorf("first undo: got %q, want %q", got, want)
	}
	if got := readFile(t, fsys, "f.txt"); got != v1 {
		t.Errorf("after the first undo: got %q, want %q", got, v1)
	}
	if got, want := ok(t, e, "undo f.txt"), "Undid the edit of f.txt lines 2-2: the file is as it was before it (0 earlier edits of it left to undo)"; got != want {
		t.Errorf("second undo: got %q, want %q", got, want)
	}
	if got := readFile(t, fsys, "f.txt"); got != v0 {
		t.Errorf("after the second undo: got %q, want %q", got, v0)
	}
	if got, want := views(t, e), "Views:\n  [1] f.txt (whole file)\n      1  a\n      2  b\n      3  c\n      4  d"; got != want {
		t.Errorf("screen: got %q, want %q", got, want)
	}
	if got, want := fail(t, e, "undo f.txt"), "nothing to undo for f.txt"; !strings.Contains(got, want) {
		t.Errorf("third undo: got %q, want it to contain %q", got, want)
	}
	if got, want := fail(t, e, "undo other.txt"), "nothing to undo for other.txt"; !strings.Contains(got, want) {
		t.Errorf("undo of a file never edited: got %q, want it to contain %q", got, want)
	}
}

// TestUndoRefused refuses to undo an edit of a file changed since, and
// leaves the file as it is.
func TestUndoRefused(t *testing.T) {
	e, fsys := newMem(t, map[string]string{"f.txt": "a\nb\n"})
	ok(t, e, "view f.txt")
	ok(t, e, "edit f.txt 1-1\nA")
	if err := afero.WriteFile(fsys, "f.txt", []byte("A\nb\nmore\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := fail(t, e, "undo f.txt")
	if want := "f.txt changed since the editor's last edit of it (lines 1-1), so undo would lose those changes; nothing was restored"; !strings.Contains(got, want) {
		t.Errorf("got %q, want it to contain %q", got, want)
	}
	if got, want := readFile(t, fsys, "f.txt"), "A\nb\nmore\n"; got != want {
		t.Errorf("file: got %q, want it untouched %q", got, want)
	}
}

// TestUndoLimit keeps no more than the configured bytes for undo: the
// oldest steps go first, and a file larger than the limit keeps none.
func TestUndoLimit(t *testing.T) {
	e, fsys := newMem(t, map[string]string{"small.txt": "a\n", "big.txt": strings.Repeat("x\n", 20)}, WithMaxUndo(10))
	ok(t, e, "view small.txt")
	ok(t, e, "view big.txt")
	views(t, e)
	ok(t, e, "edit small.txt 1\nb")
	views(t, e)
	ok(t, e, "edit small.txt 1\nc")
	ok(t, e, "edit big.txt 1\ny")
	if got, want := fail(t, e, "undo big.txt"), "nothing to undo for big.txt"; !strings.Contains(got, want) {
		t.Errorf("got %q, want it to contain %q", got, want)
	}
	ok(t, e, "undo small.txt")
	ok(t, e, "undo small.txt")
	if got := readFile(t, fsys, "small.txt"); got != "a\n" {
		t.Errorf("small.txt: got %q, want %q", got, "a\n")
	}
	var l undoLog
	l.limit = 5
	for i := range 4 {
		l.record(undoStep{path: "p", before: []byte{'0' + byte(i), '\n'}})
	}
	if got, want := l.count("p"), 2; got != want || l.size != 4 {
		t.Errorf("log within 5 bytes: got %d steps of %d bytes, want %d steps of 4 bytes", got, l.size, want)
	}
	for range maxUndoLevels + 5 {
		l.limit = 1 << 20
		l.record(undoStep{path: "q", before: []byte("x")})
	}
	if got := l.count("q"); got != maxUndoLevels {
		t.Errorf("steps of one file: got %d, want at most %d", got, maxUndoLevels)
	}
}
