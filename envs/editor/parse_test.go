package editor

import (
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		text string
		want command
	}{
		{"view", `view src/main.py /^def main/ /^if __name__/`, command{name: "view", path: "src/main.py", start: "^def main", end: "^if __name__"}},
		{"view with to and label", `view a.go /^func A/ to /^}/ "A func"`, command{name: "view", path: "a.go", start: "^func A", end: "^}", label: "A func"}},
		{"view unquoted label", `view a.go /x/ /y/ main loop`, command{name: "view", path: "a.go", start: "x", end: "y", label: "main loop"}},
		{"view escaped slash", `view a /a\/b/ /c\\/`, command{name: "view", path: "a", start: `a\/b`, end: `c\\`}},
		{"view quoted path", `view "my file.txt" /a/ /b/`, command{name: "view", path: "my file.txt", start: "a", end: "b"}},
		{"view to glued", `view a /x/ to/y/`, command{name: "view", path: "a", start: "x", end: "y"}},
		{"view crlf", "view a /x/ /y/\r\n", command{name: "view", path: "a", start: "x", end: "y"}},
		{"edit", "edit a.c 121-121\n    initialize();", command{name: "edit", path: "a.c", from: 121, to: 121, content: "    initialize();", hasContent: true}},
		{"edit one line number", "edit a.c 7\nx\n", command{name: "edit", path: "a.c", from: 7, to: 7, content: "x\n", hasContent: true}},
		{"edit no content", "edit a.c 1-3", command{name: "edit", path: "a.c", from: 1, to: 3}},
		{"edit keeps trailing blank lines", "edit a 1-2\nx\n\n\n", command{name: "edit", path: "a", from: 1, to: 2, content: "x\n\n\n", hasContent: true}},
		{"search", `search "TODO" *.py`, command{name: "search", pattern: "TODO", glob: "*.py"}},
		{"search spaces and quotes", `search "a \"b\"" "dir x/*"`, command{name: "search", pattern: `a \"b\"`, glob: "dir x/*"}},
		{"search unquoted, no glob", `search TODO`, command{name: "search", pattern: "TODO", glob: "**"}},
		{"create", "create CONTRIBUTING.md\n# Contributing\n", command{name: "create", path: "CONTRIBUTING.md", content: "# Contributing\n", hasContent: true}},
		{"close", "close 3", command{name: "close", id: 3}},
		{"next_match bracket", "next_match [2]", command{name: "next_match", id: 2}},
		{"prev_match", "  prev_match 1  ", command{name: "prev_match", id: 1}},
		{"view whole file", "view a.go", command{name: "view", path: "a.go", kind: wholeFile}},
		{"view lines", "view a.go 3-6", command{name: "view", path: "a.go", kind: byLines, from: 3, to: 6}},
		{"view lines, two numbers and a label", "view a.go 3 6 main loop", command{name: "view", path: "a.go", kind: byLines, from: 3, to: 6, label: "main loop"}},
		{"view one line", "view a.go 42", command{name: "view", path: "a.go", kind: byLines, from: 42, to: 42}},
		{"view to the end", "view a.go 42-", command{name: "view", path: "a.go", kind: byLines, from: 42}},
		{"view to the end, -1", "view a.go 42 -1", command{name: "view", path: "a.go", kind: byLines, from: 42}},
		{"undo", "undo \"a b.go\"", command{name: "undo", path: "a b.go"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parse(tt.text)
			if err != nil {
				t.Fatalf("got error %v, want %+v", err, tt.want)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ text, want string }{
		{"", "empty command"},
		{"frob x", `unknown command "frob"`},
		{"view", "missing file; write view <file> /<start>/ /<end>/ [label]"},
		{"view a /x/", "missing end pattern"},
		{"view a /x/ y", `the end pattern must be written between slashes, like /^def main/ (got "y")`},
		{"view a // /y/", "empty start pattern //"},
		{`view "a /x/ /y/`, `the file name has no closing "`},
		{"edit a", "missing line range"},
		{"edit a 1-2 extra", `unexpected "extra" after the line range`},
		{"edit a 0-2", "line numbers start at 1"},
		{"edit a +1-2", "bad line range"},
		{"edit", "missing file"},
		{"create", "missing file"},
		{"create a b", `unexpected "b" after the file`},
		{`search "abc`, `the pattern has no closing "`},
		{`search "" x`, "empty pattern"},
		{`search a b c`, `unexpected "c" after the glob`},
		{"close", "missing view id"},
		{"close 0", "bad view id"},
		{"close 1\nmore", "close takes one line"},
		{"undo", "missing file; write undo <file>"},
		{"undo a b", `unexpected "b" after the file; write undo <file>`},
		{"view a 5-2", "the first line comes first, like 2-5"},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			_, err := parse(tt.text)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestLiteralPattern(t *testing.T) {
	for _, line := range []string{"func (r *R) Do(x []int) {", "a/b // c", "", "  \t$^.*+?", "caf\xc3\xa9 \xff bad"} {
		t.Run(line, func(t *testing.T) {
			src := literalPattern(line)
			p, err := compilePattern("start", src)
			if err != nil {
				t.Fatal(err)
			}
			if !p.matchLine(nil, []byte(line)) {
				t.Errorf("/%s/ does not match %q", src, line)
			}
			if p.matchLine(nil, []byte(line+"x")) {
				t.Errorf("/%s/ matches %q", src, line+"x")
			}
			c, err := parse("view f /" + src + "/ /x/")
			if err != nil || c.start != src {
				t.Errorf("view command with /%s/: got start %q, %v; want it read back", src, c.start, err)
			}
		})
	}
}

func TestRequiredLiteral(t *testing.T) {
	tests := []struct{ pattern, want string }{
		{`^int main\(`, "int main("},
		{`^}$`, "}"},
		{`^\s*func `, "func "},
		{`(?i)hello`, ""},
		{`a|b`, ""},
		{`^(def|class) Foo`, " Foo"},
		{`x*`, ""},
		{`(ab)+c`, "ab"},
	}
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			p, err := compilePattern("start", tt.pattern)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(p.lit); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// FuzzParse checks that the parser never panics, and that a parsed command
// formats back to text that parses to the same command.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`view src/main.py /^def main/ /^if __name__/`,
		`view a.go /^func A/ to /^}/ "A func"`,
		`view a /a\/b/ /c\\/ label`,
		"edit a.c 121-121\n    initialize();",
		"edit \"x y\" 3\n\n",
		`search "a \"b\"" "dir x/*"`,
		"search TODO",
		"create CONTRIBUTING.md\n# Contributing\n",
		"close [3]", "next_match 1", "prev_match 2",
		"view \"a\\\"b\" /x/ /y/ \"\"",
		"view a.go", "view a.go 3-6", "view a.go 3 6 label", "view a.go 10-", "view a.go 4 -1 \"7\"", "undo a.go",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		c, err := parse(text)
		if err != nil {
			return
		}
		again, err := parse(c.String())
		if err != nil {
			t.Fatalf("parse(%q) = %+v; its String %q does not parse: %v", text, c, c.String(), err)
		}
		if !reflect.DeepEqual(again, c) {
			t.Fatalf("parse(%q) = %+v; String %q parses to %+v", text, c, c.String(), again)
		}
	})
}

// FuzzView runs view resolution and the patterns' literal prefilter on
// arbitrary files: the prefilter must find exactly the lines a plain
// per-line match finds.
func FuzzView(f *testing.F) {
	f.Add("a\nint main() {\n}\r\nint main(x)\n}", `^int main\(`, `^}$`)
	f.Add("x\n\ny", `^$`, `y`)
	f.Fuzz(func(t *testing.T, data, start, end string) {
		sp, err1 := compilePattern("start", start)
		ep, err2 := compilePattern("end", end)
		if err1 != nil || err2 != nil {
			return
		}
		b := []byte(data)
		var want []int
		for off := 0; off < len(b); {
			e := lineEnd(b, off)
			if sp.re.Match(lineText(b, off, e)) {
				want = append(want, off)
			}
			off = e + 1
		}
		var got []int
		for off := 0; ; {
			o := sp.next(nil, b, off, len(b))
			if o < 0 {
				break
			}
			got = append(got, o)
			off = lineEnd(b, o) + 1
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("next found lines at %v, want %v", got, want)
		}
		// An empty file has one line, empty, which a view may show.
		matches := len(want)
		if len(b) == 0 && sp.re.Match(nil) {
			matches = 1
		}
		sec, ok := resolve(nil, b, sp, ep, 1, true)
		if ok != (matches > 0) || (ok && sec.count != matches) {
			t.Fatalf("resolve: got ok %v count %d, want %d matches", ok, sec.count, matches)
		}
	})
}
