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

// TestEditCutLineCrowdedOut refuses an edit of a cut line whose narrow
// view is open but got no room on the screen, naming a view to close
// rather than the narrow view again; once that view is closed, the edit
// goes through the narrow view. A line no view shows whole is refused as
// such, with no view to close.
func TestEditCutLineCrowdedOut(t *testing.T) {
	lines := make([]string, 80)
	for i := range lines {
		lines[i] = strings.Repeat("w", 990)
	}
	lines[1] = strings.Repeat("L", 5000)
	e, fsys := newMem(t, map[string]string{"f.txt": strings.Join(lines, "\n") + "\n"})
	ok(t, e, "view f.txt 1-80")
	screen(t, e)
	if out := fail(t, e, "edit f.txt 2-2\nx"); !strings.Contains(out, "view f.txt 2-2 shows this one") {
		t.Fatalf("with no narrow view open: got %q, want it suggested", out)
	}
	ok(t, e, "view f.txt 2-2")
	if s := screen(t, e); !strings.Contains(s, "[2] f.txt lines 2-2\n    [TRUNCATED") {
		t.Fatalf("the narrow view got room on the screen:\n%.300s", s[len(s)-min(len(s), 600):])
	}
	for _, c := range []string{"edit f.txt 2-2\nx", "edit f.txt 2-3\nx", "edit f.txt 1-2\nx"} {
		out := fail(t, e, c)
		if strings.Contains(out, "view f.txt 2-2 shows") || !strings.Contains(out, " in view [2], but the views before it fill the screen") ||
			!strings.Contains(out, "close 1;") || !strings.Contains(out, "nothing was written") {
			t.Errorf("%q: got %q, want view [1] named to close", c, out)
		}
	}
	ok(t, e, "close 1")
	screen(t, e)
	ok(t, e, "edit f.txt 2-2\nx")
	lines[1] = "x"
	if b, _ := afero.ReadFile(fsys, "f.txt"); string(b) != strings.Join(lines, "\n")+"\n" {
		t.Errorf("after the edit through the narrow view: got %.200q", b)
	}

	lines[1] = strings.Repeat("L", maxWholeLine+1)
	e, _ = newMem(t, map[string]string{"f.txt": strings.Join(lines, "\n") + "\n"})
	ok(t, e, "view f.txt 1-80")
	ok(t, e, "view f.txt 2-2")
	screen(t, e)
	if out := fail(t, e, "edit f.txt 2-2\nx"); !strings.Contains(out, "more than the 48 KB a view shows of one line") {
		t.Errorf("a line too long for any view: got %q", out)
	}
}
