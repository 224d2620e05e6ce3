package golden_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/internal/golden"
)

// recorder is a testing.TB that keeps what a check reports instead of
// failing the test.
type recorder struct {
	testing.TB
	errors, fatals []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.fatals = append(r.fatals, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatal(args ...any) { r.fatals = append(r.fatals, fmt.Sprint(args...)) }

func TestCheckShowsUnifiedDiff(t *testing.T) {
	t.Setenv(golden.EnvVar, "")
	path := filepath.Join(t.TempDir(), "screen.golden")
	want := "line 1\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\n"
	if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &recorder{TB: t}
	golden.CheckFile(r, path, strings.Replace(want, "line 4\n", "line four\n", 1), false)
	if len(r.errors) != 1 || len(r.fatals) != 0 {
		t.Fatalf("got errors %q and fatals %q, want one error", r.errors, r.fatals)
	}
	wantMsg := path + " differs from the output (set UNFOLD_UPDATE_GOLDEN=1 to accept the output):\n" +
		"--- " + path + " (golden)\n" +
		"+++ " + path + " (output)\n" +
		"@@ -1,7 +1,7 @@\n" +
		" line 1\n line 2\n line 3\n-line 4\n+line four\n line 5\n line 6\n line 7\n"
	if r.errors[0] != wantMsg {
		t.Errorf("got message\n%s\nwant\n%s", r.errors[0], wantMsg)
	}
}

func TestCheckEqualPasses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "same.golden")
	if err := os.WriteFile(path, []byte("same\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &recorder{TB: t}
	golden.CheckFile(r, path, "same\n", false)
	if len(r.errors)+len(r.fatals) != 0 {
		t.Errorf("got errors %q and fatals %q on equal output, want none", r.errors, r.fatals)
	}
}

func TestCheckMissingFileSaysHowToCreate(t *testing.T) {
	r := &recorder{TB: t}
	golden.CheckFile(r, filepath.Join(t.TempDir(), "none.golden"), "x", false)
	if len(r.fatals) != 1 || !strings.Contains(r.fatals[0], "set UNFOLD_UPDATE_GOLDEN=1 to create it") {
		t.Errorf("got fatals %q, want one saying how to create the file", r.fatals)
	}
}

func TestCheckUpdates(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv(golden.EnvVar, "1")
	r := &recorder{TB: t}
	golden.Check(r, "deep/dir/out.golden", "new\n")
	if len(r.errors)+len(r.fatals) != 0 {
		t.Fatalf("got errors %q and fatals %q, want none", r.errors, r.fatals)
	}
	b, err := os.ReadFile(filepath.Join("testdata", "deep", "dir", "out.golden"))
	if err != nil || string(b) != "new\n" {
		t.Fatalf("got %q, %v; want the file written with %q", b, err, "new\n")
	}
	entries, err := os.ReadDir(filepath.Join("testdata", "deep", "dir"))
	if err != nil || len(entries) != 1 {
		t.Errorf("got %v, %v in the directory; want only out.golden, no temporary file", entries, err)
	}

	t.Setenv(golden.EnvVar, "0")
	golden.Check(r, "deep/dir/out.golden", "newer\n")
	if len(r.errors) != 1 {
		t.Errorf("with %s=0: got errors %q, want the difference reported", golden.EnvVar, r.errors)
	}
}

func TestCheckBadEnvironment(t *testing.T) {
	t.Setenv(golden.EnvVar, "maybe")
	r := &recorder{TB: t}
	golden.Check(r, "x.golden", "x")
	if len(r.fatals) != 1 || !strings.Contains(r.fatals[0], `UNFOLD_UPDATE_GOLDEN="maybe": want 1`) {
		t.Errorf("got fatals %q, want one naming the bad value", r.fatals)
	}
}

// TestCheckUpdatesLongName writes a golden file whose name is 249 bytes,
// which a file's name may be: its temporary file's name is short (it was
// the name and 11 bytes more, too long to make). A write that fails (the
// path is a directory) names the golden file and the cause, never the
// temporary file, and leaves none behind.
func TestCheckUpdatesLongName(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, strings.Repeat("a", 246)+".md")
	r := &recorder{TB: t}
	golden.CheckFile(r, path, "new\n", true)
	if b, err := os.ReadFile(path); err != nil || string(b) != "new\n" || len(r.fatals) != 0 {
		t.Fatalf("got %q, %v and fatals %q; want the file written", b, err, r.fatals)
	}

	taken := filepath.Join(dir, "taken.golden")
	if err := os.MkdirAll(filepath.Join(taken, "inside"), 0o755); err != nil {
		t.Fatal(err)
	}
	golden.CheckFile(r, taken, "new\n", true)
	if len(r.fatals) != 1 || !strings.Contains(r.fatals[0], "write "+taken+": ") || strings.Contains(r.fatals[0], string(filepath.Separator)+".") {
		t.Errorf("got fatals %q, want one naming %s and not the temporary file", r.fatals, taken)
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 2 {
		t.Errorf("got %v, %v in the directory; want the two golden files, no temporary file", entries, err)
	}
}

// TestDiffShowsInvisible compares outputs that differ from their golden
// files only in what a terminal does not show: the lines that differ mark
// a carriage return and the spaces and tabs ending them, and a note says
// what the difference is. A character that shows as nothing or as a
// plain space (a byte order mark, a no-break or zero-width space) is
// marked by its code.
func TestDiffShowsInvisible(t *testing.T) {
	for _, tc := range []struct{ name, want, got, lines, note string }{
		{"golden CRLF", "a\r\nb\r\n", "a\nb\n", "-a␍\n-b␍\n+a\n+b\n", "note: they differ only in line endings: the golden file has CRLF (\\r\\n), the output LF, as a checkout with core.autocrlf writes them; add the line `**/testdata/** -text` to the module's .gitattributes, so that git keeps testdata as committed, then check those files out again"},
		{"output CRLF", "a\nb\n", "a\r\nb\r\n", "-a\n-b\n+a␍\n+b␍\n", "note: they differ only in line endings: the output has CRLF (\\r\\n), the golden file LF"},
		{"trailing blanks", "a\nb\n", "a \nb\t\n", "-a\n-b\n+a·\n+b→\n", "note: they differ only in spaces or tabs at the ends of lines, marked · and →"},
		{"text", "a\n", "b \n", "-a\n+b·\n", ""},
		{"line like a header", "-- drop\r\nselect 1;\n", "-- drop\nselect 1;\n", "\n--- drop␍\n+-- drop\n select 1;\n", "note: they differ only in line endings: the golden file has CRLF (\\r\\n), the output LF, as a checkout with core.autocrlf writes them; add the line `**/testdata/** -text` to the module's .gitattributes, so that git keeps testdata as committed, then check those files out again"},
		{"added line like a header", "x\n", "x\n++ a \n", "\n x\n+++ a·\n", ""},
		{"byte order mark", "\uFEFFYou help.\n", "You help.\n", "-⟨U+FEFF⟩You help.\n+You help.\n", "note: they differ only in characters that show as nothing or as a space, marked ⟨U+…⟩"},
		{"no-break space", "You\u00a0help.\n", "You help.\n", "-You⟨U+00A0⟩help.\n+You help.\n", "note: they differ only in characters that show as nothing or as a space, marked ⟨U+…⟩"},
		{"zero-width space", "You help.\n", "You\u200b help.\n", "-You help.\n+You⟨U+200B⟩ help.\n", "note: they differ only in characters that show as nothing or as a space, marked ⟨U+…⟩"},
		{"escape and bad byte", "a\n", "a\x1b\xff\n", "-a\n+a⟨U+001B⟩⟨0xFF⟩\n", ""},
		{"replacement character kept", "a\n", "a\uFFFD\n", "-a\n+a\uFFFD\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := golden.Diff("x.golden", tc.want, tc.got)
			if !strings.Contains(d, tc.lines) {
				t.Errorf("got diff\n%s\nwant the lines\n%s", d, tc.lines)
			}
			if tc.note != "" && !strings.HasSuffix(d, tc.note+"\n") || tc.note == "" && strings.Contains(d, "note:") {
				t.Errorf("got diff\n%s\nwant the note %q", d, tc.note)
			}
		})
	}
}

// TestCheckRefusesNameLeavingTestdata: a name that climbs out of testdata
// or is absolute fails the test and writes nothing, even with an update.
func TestCheckRefusesNameLeavingTestdata(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(filepath.Join(dir))
	t.Setenv(golden.EnvVar, "1")
	for _, name := range []string{"../escaped.md", "a/../../escaped.md", "/tmp/escaped.md"} {
		r := &recorder{TB: t}
		golden.Check(r, name, "x\n")
		if len(r.fatals) != 1 || !strings.Contains(r.fatals[0], "leaves testdata") {
			t.Errorf("%s: got fatals %q, want one saying it leaves testdata", name, r.fatals)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "escaped.md")); err == nil {
		t.Error("escaped.md was written outside testdata")
	}
}

// TestUpdateKeepsLinkAndMode: an update writes a golden file that is a
// symbolic link through to the file it leads to, which keeps the link and
// shares the new content, and keeps a file's permissions. A link that
// leads nowhere is refused, saying so.
func TestUpdateKeepsLinkAndMode(t *testing.T) {
	dir := t.TempDir()
	shared, link := filepath.Join(dir, "shared.md"), filepath.Join(dir, "testdata", "link.md")
	private := filepath.Join(dir, "testdata", "private.md")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{shared, private} {
		if err := os.WriteFile(f, []byte("old\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../shared.md", link); err != nil {
		t.Fatal(err)
	}
	r := &recorder{TB: t}
	golden.CheckFile(r, link, "new\n", true)
	golden.CheckFile(r, private, "new\n", true)
	if len(r.errors)+len(r.fatals) != 0 {
		t.Fatalf("got errors %q and fatals %q, want none", r.errors, r.fatals)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("%s: got %v, %v; want the link kept", link, fi.Mode(), err)
	}
	for _, f := range []string{shared, private} {
		b, err := os.ReadFile(f)
		fi, serr := os.Stat(f)
		if err != nil || serr != nil || string(b) != "new\n" || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: got %q, mode %v (%v, %v); want the new content and mode 0600", f, b, fi.Mode(), err, serr)
		}
	}

	dangling := filepath.Join(dir, "testdata", "dangling.md")
	if err := os.Symlink("../missing.md", dangling); err != nil {
		t.Fatal(err)
	}
	golden.CheckFile(r, dangling, "new\n", true)
	if len(r.fatals) != 1 || !strings.Contains(r.fatals[0], "write "+dangling+": it is a symbolic link to no file") {
		t.Errorf("got fatals %q, want one saying the link leads to no file", r.fatals)
	}
	if _, err := os.Lstat(filepath.Join(dir, "missing.md")); err == nil {
		t.Error("missing.md was created through the link")
	}
}
