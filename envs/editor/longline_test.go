package editor

import (
	"strings"
	"testing"

	"github.com/spf13/afero"
)

// TestEditCutLine refuses an edit of a line a view cut at 1,000 bytes,
// alone or among others, saying why, naming the narrow view that shows
// it whole and writing nothing; the lines around it are edited. Through
// that narrow view the line is shown whole and edited; a line too long
// for any view is refused there too, without advice the editor cannot
// know to be good (bash may be off).
func TestEditCutLine(t *testing.T) {
	long := "const cfg = {" + strings.Repeat("k: 1, ", 700) + "};"
	content := "const a = 1;\n" + long + "\nconst b = 2;\n"
	e, fsys := newMem(t, map[string]string{"long.js": content})
	ok(t, e, "view long.js")
	if s, _ := e.Screen(); !strings.Contains(s.Content, " more bytes]") {
		t.Fatalf("the screen does not cut line 2:\n%s", s.Content)
	}
	for _, c := range []string{"edit long.js 2-2\nconst cfg = {k: 2};", "edit long.js 1-3\nx"} {
		out := fail(t, e, c)
		if !strings.Contains(out, "line 2 of long.js has 4215 bytes and view [1] showed the first 1000 of them") ||
			!strings.Contains(out, "nothing was written") || !strings.Contains(out, "view long.js 2-2 shows this one") ||
			strings.Contains(out, "bash") {
			t.Errorf("%q: got %q, want the cut line named and the narrow view", c, out)
		}
		if b, _ := afero.ReadFile(fsys, "long.js"); string(b) != content {
			t.Fatalf("%q changed the file", c)
		}
	}
	ok(t, e, "edit long.js 3-3\nconst b = 3;")
	content = "const a = 1;\n" + long + "\nconst b = 3;\n"
	if b, _ := afero.ReadFile(fsys, "long.js"); string(b) != content {
		t.Errorf("after an edit of line 3: got %q", b)
	}

	// The narrow view shows line 2 whole; the edit goes through it.
	ok(t, e, "view long.js 2-2")
	s, _ := e.Screen()
	if !strings.Contains(s.Content, "[2] long.js lines 2-2\n      2  "+long+"\n") {
		t.Fatalf("the narrow view does not show line 2 whole:\n%s", s.Content)
	}
	ok(t, e, "edit long.js 2-2\n"+long+"\nconst c = 4;")
	if b, _ := afero.ReadFile(fsys, "long.js"); string(b) != "const a = 1;\n"+long+"\nconst c = 4;\nconst b = 3;\n" {
		t.Errorf("after the edit through the narrow view: got %q", b)
	}
}

// TestEditLineTooLongForAnyView refuses an edit of a line longer than
// even a narrow view shows, and a narrow view shows such a line cut.
func TestEditLineTooLongForAnyView(t *testing.T) {
	long := strings.Repeat("q", maxWholeLine+100)
	content := "a\n" + long + "\n"
	e, fsys := newMem(t, map[string]string{"last.txt": content})
	ok(t, e, "view last.txt 2")
	if s, _ := e.Screen(); !strings.Contains(s.Content, " [... 100 more bytes]") {
		t.Fatalf("the narrow view does not cut the line at %d bytes:\n%.300s", maxWholeLine, s.Content)
	}
	out := fail(t, e, "edit last.txt 2\nq")
	if !strings.Contains(out, "line 2 of last.txt has 49252 bytes, more than the 48 KB a view shows of one line") || strings.Contains(out, "bash") {
		t.Errorf("got %q, want the line named as too long for any view", out)
	}
	if b, _ := afero.ReadFile(fsys, "last.txt"); string(b) != content {
		t.Fatal("the refused edit changed the file")
	}
}
