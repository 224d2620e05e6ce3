package editor

import (
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/afero"
)

// TestWholeFileView views files without patterns: a file that fits is
// shown whole and not marked truncated; a longer one is cut at 1,000 lines
// with a mark that says how to see the rest.
func TestWholeFileView(t *testing.T) {
	e, _ := newMem(t, map[string]string{"two.txt": "first\nsecond\n", "big.txt": numbered(1500)})
	if got, want := ok(t, e, "view two.txt"), "Added view [1] two.txt (whole file)"; got != want {
		t.Errorf("response: got %q, want %q", got, want)
	}
	want := "Views:\n  [1] two.txt (whole file)\n      1  first\n      2  second"
	if got := views(t, e); got != want {
		t.Errorf("screen:\ngot  %q\nwant %q", got, want)
	}
	ok(t, e, "close 1")
	ok(t, e, "view big.txt")
	lines := strings.Split(views(t, e), "\n")
	if got, want := len(lines), 1003; got != want {
		t.Fatalf("got %d screen lines, want %d", got, want)
	}
	if got, want := lines[1001], "   1000  line 1000"; got != want {
		t.Errorf("last line: got %q, want %q", got, want)
	}
	if got, want := lines[1002], "    [TRUNCATED: the file has 1500 lines; a view shows at most 1000: view big.txt 1001-1500 shows the next ones]"; got != want {
		t.Errorf("marker: got %q, want %q", got, want)
	}
}

