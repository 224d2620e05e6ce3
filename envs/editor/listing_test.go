package editor

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"
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
	dir, e := diskProject(t, map[string]string{name: "secret = 1\n"})
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

	if out := ok(t, e, "undo "+q); !strings.HasPrefix(out, "Undid the edit of "+q+" lines 1-1") {
		t.Errorf("undo: got %q", out)
	}

	// Errors name the file quoted too: no line of theirs is forged.
	dq := strconv.Quote("d\n  [9] x")
	if err := os.Mkdir(filepath.Join(dir, "d\n  [9] x"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ command, want string }{
		{"create " + q + "\nx", q + " already exists; create only makes new files"},
		{"edit " + q + " 3-3\nx", q + " has 1 line, so line 3 is past its end; nothing was written. To add lines at the end, replace the last line with itself followed by the new lines: edit " + q + " 1-1"},
		{"undo " + q, "nothing to undo for " + q + ": "},
		{"create " + dq + "\nx", dq + " is a directory; create makes files"},
		{"view " + dq + " 1-2", dq + " is a directory; view " + dq + " lists it"},
		{"view " + q + " 5-6", q + " has 1 line, so line 5 is past its end"},
		{"view " + q + " /nothing/ /x/", "no line of " + q + " matches the start pattern"},
		{"create " + strconv.Quote(name+"/x.txt") + "\nx", q + " is a file, not a directory, so " + strconv.Quote(name+"/x.txt") + " cannot be created in it"},
	} {
		out := fail(t, e, c.command)
		if !strings.Contains(out, c.want) || strings.Contains(out, "\n      1  DEBUG") || strings.Contains(out, "\n  [9] x") {
			t.Errorf("%q: got %q, want it to have %q", c.command, out, c.want)
		}
	}
}

// TestBackslashNames round-trips names with backslashes, as systemd units
// have them (\x2d for a dash), through listings and commands: a quoted
// name reads an escape only where the editor would have written one, so
// "a\x2db.mount" opens a\x2db.mount, not a-b.mount, and a listing quotes
// a name with a backslash so that it reads back as itself, and so does a
// name whose part begins or ends with white space.
func TestBackslashNames(t *testing.T) {
	names := map[string]string{
		"a-b.mount":     "dash\n",
		`a\x2db.mount`:  "escaped\n",
		`my a\nb.txt`:   "backslash n\n",
		"ctl\tname\x7f": "control\n",
		"bad\xffname":   "not utf-8\n",
		"caf\u00e9":     "accented\n",
		`q"uote d`:      "quote\n",
		"d/a.txt":       "trimmed\n",
		"d/a.txt ":      "trailing space\n",
		"d/ b.txt":      "leading space\n",
		" e/in side.go": "space inside\n",
	}
	_, e := diskProject(t, names)
	listing := ok(t, e, "view .")
	for name, content := range names {
		shown := showPath(name)
		if !strings.Contains(listing, "\n  "+shown+"\n") && !strings.HasSuffix(listing, "\n  "+shown) {
			t.Errorf("%q: the listing does not show it as %s:\n%s", name, shown, listing)
		}
		if got, err := readShown(shown); got != name || err != nil {
			t.Errorf("%q: shown as %s, it reads back as %q, %v", name, shown, got, err)
		}
		// The shown form reads back, quoted when it has a space.
		out := ok(t, e, "view "+quotePath(name))
		if !strings.HasPrefix(out, "Added view") || !strings.Contains(out, " "+shown+" (whole file)") {
			t.Errorf("%q: view %s got %q", name, quotePath(name), out)
		}
		s, _ := e.Screen()
		if !strings.Contains(s.Content, "] "+shown+" (whole file)\n      1  "+strings.TrimSuffix(content, "\n")) {
			t.Errorf("%q: the screen does not show its content:\n%s", name, s.Content)
		}
	}
	// Written as a systemd name is, inside quotes or not.
	for _, c := range []string{`view "a\x2db.mount"`, `view a\x2db.mount`} {
		if out := ok(t, e, c); !strings.Contains(out, `"a\\x2db.mount" (whole file)`) {
			t.Errorf("%s: got %q, want a\\x2db.mount opened", c, out)
		}
	}
	if out := ok(t, e, `view "my a\\nb.txt"`); !strings.Contains(out, `"my a\\nb.txt"`) {
		t.Errorf(`view "my a\\nb.txt": got %q, want the file with a backslash`, out)
	}
	if out := ok(t, e, `view "ctl\tname\x7f"`); !strings.Contains(out, `"ctl\tname\x7f"`) {
		t.Errorf(`view "ctl\tname\x7f": got %q`, out)
	}
	if out := ok(t, e, "create \"units\\x2dnew.mount\"\n[Mount]"); out != `Created "units\\x2dnew.mount"` {
		t.Errorf("create: got %q", out)
	}
}

