package editor

import (
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/afero"
)

// preview returns the content of a preview of the screen.
func preview(t *testing.T, e *Editor) string {
	t.Helper()
	s, err := e.Preview()
	if err != nil {
		t.Fatalf("Preview(): got error %v, want none", err)
	}
	return s.Content
}

// TestPreviewNotShown changes a viewed line outside the editor: a preview
// draws the new line but does not count it as shown, so an edit based on
// the old line is refused and the file kept; once a screen counted as
// shown drew it, the edit goes through.
func TestPreviewNotShown(t *testing.T) {
	for _, view := range []string{"view a.txt 1-3", "view a.txt /^one/ /^three/", "view a.txt"} {
		t.Run(view, func(t *testing.T) {
			e, fsys := newMem(t, map[string]string{"a.txt": "one\ntwo\nthree\n"})
			ok(t, e, view)
			screen(t, e)
			if err := afero.WriteFile(fsys, "a.txt", []byte("one\nUSER CHANGE\nthree\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			for range 3 {
				if got := preview(t, e); !strings.Contains(got, "2  USER CHANGE") {
					t.Fatalf("preview does not draw the file as it is now:\n%s", got)
				}
			}
			if got := fail(t, e, "edit a.txt 2-2\nmodel line"); !strings.Contains(got, "The file changed since view [1] showed it") {
				t.Errorf("got %q, want the edit refused as based on older lines", got)
			}
			if got := readFile(t, fsys, "a.txt"); got != "one\nUSER CHANGE\nthree\n" {
				t.Fatalf("got file %q, want the change kept", got)
			}
			screen(t, e)
			ok(t, e, "edit a.txt 2-2\nmodel line")
			if got := readFile(t, fsys, "a.txt"); got != "one\nmodel line\nthree\n" {
				t.Errorf("got file %q after an edit of the lines shown", got)
			}
		})
	}
}

// TestPreviewKeepsViews draws previews of views that cannot be shown (the
// file is gone, the start pattern matches no more): they stay, marked,
// until a screen counted as shown has shown them once.
func TestPreviewKeepsViews(t *testing.T) {
	e, fsys := newMem(t, map[string]string{"a.txt": "one\ntwo\n", "b.txt": "start\nend\n"})
	ok(t, e, "view a.txt")
	ok(t, e, "view b.txt /^start/ /^end/")
	if err := fsys.Remove("a.txt"); err != nil {
		t.Fatal(err)
	}
	if err := afero.WriteFile(fsys, "b.txt", []byte("gone\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		got := preview(t, e)
		if !strings.Contains(got, "[1] a.txt [") || !strings.Contains(got, "[2] b.txt [BROKEN") {
			t.Fatalf("preview does not mark both views:\n%s", got)
		}
	}
	if got := views(t, e); !strings.Contains(got, "[1] a.txt [") || !strings.Contains(got, "[2] b.txt [BROKEN") {
		t.Fatalf("the screen does not mark both views:\n%s", got)
	}
	if got := views(t, e); got != "Views:\n  (no views)" {
		t.Errorf("got %q after the screen showed them, want the views removed", got)
	}
}

// bigFile is n numbered lines of width bytes each.
func bigFile(n, width int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		line := fmt.Sprintf("line %04d ", i)
		b.WriteString(line + strings.Repeat("x", width-len(line)) + "\n")
	}
	return b.String()
}

// fitting runs the view commands and returns the screen, failing the test
// unless it keeps within the 64 KiB the orchestrator keeps of a screen,
// the commands' help included.
func fitting(t *testing.T, e *Editor, views ...string) string {
	t.Helper()
	for _, v := range views {
		ok(t, e, v)
	}
	got := screen(t, e)
	if len(got) > 64<<10 || !strings.Contains(got, "\n\nCommands:\n") {
		t.Fatalf("got a screen of %d bytes, want at most 64 KiB with the commands' help", len(got))
	}
	return got
}

// TestViewsFitScreen opens views whose lines are more than a screen holds
// (the orchestrator cuts screens past 64 KiB): the views are cut at their
// own budget with a note naming the view command that shows the rest, the
// commands' help is still there, and the lines cut are not editable.
func TestViewsFitScreen(t *testing.T) {
	files := map[string]string{"big.txt": bigFile(1000, 200), "small.txt": "alpha\nbeta\n"}

	t.Run("big after small", func(t *testing.T) {
		e, fsys := newMem(t, files)
		got := fitting(t, e, "view small.txt", "view big.txt")
		last := 0
		for n := 1; n <= 1000; n++ {
			if strings.Contains(got, fmt.Sprintf("  line %04d ", n)) {
				last = n
			}
		}
		if last < 100 || last == 1000 {
			t.Fatalf("the screen shows big.txt up to line %d, want it cut after line 100 or more", last)
		}
		note := fmt.Sprintf("lines %d-1000 of this view are not shown and cannot be edited: close a view, or view big.txt %d-1000 shows them]", last+1, last+1)
		if !strings.Contains(got, note) {
			t.Errorf("the screen does not say which lines were cut and how to see them (want %q):\n%s", note, got[len(got)-2000:])
		}
		if msg := fail(t, e, fmt.Sprintf("edit big.txt %d-%d\nBLIND", last+1, last+1)); !strings.Contains(msg, "Can only edit lines visible in a view") {
			t.Errorf("edit of a line the screen cut: got %q, want it refused", msg)
		}
		ok(t, e, fmt.Sprintf("edit big.txt %d-%d\nSEEN", last, last))
		if data := readFile(t, fsys, "big.txt"); !strings.Contains(data, "\nSEEN\n") {
			t.Error("the edit of the last line shown did not go through")
		}
		ok(t, e, fmt.Sprintf("view big.txt %d-1000", last+1))
		ok(t, e, "close 2")
		if got := views(t, e); !strings.Contains(got, fmt.Sprintf("  line %04d ", last+1)) {
			t.Errorf("the view the note names does not show line %d:\n%.300s", last+1, got)
		}
	})

	t.Run("small after big", func(t *testing.T) {
		e, _ := newMem(t, files)
		got := fitting(t, e, "view big.txt", "view small.txt")
		if !strings.Contains(got, "[2] small.txt (whole file)\n    [TRUNCATED: the views fill the screen's") {
			t.Errorf("the second view is not marked as cut:\n%s", got[len(got)-2000:])
		}
		if msg := fail(t, e, "edit small.txt 2-2\nBLIND"); !strings.Contains(msg, "none (view [2] did not fit on the screen)") {
			t.Errorf("edit of a view the screen had no room for: got %q, want it refused", msg)
		}
	})
}

// TestHelpFitsBesideViews checks that the views' budget leaves room for
// the whole help (a fresh editor's, every command described in full)
// within the 64 KiB the orchestrator keeps of a screen.
func TestHelpFitsBesideViews(t *testing.T) {
	e, _ := newMem(t, nil)
	help := screen(t, e)
	if n := maxViewBytes + len(help) + 2*maxViews*len(cutNote(&view{path: strings.Repeat("p", 200)}, 1)); n > 64<<10 {
		t.Errorf("views (%d bytes), notes and help (%d bytes) take %d bytes, more than a screen's 64 KiB", maxViewBytes, len(help), n)
	}
}
