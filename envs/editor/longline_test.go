package editor

import (
	"strings"
	"testing"

	"github.com/spf13/afero"
)

// TestEditCutLine refuses an edit of a line the screen cut at 1,000
// bytes, alone or among others, saying why and writing nothing; the
// lines around it are edited.
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
		if !strings.Contains(out, "line 2 of long.js has 4215 bytes and the screen shows the first 1000") ||
			!strings.Contains(out, "nothing was written") {
			t.Errorf("%q: got %q, want the cut line named", c, out)
		}
		if b, _ := afero.ReadFile(fsys, "long.js"); string(b) != content {
			t.Fatalf("%q changed the file", c)
		}
	}
	ok(t, e, "edit long.js 3-3\nconst b = 3;")
	if b, _ := afero.ReadFile(fsys, "long.js"); string(b) != "const a = 1;\n"+long+"\nconst b = 3;\n" {
		t.Errorf("after an edit of line 3: got %q", b)
	}
}