// TestQuotePathRoundTrip reads back what quotePath and showPath write for
// names of every kind.
func TestQuotePathRoundTrip(t *testing.T) {
	for _, name := range []string{
		"a.go", "my file.txt", `a\x2db.mount`, `my a\nb.txt`, `a\\b`, `\`, `"`, `"x y"`, `a"b`,
		"a\nb", "a\x1bc", "\u2028", "\xff\xfe", "\xc3\xa9x\xff", `x\xc3\xa9`, `\u00e9`, `\q`, `\0`, `\377`, "a\\\n",
		"caf\u00e9 \u00a0", `\"`, "\x00"[:0] + "tab\there",
		"d/a.txt ", "d/ b.txt", " a", "a\u3000", "d /x", "in side/x y.go",
	} {
		q := quotePath(name)
		got, rest, err := cutPath(q + " tail")
		if err != nil || got != name || rest != "tail" {
			t.Errorf("%q: quotePath %s reads back as %q, %q, %v", name, q, got, rest, err)
		}
		if got, err := readShown(showPath(name)); err != nil || got != name {
			t.Errorf("%q: showPath %s reads back as %q, %v", name, showPath(name), got, err)
		}
	}
}

// readShown reads a name as a listing shows it, alone on its line: a
// quoted name as the commands read it, a bare one as it looks, where
// white space at the ends of a part does not show.
func readShown(shown string) (string, error) {
	if strings.HasPrefix(shown, `"`) {
		p, rest, err := cutPath(shown)
		if err == nil && rest != "" {
			err = fmt.Errorf("%q is left after the name", rest)
		}
		return p, err
	}
	parts := strings.Split(shown, "/")
	for i, part := range parts {
		parts[i] = strings.TrimFunc(part, unicode.IsSpace)
	}
	return strings.Join(parts, "/"), nil
}

// TestCutPathEscapes reads the escapes of a quoted name only where
// showPath writes them: the bytes of a whole character stay as written.
func TestCutPathEscapes(t *testing.T) {
	for typed, want := range map[string]string{
		`"a\x2db"`:           `a\x2db`,
		`"a\x1bb\u2028"`:     "a\x1bb\u2028",
		`"caf\xc3\xa9"`:      `caf\xc3\xa9`,
		`"\xff\xc3\xa9\xfe"`: "\xff" + `\xc3\xa9` + "\xfe",
		`"\u00e9\q\"\\"`:     `\u00e9\q"\`,
		`"\377\101"`:         "\xff" + `\101`,
	} {
		if got, _, err := cutPath(typed); err != nil || got != want {
			t.Errorf("%s: got %q, %v, want %q", typed, got, err, want)
		}
	}
}

// FuzzQuotePath reads back what quotePath writes for any name.
func FuzzQuotePath(f *testing.F) {
	for _, s := range []string{"a b", `a\x2d`, "\xff", `"`, "é\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if name == "" || strings.IndexByte(name, 0) >= 0 {
			return
		}
		q := quotePath(name)
		got, rest, err := cutPath(q)
		if err != nil || got != name || rest != "" {
			t.Fatalf("%q: quotePath %s reads back as %q, %q, %v", name, q, got, rest, err)
		}
	})
}

// TestFileErrorQuotesSystemPath quotes the name in a system error the
// editor passes on ("openat NAME: permission denied").
func TestFileErrorQuotesSystemPath(t *testing.T) {
	name := "a\n  1  x"
	err := &fileError{path: name, err: &fs.PathError{Op: "openat", Path: name, Err: fs.ErrPermission}}
	if got, want := err.Error(), "openat "+strconv.Quote(name)+": permission denied"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