// TestLineView views lines by number, written both ways, and follows them
// when lines are added above: by an edit through the editor, and by a
// change made outside it.
func TestLineView(t *testing.T) {
	e, fsys := newMem(t, map[string]string{"a.txt": numbered(10)})
	if got, want := ok(t, e, "view a.txt 3-6"), "Added view [1] a.txt lines 3-6"; got != want {
		t.Errorf("response: got %q, want %q", got, want)
	}
	ok(t, e, `view a.txt 3 6 "same"`)
	want := "Views:\n" +
		"  [1] a.txt lines 3-6\n      3  line 3\n      4  line 4\n      5  line 5\n      6  line 6\n\n" +
		"  [2] a.txt lines 3-6 \"same\"\n      3  line 3\n      4  line 4\n      5  line 5\n      6  line 6"
	if got := views(t, e); got != want {
		t.Errorf("screen:\ngot  %q\nwant %q", got, want)
	}
	ok(t, e, "close 2")

	// Two lines inserted above through the editor: the view shows the
	// same lines, now numbered 5-8, and an edit by the new numbers works.
	ok(t, e, "view a.txt 1-1")
	views(t, e)
	ok(t, e, "edit a.txt 1-1\nline 1\nnew a\nnew b")
	want = "  [1] a.txt lines 5-8\n      5  line 3\n      6  line 4\n      7  line 5\n      8  line 6"
	if got := views(t, e); !strings.Contains(got, want) {
		t.Errorf("after an insert above, screen:\n%s\nwant it to hold:\n%s", got, want)
	}
	ok(t, e, "edit a.txt 6-6\nLINE 4")

	// One line removed above, outside the editor: the view finds its lines.
	data := strings.Replace(readFile(t, fsys, "a.txt"), "new a\n", "", 1)
	if err := afero.WriteFile(fsys, "a.txt", []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	want = "  [1] a.txt lines 4-7\n      4  line 3\n      5  LINE 4\n      6  line 5\n      7  line 6"
	if got := views(t, e); !strings.Contains(got, want) {
		t.Errorf("after a line removed above outside the editor, screen:\n%s\nwant it to hold:\n%s", got, want)
	}

	// From a line to the end of the file.
	ok(t, e, "view a.txt 10-")
	if got, want := views(t, e), "  [4] a.txt lines 10-\n     10  line 9\n     11  line 10"; !strings.HasSuffix(got, want) {
		t.Errorf("open range: got\n%s\nwant it to end with\n%s", got, want)
	}
}

func TestLineViewErrors(t *testing.T) {
	e, _ := newMem(t, map[string]string{"a.txt": numbered(10)})
	tests := []struct{ command, want string }{
		{"view a.txt 11-12", "a.txt has 10 lines, so line 11 is past its end; view not created"},
		{"view a.txt 6-3", "the first line comes first, like 3-6"},
		{"view a.txt 1-1001", "line range 1-1001 is 1001 lines; a view shows at most 1000, so view fewer, like 1-1000"},
		{"view a.txt 0-3", "line numbers start at 1"},
		{"view a.txt 3 0", "line numbers start at 1"},
		{"view a.txt x", `the start pattern must be written between slashes, like /^def main/ (got "x"); or give line numbers, like 3-6`},
		{"next_match 1", "no view [1]"},
	}
	for _, tt := range tests {
		t.Run(tt.command, func(t *testing.T) {
			if got := fail(t, e, tt.command); !strings.Contains(got, tt.want) {
				t.Errorf("got %q, want it to contain %q", got, tt.want)
			}
		})
	}
	ok(t, e, "view a.txt 2-3")
	if got, want := fail(t, e, "next_match 1"), "view [1] shows line numbers, not the matches of a pattern"; !strings.Contains(got, want) {
		t.Errorf("got %q, want it to contain %q", got, want)
	}
}

// TestLineViewBroken shows a view whose first line the file no longer
// has once, then removes it.
func TestLineViewBroken(t *testing.T) {
	e, fsys := newMem(t, map[string]string{"a.txt": numbered(10)})
	ok(t, e, "view a.txt 8-9")
	views(t, e)
	if err := afero.WriteFile(fsys, "a.txt", []byte("x\ny\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := views(t, e), "Views:\n  [1] a.txt [BROKEN: line 8 is past the end of the file, which has 2 lines]"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := views(t, e), "Views:\n  (no views)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestPathGutters(t *testing.T) {
	e, _ := newMem(t, map[string]string{"src/a.go": numbered(12)}, WithPathGutters())
	ok(t, e, "view src/a.go 8-10")
	want := "Views:\n  [1] src/a.go lines 8-10\n  src/a.go:8   line 8\n  src/a.go:9   line 9\n  src/a.go:10  line 10"
	if got := views(t, e); got != want {
		t.Errorf("screen:\ngot  %q\nwant %q", got, want)
	}
}

// TestViewDirectory lists a directory two levels deep, without hidden
// entries, node_modules and what .gitignore leaves out.
func TestViewDirectory(t *testing.T) {
	e, _ := newMem(t, map[string]string{
		".gitignore":              "build/\n*.log\n",
		"README.md":               "x\n",
		"debug.log":               "x\n",
		"src/main.go":             "x\n",
		"src/.hidden":             "x\n",
		"src/pkg/deep/too.go":     "x\n",
		"src/pkg/util.go":         "x\n",
		"build/out.bin":           "x\n",
		"node_modules/m/index.js": "x\n",
		".git/config":             "x\n",
		"docs/.gitignore":         "draft.md\n",
		"docs/draft.md":           "x\n",
		"docs/guide.md":           "x\n",
	})
	want := "Files in the project root, two levels deep (hidden files and ignored folders left out):\n" +
		"  README.md\n  docs/\n  docs/guide.md\n  src/\n  src/main.go\n  src/pkg/\n" +
		"8 hidden or ignored entries left out"
	if got := ok(t, e, "view ."); got != want {
		t.Errorf("view .:\ngot  %q\nwant %q", got, want)
	}
	want = "Files in src, two levels deep (hidden files and ignored folders left out):\n" +
		"  src/main.go\n  src/pkg/\n  src/pkg/deep/\n  src/pkg/util.go\n" +
		"1 hidden or ignored entry left out"
	if got := ok(t, e, "view src"); got != want {
		t.Errorf("view src:\ngot  %q\nwant %q", got, want)
	}
	if got, want := fail(t, e, "view src /a/ /b/"), "src is a directory; view src lists it"; !strings.Contains(got, want) {
		t.Errorf("got %q, want it to contain %q", got, want)
	}
	if got := views(t, e); got != "Views:\n  (no views)" {
		t.Errorf("a listing is a response, not a view:\n%s", got)
	}
}

// TestEmptyFile views an empty file whole and edits it, then creates an
// empty file with create and no content.
func TestEmptyFile(t *testing.T) {
	e, fsys := newMem(t, map[string]string{"empty.txt": ""})
	ok(t, e, "view empty.txt")
	if got, want := views(t, e), "Views:\n  [1] empty.txt (whole file) [empty file]\n      1"; got != want {
		t.Errorf("screen: got %q, want %q", got, want)
	}
	ok(t, e, "edit empty.txt 1-1\npackage main\n\nfunc main() {}")
	if got, want := readFile(t, fsys, "empty.txt"), "package main\n\nfunc main() {}\n"; got != want {
		t.Errorf("file: got %q, want %q", got, want)
	}
	if got, want := views(t, e), "Views:\n  [1] empty.txt (whole file)\n      1  package main\n      2\n      3  func main() {}"; got != want {
		t.Errorf("screen after the edit: got %q, want %q", got, want)
	}
	if got, want := ok(t, e, "create new.txt"), "Created new.txt"; got != want {
		t.Errorf("create: got %q, want %q", got, want)
	}
	if got := readFile(t, fsys, "new.txt"); got != "" {
		t.Errorf("new.txt: got %q, want it empty", got)
	}
	ok(t, e, "view new.txt")
	ok(t, e, "edit new.txt 1\nhello")
	if got, want := readFile(t, fsys, "new.txt"), "hello\n"; got != want {
		t.Errorf("new.txt: got %q, want %q", got, want)
	}
}

// TestCROnlyLines splits a file whose lines end in a lone CR like any
// other, and edits its middle keeping the endings.
func TestCROnlyLines(t *testing.T) {
	e, fsys := newMem(t, map[string]string{"mac.txt": "one\rtwo\rthree\r"})
	ok(t, e, "view mac.txt /^one$/ /^three$/")
	want := "Views:\n  [1] mac.txt /^one$/ to /^three$/ (match 1/1)\n      1  one\n      2  two\n      3  three"
	if got := views(t, e); got != want {
		t.Errorf("screen:\ngot  %q\nwant %q", got, want)
	}
	ok(t, e, "edit mac.txt 2-2\nTWO\nTWO AND A HALF")
	if got, want := readFile(t, fsys, "mac.txt"), "one\rTWO\rTWO AND A HALF\rthree\r"; got != want {
		t.Errorf("file: got %q, want %q", got, want)
	}
	got := ok(t, e, `search "HALF" *.txt`)
	if want := "Matches:\n  mac.txt:3: TWO AND A HALF\nSearched 1 file"; got != want {
		t.Errorf("search: got %q, want %q", got, want)
	}
}

// TestMatchCountBounded counts the matches of a start pattern up to
// maxCountedMatches and says "10000+" past it, so a pattern matching every
// line of a big log does not spend the screen's time counting; the last
// match (prev_match from the first) is counted when there are no more
// than that, and found from the end, uncounted, past it.
func TestMatchCountBounded(t *testing.T) {
	for _, tt := range []struct {
		name   string
		lines  int
		header string
		next   string
		prev   string
	}{
		{"at the bound", maxCountedMatches, "(match 1/10000)", "Showing match 2/10000", "Showing match 10000/10000"},
		{"past the bound", 3 * maxCountedMatches, "(match 1/10000+)", "Showing match 2/10000+", "Showing the last match of 10000+"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := newMem(t, map[string]string{"log.txt": strings.Repeat("ab\n", tt.lines)})
			ok(t, e, "view log.txt /^a/ /^a/")
			if got := views(t, e); !strings.Contains(got, tt.header) {
				t.Errorf("screen: got %q, want it to contain %q", clip(got, 200), tt.header)
			}
			if got := ok(t, e, "next_match 1"); got != tt.next {
				t.Errorf("next_match: got %q, want %q", got, tt.next)
			}
			ok(t, e, "prev_match 1")
			if got := ok(t, e, "prev_match 1"); got != tt.prev {
				t.Errorf("prev_match from the first: got %q, want %q", got, tt.prev)
			}
		})
	}
}

// TestMatchesFromTheEnd moves among the last matches of a start pattern
// with more than maxCountedMatches matches, found from the end of the file
// without counting them, and wraps from them to the first; a wrap from a
// match past the bound gives the count the screen gives.
func TestMatchesFromTheEnd(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 3*maxCountedMatches; i++ {
		fmt.Fprintf(&b, "a %d\n", i)
	}
	e, _ := newMem(t, map[string]string{"log.txt": b.String()})
	ok(t, e, "view log.txt /^a/ /^a/")
	for _, step := range []struct{ command, reply, screen string }{
		{"prev_match 1", "Showing the last match of 10000+", "(the last match of 10000+)"},
		{"prev_match 1", "Showing match 2 counting from the end, of 10000+", "29999  a 29999"},
		{"next_match 1", "Showing the last match of 10000+", "30000  a 30000"},
		{"next_match 1", "Showing match 1/10000+", "(match 1/10000+)"},
	} {
		if got := ok(t, e, step.command); got != step.reply {
			t.Errorf("%s: got %q, want %q", step.command, got, step.reply)
		}
		if got := views(t, e); !strings.Contains(got, step.screen) {
			t.Errorf("%s: screen %q, want it to contain %q", step.command, clip(got, 300), step.screen)
		}
	}

	// Past the bound by next_match, then around to the first.
	e, _ = newMem(t, map[string]string{"log.txt": strings.Repeat("ab\n", maxCountedMatches+1)})
	ok(t, e, "view log.txt /^a/ /^a/")
	e.mu.Lock()
	e.views[0].index = maxCountedMatches // the last, as 10,000 next_match would leave it
	e.mu.Unlock()
	if got, want := ok(t, e, "next_match 1"), "Showing match 1/10000+"; got != want {
		t.Errorf("next_match from the last: got %q, want %q", got, want)
	}
	if got, want := views(t, e), "(match 1/10000+)"; !strings.Contains(got, want) {
		t.Errorf("screen: got %q, want it to contain %q", clip(got, 300), want)
	}
}
