package editor

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/spf13/afero"
)

// numbered returns n lines "line 1" ... "line n", each ending in "\n".
func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestEdgeFileDeleted(t *testing.T) {
	e, fsys := newMem(t, map[string]string{"a.txt": "start\nend\n"})
	ok(t, e, "view a.txt /start/ /end/")
	if err := fsys.Remove("a.txt"); err != nil {
		t.Fatal(err)
	}
	if got, want := views(t, e), "Views:\n  [1] a.txt [ERROR: file not found]"; got != want {
		t.Errorf("first screen: got %q, want %q", got, want)
	}
	if got, want := views(t, e), "Views:\n  (no views)"; got != want {
		t.Errorf("second screen: got %q, want %q", got, want)
	}
}

func TestEdgePatternsNotFound(t *testing.T) {
	e, fsys := newMem(t, map[string]string{"a.txt": "start\nend\n"})
	ok(t, e, "view a.txt /start/ /end/")
	if err := afero.WriteFile(fsys, "a.txt", []byte("begin\nend\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := views(t, e), "Views:\n  [1] a.txt [BROKEN: patterns not found]"; got != want {
		t.Errorf("first screen: got %q, want %q", got, want)
	}
	if got, want := views(t, e), "Views:\n  (no views)"; got != want {
		t.Errorf("second screen: got %q, want %q", got, want)
	}
	// A view whose start pattern never matched is not created.
	out := fail(t, e, "view a.txt /nothing/ /end/")
	if want := "no line of a.txt matches the start pattern /nothing/; view not created"; !strings.Contains(out, want) {
		t.Errorf("got %q, want it to contain %q", out, want)
	}
}

func TestEdgeTruncated(t *testing.T) {
	e, _ := newMem(t, map[string]string{"big.txt": numbered(1500)})
	ok(t, e, "view big.txt /^line 2$/ /^never$/")
	got := views(t, e)
	lines := strings.Split(got, "\n")
	// "Views:", the header, 1000 lines, the marker.
	if len(lines) != 1003 {
		t.Fatalf("got %d screen lines, want 1003", len(lines))
	}
	if got, want := lines[2], "      2  line 2"; got != want {
		t.Errorf("first line: got %q, want %q", got, want)
	}
	if got, want := lines[1001], "   1001  line 1001"; got != want {
		t.Errorf("last line: got %q, want %q", got, want)
	}
	if got, want := lines[1002], "    [TRUNCATED: end pattern not found within 1000 lines]"; got != want {
		t.Errorf("marker: got %q, want %q", got, want)
	}
	// The end pattern on the 1000th line is found; one line later is not.
	e2, _ := newMem(t, map[string]string{"big.txt": numbered(1500)})
	ok(t, e2, "view big.txt /^line 1$/ /^line 1000$/")
	ok(t, e2, "view big.txt /^line 1$/ /^line 1001$/")
	v := views(t, e2)
	if got, want := strings.Count(v, truncatedMarker), 1; got != want {
		t.Errorf("truncated views: got %d, want %d\n%s", got, want, v)
	}
}

func TestEdgeTooManyViews(t *testing.T) {
	e, _ := newMem(t, map[string]string{"a.txt": numbered(10)})
	for i := 1; i <= 5; i++ {
		want := fmt.Sprintf("Added view [%d] a.txt /^line %d$/ to /x/", i, i)
		if got := ok(t, e, fmt.Sprintf("view a.txt /^line %d$/ /x/", i)); got != want {
			t.Errorf("view %d: got %q, want %q", i, got, want)
		}
	}
	got := ok(t, e, "view a.txt /^line 6$/ /x/")
	want := "Added view [6] a.txt /^line 6$/ to /x/\nClosed view [1] a.txt: at most 5 views are kept, so the oldest was closed"
	if got != want {
		t.Errorf("sixth view: got %q, want %q", got, want)
	}
	v := views(t, e)
	for id := 1; id <= 6; id++ {
		if has := strings.Contains(v, fmt.Sprintf("  [%d] ", id)); has != (id > 1) {
			t.Errorf("view [%d] on screen: got %v, want %v", id, has, id > 1)
		}
	}
}

// TestEdgeEmptyFile views an empty file by a pattern that matches an empty
// line and edits it: an empty file has one line, empty.
func TestEdgeEmptyFile(t *testing.T) {
	e, fsys := newMem(t, map[string]string{"empty.txt": ""})
	ok(t, e, "view empty.txt /^/ /$/")
	want := "Views:\n  [1] empty.txt /^/ to /$/ (match 1/1)\n      1\n    " + truncatedMarker
	if got := views(t, e); got != want {
		t.Errorf("screen: got %q, want %q", got, want)
	}
	out := fail(t, e, "view empty.txt /x/ /y/")
	if want := "no line of empty.txt matches the start pattern /x/; view not created"; !strings.Contains(out, want) {
		t.Errorf("got %q, want it to contain %q", out, want)
	}
	ok(t, e, "edit empty.txt 1-1\nfirst")
	if got, want := readFile(t, fsys, "empty.txt"), "first\n"; got != want {
		t.Errorf("file: got %q, want %q", got, want)
	}
}

func TestEdgeBinaryFile(t *testing.T) {
	bin := "text\n" + strings.Repeat("x", 100) + "\x00\nmore\n"
	late := strings.Repeat("a\n", 5000) + "\x00" // NUL after the first 8 KB
	e, fsys := newMem(t, map[string]string{"bin.dat": bin, "late.txt": late})
	out := fail(t, e, "view bin.dat /text/ /more/")
	if want := "bin.dat is a binary file (it has a NUL byte in its first 8 KB); the editor works on text files only; view not created"; !strings.Contains(out, want) {
		t.Errorf("got %q, want it to contain %q", out, want)
	}
	ok(t, e, "view late.txt /a/ /a/")
	// A viewed file that turns binary is shown once, then removed.
	if err := afero.WriteFile(fsys, "late.txt", []byte("a\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := views(t, e), "Views:\n  [1] late.txt [ERROR: binary file]"; got != want {
		t.Errorf("screen: got %q, want %q", got, want)
	}
}

func TestEdgeMultipleMatches(t *testing.T) {
	e, _ := newMem(t, map[string]string{"a.py": "def f():\n  pass\ndef g():\n  pass\ndef h():\n  pass\n"})
	ok(t, e, "view a.py /^def / /pass/")
	steps := []struct {
		command, response, header string
	}{
		{"", "", "(match 1/3)"},
		{"next_match 1", "Showing match 2/3", "(match 2/3)"},
		{"next_match [1]", "Showing match 3/3", "(match 3/3)"},
		{"next_match 1", "Showing match 1/3", "(match 1/3)"},
		{"prev_match 1", "Showing match 3/3", "(match 3/3)"},
		{"prev_match 1", "Showing match 2/3", "(match 2/3)"},
	}
	for _, s := range steps {
		if s.command != "" {
			if got := ok(t, e, s.command); got != s.response {
				t.Errorf("%s: got %q, want %q", s.command, got, s.response)
			}
		}
		if v := views(t, e); !strings.Contains(v, s.header) {
			t.Errorf("after %q: screen lacks %q:\n%s", s.command, s.header, v)
		}
	}
	if got, want := fail(t, e, "next_match 7"), "Error: no view [7]; open views: [1]"; got != want {
		t.Errorf("unknown view: got %q, want %q", got, want)
	}
}

func TestEdgeEditOutsideView(t *testing.T) {
	e, fsys := newMem(t, map[string]string{"a.txt": numbered(20)})
	ok(t, e, "view a.txt /^line 5$/ /^line 8$/")
	screen(t, e)
	out := fail(t, e, "edit a.txt 7-9\nx")
	for _, want := range []string{
		"Error: Can only edit lines visible in a view: lines 7-9 of a.txt are not all inside one view.",
		"Visible lines of a.txt: 5-8 (view [1]).",
		"view a.txt /<start>/ /<end>/",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("got %q, want it to contain %q", out, want)
		}
	}
	if got := readFile(t, fsys, "a.txt"); got != numbered(20) {
		t.Errorf("file changed: got %q", got)
	}
}

func TestEdgeEditWithoutView(t *testing.T) {
	e, _ := newMem(t, map[string]string{"src/main.py": mainPy})
	got := fail(t, e, "edit src/main.py 45-50\nnew content")
	want := "Cannot edit - no view contains line 45\n\n" +
		"To edit a file:\n" +
		"  1. Create a view first: view src/main.py /^def main/ /^$/\n" +
		"  2. See line numbers in the view on screen\n" +
		"  3. Edit using those lines: edit src/main.py 45-50\n\n" +
		"The view command is shown above in the Commands section."
	if got != want {
		t.Errorf("response:\ngot  %q\nwant %q", got, want)
	}
	// Recovery help is in the response, never on the screen; the view
	// command's long help is still there, edit's is now short.
	after := screen(t, e)
	for _, no := range []string{"Cannot edit", "To edit a file", "Error"} {
		if strings.Contains(after, no) {
			t.Errorf("screen holds %q:\n%s", no, after)
		}
	}
	for _, want := range []string{"Views:\n  (no views)\n", "      view src/main.py /^def main/ /^if __name__/\n", "  edit <file> <start>-<end> - Replace lines (must be visible in a view)\n"} {
		if !strings.Contains(after, want) {
			t.Errorf("screen lacks %q:\n%s", want, after)
		}
	}
}

func TestEdgeFileChangedBeforeEdit(t *testing.T) {
	e, fsys := newMem(t, map[string]string{"a.txt": numbered(10)})
	ok(t, e, "view a.txt /^line 3$/ /^line 6$/")
	screen(t, e)
	changed := strings.Replace(numbered(10), "line 4\n", "line four\n", 1)
	if err := afero.WriteFile(fsys, "a.txt", []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	got := fail(t, e, "edit a.txt 5-5\nline five")
	want := "Error: The file changed since view [1] showed it: the edit was refused and a.txt was not changed.\n" +
		"Expected (as the view showed them):\n      4  line 4\n" +
		"Actual (in the file now):\n      4  line four\n" +
		"The screen now shows the current lines; check them and edit again."
	if got != want {
		t.Errorf("response:\ngot  %q\nwant %q", got, want)
	}
	if got := readFile(t, fsys, "a.txt"); got != changed {
		t.Errorf("file: got %q, want it untouched %q", got, changed)
	}
	// After a screen the view shows the new lines and the edit goes through.
	screen(t, e)
	ok(t, e, "edit a.txt 5-5\nline five")
	if got, want := readFile(t, fsys, "a.txt"), strings.Replace(changed, "line 5\n", "line five\n", 1); got != want {
		t.Errorf("file: got %q, want %q", got, want)
	}
}

func TestEdgeFileShrankBeforeEdit(t *testing.T) {
	e, fsys := newMem(t, map[string]string{"a.txt": numbered(6)})
	ok(t, e, "view a.txt /^line 5$/ /^line 6$/")
	if err := afero.WriteFile(fsys, "a.txt", []byte(numbered(5)), 0o644); err != nil {
		t.Fatal(err)
	}
	contains(t, "edit", fail(t, e, "edit a.txt 5-5\nx"), "      6  [end of file]")
}

func TestEdgeBoundaryEdited(t *testing.T) {
	const src = "func a() {\n\tx()\n}\n\nfunc b() {\n\ty()\n}\n"
	tests := []struct {
		name, edit, header, file string
		note                     string
	}{
		{
			name:   "end line",
			edit:   "edit m.go 5-7\nfunc b() {\n\ty()\n} // b",
			header: `  [1] m.go /^func b/ to /^\} \/\/ b$/ (match 1/1)`,
			file:   "func a() {\n\tx()\n}\n\nfunc b() {\n\ty()\n} // b\n",
			note:   `View [1] now ends at /^\} \/\/ b$/ (the edit changed its last line)`,
		},
		{
			name:   "start line",
			edit:   "edit m.go 5-5\nfunc bee(n int) {",
			header: `  [1] m.go /^func bee\(n int\) \{$/ to /^}/ (match 1/1)`,
			file:   "func a() {\n\tx()\n}\n\nfunc bee(n int) {\n\ty()\n}\n",
			note:   `View [1] now starts at /^func bee\(n int\) \{$/ (the edit changed its first line)`,
		},
		{
			name:   "unchanged boundary keeps its pattern",
			edit:   "edit m.go 5-6\nfunc b() {\n\tz()",
			header: `  [1] m.go /^func b/ to /^}/ (match 1/1)`,
			file:   "func a() {\n\tx()\n}\n\nfunc b() {\n\tz()\n}\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, fsys := newMem(t, map[string]string{"m.go": src})
			ok(t, e, "view m.go /^func b/ /^}/")
			screen(t, e)
			out := ok(t, e, tt.edit)
			if tt.note != "" && !strings.Contains(out, tt.note) {
				t.Errorf("response %q lacks %q", out, tt.note)
			}
			if got := readFile(t, fsys, "m.go"); got != tt.file {
				t.Errorf("file: got %q, want %q", got, tt.file)
			}
			v := views(t, e)
			if header := strings.Split(v, "\n")[1]; header != tt.header {
				t.Errorf("header: got %q, want %q", header, tt.header)
			}
		})
	}
}

// TestEdgeStartLineFollowed edits a view's start line to text that also
// appears earlier in the file: the view stays on the edited line.
func TestEdgeStartLineFollowed(t *testing.T) {
	src := "}\nfunc a() {\n}\nfunc b() {\n\treturn\n}\n"
	e, fsys := newMem(t, map[string]string{"m.go": src})
	ok(t, e, "view m.go /^func b/ /^}/")
	screen(t, e)
	ok(t, e, "edit m.go 4-4\n}")
	want := "Views:\n  [1] m.go /^\\}$/ to /^}/ (match 3/4)\n      4  }\n      5  \treturn\n      6  }"
	if got := views(t, e); got != want {
		t.Errorf("screen:\ngot  %q\nwant %q", got, want)
	}
	// Inserting lines above moves the line; the view follows it.
	data := "// header\n// more\n" + readFile(t, fsys, "m.go")
	if err := afero.WriteFile(fsys, "m.go", []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := views(t, e); !strings.Contains(got, "      6  }\n      7  \treturn") {
		t.Errorf("after inserting lines above: got\n%s", got)
	}
}

func TestEdgeLineEndings(t *testing.T) {
	tests := []struct {
		name, file, edit, want string
	}{
		{"crlf", "a\r\nb\r\nc\r\n", "edit f 2-2\nB1\nB2", "a\r\nB1\r\nB2\r\nc\r\n"},
		{"crlf content sent with crlf", "a\r\nb\r\nc\r\n", "edit f 2-2\r\nB1\r\nB2\r\n", "a\r\nB1\r\nB2\r\nc\r\n"},
		{"lf", "a\nb\nc\n", "edit f 2-2\nB1\nB2", "a\nB1\nB2\nc\n"},
		{"no final newline, last line", "a\nb\nc", "edit f 3-3\nC1\nC2", "a\nb\nC1\nC2"},
		{"no final newline, other line", "a\nb\nc", "edit f 1-1\nA", "A\nb\nc"},
		{"no final newline, crlf", "a\r\nb\r\nc", "edit f 3-3\nC", "a\r\nb\r\nC"},
		{"delete last lines without final newline", "a\nb\nc", "edit f 2-3\n", "a"},
		{"delete middle lines", "a\nb\nc\nd\n", "edit f 2-3\n", "a\nd\n"},
		{"tabs kept", "\tx\n\t\ty\n\tz\n", "edit f 2-2\n\t\tY", "\tx\n\t\tY\n\tz\n"},
		{"blank line added", "a\nb\n", "edit f 1-1\na\n\n", "a\n\nb\n"},
		{"trailing spaces kept", "a  \nb\n", "edit f 2-2\nb  ", "a  \nb  \n"},
		{"mixed endings outside kept", "a\r\nb\nc\r\n", "edit f 2-2\nB", "a\r\nB\nc\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, fsys := newMem(t, map[string]string{"f": tt.file})
			ok(t, e, "view f /^/ /^never$/")
			screen(t, e)
			ok(t, e, tt.edit)
			if got := readFile(t, fsys, "f"); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestEdgeCRLFScreen(t *testing.T) {
	e, _ := newMem(t, map[string]string{"w.txt": "start\r\nmid\r\nend\r\n"})
	ok(t, e, `view w.txt /^start$/ /^end$/`)
	want := "Views:\n  [1] w.txt /^start$/ to /^end$/ (match 1/1)\n      1  start\n      2  mid\n      3  end"
	if got := views(t, e); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestEdgeModeKept(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/run.sh"
	if err := os.WriteFile(path, []byte("#!/bin/sh\necho hi\n"), 0o751); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o751); err != nil {
		t.Fatal(err)
	}
	e, err := New(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ok(t, e, "view run.sh /^#!/ /echo/")
	ok(t, e, "edit run.sh 2-2\necho bye")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fi.Mode().Perm(), os.FileMode(0o751); got != want {
		t.Errorf("mode: got %v, want %v", got, want)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want 1 (no temporary file left)", len(entries))
	}
}

func TestEdgeLargeFile(t *testing.T) {
	e, fsys := newMem(t, map[string]string{"big.txt": numbered(100_000)})
	ok(t, e, "view big.txt /^line 99998$/ /^line 100000$/")
	want := "Views:\n  [1] big.txt /^line 99998$/ to /^line 100000$/ (match 1/1)\n   99998  line 99998\n   99999  line 99999\n  100000  line 100000"
	if got := views(t, e); got != want {
		t.Errorf("screen:\ngot  %q\nwant %q", got, want)
	}
	ok(t, e, "edit big.txt 99999-99999\nchanged")
	got := readFile(t, fsys, "big.txt")
	if want := strings.Replace(numbered(100_000), "line 99999\n", "changed\n", 1); got != want {
		t.Errorf("file differs from the expected edit (length %d, want %d)", len(got), len(want))
	}
}

func TestEdgeSlashInPattern(t *testing.T) {
	e, _ := newMem(t, map[string]string{"a.go": "x\n// begin: a/b\ny\n// end\n"})
	got := ok(t, e, `view a.go /^\/\/ begin: a\/b$/ to /^\/\/ end/ "slashes"`)
	if want := `Added view [1] a.go /^\/\/ begin: a\/b$/ to /^\/\/ end/`; got != want {
		t.Errorf("response: got %q, want %q", got, want)
	}
	want := "Views:\n  [1] a.go /^\\/\\/ begin: a\\/b$/ to /^\\/\\/ end/ (match 1/1) \"slashes\"\n      2  // begin: a/b\n      3  y\n      4  // end"
	if got := views(t, e); got != want {
		t.Errorf("screen:\ngot  %q\nwant %q", got, want)
	}
}

func TestEdgeLongLine(t *testing.T) {
	long := strings.Repeat("é", 1000) // 2,000 bytes
	e, _ := newMem(t, map[string]string{"l.txt": "s\n" + long + "\n"})
	ok(t, e, "view l.txt /^s$/ /é/")
	v := views(t, e)
	if want := " [... 1000 more bytes]"; !strings.HasSuffix(v, want) {
		t.Errorf("screen ends %q, want the suffix %q", v[len(v)-40:], want)
	}
}

func TestEdgeCloseView(t *testing.T) {
	e, _ := newMem(t, map[string]string{"a.txt": "a\nb\n"})
	ok(t, e, "view a.txt /a/ /b/")
	if got, want := ok(t, e, "close 1"), "Closed view [1]"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := fail(t, e, "close 1"), "Error: no view [1]: no views are open; open one with view <file> /<start>/ /<end>/"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestEdgeTooLarge(t *testing.T) {
	e, _ := newMem(t, map[string]string{"big.txt": numbered(100)}, WithMaxFileSize(100))
	out := fail(t, e, "view big.txt /1/ /2/")
	if want := "big.txt is larger than 100 bytes, the editor's limit for one file"; !strings.Contains(out, want) {
		t.Errorf("got %q, want it to contain %q", out, want)
	}
}

func TestEdgeCreate(t *testing.T) {
	e, fsys := newMem(t, map[string]string{"exists.txt": "old\n"})
	out := fail(t, e, "create exists.txt\nnew")
	for _, want := range []string{"exists.txt already exists", "view exists.txt /<start>/ /<end>/", "edit exists.txt <start>-<end>"} {
		if !strings.Contains(out, want) {
			t.Errorf("got %q, want it to contain %q", out, want)
		}
	}
	if got := readFile(t, fsys, "exists.txt"); got != "old\n" {
		t.Errorf("existing file: got %q, want it untouched", got)
	}
	tests := []struct{ command, file, want string }{
		{"create deep/er/new.txt\nline 1\n\tline 2", "deep/er/new.txt", "line 1\n\tline 2\n"},
		{"create empty.txt", "empty.txt", ""},
		{"create \"with space.md\"\n# T\n\n", "with space.md", "# T\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			if got, want := ok(t, e, tt.command), "Created "+tt.file; got != want {
				t.Errorf("response: got %q, want %q", got, want)
			}
			if got := readFile(t, fsys, tt.file); got != tt.want {
				t.Errorf("content: got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestEdgeBadCommands(t *testing.T) {
	e, _ := newMem(t, map[string]string{"a.txt": "a\n"})
	tests := []struct{ command, want string }{
		{"view a.txt /a/", "missing end pattern"},
		{"view a.txt a b", "the start pattern must be written between slashes"},
		{"view a.txt /a/ /b", `the end pattern /b has no closing slash; write \/ for a slash inside a pattern`},
		{"view a.txt /(/ /b/", "invalid start pattern /(/: missing closing ): `(` (patterns are Go RE2 regular expressions)"},
		{"view a.txt /a/ /b/\nmore", "view takes one line"},
		{"edit a.txt x-y\nz", "bad line range"},
		{"edit a.txt 3-1\nz", "like 1-3"},
		{"search", "missing pattern"},
		{`search "(" *`, "invalid search pattern"},
		{`search "a" {x`, "bad glob {x: a [ or { has no closing ] or }"},
		{"close x", "bad view id"},
		{"view nope.txt /a/ /b/", "File not found: nope.txt; view not created"},
		{"view . /a/ /b/", "the project root itself"},
	}
	for _, tt := range tests {
		t.Run(tt.command, func(t *testing.T) {
			contains(t, tt.command, fail(t, e, tt.command), tt.want)
		})
	}
	if got := views(t, e); got != "Views:\n  (no views)" {
		t.Errorf("errors reached the screen:\n%s", got)
	}
}

// TestEditWithoutContent refuses an edit that is the command line alone
// (new lines forgotten, or sent in another call), saying how to delete;
// an edit whose content is empty deletes the lines and says so, with the
// undo that puts them back.
func TestEditWithoutContent(t *testing.T) {
	e, fsys := newMem(t, map[string]string{"a.txt": "one\ntwo\nthree\n"})
	ok(t, e, "view a.txt")
	contains(t, "command line alone", fail(t, e, "edit a.txt 2-2"),
		"edit a.txt 2-2 has no new lines, so nothing was written",
		"To delete the lines, end the command line with a newline and send nothing after it (in a fenced code block: one empty line between the command line and the closing fence)")
	if got, want := readFile(t, fsys, "a.txt"), "one\ntwo\nthree\n"; got != want {
		t.Errorf("file after the refused edit: got %q, want %q", got, want)
	}
	if got, want := ok(t, e, "edit a.txt 2-2\n"), "Deleted a.txt lines 2-2 (the edit had no new lines); undo a.txt puts them back"; got != want {
		t.Errorf("empty content: got %q, want %q", got, want)
	}
	if got, want := readFile(t, fsys, "a.txt"), "one\nthree\n"; got != want {
		t.Errorf("file after the deletion: got %q, want %q", got, want)
	}
	ok(t, e, "undo a.txt")
	if got, want := readFile(t, fsys, "a.txt"), "one\ntwo\nthree\n"; got != want {
		t.Errorf("file after undo: got %q, want %q", got, want)
	}
}

// TestEditPastTheEnd answers an edit of lines past a file's last line,
// which no view can show, with how to add lines at the end.
func TestEditPastTheEnd(t *testing.T) {
	e, fsys := newMem(t, map[string]string{"a.txt": "one\ntwo\nthree\n"})
	ok(t, e, "view a.txt")
	contains(t, "edit", fail(t, e, "edit a.txt 4-4\nfour"),
		"a.txt has 3 lines, so line 4 is past its end; nothing was written. To add lines at the end, replace the last line with itself followed by the new lines: edit a.txt 3-3, then the text of line 3 and the new lines")
	if got, want := readFile(t, fsys, "a.txt"), "one\ntwo\nthree\n"; got != want {
		t.Errorf("file: got %q, want %q", got, want)
	}
}
