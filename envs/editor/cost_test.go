package editor

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"
)

// costly is a pattern whose matching takes seconds over one long line
// without a z: a counted repetition of a class, and no literal part.
const costly = `[a-y]{1,1000}[zZ]`

// bundle is a minified bundle: a comment, then one line of 300 KB.
var bundle = "/*! app v1 */\n" + strings.Repeat("abcdefghij", 30_000) + "\n"

// TestCostlyPatternRefused opens a view whose end pattern would take
// seconds to match over a long line: the view is refused at once, saying
// why and what to use instead.
func TestCostlyPatternRefused(t *testing.T) {
	e, _ := newMem(t, map[string]string{"bundle.min.js": bundle})
	got := fail(t, e, `view bundle.min.js /^\/\*!/ /`+costly+`/`)
	if !strings.Contains(got, "matching the patterns takes too long on bundle.min.js") || !strings.Contains(got, "view bundle.min.js <start>-<end>") {
		t.Errorf("got %q, want the view refused as too costly, naming a view by lines", got)
	}
	ok(t, e, "view bundle.min.js 1-2")
}

// TestCostlyPatternOnScreen has a view's file grow a long line its end
// pattern is too costly for: the screen (and a preview) marks the view
// slow and shows its lines shown last, and shows it again once the file
// is back to lines the pattern can match.
func TestCostlyPatternOnScreen(t *testing.T) {
	e, fsys := newMem(t, map[string]string{"bundle.min.js": "/*! app v1 */\nabcz\n"})
	ok(t, e, `view bundle.min.js /^\/\*!/ /`+costly+`/`)
	if got := views(t, e); !strings.Contains(got, "2  abcz") {
		t.Fatalf("the view does not show line 2:\n%s", got)
	}
	if err := afero.WriteFile(fsys, "bundle.min.js", []byte(bundle), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, draw := range []func() string{func() string { return preview(t, e) }, func() string { return views(t, e) }} {
		got := draw()
		if !strings.Contains(got, "[SLOW: matching the patterns took too long") || !strings.Contains(got, "2  abcz") {
			t.Errorf("got\n%.500s\nwant the view marked slow with its lines shown last", got)
		}
	}
	if got := fail(t, e, "edit bundle.min.js 1-1\n/*! app v2 */"); !strings.Contains(got, "The file changed since view [1] showed it") {
		t.Errorf("got %q, want the edit checked against the lines shown last", got)
	}
	if err := afero.WriteFile(fsys, "bundle.min.js", []byte("/*! app v1 */\nabcZ\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := views(t, e); strings.Contains(got, "SLOW") || !strings.Contains(got, "2  abcZ") {
		t.Errorf("got\n%s\nwant the view shown again", got)
	}
}

// TestPatternTime gives the patterns no time: a file whose matching takes
// more than one reading of the clock is refused, and next_match too.
func TestPatternTime(t *testing.T) {
	e, _ := newMem(t, map[string]string{"many.txt": strings.Repeat("line of text\n", 100_000) + "end\n", "few.txt": "a\nb\na\nb\n"})
	ok(t, e, "view few.txt /a/ /b/")
	defer func(d time.Duration) { matchTime = d }(matchTime)
	matchTime = time.Nanosecond
	if got := fail(t, e, "view many.txt /^\\w+x$/ /x/"); !strings.Contains(got, "matching the patterns takes too long on many.txt") {
		t.Errorf("got %q, want the view refused", got)
	}
	// A small file is matched before the clock is read.
	ok(t, e, "next_match 1")
}

// TestSearchCostly searches with a pattern too costly for one long line:
// the line is left out and counted, the other files are searched.
func TestSearchCostly(t *testing.T) {
	e, _ := newMem(t, map[string]string{"bundle.min.js": bundle, "app.js": "let a = 1\nabcz\n"})
	got := ok(t, e, `search "`+costly+`" *.js`)
	if !strings.Contains(got, "app.js:2: abcz") || !strings.Contains(got, "Not searched: 1 line too long for this pattern") {
		t.Errorf("got %q, want the match in app.js and the long line counted as not searched", got)
	}
}
