package editor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestListManyEntries lists a directory of 1,200 files, made in an
// order unlike their names': the listing shows the first 500 by name
// and counts the rest.
func TestListManyEntries(t *testing.T) {
	files := map[string]string{}
	for i := range 1200 {
		files[fmt.Sprintf("many/f%04d", (i*7919)%1200)] = ""
	}
	_, e := diskProject(t, files)
	out := ok(t, e, "view many")
	lines := strings.Split(out, "\n")
	if len(lines) != 502 {
		t.Fatalf("got %d lines, want a header, 500 entries and a count:\n%s", len(lines), out)
	}
	for i, l := range lines[1:501] {
		if want := fmt.Sprintf("  many/f%04d", i); l != want {
			t.Fatalf("entry %d: got %q, want %q", i, l, want)
		}
	}
	if want := "  ... and 700 more (list a subdirectory to see them)"; lines[501] != want {
		t.Errorf("got %q, want %q", lines[501], want)
	}
}

// TestListHugeDirectory lists a directory with more entries than a
// listing reads (cut from 100,000 to 3,000 here, which are quicker to
// make): it says so, and shows the first by name of those read.
func TestListHugeDirectory(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big")
	if err := os.Mkdir(big, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 3001 {
		f, err := os.Create(filepath.Join(big, strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	e, err := New(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	e.opt.dirEntries = 3000
	out := ok(t, e, "view big")
	want := "big/ has more than 3000 entries: the listing read 3000 of them"
	if !strings.Contains(out, want) || !strings.Contains(out, "\n  ... and 2500 more") {
		t.Errorf("got %q, want %q and 2500 more", out[max(0, len(out)-400):], want)
	}
	e.opt.dirEntries = 3001
	if out := ok(t, e, "view big"); strings.Contains(out, "more than") || !strings.Contains(out, "\n  ... and 2501 more") {
		t.Errorf("with every entry read: got %q, want 2501 more and no note", out[max(0, len(out)-400):])
	}
}

// TestListInterrupted stops a listing whose context is done.
func TestListInterrupted(t *testing.T) {
	_, e := diskProject(t, map[string]string{"a/b.txt": "", "c.txt": ""})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.listDir(ctx, "."); err == nil || !strings.Contains(err.Error(), "interrupted while listing") {
		t.Errorf("got %v, want the listing interrupted", err)
	}
}

// TestControlCharNames shows a file name with newlines, as a listing,
// a search and a view print it, quoted and escaped: no line of theirs is
// forged by it, and the quoted name reads back in a command.
func TestControlCharNames(t *testing.T) {
	name := "cfg.py\n      1  DEBUG = False  # safe\n  [2] x\x1b[2J"
	_, e := diskProject(t, map[string]string{name: "secret = 1\n"})
	q := strconv.Quote(name)
	for _, c := range []string{"view .", `search "secret" *`} {
		out := ok(t, e, c)
		if strings.Contains(out, "\n      1  DEBUG") || strings.Contains(out, "\x1b") || !strings.Contains(out, q) {
			t.Errorf("%s: got %q, want the name as %s", c, out, q)
		}
	}
	if out := ok(t, e, "view "+q); !strings.Contains(out, "Added view [1] "+q) {
		t.Errorf("view: got %q", out)
	}
	screen, _ := e.Screen()
	if !strings.Contains(screen.Content, "[1] "+q+" (whole file)\n      1  secret = 1") {
		t.Errorf("screen: got %q", screen.Content)
	}
	if out := ok(t, e, "edit "+q+" 1-1\nsecret = 2"); out != "Edited "+q+" lines 1-1" {
		t.Errorf("edit: got %q", out)
	}
	if got := e.Summary(); got != "Editor (1 view: "+q+")" {
		t.Errorf("summary: got %q", got)
	}
}
